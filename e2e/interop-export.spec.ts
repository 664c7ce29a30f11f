import { readFile } from 'node:fs/promises';
import { expect, test } from '@playwright/test';
import { parquetReadObjects } from 'hyparquet';
import { openPreset, unzipStored } from './helpers';

// A short grpo-arith run, then the runs table's Export for verl and Export for TRL: each is one
// .zip download (a browser would stop a second download to ask), and what is in it is what the
// run sampled (one rollout row per session) and the held-out tasks its launch and config evaluate on.
test(
  'Runs table: Export for verl downloads one zip of rollouts, prompts, held-out tasks and the launch; ' +
    'Export for TRL one of the datasets and config',
  async ({ page }) => {
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
    // The live run's heading, "Run <id>" (not another heading that starts with "Run", e.g. "Run health").
    const runId = (await page.getByRole('heading', { name: /^Run \w+-\w+-\d+$/ }).textContent())!.replace('Run ', '');
    const row = page.getByTestId('stored-runs').getByRole('row', { name: new RegExp(runId) });
    await row.getByRole('button', { name: /^Details of/ }).click();

    /** The one download a button starts (a second would fail the test), as the files in its zip. */
    const download = async (button: string, name: string) => {
      const names: string[] = [];
      page.on('download', (d) => names.push(d.suggestedFilename()));
      const [d] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: button }).click(),
      ]);
      expect(d.suggestedFilename()).toBe(name);
      const files = unzipStored(await readFile((await d.path())!));
      await expect(
        page.getByText(new RegExp(`Exported .* for .*: ${name.replace(/\./g, '\\.')} \\(.*\\) with`)),
      ).toBeVisible();
      expect(names).toEqual([name]);
      page.removeAllListeners('download');
      return files;
    };

    const verl = await download('Export for verl', `dewpoint-${runId}-verl.zip`);
    expect([...verl.keys()]).toEqual(['rollouts.parquet', 'train.parquet', 'val.parquet', 'launch.sh']);
    const parquet = (b: Buffer) => parquetReadObjects({ file: new Uint8Array(b).buffer });
    const rollouts = await parquet(verl.get('rollouts.parquet')!);
    expect(rollouts).toHaveLength(2 * P * G);
    expect(new Set(rollouts.map((r) => r.uid)).size).toBe(2 * P);
    for (const r of rollouts) {
      expect(r.input).toMatch(/^\d+\+\d+=$/);
      expect((r.response_ids as number[]).length).toBe((r.rollout_log_probs as number[]).length);
    }
    const prompts = await parquet(verl.get('train.parquet')!);
    expect(prompts[0].reward_model).toEqual({ style: 'rule', ground_truth: expect.stringMatching(/^-?\d+$/) });
    // The held-out tasks (evalN of them, none a training prompt) that launch.sh's data.val_files validates on.
    const val = await parquet(verl.get('val.parquet')!);
    expect(val).toHaveLength(100);
    const trained = new Set(prompts.map((p) => p.prompt[0].content as string));
    expect(val.filter((v) => trained.has(v.prompt[0].content as string))).toEqual([]);
    const launch = verl.get('launch.sh')!.toString();
    expect(launch).toContain('python3 -m verl.trainer.main_ppo');
    expect(launch).toContain('data.val_files=$VAL_FILES');
    expect(launch).toContain('VAL_FILES=val.parquet (100 held-out tasks)');

    const trl = await download('Export for TRL', `dewpoint-${runId}-trl.zip`);
    expect([...trl.keys()]).toEqual(['grpo.jsonl', 'grpo-eval.jsonl', 'dpo.jsonl', 'config.py']);
    const lines = (name: string) =>
      trl
        .get(name)!
        .toString()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { prompt: string; solution: string });
    const grpo = lines('grpo.jsonl');
    expect(grpo.length).toBe(prompts.length);
    expect(grpo[0]).toEqual({ prompt: prompts[0].prompt[0].content, solution: prompts[0].reward_model.ground_truth });
    expect(lines('grpo-eval.jsonl')).toEqual(
      val.map((v) => ({ prompt: v.prompt[0].content, solution: v.reward_model.ground_truth })),
    );
    expect(trl.get('config.py')!.toString()).toContain('GRPOConfig(');
  },
);
