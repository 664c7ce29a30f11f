import { expect, test } from '@playwright/test';
import { openPreset } from './helpers';

test('ppo-arith runs in Chrome: critic curves on the dashboard, per-token values and returns in Groups, Batch and the session inspector', async ({
  page,
}) => {
  await openPreset(page, 'ppo-arith', {
    Steps: 2,
    'Prompts per step': 4,
    'Completions per prompt': 2,
    'Evaluate every': 0,
  });
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });
  for (const id of ['value-loss', 'explained-var', 'returns', 'advantages'])
    await expect(page.getByTestId(`chart-${id}`)).toBeVisible();
  // 2 epochs × 2 mini-batches: the ratio moves, so clip fractions are drawn; at temperature 1 the sampler mismatch is flat.
  await expect(page.getByTestId('chart-clip').getByRole('img', { name: /^Clip fractions by step/ })).toBeVisible();
  await expect(page.getByTestId('chart-clip').getByTestId('flat-note')).toHaveCount(0);
  await expect(page.getByTestId('chart-mismatch-kl').getByTestId('flat-note')).toContainText(
    'logits / T, no top-k, no top-p',
  );
  await expect(
    page.getByRole('img', { name: /^Explained variance of the returns by step; latest critic\/vf_explained_var / }),
  ).toBeVisible();

  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Groups' }).click();
  await expect(page.getByTestId('group')).toHaveCount(4);
  // No outcome estimator ran: each completion shows the critic at its first id and its tokens' GAE advantages.
  await expect(page.getByTestId('group-estimate')).toHaveCount(0);
  await expect(page.getByTestId('group-critic')).toHaveCount(8);
  for (const text of await page.getByTestId('group-critic').allTextContents())
    expect(text).toMatch(/^V −?\d\.\d{3} · R −?\d\.\d{3}$/);
  await page
    .getByRole('button', { name: /^Inspect sample 0 of group/ })
    .first()
    .click();
  const values = page.getByTestId('session-panel').getByTestId('token-value');
  // The panel fills in when the session's records arrive: wait for them (a bare count() raced them, CI of 8152a15).
  await expect(values.first()).toBeVisible();
  const sampled = page.getByTestId('session-panel').locator('[data-kind="sampled"]');
  await expect(sampled.first().getByTestId('token-value')).toHaveText(/^-?\d\.\d{4}$/);

  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Batch' }).click();
  const layer = page.getByRole('combobox', { name: 'Layer' });
  await layer.selectOption({ label: 'Return (GAE target)' });
  await expect(page.getByText(/the value target of each sampled id/)).toBeVisible();
  await layer.selectOption({ label: 'Value (critic)' });
  await expect(page.getByTestId('batch-legend')).toBeVisible();
});
