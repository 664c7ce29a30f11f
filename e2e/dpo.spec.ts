import { expect, test } from '@playwright/test';
import { openPreset } from './helpers';

test('Experiments: dpo-arith builds pairs from the base model and trains in Chrome', async ({ page }) => {
  await openPreset(page, 'dpo-arith', { Steps: 2, 'Pairs per step': 4, 'Evaluate every': 2, 'Held-out tasks': 8 });
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });
  await expect(page.getByTestId('run-step')).toHaveText('2');
  // Step 1 starts with policy = reference: DPO loss log 2 plus the NLL term.
  await expect(page.getByTestId('metric-dpo-margin')).toContainText(/^-?\d+\.\d{3} \/ \d\.\d{3}$/);
  await expect(page.getByTestId('metric-accuracy')).toContainText(/\(step 2, n=8\)/);
});
