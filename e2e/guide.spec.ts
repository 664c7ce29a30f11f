/**
 * The first-visit guide: what to try first with each preset's measured time, a button that picks
 * the preset, and "Hide this guide" remembered across reloads. No run is started.
 */
import { expect, test } from '@playwright/test';

test('a first visit shows where to start with the measured times; Choose picks the preset; hidden, it stays hidden', async ({
  page,
}) => {
  await page.goto('/#/experiments');
  const guide = page.getByRole('region', { name: 'Where to start' });
  await expect(guide).toBeVisible();
  // The README's figures (2-core machine, wasm): grpo-arith 150 steps × 0.17 s, flowgrpo-2d's 200-step run.
  const steps = guide.getByRole('listitem');
  await expect(steps.first()).toContainText('grpo-arith');
  await expect(steps.first()).toContainText('150 steps × 0.17 s ≈ 26 s');
  // The form shows the preset the guide suggests first.
  await expect(page.getByTestId('preset-grpo-arith')).toHaveAttribute('aria-pressed', 'true');
  await expect(guide).toContainText('about 15 s for 200 steps');
  await expect(guide).toContainText('2-core machine');
  // A preset without a figure gets no time: dpo-arith is not named with one.
  await expect(guide).not.toContainText(/dpo-arith \d/);

  await guide.getByRole('button', { name: 'Choose ppo-arith' }).click();
  await expect(page.getByTestId('preset-ppo-arith')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByTestId('preset-ppo-arith')).toBeFocused();

  await guide.getByRole('button', { name: 'Hide this guide' }).click();
  await expect(guide).toHaveCount(0);
  await expect(page.getByRole('button', { name: /^New run/ })).toBeFocused();
  await page.reload();
  await expect(page.getByRole('form', { name: 'Run options' })).toBeVisible();
  await expect(page.getByRole('region', { name: 'Where to start' })).toHaveCount(0);
});
