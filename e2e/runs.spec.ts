import { expect, test, type Page } from '@playwright/test';
import { exportedMetrics, openPreset, showRunForm } from './helpers';

const SMALL = { Steps: 6, 'Prompts per step': 2, 'Group size': 2, 'Evaluate every': 0, 'Checkpoint every': 0 };

const runIdOf = async (page: Page) =>
  (await page.getByRole('heading', { name: /^Run / }).textContent())!.replace('Run ', '');

test('Stop during a step: the step is stored and reported as the last one, a checkpoint is written, and the run continues from it', async ({
  page,
}) => {
  // The preset's 16 × 8 sequences on WebGPU over SwiftShader: a step long enough that Stop lands in its sampling.
  await openPreset(page, 'grpo-arith', { ...SMALL, 'Prompts per step': 16, 'Group size': 8 }, 'webgpu');
  await page.getByTestId('run-start').click();
  // Before the first step the dashboard already labels a GRPO run's loss as GRPO's, not SFT's.
  await expect(page.getByText('Loss (loss/total)')).toBeVisible();
  await expect(page.getByTestId('run-step')).toHaveText('1', { timeout: 120_000 });
  // The phase of the step under way, then Stop while step 2 is being sampled.
  await expect(page.getByTestId('run-phase')).toContainText(/Step [2-5]: sampling: \d+ \/ 128 sequences finished/);
  await expect(page.getByTestId('run-timing')).toContainText(/Elapsed .* s per step · about .* left \(ETA/);
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(page.getByTestId('run-phase')).toContainText(
    'stopping… (the step under way finishes and is stored first)',
  );
  await expect(page.getByTestId('run-status')).toHaveText('stopped', { timeout: 120_000 });
  const last = Number(await page.getByTestId('run-step').textContent());
  expect(last).toBeGreaterThanOrEqual(2);
  await expect(
    page.getByRole('status').filter({ hasText: `stopped after step ${last}; continue from its checkpoint` }),
  ).toBeVisible();
  await expect(page.getByText(/could not be stored/)).toHaveCount(0);
  // The stop's checkpoint can be downloaded.
  await expect(page.getByText(new RegExp(`Latest checkpoint: step ${last}, \\d+ KiB`))).toBeVisible();
  await page.getByRole('button', { name: 'Prepare download' }).click();
  await expect(
    page.getByRole('list', { name: 'Checkpoint files' }).getByRole('link', { name: 'model.safetensors' }),
  ).toBeVisible();

  const runId = await runIdOf(page);
  const row = page.getByTestId('stored-runs').getByRole('row', { name: new RegExp(runId) });
  await expect(row).toContainText(`${last} / 6`);
  await expect(row).toContainText(`checkpoint ${last}`);
  await expect(row.getByRole('button', { name: `Continue run ${runId} from step ${last}` })).toBeEnabled();
  // Continue is offered right where the dashboard says "continue from its checkpoint".
  const message = page.getByTestId('run-dashboard').locator('.run-message');
  await expect(message.getByRole('status')).toHaveText(`stopped after step ${last}; continue from its checkpoint`);
  await message.getByRole('button', { name: `Continue run ${runId} from step ${last}` }).click();
  await expect(page.getByRole('heading', { name: `Run ${runId}` })).toBeFocused();
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });
  await expect(page.getByTestId('run-step')).toHaveText('6');
});

test('Reload mid-run asks first; after it the page does not claim there is no run while stored runs are listed', async ({
  page,
}) => {
  // The page warns only while its run is live (running or paused): a reload after the run ended
  // meets no handler and no dialog, so the run must not be able to end first. Paused, it stays
  // live whatever the machine's speed and the page is idle (no step events to render) when the
  // browser asks it; the Pause click is also a user gesture, which Chromium requires before it
  // shows a beforeunload dialog. The preset's 16 × 8 sequences on WebGPU over SwiftShader: steps
  // of a second or more, so Pause is clicked on a settled dashboard (as in controls.spec.ts).
  await openPreset(page, 'grpo-arith', { ...SMALL, Steps: 5000, 'Prompts per step': 16, 'Group size': 8 }, 'webgpu');
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-step')).toHaveText(/^[1-9]/, { timeout: 120_000 });
  await page.getByRole('button', { name: 'Pause' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('paused', { timeout: 120_000 });
  await expect(page.getByText('pausing…')).toHaveCount(0);
  const runId = await runIdOf(page);
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.type());
    void d.accept();
  });
  await page.reload();
  expect(dialogs).toEqual(['beforeunload']);
  await expect(page.getByTestId('stored-runs').getByRole('row', { name: new RegExp(runId) })).toContainText(
    'interrupted',
  );
  await expect(page.getByText('No run yet')).toHaveCount(0);
  await expect(
    page.getByText('No run open: start one above, or open a stored run from the table below.'),
  ).toBeVisible();
});

test('Runs table: name, notes, filter, sort, config and run again, exports with the config and as CSV, compare two runs, delete with a confirmation', async ({
  page,
}) => {
  // Two short runs that differ in one option: the learning rate. The first evaluates before training (step 0).
  await openPreset(page, 'grpo-arith', { ...SMALL, Steps: 2, 'Evaluate every': 2, 'Held-out tasks': 4 });
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });
  const first = await runIdOf(page);
  const metrics = await exportedMetrics(page);
  expect(metrics.evals.map((e) => e.step)).toEqual([0, 2]);
  expect((metrics as unknown as { config: { lr: number; steps: number } }).config).toMatchObject({
    lr: 1e-4,
    steps: 2,
  });
  // Version 3: the run's name (the default, preset and id's time part) and each step's commit time (ms since the epoch).
  const file = metrics as unknown as { version: number; name: string; steps: { step: number; t?: number }[] };
  expect(file.version).toBe(3);
  expect(file.name).toMatch(/^grpo-arith · /);
  expect(file.steps.map((s) => s.step)).toEqual([1, 2]);
  const [t1, t2] = file.steps.map((s) => s.t!);
  expect(t1).toBeGreaterThan(Date.now() - 600_000);
  expect(t2).toBeGreaterThanOrEqual(t1);
  expect(t2).toBeLessThanOrEqual(Date.now());
  const csv = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export metrics (CSV)' }).click();
  const lines = Buffer.concat(await (await (await csv).createReadStream()).toArray())
    .toString('utf8')
    .split('\n');
  expect(lines[0]).toMatch(/^step,run_name,time,.*reward\/mean.*,eval\/accuracy,eval\/mean_length,eval\/n$/);
  // Step 0 (the evaluation before training) has no commit time; step 1's is the JSON's, as ISO 8601.
  expect(lines[1].split(',').slice(0, 3)).toEqual(['0', file.name, '']);
  expect(lines[2].split(',').slice(0, 3)).toEqual(['1', file.name, new Date(t1).toISOString()]);

  await showRunForm(page);
  await page.getByRole('spinbutton', { name: /^Learning rate/ }).fill('0.0003');
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });
  const second = await runIdOf(page);
  const table = page.getByTestId('stored-runs');
  await expect(table.getByRole('row', { name: new RegExp(second) })).toContainText(
    'lr 0.0003 · 2 × 2 · ppo, token-mean · β 0',
  );
  await expect(table.getByRole('row', { name: new RegExp(second) })).toContainText('wasm');

  // Name and notes, kept by the worker.
  await table
    .getByRole('button', { name: /^Details of grpo-arith · / })
    .first()
    .click();
  await page.getByRole('textbox', { name: 'Name' }).fill('lr 3e-4 probe');
  await page.getByRole('button', { name: 'Save name' }).click();
  await expect(table.getByRole('row', { name: /^Compare lr 3e-4 probe/ })).toContainText(second);
  await page.getByRole('textbox', { name: 'Notes' }).fill('reward rises faster?');
  await page.getByRole('button', { name: 'Save notes' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved the notes' })).toBeVisible();
  // The dashboard's export names the run as the table does.
  await expect
    .poll(async () => ((await exportedMetrics(page)) as unknown as { name: string }).name)
    .toBe('lr 3e-4 probe');

  // Its exact config, and "Run again" puts it in the form.
  await expect(page.getByTestId('run-config')).toContainText('"lr": 0.0003');
  await showRunForm(page);
  await page.getByRole('spinbutton', { name: /^Learning rate/ }).fill('0.002');
  // Collapsed again: "Run again" opens the form it fills.
  await page.getByRole('button', { name: /^New run/ }).click();
  await expect(page.getByRole('form', { name: 'Run options' })).toBeHidden();
  await page.getByRole('button', { name: 'Run again with this config' }).click();
  await expect(page.getByRole('spinbutton', { name: /^Learning rate/ })).toBeVisible();
  await expect(page.getByRole('spinbutton', { name: /^Learning rate/ })).toHaveValue('0.0003');

  // Filter by the notes, then sort by name.
  await page.getByRole('searchbox', { name: 'Filter' }).fill('faster');
  await expect(table.getByRole('row')).toHaveCount(3); // header, the run, its details
  await page.getByRole('searchbox', { name: 'Filter' }).fill('');
  await table.getByRole('button', { name: /^Name/ }).click();
  await expect(table.getByRole('columnheader', { name: /^Name/ })).toHaveAttribute('aria-sort', 'descending');

  // Compare the two: one line per run named in the legend, and the differing field marked.
  await page.getByRole('checkbox', { name: 'Compare lr 3e-4 probe' }).check();
  await page.getByRole('checkbox', { name: new RegExp(`^Compare grpo-arith · ${first.split('-')[1]}$`) }).check();
  await page.getByRole('link', { name: 'Compare selected (2)' }).click();
  await expect(page.getByRole('heading', { name: 'Compare runs' })).toBeVisible();
  await expect(page.getByTestId('compare-panel').first()).toHaveAttribute('data-metric', 'reward/mean');
  await expect(
    page.locator('[data-testid="compare-panel"][data-metric="reward/mean"]').getByRole('img'),
  ).toHaveAttribute('aria-label', /one line per run: lr 3e-4 probe \(2 points\), grpo-arith · .* \(2 points\)$/);
  const differs = page.getByTestId('compare-config').locator('tr[data-differs="true"]');
  await expect(differs).toHaveCount(1);
  await expect(differs).toContainText('lr');
  await expect(differs).toContainText('0.0003');

  // Delete one, behind a confirmation that says what goes; the table says how much it freed.
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Experiments' }).click();
  await page.getByRole('button', { name: 'Details of lr 3e-4 probe' }).click();
  await page.getByRole('button', { name: 'Delete…' }).click();
  await expect(page.getByRole('group', { name: 'Confirm deleting lr 3e-4 probe' })).toContainText(
    '2 steps with their groups, batches and sessions, and its checkpoint',
  );
  await page.getByRole('button', { name: 'Delete permanently' }).click();
  await expect(
    page.getByRole('status').filter({
      hasText:
        /^Deleted lr 3e-4 probe: 2 steps and every other record of it, about [\d.]+ (kB|MB) of stored data freed\.$/,
    }),
  ).toBeVisible();
  await expect(table.getByRole('row', { name: new RegExp(second) })).toHaveCount(0);
  await page.reload();
  await expect(page.getByTestId('stored-runs').getByRole('row', { name: new RegExp(first) })).toBeVisible();
  await expect(page.getByTestId('stored-runs').getByRole('row', { name: new RegExp(second) })).toHaveCount(0);
});
