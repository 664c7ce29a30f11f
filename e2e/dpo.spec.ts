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

  // Groups view: each step's preference pairs, chosen and rejected with their implicit rewards; any step, any completion's session.
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Groups' }).click();
  await expect(page.getByRole('combobox', { name: 'Step' })).toHaveValue('2');
  await page.getByRole('combobox', { name: 'Step' }).selectOption('1');
  await expect(page.getByText(/^Step 1: 4 preference pairs/)).toBeVisible();
  const pair = page.getByTestId('group').first();
  await expect(pair.getByRole('columnheader', { name: /^Implicit reward/ })).toBeVisible();
  await expect(pair.getByRole('row')).toHaveCount(3); // header, chosen, rejected
  await expect(pair.getByRole('row').nth(1)).toContainText(/\\boxed\{\d+\}.*1.*chosen/);
  await expect(pair.getByRole('row').nth(2)).toContainText(/0.*rejected/);
  // Step 1 trains from policy = reference: every implicit reward is 0.
  await expect(pair.getByRole('row').nth(1).getByRole('cell').nth(3)).toHaveText(/^-?0\.000$/);
  await pair.getByRole('button', { name: 'Inspect sample 1' }).click();
  const panel = page.getByTestId('session-panel');
  await expect(panel.getByRole('table', { name: /^Call 1 of 1: \d+ prompt ids, \d+ sampled ids; finish reason stop; policy version 0$/ })).toBeVisible();
  await expect(panel.locator('[data-testid="session-token-row"][data-kind="sampled"]').first()).toBeVisible();
});
