/**
 * Dynamic sampling says what it filtered: a grpo-calc run (DAPO's filter on success, at most 10
 * batches a step) shows the mean reward and the zero-std share after the filter beside the same
 * figures over every group it drew, and the batches it drew, on the dashboard.
 */
import { expect, test } from '@playwright/test';
import { loadConfig } from './helpers';

test('grpo-calc: the dashboard shows reward and zero-std groups after the filter and before it, and the batches drawn', async ({
  page,
}) => {
  test.setTimeout(180_000);
  await page.goto('/');
  await loadConfig(page, { preset: 'grpo-calc', steps: 2, prompts: 2, group: 4, evalEvery: 0 });
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 150_000 });
  await expect(page.getByRole('term').filter({ hasText: 'Mean reward (after the filter)' })).toBeVisible();
  await expect(page.getByRole('figure', { name: 'Mean reward (after the filter)' })).toBeVisible();
  await expect(page.getByTestId('metric-reward-mean')).toHaveText(/^-?\d\.\d{3} \(-?\d\.\d{3} before\)$/);
  await expect(page.getByTestId('metric-zero-std')).toHaveText(/^\d\.\d{2} \(\d\.\d{2} before\)$/);
  await expect(page.getByTestId('metric-gen-batches')).toHaveText(/^\d+ \(\d+ groups kept of \d+\)$/);
});
