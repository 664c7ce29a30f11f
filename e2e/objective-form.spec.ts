import { expect, test } from '@playwright/test';

// The options form: every objective option of a preset, grouped in sections, checked by the worker
// as it is edited. No run is started here.

test.beforeEach(async ({ page }) => {
  await page.goto('/#/experiments');
  await expect(page.getByText(/Training on webgpu/)).toBeVisible();
});

test('grpo-arith: a bad value names the field and its range and blocks Start; fixing it unblocks', async ({ page }) => {
  await page.getByTestId('preset-grpo-arith').click();
  for (const section of ['Objective', 'Advantage', 'KL', 'Corrections', 'Sampling', 'Optimizer', 'Run']) {
    await expect(page.getByRole('group', { name: section, exact: true })).toBeVisible();
  }
  const start = page.getByTestId('run-start');
  await expect(start).toBeEnabled();

  const clipHigh = page.getByTestId('field-policyLoss.clipHigh');
  await expect(clipHigh).toHaveAccessibleName('Clip ε high');
  await clipHigh.fill('-1');
  await expect(page.getByTestId('problem-policyLoss.clipHigh')).toHaveText('policyLoss.clipHigh must be a number in [0, 10], got -1');
  await expect(clipHigh).toHaveAttribute('aria-invalid', 'true');
  await expect(clipHigh).toHaveAccessibleDescription(/^policyLoss\.clipHigh must be a number in \[0, 10\], got -1/);
  await expect(start).toBeDisabled();

  const temperature = page.getByRole('spinbutton', { name: 'Temperature' });
  await temperature.fill('0');
  await expect(page.getByTestId('problem-temperature')).toHaveText('temperature must be a number in (0, 10], got 0');
  await expect(page.getByText('2 problems with the options: fix them to start.')).toBeVisible();

  await clipHigh.fill('0.28');
  await temperature.fill('0.9');
  await expect(page.getByTestId('problem-policyLoss.clipHigh')).toHaveCount(0);
  await expect(page.getByTestId('problem-temperature')).toHaveCount(0);
  await expect(clipHigh).not.toHaveAttribute('aria-invalid', 'true');
  await expect(start).toBeEnabled();
  await page.getByText('Config as JSON').click();
  await expect(page.getByTestId('config-json')).toContainText('"clipHigh": 0.28');
  await expect(page.getByTestId('config-json')).toContainText('"temperature": 0.9');
});

test('grpo-arith: choosing a loss, an IS kind or an estimator shows its own options', async ({ page }) => {
  await page.getByTestId('preset-grpo-arith').click();
  await page.getByText('Config as JSON').click();
  const json = page.getByTestId('config-json');
  await expect(page.getByTestId('field-policyLoss.dualClip')).toBeVisible();

  await page.getByTestId('field-policyLoss.name').selectOption('cispo');
  await expect(page.getByTestId('field-policyLoss.cap')).toBeVisible();
  await expect(page.getByTestId('field-policyLoss.dualClip')).toHaveCount(0);
  await page.getByTestId('field-policyLoss.clipLow').fill('0.1');
  await page.getByTestId('field-policyLoss.name').selectOption('reinforce_kl');
  await expect(page.getByTestId('field-policyLoss.clipLow')).toHaveCount(0);
  await expect(page.getByTestId('field-policyLoss.klApprox')).not.toBeChecked();
  await expect(json).toContainText('"klApprox": false');
  await expect(json).not.toContainText('clipLow');

  await page.getByTestId('field-importance.kind').selectOption('band');
  await expect(page.getByTestId('field-importance.low')).toHaveValue('0.5');
  await expect(page.getByTestId('field-importance.high')).toHaveValue('5');
  await page.getByTestId('field-importance.low').fill('6');
  await expect(page.getByTestId('problem-importance.low')).toHaveText('importance.low must be at most importance.high (5), got 6');
  await expect(page.getByTestId('run-start')).toBeDisabled();
  await page.getByTestId('field-importance.kind').selectOption('off');
  await expect(page.getByTestId('field-importance.low')).toHaveCount(0);
  await expect(page.getByTestId('run-start')).toBeEnabled();

  await page.getByTestId('field-advantage.estimator').selectOption('reinforce++-baseline');
  await expect(page.getByTestId('field-advantage.compat').locator('option')).toHaveText(['default', 'verl', 'rllm']);
  await expect(page.getByTestId('field-advantage.scale')).toHaveCount(0);
});

test('dpo-arith: the loss variant decides whether label smoothing applies', async ({ page }) => {
  await page.getByTestId('preset-dpo-arith').click();
  await page.getByText('Config as JSON').click();
  const smoothing = page.getByTestId('field-loss.labelSmoothing');
  await smoothing.fill('0.6');
  await expect(page.getByTestId('problem-loss.labelSmoothing')).toHaveText('loss.labelSmoothing must be a number in [0, 0.5], got 0.6');
  await page.getByTestId('field-loss.type').selectOption('ipo');
  await expect(smoothing).toHaveCount(0);
  await expect(page.getByTestId('config-json')).toContainText('"type": "ipo"');
  await expect(page.getByTestId('config-json')).not.toContainText('labelSmoothing');
  await expect(page.getByTestId('run-start')).toBeEnabled();
});
