import { expect, test } from '@playwright/test';
import { openPreset } from './helpers';

test('a finished GRPO run survives a reload: its metrics, groups and batches come back from IndexedDB', async ({
  page,
}) => {
  await openPreset(page, 'grpo-arith', { Steps: 2, 'Prompts per step': 2, 'Group size': 2, 'Evaluate every': 0 });
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });
  const reward = await page.getByTestId('metric-reward-mean').textContent();
  const runId = (await page.getByRole('heading', { name: /^Run / }).textContent())!.replace('Run ', '');

  await page.reload();
  await expect(page.getByText('Kept in this browser (IndexedDB): they survive a reload.')).toBeVisible();
  const row = page.getByTestId('stored-runs').getByRole('row', { name: new RegExp(runId) });
  await expect(row).toContainText('finished');
  await expect(row).toContainText('2 / 2');
  await row.getByRole('button', { name: `Open run ${runId}` }).click();
  await expect(page.getByTestId('run-status')).toHaveText('finished');
  await expect(page.getByTestId('run-step')).toHaveText('2');
  await expect(page.getByTestId('metric-reward-mean')).toHaveText(reward!);

  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Groups' }).click();
  await expect(page.getByRole('combobox', { name: 'Step' })).toHaveValue('2');
  await expect(page.getByTestId('group')).toHaveCount(2);
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Batch' }).click();
  await expect(page.getByTestId('batch-summary')).toContainText(/[12] rows? × 46 ids/);
});

test('a GRPO run cut off by a reload is listed as interrupted and continues from its last checkpoint to the end', async ({
  page,
}) => {
  // WebGPU over SwiftShader: slow enough steps that the reload lands mid-run (wasm would finish first).
  await openPreset(
    page,
    'grpo-arith',
    { Steps: 30, 'Prompts per step': 2, 'Group size': 2, 'Evaluate every': 0, 'Checkpoint every': 1 },
    'webgpu',
  );
  await page.getByTestId('run-start').click();
  // 30 short steps: the reload lands mid-run whatever this machine's speed (with 3, a fast run
  // could finish before the first checkpoint's text was seen).
  await expect(page.getByText(/Latest checkpoint: step \d+,/)).toBeVisible({ timeout: 170_000 });
  const runId = (await page.getByRole('heading', { name: /^Run / }).textContent())!.replace('Run ', '');

  // The reload ends the worker mid-run (once the page's "leave?" question is answered): the store still says 'running'.
  page.on('dialog', (d) => void d.accept());
  await page.reload();
  const row = page.getByTestId('stored-runs').getByRole('row', { name: new RegExp(runId) });
  await expect(row).toContainText('interrupted');
  await expect(row).toContainText(/checkpoint \d+/);
  const continueName = new RegExp(`^Continue run ${runId} from step \\d+$`);
  await expect(row.getByRole('button', { name: continueName })).toBeEnabled();
  // The top of the page names the interrupted run, above the form, with its Continue button.
  const notice = page.getByRole('region', { name: 'Interrupted run' });
  await expect(notice).toContainText(new RegExp(`\\(run ${runId}\\) was cut off at step \\d+ of 30`));
  const [noticeTop, formTop] = await Promise.all(
    [notice, page.getByRole('form', { name: 'Run options' })].map(async (l) => (await l.boundingBox())!.y),
  );
  expect(noticeTop).toBeLessThan(formTop);
  await notice.getByRole('button', { name: continueName }).click();
  await expect(page.getByRole('heading', { name: `Run ${runId}` })).toBeFocused();
  await expect(notice).toHaveCount(0);
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });
  await expect(page.getByTestId('run-step')).toHaveText('30');
  await expect(row).toContainText('finished');
  await expect(row).toContainText('30 / 30');
  await expect(row.getByRole('button', { name: /^Continue/ })).toHaveCount(0);
});

test('a run live in another tab is listed as running there and cannot be continued; once that tab closes it is interrupted', async ({
  page,
  context,
}) => {
  // WebGPU over SwiftShader: slow enough steps that the reload lands mid-run (wasm would finish first).
  await openPreset(
    page,
    'grpo-arith',
    { Steps: 30, 'Prompts per step': 2, 'Group size': 2, 'Evaluate every': 0, 'Checkpoint every': 1 },
    'webgpu',
  );
  await page.getByTestId('run-start').click();
  await expect(page.getByText(/Latest checkpoint: step \d+,/)).toBeVisible({ timeout: 170_000 });
  const runId = (await page.getByRole('heading', { name: /^Run / }).textContent())!.replace('Run ', '');

  // A second tab of the same origin: same IndexedDB, same Web Locks, its own worker.
  const other = await context.newPage();
  await other.goto('/#/experiments');
  const row = other.getByTestId('stored-runs').getByRole('row', { name: new RegExp(runId) });
  await expect(row).toContainText(/(running|paused) in another tab/);
  await expect(row.getByRole('button', { name: /^Continue/ })).toHaveCount(0);

  // Closing the running tab releases its lock: the run was interrupted there and continues here.
  await page.close();
  await other.reload();
  await expect(row).toContainText('interrupted');
  await expect(row.getByRole('button', { name: new RegExp(`^Continue run ${runId} from step \\d+$`) })).toBeEnabled();
});
