import { readFile } from 'node:fs/promises';
import { expect, test } from '@playwright/test';
import { parquetReadObjects } from 'hyparquet';
import { openPreset } from './helpers';

// A short grpo-arith run, then the runs table's Export for verl and Export for TRL: the files
// download, and what is in them is what the run sampled (one rollout row per session).
test('Runs table: Export for verl downloads rollouts, prompts and the launch; Export for TRL the datasets and config', async ({
  page,
}) => {
  const P = 3;
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
  const runId = (await page.getByRole('heading', { name: /^Run / }).textContent())!.replace('Run ', '');
  const row = page.getByTestId('stored-runs').getByRole('row', { name: new RegExp(runId) });
  await row.getByRole('button', { name: /^Details of/ }).click();

  const downloads = async (button: string, n: number) => {
    const files = new Map<string, Buffer>();
    const done = new Promise<void>((resolve) => {
      page.on('download', (d) => {
        void d.path().then(async (path) => {
          files.set(d.suggestedFilename(), await readFile(path));
          if (files.size === n) resolve();
        });
      });
    });
    await page.getByRole('button', { name: button }).click();
    await done;
    page.removeAllListeners('download');
    return files;
  };

  const verl = await downloads('Export for verl', 3);
  const name = (f: string) => [...verl.keys(), ''].find((k) => k.endsWith(f)) ?? f;
  const rollouts = await parquetReadObjects({ file: new Uint8Array(verl.get(name('rollouts.parquet'))!).buffer });
  expect(rollouts).toHaveLength(2 * P * G);
  expect(new Set(rollouts.map((r) => r.uid)).size).toBe(2 * P);
  for (const r of rollouts) {
    expect(r.input).toMatch(/^\d+\+\d+=$/);
    expect((r.response_ids as number[]).length).toBe((r.rollout_log_probs as number[]).length);
  }
  const prompts = await parquetReadObjects({ file: new Uint8Array(verl.get(name('train.parquet'))!).buffer });
  expect(prompts[0].reward_model).toEqual({ style: 'rule', ground_truth: expect.stringMatching(/^-?\d+$/) });
  expect(verl.get(name('launch.sh'))!.toString()).toContain('python3 -m verl.trainer.main_ppo');
  await expect(page.getByText(/Exported .* for verl: .*rollouts\.parquet \(.*\)/)).toBeVisible();

  const trl = await downloads('Export for TRL', 3);
  const grpo = [...trl.entries()]
    .find(([k]) => k.endsWith('grpo.jsonl'))![1]
    .toString()
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { prompt: string; solution: string });
  expect(grpo.length).toBe(prompts.length);
  expect(grpo[0]).toEqual({ prompt: prompts[0].prompt[0].content, solution: prompts[0].reward_model.ground_truth });
  expect([...trl.entries()].find(([k]) => k.endsWith('config.py'))![1].toString()).toContain('GRPOConfig(');
});
