import { expect, test, type Page } from '@playwright/test';
import { exportedMetrics, fillFields, openPreset } from './helpers';

test('Experiments: grpo-arith with a staleness bound of 1 samples a batch ahead, and says so in the charts and the Batch view', async ({
  page,
}) => {
  await openPreset(page, 'grpo-arith', {
    Steps: 3,
    'Prompts per step': 8,
    'Group size': 8,
    'Evaluate every': 0,
    'Staleness bound': 1,
  });
  await page.getByText('Config as JSON').click();
  await expect(page.getByTestId('config-json')).toContainText('"staleness": 1');
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });

  // Batch 1 is on-policy; batches 2 and 3 were sampled one version before the weights they trained on.
  const { steps } = await exportedMetrics(page);
  expect(steps.map((s) => s.metrics['async/staleness_max'])).toEqual([0, 1, 1]);
  expect(steps.every((s) => s.metrics['trainer/idle_ratio'] >= 0 && s.metrics['rollouter/idle_ratio'] <= 1)).toBe(true);
  await expect(
    page.getByTestId('chart-staleness').getByRole('img', { name: /^Staleness \(versions behind\) by step/ }),
  ).toBeVisible();
  await expect(page.getByTestId('chart-idle')).toBeVisible();

  // The Batch view of a step sampled ahead that packed rows (a step whose groups all tie packs none):
  // the staleness layer, and a sampled cell that says how far behind it was.
  const ahead = steps.find((s) => s.step > 1 && s.metrics['batch/rows_needed'] > 0);
  expect(ahead, 'a step after the first with packed rows').toBeDefined();
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Batch' }).click();
  await expect(page.getByRole('heading', { name: /^Run grpo-arith · \S+ · step 3 of 3$/ })).toBeVisible();
  await page.getByRole('combobox', { name: 'Step' }).selectOption(String(ahead!.step));
  await page.getByRole('combobox', { name: 'Layer' }).selectOption({ label: 'Staleness' });
  await expect(page.getByTestId('batch-legend')).toHaveText(
    'light = 1 version behind, dark = 1 version behind; grey = not sampled',
  );
  const canvas = page.getByTestId('batch-canvas');
  const cell = page.getByTestId('batch-cell');
  await canvas.focus();
  for (let k = 0; k < 2000 && !/response mask: yes/.test((await cell.textContent()) ?? ''); k++)
    await page.keyboard.press('ArrowRight');
  await expect(cell).toHaveText(
    new RegExp(` · sampled by policy version ${ahead!.step - 2}, 1 behind the weights it trained on$`),
  );
  // The Groups view of that step: each completion says which version served it.
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Groups' }).click();
  await page.getByRole('combobox', { name: 'Step' }).selectOption(String(ahead!.step));
  await expect(page.getByRole('columnheader', { name: 'Sampled by' }).first()).toBeVisible();
  await expect(page.getByTestId('group-served').first()).toHaveText(`version ${ahead!.step - 2}, 1 behind`);
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Batch' }).click();
  // Step 1 trained on-policy: no staleness layer to pick.
  await page.getByRole('combobox', { name: 'Step' }).selectOption('1');
  await expect(page.getByRole('combobox', { name: 'Layer' }).getByRole('option', { name: 'Staleness' })).toHaveCount(0);
});

/** A small grpo-arith run that samples one batch ahead. */
const SMALL_AHEAD = { Steps: 3, 'Prompts per step': 4, 'Group size': 4, 'Evaluate every': 0, 'Staleness bound': 1 };

/** The sampler workers (worker/sampler-worker.ts) the page starts from now on, by URL, as they start. */
function watchSamplerWorkers(page: Page): () => string[] {
  const urls: string[] = [];
  page.on('worker', (w) => urls.push(w.url()));
  return () => urls.filter((u) => /sampler-worker/.test(u));
}

test('Experiments: with "Sample ahead in workers", a Web Worker per slot draws the batches ahead, with the numbers the trainer draws on wasm', async ({
  page,
}) => {
  const samplerWorkers = watchSamplerWorkers(page);
  const run = async (samplerWorker: boolean) => {
    await fillFields(page, SMALL_AHEAD);
    await page.getByRole('checkbox', { name: /^Sample ahead in workers/ }).setChecked(samplerWorker);
    await page.getByText('Config as JSON').click();
    await expect(page.getByTestId('config-json')).toContainText(`"samplerWorker": ${samplerWorker}`);
    await page.getByTestId('run-start').click();
    await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 120_000 });
    const { steps } = await exportedMetrics(page);
    // Timings differ between the two runs; every other figure is the same arithmetic on the same backend.
    return steps.map((s) => Object.entries(s.metrics).filter(([k]) => !/^perf\/|idle_ratio$/.test(k)));
  };
  await openPreset(page, 'grpo-arith');
  const inWorkers = await run(true);
  // One sampler worker per slot (s + 1 = 2), beside the trainer's worker.
  expect(samplerWorkers()).toHaveLength(2);
  const inTrainer = await run(false);
  expect(samplerWorkers()).toHaveLength(2);
  expect(inWorkers).toEqual(inTrainer);
  expect(inWorkers.map((m) => Object.fromEntries(m)['async/staleness_max'])).toEqual([0, 1, 1]);
});

test('Experiments: the trainer on WebGPU, the batches sampled ahead in wasm sampler workers (the CPU samples while the GPU trains)', async ({
  page,
}) => {
  const samplerWorkers = watchSamplerWorkers(page);
  await openPreset(page, 'grpo-arith', SMALL_AHEAD, 'webgpu');
  await page.getByRole('checkbox', { name: /^Sample ahead in workers/ }).check();
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });
  expect(samplerWorkers()).toHaveLength(2);
  const { steps } = await exportedMetrics(page);
  expect(steps.map((s) => s.metrics['async/staleness_max'])).toEqual([0, 1, 1]);
});
