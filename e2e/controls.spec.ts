import { expect, test } from '@playwright/test';
import { openPreset } from './helpers';

test('Experiments: a GRPO run pauses between steps, resumes and stops', async ({ page }) => {
  // The preset's 16 × 8 sequences a step and 30 steps on WebGPU over SwiftShader: a step lasts a
  // second or more, so Pause and Stop land mid-run (on the wasm backend the run takes seconds).
  await openPreset(page, 'grpo-arith', { Steps: 30, 'Evaluate every': 0 }, 'webgpu');
  await page.getByTestId('run-start').click();
  const status = page.getByTestId('run-status');
  const step = page.getByTestId('run-step');
  await expect(step).toHaveText('1', { timeout: 120_000 });

  // Pause takes effect between steps: the step under way finishes, then the worker waits.
  await page.getByRole('button', { name: 'Pause' }).click();
  // Until the step under way ends, the dashboard says the pause is pending.
  await expect(page.getByTestId('run-phase')).toContainText('pausing… (the step under way finishes first)');
  await expect(status).toHaveText('paused');
  await expect(page.getByText('pausing…')).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Resume' })).toBeVisible();
  const pausedAt = Number(await step.textContent());
  expect(pausedAt).toBeGreaterThanOrEqual(1);
  // A step takes a second or more here; while paused none starts.
  await page.waitForTimeout(5_000);
  await expect(step).toHaveText(String(pausedAt));
  await expect(status).toHaveText('paused');

  await page.getByRole('button', { name: 'Resume' }).click();
  await expect(status).toHaveText('running');
  // Steps may come faster than the page is polled: any later step shows the run resumed.
  await expect.poll(async () => Number(await step.textContent()), { timeout: 120_000 }).toBeGreaterThan(pausedAt);

  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(status).toHaveText('stopped', { timeout: 120_000 });
  const stoppedAt = Number(await step.textContent());
  expect(stoppedAt).toBeLessThan(30);
  await expect(page.getByRole('status').filter({ hasText: `stopped after step ${stoppedAt}` })).toBeVisible();
  await expect(page.getByRole('button', { name: /Pause|Resume|Stop/ })).toHaveCount(0);
});
