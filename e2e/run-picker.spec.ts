import { expect, test } from '@playwright/test';
import { openPreset } from './helpers';

test('Groups and Batch: a run picker shared by both views, defaulting to the current run', async ({ page }) => {
  // Two short stored runs: GRPO, then DPO (the current one).
  await openPreset(page, 'grpo-arith', { Steps: 1, 'Prompts per step': 2, 'Group size': 2, 'Evaluate every': 0 });
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });
  const views = page.getByRole('navigation', { name: 'Views' });
  await views.getByRole('link', { name: 'Groups' }).click();
  const runSelect = page.getByRole('combobox', { name: 'Run' });
  await expect(runSelect.locator('option:checked')).toHaveText(/^grpo-arith · \S+ \(current\)$/);
  const grpoName = ((await runSelect.locator('option:checked').textContent()) ?? '').replace(' (current)', '');
  await expect(page.getByRole('heading', { name: `Run ${grpoName} · step 1 of 1` })).toBeVisible();

  await openPreset(page, 'dpo-arith', { Steps: 1, 'Pairs per step': 2, 'Evaluate every': 0 });
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });

  // Groups follows the current run: the DPO run's pairs.
  await views.getByRole('link', { name: 'Groups' }).click();
  await expect(runSelect.locator('option:checked')).toHaveText(/^dpo-arith · \S+ \(current\)$/);
  await expect(page.getByRole('heading', { name: /^Run dpo-arith · \S+ · step 1 of 1$/ })).toBeVisible();
  await expect(page.getByText(/^Step 1: 2 preference pairs/)).toBeVisible();
  await expect(runSelect.getByRole('option')).toHaveCount(2);

  // Picking the stored GRPO run shows its groups, and says it is not the current run.
  await runSelect.selectOption({ label: grpoName });
  await expect(
    page.getByRole('heading', { name: `Run ${grpoName} · step 1 of 1 (a stored run, not the current one)` }),
  ).toBeVisible();
  await expect(page.getByText(/^Step 1: 2 groups, \d with zero variance\.$/)).toBeVisible();
  await expect(page.getByTestId('group')).toHaveCount(2);
  await expect(page.getByTestId('pair-legend')).toHaveCount(0);

  // Batch shares the pick: the GRPO run's packed batch.
  await views.getByRole('link', { name: 'Batch' }).click();
  await expect(runSelect).toHaveValue(/^grpo-/);
  await expect(
    page.getByRole('heading', { name: `Run ${grpoName} · step 1 of 1 (a stored run, not the current one)` }),
  ).toBeVisible();
  await expect(page.getByTestId('batch-summary')).toContainText(/\d+ rows × \d+ ids/);

  // Back to the current run from Batch: DPO keeps no packed batch; Groups follows.
  const dpoLabel = (await runSelect.locator('option', { hasText: 'dpo-arith' }).textContent()) ?? '';
  expect(dpoLabel).toMatch(/^dpo-arith · \S+ \(current\)$/);
  await runSelect.selectOption({ label: dpoLabel });
  await expect(page.getByRole('heading', { name: /^Run dpo-arith · \S+ · step 1 of 1$/ })).toBeVisible();
  await expect(
    page.getByText('Step 1 has no stored batch (only GRPO steps are packed; DPO trains one row per sequence).'),
  ).toBeVisible();
  await views.getByRole('link', { name: 'Groups' }).click();
  await expect(page.getByRole('heading', { name: /^Run dpo-arith · \S+ · step 1 of 1$/ })).toBeVisible();
  await expect(page.getByTestId('pair-legend')).toBeVisible();
});
