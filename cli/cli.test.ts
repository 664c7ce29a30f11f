import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createCpuOps } from '../kernels/backends/cpu';
import { exportCheckpoint, importCheckpoint } from '../worker/model/checkpoint';
import { SFT_ARITH, SftRun } from '../worker/train/sft';
import { UsageError, bool, num, parseFlags } from './args';
import { BASE_CHECKPOINT_DIR, readCheckpointDir, writeCheckpointDir } from '../worker/model/node-checkpoint-dir';
import { cliRunOptions } from './commands/train';
import { PRESETS, findPreset } from '../worker/presets/table';
import { main } from './main';
import { capture } from './testing/capture';

afterEach(() => vi.restoreAllMocks());

describe('dewpoint CLI', () => {
  it('parseFlags names the unknown flag and the allowed ones, and checks numbers', () => {
    const n = num('N', 'a count');
    expect(parseFlags('x', ['--n', '5', '--json'], { n, json: bool('as JSON') })).toEqual({ n: 5, json: true });
    expect(() => parseFlags('x', ['--m', '1'], { n })).toThrow(
      new UsageError("dewpoint x: unknown argument '--m'; allowed: --n (dewpoint x --help says what each does)"),
    );
    expect(() => parseFlags('x', ['--n', 'five'], { n })).toThrow(/--n must be a number, got 'five'/);
    // A name the table lacks is unknown even where an object has it (toString, constructor).
    expect(() => parseFlags('x', ['--toString', '1'], { n })).toThrow(/unknown argument '--toString'/);
  });

  it('eval reads a checkpoint folder and reports held-out accuracy and mean length as JSON', async () => {
    const run = new SftRun(createCpuOps(), {
      ...SFT_ARITH,
      model: 'tiny',
      steps: 1,
      examples: 4,
      rows: 2,
      evalEvery: 0,
      evalN: 4,
    });
    await run.next();
    const dir = mkdtempSync(join(tmpdir(), 'dewpoint-ck-'));
    writeCheckpointDir(dir, await exportCheckpoint(run.model, run.tok, { sft: run.config }));
    const { out } = capture();
    expect(await main(['eval', '--checkpoint', dir, '--n', '3', '--backend', 'cpu', '--json'])).toBe(0);
    const report = JSON.parse(out.join(''));
    expect(report).toMatchObject({ task: 'arith', split: 'held-out', n: 3 });
    expect(report.accuracy).toBeGreaterThanOrEqual(0);
    expect(report.accuracy).toBeLessThanOrEqual(1);
    expect(report.meanLength).toBeGreaterThan(0);
  });

  it('bench traces reports delta-chain storage linear in turns, full prompts quadratic (JSON)', async () => {
    const { out } = capture();
    expect(await main(['bench', 'traces', '--json', '--runs', '1'])).toBe(0);
    const report = JSON.parse(out.join(''));
    expect(report.rows.map((r: { turns: number }) => r.turns)).toEqual([10, 50, 200]);
    for (const r of report.rows) expect(r.storedTokens).toBeLessThanOrEqual(1.2 * r.uniqueTokens);
    const [, fifty, twoHundred] = report.rows;
    expect(twoHundred.storedTokens / fifty.storedTokens).toBeLessThan(5);
    expect(twoHundred.fullPromptTokens / fifty.fullPromptTokens).toBeGreaterThan(12);
  });

  it('bench pack reports packing beating one session per row (JSON)', async () => {
    const { out } = capture();
    expect(await main(['bench', 'pack', '--json', '--runs', '1'])).toBe(0);
    const report = JSON.parse(out.join(''));
    expect(report.rows).toHaveLength(3);
    for (const r of report.rows) {
      expect(r.efficiency).toBeGreaterThan(r.oneRowEfficiency);
      expect(r.rowsNeeded).toBeLessThan(r.oneRowRows);
    }
  });

  it('pretrain --from continues SFT from a checkpoint, evaluates and writes its last step to --out, never to the base', async () => {
    const { out, err } = capture();
    expect(await main(['pretrain', '--from', BASE_CHECKPOINT_DIR, '--backend', 'cpu'])).toBe(2);
    expect(err.join('')).toMatch(/--from needs --out/);
    const dir = mkdtempSync(join(tmpdir(), 'dewpoint-cont-'));
    expect(
      await main([
        'pretrain',
        '--from',
        BASE_CHECKPOINT_DIR,
        '--out',
        dir,
        '--steps',
        '2',
        '--warmup',
        '0',
        '--eval-every',
        '2',
        '--eval-n',
        '3',
        '--backend',
        'cpu',
        '--json',
      ]),
    ).toBe(0);
    const lines = out
      .join('')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.at(-1)).toMatchObject({ step: 2, 'eval/n': 3 });
    const written = importCheckpoint(readCheckpointDir(dir));
    const baseWeights = importCheckpoint(readCheckpointDir(BASE_CHECKPOINT_DIR)).weights;
    const name = 'model.layers.0.mlp.down_proj.weight';
    expect(written.weights.get(name)!.some((w, i) => w !== baseWeights.get(name)![i])).toBe(true); // trained on from the base, not re-initialised
    const drift = written.weights
      .get(name)!
      .reduce((m, w, i) => Math.max(m, Math.abs(w - baseWeights.get(name)![i])), 0);
    expect(drift).toBeLessThan(0.01); // two AdamW steps of lr 1e-3 move each weight by at most ~2e-3
    expect(JSON.parse(new TextDecoder().decode(readCheckpointDir(dir)['dewpoint.json']))).toMatchObject({
      from: BASE_CHECKPOINT_DIR,
      step: 2,
    });
  });

  it('pretrain checks every flag before any work: each bad value is named with its allowed range', async () => {
    const { out, err } = capture();
    const dir = join(mkdtempSync(join(tmpdir(), 'dewpoint-bad-')), 'never');
    expect(
      await main([
        'pretrain',
        '--out',
        dir,
        '--steps',
        '-3',
        '--seed',
        '1.5',
        '--eval-n',
        '5000',
        '--min-lr',
        '0.5',
        '--warmup',
        '-1',
        '--target',
        '22',
        '--backend',
        'cpu',
      ]),
    ).toBe(2);
    const message = err.join('');
    for (const line of [
      '--steps must be an integer in 1..5000, got -3',
      '--seed must be an integer in 0..2147483647, got 1.5',
      '--eval-n must be an integer in 1..1000, got 5000',
      '--min-lr must be in (0, 0.001]',
      '--warmup must be an integer ≥ 0, got -1',
      '--target must be an accuracy in (0, 1], got 22',
    ]) {
      expect(message).toContain(line);
    }
    expect(out.join('')).toBe(''); // no step ran
    expect(existsSync(dir)).toBe(false);
  });

  it("train evaluates on as many held-out tasks as the app by default (the preset's defaults), and no checkpoints", () => {
    for (const p of PRESETS.filter((p) => p.cli !== null)) {
      const options = cliRunOptions({ preset: p.name });
      expect([p.name, options.evalN, options.checkpointEvery]).toEqual([p.name, p.defaults.evalN, 0]);
    }
    expect(cliRunOptions({ preset: 'grpo-arith', 'eval-n': 7 }).evalN).toBe(7);
  });

  it('refuses bad usage with exit code 2 and a message naming the allowed values', async () => {
    const { err } = capture();
    expect(await main(['eval', '--checkpoint', '/x', '--task', 'gsm8k'])).toBe(2);
    expect(err.join('')).toMatch(/--task must be 'arith', got 'gsm8k'/);
    expect(await main(['frobnicate'])).toBe(2);
    expect(err.join('')).toMatch(
      /unknown command 'frobnicate'; allowed: info, bench, pretrain, eval, train, env, episodes/,
    );
    expect(await main(['bench', 'grpo', '--threads', '1,0,auto'])).toBe(2);
    expect(err.join('')).toMatch(/--threads entries must be integers in 1\.\.64 or auto, got '0'/);
    expect(await main(['bench', 'pack', '--threads', '2'])).toBe(2);
    expect(err.join('')).toMatch(/--threads is for the grpo bench \(without --model\), not pack/);
  });

  it("train --config takes the Experiments view's JSON, lets flags override it, and names every invalid field", () => {
    const dir = mkdtempSync(join(tmpdir(), 'dewpoint-config-'));
    const file = join(dir, 'run.json');
    const ui = findPreset('grpo-arith')!.defaults;
    writeFileSync(
      file,
      JSON.stringify({ ...ui, advantage: { estimator: 'rloo', normalize: false }, temperature: 0.7 }),
    );
    const o = cliRunOptions({ config: file, steps: 3, prompts: 4 });
    expect(o).toMatchObject({
      preset: 'grpo-arith',
      steps: 3,
      prompts: 4,
      temperature: 0.7,
      advantage: { estimator: 'rloo' },
    });

    writeFileSync(file, JSON.stringify({ ...ui, temperature: 0, group: 1 }));
    expect(() => cliRunOptions({ config: file })).toThrow(
      /invalid run options:\n {2}Group size \(group\) must be an integer in 2\.\.\d+, got 1\n {2}Temperature \(temperature\) must be a number in \(0, \d+\], got 0/,
    );
    expect(() => cliRunOptions({ config: file, preset: 'grpo-arith' })).toThrow(/--preset or --config, not both/);
    writeFileSync(file, '{ not json');
    expect(() => cliRunOptions({ config: file })).toThrow(/is not JSON/);
    writeFileSync(file, JSON.stringify({ preset: 'sft-arith' }));
    expect(() => cliRunOptions({ config: file })).toThrow(
      /preset must be one of grpo-arith, grpo-calc, grpo-guess, grpo-code, grpo-env, ppo-arith, ppo-calc, ppo-env, dpo-arith, flowgrpo-2d, got 'sft-arith'/,
    );
    // Without --config: the preset's options, with its held-out n as the app's form has it.
    expect(cliRunOptions({ preset: 'dpo-arith', prompts: 8 })).toMatchObject({
      preset: 'dpo-arith',
      pairs: 8,
      evalN: 100,
    });
    // --staleness sets the bound of every GRPO and PPO preset; DPO has none, and says so.
    expect(cliRunOptions({ preset: 'grpo-code', staleness: 2 })).toMatchObject({ preset: 'grpo-code', staleness: 2 });
    expect(() => cliRunOptions({ preset: 'grpo-arith', staleness: 9 })).toThrow(
      /Staleness bound \(s\) \(staleness\) must be an integer in 0\.\.8, got 9/,
    );
    expect(() => cliRunOptions({ preset: 'dpo-arith', staleness: 1 })).toThrow(/staleness/);
    // --sampler thread sets the samplerWorker option (single- and multi-turn), which needs a bound; model clears it.
    expect(cliRunOptions({ preset: 'grpo-arith', staleness: 1, sampler: 'thread' })).toMatchObject({
      samplerWorker: true,
    });
    expect(cliRunOptions({ preset: 'grpo-calc', staleness: 1, sampler: 'thread' })).toMatchObject({
      samplerWorker: true,
    });
    expect(cliRunOptions({ preset: 'grpo-arith', staleness: 1 })).not.toHaveProperty('samplerWorker');
    expect(() => cliRunOptions({ preset: 'grpo-arith', staleness: 1, sampler: 'gpu' })).toThrow(
      /--sampler must be model or thread, got 'gpu'/,
    );
    expect(() => cliRunOptions({ preset: 'grpo-arith', sampler: 'thread' })).toThrow(
      /Sample ahead in workers \(samplerWorker\) samples the batches ahead of the trainer: give Staleness bound \(s\) \(staleness\) ≥ 1/,
    );
    expect(() => cliRunOptions({ preset: 'dpo-arith', lr: -1 })).toThrow(
      /Learning rate \(lr\) must be a number in \(0, 0\.1\], got -1/,
    );
  });

  it("train --config takes a partial config as the view's import does: the rest from the preset's defaults (issue 27)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'dewpoint-config-'));
    const file = join(dir, 'run.json');
    const ui = findPreset('dpo-arith')!.defaults;
    writeFileSync(file, JSON.stringify({ preset: 'dpo-arith', steps: 7, loss: { type: 'ipo' } }));
    // dpo-arith's default loss is sigmoid with labelSmoothing 0: ipo takes none of it.
    expect(cliRunOptions({ config: file, prompts: 4 })).toEqual({ ...ui, steps: 7, pairs: 4, loss: { type: 'ipo' } });
    writeFileSync(file, JSON.stringify({ preset: 'grpo-arith', importance: { kind: 'tis', cap: 3 } }));
    expect(cliRunOptions({ config: file })).toMatchObject({
      steps: 150,
      policyLoss: { name: 'ppo' },
      importance: { kind: 'tis', level: 'token', cap: 3, batchNormalize: false },
    });
    writeFileSync(file, JSON.stringify({ preset: 'grpo-arith', steps: 'ten', lrr: 1 }));
    expect(() => cliRunOptions({ config: file })).toThrow(
      /invalid run options:\n {2}Steps \(steps\) must be an integer in 1\.\.5000, got 'ten'\n {2}lrr is not an option of grpo-arith$/,
    );
  });

  it('train --preset grpo-calc --journal DIR journals every turn; episodes export writes one JSONL line per episode', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dewpoint-journal-'));
    const { out, err } = capture();
    expect(
      await main([
        'train',
        '--preset',
        'grpo-calc',
        '--steps',
        '1',
        '--prompts',
        '2',
        '--eval-every',
        '0',
        '--backend',
        'cpu',
        '--journal',
        dir,
        '--json',
      ]),
    ).toBe(0);
    const runId = /as run (\S+)/.exec(err.join(''))![1];
    const step = JSON.parse(out.join('').trim().split('\n').at(-1)!);
    expect(step).toMatchObject({ step: 1, 'episodes/count': 16 });
    out.length = 0;
    const file = join(dir, 'episodes.jsonl');
    expect(await main(['episodes', 'export', '--journal', dir, '--out', file])).toBe(0);
    const lines = (await import('node:fs'))
      .readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(16);
    expect(
      lines.every((l) => l.run === runId && l.step === 1 && l.environment === 'calc' && l.status !== 'running'),
    ).toBe(true);
    expect(lines.reduce((n, l) => n + l.turns.length, 0)).toBe(Math.round(step['episodes/turns_mean'] * 16));
    await expect(main(['episodes', 'export', '--journal', dir, '--run', 'nope'])).resolves.toBe(2);
    expect(err.join('')).toMatch(/--run nope is not in .*; it holds: cli-grpo-calc-/);
    await expect(main(['train', '--preset', 'grpo-arith', '--journal', dir])).resolves.toBe(2);
    expect(err.join('')).toMatch(/--journal is for the episode presets/);
  });
});
