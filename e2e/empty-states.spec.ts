/**
 * What a new person reads before any run: the Episodes view names every preset that journals
 * episodes (from the preset table), and System says what the companion runs. No run is started.
 */
import { expect, test } from '@playwright/test';

test('before any run: Episodes names the presets that journal episodes; System says the companion runs code tests and environment programs', async ({
  page,
}) => {
  await page.goto('/#/episodes');
  await expect(page.getByTestId('episodes-no-run')).toHaveText(
    'No run yet: start a grpo-calc, grpo-guess, grpo-code, grpo-env, ppo-calc or ppo-env run in Experiments, or pick a stored run.',
  );
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'System' }).click();
  await expect(page.getByTestId('companion-purpose')).toContainText(
    'the test cases that grade code rewards, and environment programs',
  );
});
