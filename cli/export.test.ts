import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { parquetReadObjects } from 'hyparquet';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PRESETS } from '../worker/presets/table';
import { main } from './main';
import { capture } from './testing/capture';

afterEach(() => vi.restoreAllMocks());

/** A preset's "Config as JSON" (optionally changed) written to a temporary file. */
function config(preset: string, patch: Record<string, unknown> = {}): string {
  const file = join(mkdtempSync(join(tmpdir(), 'dewpoint-export-')), 'run.json');
  writeFileSync(file, JSON.stringify({ ...PRESETS.find((p) => p.name === preset)!.defaults, ...patch }));
  return file;
}

describe('dewpoint export', () => {
  it('--to verl prints a shell script with the launch and the unmapped options as comments, and --out writes it', async () => {
    const { out, err } = capture();
    const file = config('grpo-arith', {
      policyLoss: { name: 'ppo', clipHigh: 0.28 },
      rejection: { token_k1: 2, seq_mean_k3: 0.01 },
    });
    const script = join(mkdtempSync(join(tmpdir(), 'dewpoint-export-out-')), 'run_verl.sh');
    expect(await main(['export', '--config', file, '--to', 'verl', '--out', script])).toBe(0);
    const text = out.join('');
    expect(text.startsWith('#!/usr/bin/env bash\n')).toBe(true);
    expect(text).toContain('python3 -m verl.trainer.main_ppo \\\n    data.train_files=$TRAIN_FILES \\\n');
    expect(text).toContain('    actor_rollout_ref.actor.clip_ratio_high=0.28 \\\n');
    expect(text).toContain(`    'algorithm.rollout_correction.rollout_rs="token_k1,seq_mean_k3"' \\\n`);
    expect(text).toMatch(
      /\n# Not mapped \(4\):\n# {3}preset = grpo-arith \[no equivalent\]: .*\n# {3}maskZeroAdvantage = true \[no equivalent\]: .*\n# {3}truncation = mask \[no equivalent\]: .*\n# {3}entropyBonus.kind = off \[target default\]: .*\n$/,
    );
    // Every line is a comment or part of the one command (continued with a backslash).
    const body = text.split('\n').filter((l) => l && !l.startsWith('#'));
    expect(body.slice(0, -1).every((l) => l.endsWith(' \\'))).toBe(true);
    expect(readFileSync(script, 'utf8')).toBe(text);
    expect(err.join('')).toMatch(/export grpo-arith to verl: wrote .*run_verl\.sh \(4 options not mapped\)/);
  });

  it('--config takes a partial config as train --config does: the rest from the preset’s defaults', async () => {
    const { out } = capture();
    const file = join(mkdtempSync(join(tmpdir(), 'dewpoint-export-')), 'run.json');
    writeFileSync(file, JSON.stringify({ preset: 'grpo-arith', steps: 7, policyLoss: { name: 'gspo' } }));
    expect(await main(['export', '--config', file, '--to', 'verl'])).toBe(0);
    expect(out.join('')).toContain('    trainer.total_training_steps=7 \\\n');
    expect(out.join('')).toContain('    actor_rollout_ref.actor.policy_loss.loss_mode=gspo \\\n');
    expect(out.join('')).toContain('    data.train_batch_size=16 \\\n');
  });

  it('--to trl prints the Python constructor (DPOConfig for dpo-arith); --json the whole export', async () => {
    const { out } = capture();
    expect(await main(['export', '--config', config('dpo-arith'), '--to', 'trl'])).toBe(0);
    const text = out.join('');
    expect(text).toContain('from trl import DPOConfig\n\nconfig = DPOConfig(\n');
    expect(text).toContain('    loss_type=["sigmoid", "sft"],\n');
    expect(text).toMatch(/# {3}samplesPerPrompt = 8 \[no equivalent\]: pair construction/);
    out.length = 0;
    expect(await main(['export', '--config', config('ppo-arith'), '--to', 'trl', '--json'])).toBe(0);
    const json = JSON.parse(out.join(''));
    expect(json).toMatchObject({
      ok: true,
      className: 'PPOConfig',
      module: 'trl.experimental.ppo',
      kwargs: { vf_coef: 0.5, cliprange_value: 0.2 },
    });
    expect(json.unmapped.some((u: { path: string }) => u.path === 'policyLoss.dualClip')).toBe(true);
  });

  it('a preset the target cannot take ends with exit code 1 and the reason', async () => {
    const { out, err } = capture();
    expect(await main(['export', '--config', config('flowgrpo-2d'), '--to', 'trl'])).toBe(1);
    expect(await main(['export', '--config', config('dpo-arith'), '--to', 'verl'])).toBe(1);
    expect(await main(['export', '--config', config('sft-arith'), '--to', 'verl'])).toBe(1);
    expect(err.join('')).toMatch(
      /cannot export to trl: flowgrpo-2d trains a 2-D rectified-flow policy[\s\S]*cannot export to verl: dpo-arith is DPO[\s\S]*cannot export to verl: sft-arith is supervised/,
    );
    expect(out.join('')).toBe('');
  });

  it('refuses bad usage and invalid options with exit code 2, naming the field', async () => {
    const { err } = capture();
    expect(await main(['export', '--to', 'verl'])).toBe(2);
    expect(await main(['export', '--config', config('grpo-arith'), '--to', 'openrlhf'])).toBe(2);
    expect(await main(['export', '--config', config('grpo-arith', { temperature: 0 }), '--to', 'verl'])).toBe(2);
    const bad = join(mkdtempSync(join(tmpdir(), 'dewpoint-export-')), 'bad.json');
    writeFileSync(bad, '{ nope');
    expect(await main(['export', '--config', bad, '--to', 'trl'])).toBe(2);
    const message = err.join('');
    expect(message).toContain('dewpoint export: a run folder (dewpoint train --save DIR) or --config FILE');
    expect(message).toContain("dewpoint export: --to must be one of verl, trl, skyrl, got 'openrlhf'");
    expect(message).toMatch(
      /invalid run options in .*run\.json:\n {2}Temperature \(temperature\) must be a number in \(0, 10\], got 0/,
    );
    expect(message).toMatch(/bad\.json is not JSON/);
  });

  it('train --save RUN keeps each step; export RUN --to verl|trl writes the files from it', async () => {
    const { out, err } = capture();
    const run = join(mkdtempSync(join(tmpdir(), 'dewpoint-run-')), 'run');
    expect(
      await main([
        'train',
        '--preset',
        'grpo-arith',
        '--steps',
        '2',
        '--prompts',
        '2',
        '--eval-every',
        '0',
        '--backend',
        'cpu',
        '--save',
        run,
      ]),
    ).toBe(0);
    expect(err.join('')).toContain(`saving each step's groups and rollouts to ${run}`);
    expect(readdirSync(run).sort()).toEqual(['model', 'run.json', 'steps.jsonl']);
    out.length = 0;
    // The bundle is written, and the preflight refuses the shipped base for vLLM (exit 1), naming each rule.
    expect(await main(['export', run, '--to', 'verl'])).toBe(1);
    const verlFiles = [
      'README.md',
      'launch.sh',
      'model',
      'parity.json',
      'parity.jsonl',
      'preflight.json',
      'reward.py',
      'rollouts.parquet',
      'train.parquet',
      'val.parquet',
    ];
    expect(readdirSync(join(run, 'verl')).sort()).toEqual(verlFiles);
    const modelFiles = ['config.json', 'dewpoint.json', 'model.safetensors', 'tokenizer.json'];
    expect(readdirSync(join(run, 'verl', 'model')).sort()).toEqual(modelFiles);
    expect(out.join('').trim().split('\n').sort()).toEqual(
      [...verlFiles.filter((f) => f !== 'model'), ...modelFiles.map((f) => `model/${f}`)]
        .map((f) => join(run, 'verl', f))
        .sort(),
    );
    expect(err.join('')).toMatch(/preflight refused \(head-dim-multiple-of-32\): head_dim = 16 \(config\.json\)/);
    expect(err.join('')).toMatch(
      /preflight refused \(hf-tokenizer\): tokenizer\.json is Dewpoint's character tokenizer/,
    );
    // reward.py, run by python3 over the run's own rollouts, gives Dewpoint's score on every one.
    expect(JSON.parse(readFileSync(join(run, 'verl', 'parity.json'), 'utf8'))).toMatchObject({
      ran: true,
      reward: 'math',
      rows: 32,
      equal: 32,
      differ: [],
    });
    expect(err.join('')).toContain("reward.py gives Dewpoint's score on 32 of 32 rollouts");
    // The weights are the run's last ones: the bundle's model/ is the run folder's, byte for byte, and not the base.
    for (const f of modelFiles.filter((f) => f !== 'dewpoint.json'))
      expect(readFileSync(join(run, 'verl', 'model', f)).equals(readFileSync(join(run, 'model', f))), f).toBe(true);
    expect(
      readFileSync(join(run, 'model', 'model.safetensors')).equals(
        readFileSync(join('public', 'checkpoints', 'arith-base', 'model.safetensors')),
      ),
    ).toBe(false);
    const launchSh = readFileSync(join(run, 'verl', 'launch.sh'), 'utf8');
    expect(launchSh).toContain(
      '    custom_reward_function.path=$HERE/reward.py \\\n    custom_reward_function.name=compute_score\n',
    );
    expect(launchSh).toContain('if [ -z "${MODEL_PATH:-}" ]; then');
    // Both key sets, read back with hyparquet (DuckDB's reader checks the layout in worker/interop/rollouts.test.ts).
    const train = await parquetReadObjects({
      file: new Uint8Array(readFileSync(join(run, 'verl', 'train.parquet'))).buffer,
    });
    expect(Object.keys(train[0]).sort()).toEqual(
      ['ability', 'data_source', 'env_class', 'extra_info', 'prompt', 'reward_model', 'reward_spec'].sort(),
    );
    expect(train[0].reward_spec).toEqual({ method: 'rule', ground_truth: train[0].reward_model.ground_truth });
    // 2 steps x 2 prompts x the preset's 8 samples, each with its ids and log-probs.
    const rows = await parquetReadObjects({
      file: new Uint8Array(readFileSync(join(run, 'verl', 'rollouts.parquet'))).buffer,
    });
    expect(rows).toHaveLength(32);
    expect(new Set(rows.map((r) => r.step))).toEqual(new Set([1, 2]));
    for (const r of rows) expect((r.response_ids as number[]).length).toBe((r.rollout_log_probs as number[]).length);
    expect(err.join('')).toContain(`export grpo-arith to verl: 12 files in ${join(run, 'verl')}`);
    // The held-out tasks the launch's data.val_files names: the trainer's evalN (the CLI's, as train used it).
    const val = await parquetReadObjects({
      file: new Uint8Array(readFileSync(join(run, 'verl', 'val.parquet'))).buffer,
    });
    const launch = readFileSync(join(run, 'verl', 'launch.sh'), 'utf8');
    expect(launch).toContain(`    data.val_max_samples=${val.length} `);
    expect(launch).toContain('VAL_FILES="${VAL_FILES:-$HERE/val.parquet}"');
    const sampled = new Set(rows.map((r) => r.input));
    expect(val.length).toBeGreaterThan(0);
    expect(val.filter((r) => sampled.has(r.prompt[0].content))).toEqual([]);
    const trl = join(run, 'out-trl');
    expect(await main(['export', run, '--to', 'trl', '--out', trl])).toBe(0);
    const grpo = readFileSync(join(trl, 'grpo.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { prompt: string; solution: string });
    expect(grpo).toHaveLength(new Set(rows.map((r) => r.input)).size);
    expect(grpo[0].prompt).toMatch(/^\d+\+\d+=$/);
    expect(readFileSync(join(trl, 'config.py'), 'utf8')).toContain('GRPOConfig(');
    expect(readFileSync(join(trl, 'grpo-eval.jsonl'), 'utf8').trim().split('\n')).toHaveLength(val.length);
  });

  it('export RUN refuses a folder that is not a run, and mixing a folder with --config', async () => {
    const { err } = capture();
    const empty = mkdtempSync(join(tmpdir(), 'dewpoint-notrun-'));
    expect(await main(['export', empty, '--to', 'verl'])).toBe(2);
    expect(await main(['export', empty, '--to', 'verl', '--config', config('grpo-arith')])).toBe(2);
    expect(err.join('')).toMatch(/is not a run folder: run\.json is missing[\s\S]*give a run folder or --config FILE/);
  });
});
