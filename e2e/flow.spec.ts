import { expect, test } from '@playwright/test';
import { openPreset } from './helpers';

test('flowgrpo-2d runs in Chrome: the Flow view shows each step’s cloud over the reward field, picks a step and plays through them', async ({
  page,
}) => {
  await openPreset(page, 'flowgrpo-2d', { Steps: 3, 'Pretraining steps': 200, 'Evaluate every': 0 });
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });

  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Flow' }).click();
  const plot = page.getByRole('img', { name: /^Sample cloud of step/ });
  await expect(plot).toHaveAccessibleName(
    /^Sample cloud of step 3: 64 points, mean reward \d\.\d{3}, \d+% inside the target \(\d+ of 64\)$/,
  );
  await expect(page.getByTestId('flow-summary')).toContainText('64 points (8 groups × 8)');
  await expect(page.getByTestId('flow-summary')).toContainText(/Trained\d+ of 64/);
  await expect(page.getByRole('heading', { level: 2 })).toContainText('step 3 of 3');

  const controls = page.getByRole('group', { name: 'Step' });
  await controls.getByRole('combobox', { name: 'Step' }).selectOption('1');
  await expect(plot).toHaveAccessibleName(/^Sample cloud of step 1: /);
  // The slider moves with the keyboard: one step right.
  const slider = controls.getByRole('slider', { name: 'Step' });
  await expect(slider).toHaveAttribute('aria-valuetext', 'step 1 of 3');
  await slider.focus();
  await slider.press('ArrowRight');
  await expect(plot).toHaveAccessibleName(/^Sample cloud of step 2: /);
  await controls.getByRole('combobox', { name: 'Step' }).selectOption('1');

  await controls.getByRole('button', { name: 'Play' }).click();
  await expect(controls.getByRole('button', { name: 'Pause' })).toBeVisible();
  await expect(plot).toHaveAccessibleName(/^Sample cloud of step 3: /);
  // At the last step it stops by itself.
  await expect(controls.getByRole('button', { name: 'Play' })).toBeVisible();
  await expect(controls.getByRole('combobox', { name: 'Step' })).toHaveValue('3');

  await page.getByRole('checkbox', { name: /Trail of the previous 5 steps/ }).uncheck();
  await page.getByRole('radio', { name: 'group' }).check();
  await expect(plot).toHaveAccessibleName(/^Sample cloud of step 3: /);
});
