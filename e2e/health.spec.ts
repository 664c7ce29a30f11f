import { expect, test } from '@playwright/test';
import { loadConfig, openPreset } from './helpers';

test(
  "Health of the run: grpo-calc's old configuration (T = 1, one batch a step) raises low-signal from step 5, " +
    'and its link opens that step in Episodes',
  async ({ page }) => {
    // The collapsing configuration the preset had before dynamic sampling: null empties an option the preset sets.
    await openPreset(page, 'grpo-calc');
    await loadConfig(page, {
      preset: 'grpo-calc',
      steps: 6,
      evalEvery: 0,
      temperature: 1,
      filterGroups: null,
      evalSamples: null,
    });
    await page.getByTestId('run-start').click();
    await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });
    const health = page.getByRole('region', { name: 'Health of the run' });
    const flag = health.getByTestId('health-low-signal');
    await expect(flag).toContainText(
      /low-signal from step 5 \(still holds\): Only \d+% of groups carried a learning signal/,
    );
    await flag.getByRole('link', { name: 'Open step 5 in Episodes' }).click();
    await expect(page).toHaveURL(/#\/episodes\?run=[^&]+&step=5$/);
    await expect(page.getByRole('combobox', { name: 'Step' })).toHaveValue('5');
    // A single-turn run's flags link to the Groups view the same way: the run and the step from the link.
    const run = new URL(page.url()).hash.match(/run=([^&]+)/)![1];
    await page.goto(`/#/groups?run=${run}&step=3`);
    await expect(page.getByTestId('groups-view')).toBeVisible();
    await expect(page.getByRole('combobox', { name: 'Step' })).toHaveValue('3');
  },
);
