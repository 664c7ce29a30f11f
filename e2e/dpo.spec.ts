import { expect, test } from '@playwright/test';
import { exportedMetrics, openPreset } from './helpers';

/** "+0.123" / "−0.123" / "0.000" as printed by the Groups view. */
const num = (text: string) => Number(text.replace('−', '-'));

test('Experiments: dpo-arith builds pairs from the base model and trains in Chrome', async ({ page }) => {
  await openPreset(page, 'dpo-arith', { Steps: 2, 'Pairs per step': 4, 'Evaluate every': 2, 'Held-out tasks': 8 });
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });
  await expect(page.getByTestId('run-step')).toHaveText('2');
  // Step 1 starts with policy = reference: DPO loss log 2 plus the NLL term.
  await expect(page.getByTestId('metric-dpo-margin')).toContainText(/^-?\d+\.\d{3} \/ \d\.\d{3}$/);
  await expect(page.getByTestId('metric-accuracy')).toContainText(/\(step 2, n=8\)/);
  // DPO reports its throughput like GRPO: perf/tokens_per_s on every step.
  const { steps } = await exportedMetrics(page);
  expect(steps.map((s) => s.step)).toEqual([1, 2]);
  for (const s of steps) expect(s.metrics['perf/tokens_per_s']).toBeGreaterThan(0);

  // Groups view: each step's preference pairs, spoken of as pairs; any step, any completion's session.
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Groups' }).click();
  await expect(page.getByRole('combobox', { name: 'Step' })).toHaveValue('2');
  await expect(page.getByRole('heading', { name: /^Run dpo-arith · \S+ · step 2 of 2$/ })).toBeVisible();
  await expect(page.getByTestId('pair-legend')).toHaveText(
    'Implicit reward colours: chosen completion rejected completion',
  );

  // Step 2 trains a moved policy: each pair's margin is chosen − rejected, ranked correctly iff > 0, and its sigmoid loss −log σ(margin).
  await expect(page.getByText(/^Step 2: 4 preference pairs, [0-4] ranked correctly/)).toBeVisible();
  for (const pair of await page.getByTestId('group').all()) {
    const stats = (await pair.getByTestId('pair-stats').textContent()) ?? '';
    const m = /^margin ([+−]?\d+\.\d{3}) · ranked (correctly|wrongly) · sigmoid loss (\d+\.\d{4}) \(β 0\.1\)$/.exec(
      stats,
    );
    expect(m, stats).not.toBeNull();
    const [margin, ranked, loss] = [num(m![1]), m![2], Number(m![3])];
    const chosen = num((await pair.getByRole('row').nth(1).getByRole('cell').nth(3).textContent()) ?? '');
    const rejected = num((await pair.getByRole('row').nth(2).getByRole('cell').nth(3).textContent()) ?? '');
    expect(Math.abs(margin - (chosen - rejected))).toBeLessThanOrEqual(0.0011); // each printed to 3 decimals
    if (margin !== 0) expect(ranked).toBe(margin > 0 ? 'correctly' : 'wrongly');
    expect(loss).toBeCloseTo(Math.log1p(Math.exp(-margin)), 2);
  }
  // Implicit rewards are coloured by role, chosen and rejected in two distinct colours, not by sign.
  const first = page.getByTestId('group').first();
  const chosenCell = first.getByRole('row').nth(1).getByRole('cell').nth(3);
  const rejectedCell = first.getByRole('row').nth(2).getByRole('cell').nth(3);
  await expect(chosenCell).toHaveClass('implicit chosen');
  await expect(rejectedCell).toHaveClass('implicit rejected');
  const background = (l: typeof chosenCell) => l.evaluate((e) => getComputedStyle(e).backgroundColor);
  expect(await background(chosenCell)).not.toBe(await background(rejectedCell));

  // Pairs sort by margin or loss, not by a "reward spread".
  const sort = page.getByRole('combobox', { name: 'Sort pairs by' });
  await expect(sort.getByRole('option')).toHaveText([
    'batch order',
    'margin, high first',
    'margin, low first',
    'loss, high first',
    'loss, low first',
  ]);
  await sort.selectOption({ label: 'margin, high first' });
  const margins = await page
    .getByTestId('pair-stats')
    .evaluateAll((ss) =>
      ss.map((s) => Number(/^margin ([+−]?[\d.]+)/.exec(s.textContent ?? '')![1].replace('−', '-'))),
    );
  expect(margins).toHaveLength(4);
  expect(margins).toEqual([...margins].sort((a, b) => b - a));
  await sort.selectOption({ label: 'batch order' });

  await page.getByRole('combobox', { name: 'Step' }).selectOption('1');
  await expect(page.getByRole('heading', { name: /^Run dpo-arith · \S+ · step 1 of 2$/ })).toBeVisible();
  await expect(page.getByText(/^Step 1: 4 preference pairs/)).toBeVisible();
  const pair = page.getByTestId('group').first();
  await expect(pair.getByRole('columnheader', { name: /^Implicit reward/ })).toBeVisible();
  await expect(pair.getByRole('row')).toHaveCount(3); // header, chosen, rejected
  await expect(pair.getByRole('row').nth(1)).toContainText(/^chosen\\boxed\{\d+\}.*1/);
  await expect(pair.getByRole('row').nth(2)).toContainText(/^rejected.*0/);
  // Step 1 trains from policy = reference: every implicit reward and margin is 0, and the loss is log 2.
  await expect(pair.getByRole('row').nth(1).getByRole('cell').nth(3)).toHaveText('0.000');
  await expect(pair.getByTestId('pair-stats')).toHaveText(
    /^margin 0\.000 · ranked (correctly|wrongly) · sigmoid loss 0\.6931 \(β 0\.1\)$/,
  );
  // Each button names its completion and its pair.
  await pair.getByRole('button', { name: /^Inspect rejected completion of pair 1: \S+=$/ }).click();
  const panel = page.getByTestId('session-panel');
  await expect(
    panel.getByRole('heading', { name: /^Inspector: step 1, session 2, rejected completion of pair 1: / }),
  ).toBeVisible();
  await expect(panel).not.toContainText('of group');
  await expect(
    panel.getByRole('table', {
      name: /^Call 1 of 1: \d+ prompt ids, \d+ sampled ids; finish reason stop; policy version 0$/,
    }),
  ).toBeVisible();
  await expect(panel.locator('[data-testid="session-token-row"][data-kind="sampled"]').first()).toBeVisible();
});
