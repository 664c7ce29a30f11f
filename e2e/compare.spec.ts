import { expect, test, type Page } from '@playwright/test';
import { fillFields, openPreset } from './helpers';

/** Three tiny GRPO runs: seeds 1 and 2 of one config, and seed 1 at another learning rate. */
const TINY = { Steps: 2, 'Prompts per step': 2, 'Group size': 2, 'Evaluate every': 0, 'Checkpoint every': 0 };

async function runToEnd(page: Page, fields: Record<string, string | number>) {
  await fillFields(page, fields);
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });
}

const panelMetrics = (page: Page) =>
  page.getByTestId('compare-panel').evaluateAll((els) => els.map((e) => e.getAttribute('data-metric')));

test('Compare: panels per metric with seeds grouped as mean and band, wall-clock axis, a sortable summary, CSV export with times, histograms', async ({
  page,
}) => {
  test.setTimeout(360_000);
  await openPreset(page, 'grpo-arith', { ...TINY, Seed: 1 });
  await runToEnd(page, {});
  await runToEnd(page, { Seed: 2 });
  await runToEnd(page, { Seed: 1, 'Learning rate': 0.0003 });

  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Compare' }).click();
  const pick = page.getByRole('group', { name: 'Runs to compare' });
  // Names say what differs from the preset's defaults.
  await expect(pick.getByRole('checkbox')).toHaveCount(3);
  await expect(pick).toContainText('grpo-arith · steps 2 · lr 3e-4');
  await expect(pick).toContainText('seed 2');
  for (const box of await pick.getByRole('checkbox').all()) await box.check();

  // Default panels for a GRPO run, reward first; seeds 1 and 2 drawn as one line (mean, band).
  await expect(page.getByTestId('compare-panel').first()).toHaveAttribute('data-metric', 'reward/mean');
  expect((await panelMetrics(page)).length).toBeGreaterThanOrEqual(2);
  const reward = page.locator('[data-testid="compare-panel"][data-metric="reward/mean"]').getByRole('img');
  await expect(reward).toHaveAttribute(
    'aria-label',
    /by step, one line per run or seed group.*seeds 1, 2 \(mean of 2 runs, 2 points\)/,
  );

  // The summary: one row per line, sorted by the final reward when its header is clicked.
  const summary = page.getByTestId('compare-summary');
  await expect(summary.locator('tbody tr')).toHaveCount(2);
  const finalHeader = summary.getByRole('columnheader', { name: 'reward/mean: final' });
  await finalHeader.getByRole('button').click();
  await expect(finalHeader).toHaveAttribute('aria-sort', 'descending');
  const finals = await summary
    .locator('td[data-column="reward/mean:final"]')
    .evaluateAll((tds) => tds.map((td) => Number(td.firstChild?.textContent)));
  expect(finals).toEqual([...finals].sort((a, b) => b - a));
  await finalHeader.getByRole('button').click();
  await expect(finalHeader).toHaveAttribute('aria-sort', 'ascending');

  // Ungrouped: a line and a row per run.
  await page.getByRole('checkbox', { name: /^Group runs that differ only in their seed/ }).uncheck();
  await expect(summary.locator('tbody tr')).toHaveCount(3);
  await expect(reward).toHaveAttribute(
    'aria-label',
    /one line per run: .*\(2 points\), .*\(2 points\), .*\(2 points\)$/,
  );

  // Seconds each run computed (pauses and stops left out): every step has its time.
  await page.getByRole('radio', { name: /^Time running/ }).check();
  await expect(reward).toHaveAttribute(
    'aria-label',
    /by seconds running, one line per run: .*\(2 points\).*\(2 points\).*\(2 points\)$/,
  );

  // A panel can be removed.
  await page.getByRole('button', { name: 'Remove the panel reward/mean' }).click();
  await expect(page.locator('[data-testid="compare-panel"][data-metric="reward/mean"]')).toHaveCount(0);

  // The metrics as CSV: run name, run id, step, the step's time, metric, value.
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export compared metrics (CSV)' }).click();
  const csv = Buffer.concat(await (await (await download).createReadStream()).toArray()).toString('utf8');
  const lines = csv.trim().split('\n');
  expect(lines[0]).toBe('run_name,run_id,step,time,wall_s,metric,value');
  const rewardRows = lines.filter((l) => l.includes(',reward/mean,'));
  expect(rewardRows).toHaveLength(6);
  for (const row of rewardRows)
    expect(row).toMatch(/^grpo-arith · [^,]+,grpo-\S+,[12],\d{4}-\d\d-\d\dT[\d:.]+Z,[\d.]+,reward\/mean,[-\d.e]+$/);

  // Reward and length histograms over the kept steps, one figure per run.
  await page.getByText('Reward and response length histograms').click();
  await expect(page.getByTestId('compare-histograms')).toHaveCount(3);
  await expect(page.getByTestId('compare-histograms').first().getByRole('img').first()).toHaveAttribute(
    'aria-label',
    /^Reward histogram over 2 kept steps of /,
  );
});
