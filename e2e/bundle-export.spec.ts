import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { openPreset, unzipStored } from './helpers';

// A short grpo-arith run, then its Details' Bundle for verl: one .zip of what dewpoint export RUN
// --to verl writes, model/ from the run's last checkpoint, and the preflight listed in the page
// (the shipped base is refused by name: head_dim 16, a character tokenizer). reward.py, run by
// python3 over the zip's parity.jsonl, gives the scores the app gave.
test('Runs table: Bundle for verl downloads the bundle with the run’s weights and shows the preflight', async ({
  page,
}) => {
  const P = 2;
  const G = 4;
  await openPreset(page, 'grpo-arith', {
    Steps: 2,
    'Prompts per step': P,
    'Group size': G,
    'Evaluate every': 0,
    'Checkpoint every': 0,
  });
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 120_000 });
  const runId = (await page.getByRole('heading', { name: /^Run \w+-\w+-\d+$/ }).textContent())!.replace('Run ', '');
  const row = page.getByTestId('stored-runs').getByRole('row', { name: new RegExp(runId) });
  await row.getByRole('button', { name: /^Details of/ }).click();

  const [d] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Bundle for verl' }).click(),
  ]);
  const name = `dewpoint-${runId}-verl-bundle.zip`;
  expect(d.suggestedFilename()).toBe(name);
  const files = unzipStored(await readFile((await d.path())!));
  expect([...files.keys()].sort()).toEqual(
    [
      'model/config.json',
      'model/dewpoint.json',
      'model/model.safetensors',
      'model/tokenizer.json',
      'rollouts.parquet',
      'train.parquet',
      'val.parquet',
      'reward.py',
      'parity.jsonl',
      'launch.sh',
      'preflight.json',
      'README.md',
    ].sort(),
  );
  await expect(
    page.getByText(
      new RegExp(`Bundled .* for verl: ${name.replace(/\./g, '\\.')} .*model/ from the checkpoint of step 2`),
    ),
  ).toBeVisible();
  await expect(page.getByText(/preflight refused: head-dim-multiple-of-32, hf-tokenizer/)).toBeVisible();
  const preflight = page.getByRole('region', { name: 'Preflight of the verl bundle' });
  await expect(
    preflight.getByRole('listitem').filter({ hasText: /^head-dim-multiple-of-32: refused\. head_dim = 16/ }),
  ).toBeVisible();
  await expect(preflight.getByRole('listitem').filter({ hasText: /^reward-twin: pass\./ })).toBeVisible();
  expect(JSON.parse(files.get('preflight.json')!.toString()).map((c: { rule: string }) => c.rule)).toEqual(
    await preflight.getByRole('listitem').locator('strong').allTextContents(),
  );

  // The weights are the run's, not the shipped base's; reward.py agrees with the app's scores.
  const baseWeights = await readFile('public/checkpoints/arith-base/model.safetensors');
  expect(files.get('model/model.safetensors')!.equals(baseWeights)).toBe(false);
  expect(files.get('model/model.safetensors')!.length).toBe(baseWeights.length);
  const dir = mkdtempSync(join(tmpdir(), 'dewpoint-bundle-e2e-'));
  for (const f of ['reward.py', 'parity.jsonl']) writeFileSync(join(dir, f), files.get(f)!);
  const check = spawnSync('/usr/bin/python3', ['reward.py', 'check', 'parity.jsonl'], { cwd: dir, encoding: 'utf8' });
  expect(JSON.parse(check.stdout)).toMatchObject({ reward: 'math', rows: 2 * P * G, equal: 2 * P * G, differ: [] });
});
