import { expect, test } from '@playwright/test';
import { openPreset } from './helpers';

test('Experiments: grpo-arith runs from the shipped base checkpoint in Chrome and reports rewards', async ({
  page,
}) => {
  await openPreset(page, 'grpo-arith', {
    Steps: 2,
    'Prompts per step': 4,
    'Group size': 4,
    'Evaluate every': 2,
    'Held-out tasks': 16,
  });
  await page.getByText('Config as JSON').click();
  await expect(page.getByTestId('config-json')).toContainText('"preset": "grpo-arith"');
  await expect(page.getByTestId('config-json')).toContainText('"group": 4');
  await page.getByTestId('run-start').click();
  // Two small steps on wasm can finish before a first look at the status sees 'running' (a clean-clone
  // CI saw only 'finished'): wait for the end; controls.spec.ts covers a run while it runs.
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });
  await expect(page.getByTestId('run-step')).toHaveText('2');
  // An ended run's time is the stored one, the runs table's Duration, not this tab's clock.
  await expect(page.getByTestId('run-timing')).toHaveText(/^Computed in .+ · [\d.]+ s per step$/);
  const took = /^Computed in (.+?) · /.exec((await page.getByTestId('run-timing').textContent()) ?? '')![1];
  await expect(page.getByTestId('stored-runs').getByRole('row').nth(1)).toContainText(took);
  const reward = Number(await page.getByTestId('metric-reward-mean').textContent());
  expect(reward).toBeGreaterThanOrEqual(0);
  expect(reward).toBeLessThanOrEqual(1);
  // The base checkpoint already solves some held-out problems: greedy accuracy is above zero.
  await expect(page.getByTestId('metric-accuracy')).toContainText(/\(step 2, n=16\)/);
  const accuracy = parseFloat((await page.getByTestId('metric-accuracy').textContent()) ?? '');
  expect(accuracy).toBeGreaterThan(0);
  await expect(page.getByRole('img', { name: /Mean reward by step/ })).toBeVisible();
  // One update per batch at temperature 1: clip fraction, KL, mismatch and ESS are flat by construction,
  // collapsed to the reason with a button that draws them anyway.
  const clip = page.getByTestId('chart-clip');
  await expect(clip.getByTestId('flat-note')).toHaveText(
    /^Clip fractions — flat: this run does not clip; one update per batch \(1 epoch × 1 mini-batch\)/,
  );
  await expect(clip.getByRole('img')).toHaveCount(0);
  await expect(page.getByTestId('flat-note')).toHaveCount(4);
  await clip.getByRole('button', { name: 'Show the chart anyway (Clip fractions)' }).click();
  await expect(clip.getByRole('img', { name: /^Clip fractions by step; latest rl\/pg_clipfrac 0/ })).toBeVisible();
  await expect(clip.getByRole('button', { name: /^Hide the chart/ })).toHaveAttribute('aria-expanded', 'true');
  // Every reported metric can be plotted: KL to the sampler, clip fraction, entropy, ...
  await page.getByTestId('metric-select').selectOption(['mismatch/kl', 'rl/pg_clipfrac']);
  await expect(page.getByRole('img', { name: 'Metrics by step: mismatch/kl, rl/pg_clipfrac' })).toBeVisible();

  // Groups view: every advantage group of any kept step, naming the run and the step.
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Groups' }).click();
  await expect(page.getByTestId('groups-view')).toBeVisible();
  await expect(page.getByRole('combobox', { name: 'Step' })).toHaveValue('2');
  await expect(page.getByRole('heading', { name: /^Run grpo-arith · \S+ · step 2 of 2$/ })).toBeVisible();
  await expect(page.getByRole('combobox', { name: 'Run' })).toContainText('(current)');
  await expect(page.getByTestId('group')).toHaveCount(4);
  await expect(page.getByText(/^Step 2: 4 groups, \d+ with zero variance\.$/)).toBeVisible();
  const firstGroup = page.getByTestId('group').first();
  await expect(firstGroup.getByRole('row')).toHaveCount(5); // header + G = 4 completions

  // The std shown is the one the advantages divided by: verl's unbiased std of the trained
  // (completed) members, not the population std; and each advantage is (r − μ) / (σ + 1e-6).
  let checked = 0;
  for (const group of await page.getByTestId('group').all()) {
    await expect(group.getByTestId('group-estimate')).toHaveText(
      /^GRPO · compat verl · scale group · stdType unbiased · epsilon 1e-6 · singleton raw: /,
    );
    const rows = await group
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => Array.from((tr as HTMLTableRowElement).cells, (c) => c.textContent ?? '')));
    const trained = rows.filter((row) => row[5] === 'completed'); // cells: # Completion Reward Components Advantage Status Length Session
    const r = trained.map((row) => Number(row[2]));
    if (r.length < 2 || r.every((x) => x === r[0])) continue;
    const mu = r.reduce((a, b) => a + b, 0) / r.length;
    const std = Math.sqrt(r.reduce((a, b) => a + (b - mu) ** 2, 0) / (r.length - 1));
    await expect(group.getByTestId('group-stats')).toHaveText(
      `mean reward ${(rows.reduce((a, row) => a + Number(row[2]), 0) / rows.length).toFixed(3)} · baseline ` +
        `${mu.toFixed(3)} · std ${std.toFixed(3)} (unbiased, group)${trained.length < rows.length ? ` · ${trained.length} of ${rows.length} trained` : ''}`,
    );
    for (const row of trained)
      expect(Number(row[4].replace('−', '-'))).toBeCloseTo((Number(row[2]) - mu) / (std + 1e-6), 2);
    checked++;
  }
  expect(checked, 'groups with a reward spread at step 2').toBeGreaterThan(0);

  // Session inspector, opened from the keyboard: every sampled id with its log-probs.
  const firstSample = firstGroup.getByRole('row').nth(1);
  const length = parseInt((await firstSample.getByRole('cell').nth(5).textContent()) ?? '', 10); // Length column
  expect(length).toBeGreaterThan(0);
  const inspect = firstSample.getByRole('button', { name: /^Inspect sample \d+ of group \S+=$/ });
  // Each button has its own name: the sample and its group's prompt.
  const names = await page
    .getByRole('button', { name: /^Inspect sample / })
    .evaluateAll((bs) => bs.map((b) => b.getAttribute('aria-label')));
  expect(names).toHaveLength(16);
  expect(new Set(names).size).toBe(16);
  await inspect.focus();
  await page.keyboard.press('Enter');
  await expect(inspect).toHaveAttribute('aria-expanded', 'true');
  const panel = page.getByTestId('session-panel');
  await expect(
    panel.getByRole('heading', { name: /^Inspector: step 2, session \d+, sample \d+ of group / }),
  ).toBeVisible();
  await expect(
    panel.getByRole('table', {
      name: /^Call 1 of 1: \d+ prompt ids, \d+ sampled ids; finish reason (stop|length); policy version \d+$/,
    }),
  ).toBeVisible();
  await expect(panel.getByRole('columnheader', { name: 'Behavior log-prob' })).toBeVisible();
  const sampled = panel.locator('[data-testid="session-token-row"][data-kind="sampled"]');
  await expect(sampled).toHaveCount(length);
  await expect(panel.locator('[data-testid="session-token-row"][data-kind="prompt"]').first()).toContainText('"<bos>"');
  // Behavior and raw log-probs (cells 4 and 5 after the row header): finite, ≤ 0, to 4 decimals.
  const logProbs = await sampled.evaluateAll((rows) =>
    rows.flatMap((r) => [4, 5].map((c) => (r as HTMLTableRowElement).cells[c].textContent ?? '')),
  );
  expect(logProbs).toHaveLength(2 * length);
  for (const text of logProbs) {
    expect(text).toMatch(/^-?\d+\.\d{4}$/);
    expect(Number(text)).toBeLessThanOrEqual(0);
  }
  await inspect.click();
  await expect(panel).toHaveCount(0);
  await page.getByRole('button', { name: 'Previous step' }).click();
  await expect(page.getByRole('combobox', { name: 'Step' })).toHaveValue('1');
  await expect(page.getByText(/^Step 1: 4 groups/)).toBeVisible();

  // Batch view: the packed grid, its layers, a cell's values and its session.
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Batch' }).click();
  await expect(page.getByTestId('batch-view')).toBeVisible();
  await expect(page.getByRole('heading', { name: /^Run grpo-arith · \S+ · step 2 of 2$/ })).toBeVisible();
  await expect(page.getByTestId('batch-summary')).toContainText(
    /[1-8] rows × 46 ids; \d+ rows needed; packing efficiency \d+\.\d%/,
  );
  const canvas = page.getByTestId('batch-canvas');
  await expect(canvas).toBeVisible();
  await canvas.focus();
  await page.keyboard.press('ArrowRight');
  // A cell in words: its token, session and chain, "response mask: no" on the prompt, never a raw layer key.
  const cell = page.getByTestId('batch-cell');
  await expect(cell).toHaveText(
    /^row 0, column 1: ".+" · session \d+, chain \d+ · response mask: no \(the loss skips it\) · not sampled \(prompt\)$/,
  );
  await expect(canvas).toHaveAttribute('title', (await cell.textContent())!);
  await page.getByRole('combobox', { name: 'Layer' }).selectOption({ label: 'Advantage' });
  await expect(page.getByTestId('batch-legend')).toContainText(/blue = −.*white = 0, red = \+/);
  // On to the first id the loss reads: "response mask: yes" and a signed advantage.
  await canvas.focus();
  for (let k = 0; k < 8 * 46 && !/response mask: yes/.test((await cell.textContent()) ?? ''); k++)
    await page.keyboard.press('ArrowRight');
  await expect(cell).toHaveText(
    / · response mask: yes \(the loss reads it\) · advantage ([+−]\d+\.\d{3}|0\.000) · old − behavior log-prob \S+ · dlogp \S+ · sampled by policy version 1$/,
  );
  await expect(cell).not.toContainText('responseMask');
  await page.keyboard.press('Tab');
  await canvas.click({ position: { x: 7 + 14 * 10, y: 7 } });
  await expect(page.getByTestId('batch-session')).toContainText(/Completion .*reward [01]; advantage/);
  await expect(page.getByTestId('batch-session').getByTestId('session-panel')).toBeVisible();
  await expect(page.getByTestId('batch-session').getByTestId('session-token-row').first()).toBeVisible();
});
