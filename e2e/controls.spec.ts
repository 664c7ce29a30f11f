import { expect, test } from '@playwright/test';
import { openPreset } from './helpers';

test('Experiments: a GRPO run pauses between steps, resumes and stops', async ({ page }) => {
  await openPreset(page, 'grpo-arith', { Steps: 8, 'Prompts per step': 2, 'Group size': 2, 'Evaluate every': 0 });
  await page.getByTestId('run-start').click();
  const status = page.getByTestId('run-status');
  const step = page.getByTestId('run-step');
  await expect(step).toHaveText('1', { timeout: 120_000 });

  // Pause takes effect between steps: the step under way finishes, then the worker waits.
  await page.getByRole('button', { name: 'Pause' }).click();
  await expect(status).toHaveText('paused');
  await expect(page.getByRole('button', { name: 'Resume' })).toBeVisible();
  const pausedAt = Number(await step.textContent());
  expect(pausedAt).toBeGreaterThanOrEqual(1);
  // A step with 2 × 2 completions takes a few seconds here; while paused none starts.
  await page.waitForTimeout(5_000);
  await expect(step).toHaveText(String(pausedAt));
  await expect(status).toHaveText('paused');

  await page.getByRole('button', { name: 'Resume' }).click();
  await expect(status).toHaveText('running');
  await expect(step).toHaveText(String(pausedAt + 1), { timeout: 120_000 });

  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(status).toHaveText('stopped', { timeout: 120_000 });
  const stoppedAt = Number(await step.textContent());
  expect(stoppedAt).toBeLessThan(8);
  await expect(page.getByRole('status').filter({ hasText: `stopped after step ${stoppedAt}` })).toBeVisible();
  await expect(page.getByRole('button', { name: /Pause|Resume|Stop/ })).toHaveCount(0);
});
