import { expect, test } from '@playwright/test';

test('Experiments: dpo-arith builds pairs from the base model and trains in Chrome', async ({ page }) => {
  await page.goto('/#/experiments');
  await expect(page.getByText(/Training on webgpu/)).toBeVisible();
  await page.getByTestId('preset-dpo-arith').click();
  await page.getByRole('spinbutton', { name: /Steps/ }).fill('2');
  await page.getByRole('spinbutton', { name: /Pairs per step/ }).fill('4');
  await page.getByRole('spinbutton', { name: /Evaluate every/ }).fill('2');
  await page.getByRole('spinbutton', { name: /Held-out tasks/ }).fill('8');
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });
  await expect(page.getByTestId('run-step')).toHaveText('2');
  // Step 1 starts with policy = reference: DPO loss log 2 plus the NLL term.
  await expect(page.getByTestId('metric-dpo-margin')).toContainText(/^-?\d+\.\d{3} \/ \d\.\d{3}$/);
  await expect(page.getByTestId('metric-accuracy')).toContainText(/\(step 2, n=8\)/);
});
