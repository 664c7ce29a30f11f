/**
 * The bundle (`dewpoint export RUN --to verl|skyrl`) end to end, from real short runs: its weights
 * load back into Dewpoint and score as the run's own model did.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetReadObjects } from 'hyparquet';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createCpuOps } from '../kernels/backends/cpu';
import { loadCheckpointDir } from '../worker/hf/node-hf-dir';
import type { LoadedCheckpoint } from '../worker/model/checkpoint';
import { Model } from '../worker/model/model';
import { rowPerSequence } from '../worker/model/packing';
import { BASE_CHECKPOINT_DIR } from '../worker/model/node-checkpoint-dir';
import { main } from './main';
import { capture } from './testing/capture';

afterEach(() => vi.restoreAllMocks());

type Row = Record<string, unknown> & { prompt_ids: number[]; response_ids: number[]; rollout_log_probs: number[] };

const readParquet = async (file: string) =>
  (await parquetReadObjects({ file: new Uint8Array(readFileSync(file)).buffer })) as Row[];

/** `train --preset P --save RUN` on the cpu backend (no evaluation); the run folder. */
async function train(preset: string, steps: number, extra: string[] = []): Promise<string> {
  const run = join(mkdtempSync(join(tmpdir(), 'dewpoint-bundle-')), 'run');
  const { err } = capture();
  const code = await main([
    'train',
    '--preset',
    preset,
    '--steps',
    String(steps),
    '--eval-every',
    '0',
    '--backend',
    'cpu',
    '--save',
    run,
    ...extra,
  ]);
  expect(code, err.join('')).toBe(0);
  vi.restoreAllMocks();
  return run;
}

/** Each sequence's log-probs of its response ids (from `prompt` on) under the checkpoint, on the cpu backend. */
async function responseLogProbs(ck: LoadedCheckpoint, seqs: readonly { prompt: number[]; response: number[] }[]) {
  const model = new Model(createCpuOps(), ck.config);
  model.setWeights(ck.weights);
  const batch = rowPerSequence(seqs.map((s) => [...s.prompt, ...s.response]));
  const { logp } = await model.score(batch);
  return seqs.map((s, r) =>
    logp.slice(r * batch.width + s.prompt.length, r * batch.width + s.prompt.length + s.response.length),
  );
}

const bits = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

describe('the bundle’s weights load back into Dewpoint', () => {
  it('grpo-arith: model/ scores every rollout bit for bit as the run’s saved model, and as the run’s sampler did under its last weights', async () => {
    // A 2-step run, bundled; and the same run taken one step further, whose step-3 rollouts were
    // sampled by the in-memory model the 2-step run ended with (constant lr: a prefix of it).
    const run = await train('grpo-arith', 2, ['--prompts', '2']);
    const longer = await train('grpo-arith', 3, ['--prompts', '2']);
    const { err } = capture();
    expect(await main(['export', run, '--to', 'verl']), err.join('')).toBe(1); // refused for vLLM (head_dim 16), written
    const bundled = await loadCheckpointDir(join(run, 'verl', 'model'));
    const saved = await loadCheckpointDir(join(run, 'model'));
    const base = await loadCheckpointDir(BASE_CHECKPOINT_DIR);
    expect(bundled.config).toEqual(saved.config);

    const rows = await readParquet(join(run, 'verl', 'rollouts.parquet'));
    const seqs = rows.map((r) => ({ prompt: r.prompt_ids, response: r.response_ids }));
    const fromBundle = await responseLogProbs(bundled, seqs);
    const fromSaved = await responseLogProbs(saved, seqs);
    const fromBase = await responseLogProbs(base, seqs);
    fromBundle.forEach((lp, i) => expect(bits(lp).equals(bits(fromSaved[i])), `rollout ${i}`).toBe(true));
    // Not the base: training moved every sequence's log-probs.
    expect(fromBundle.every((lp, i) => !bits(lp).equals(bits(fromBase[i])))).toBe(true);

    // The longer run's first two steps are this run's; its third was sampled by this run's final weights.
    const { err: err2 } = capture();
    expect(await main(['export', longer, '--to', 'verl']), err2.join('')).toBe(1);
    const longerRows = await readParquet(join(longer, 'verl', 'rollouts.parquet'));
    const prefix = longerRows.filter((r) => (r.step as number) <= 2);
    expect(prefix.map((r) => [r.output, r.rollout_log_probs])).toEqual(
      rows.map((r) => [r.output, r.rollout_log_probs]),
    );
    const third = longerRows.filter((r) => r.step === 3);
    expect(third.length).toBeGreaterThan(0);
    const sampled = await responseLogProbs(
      bundled,
      third.map((r) => ({ prompt: r.prompt_ids, response: r.response_ids })),
    );
    // The sampler's f32 log-probs (generate.ts, incremental decoding) and score's full forward agree bit for bit on cpu.
    third.forEach((r, i) =>
      expect(bits(Float32Array.from(r.rollout_log_probs)).equals(bits(sampled[i])), `step 3 rollout ${i}`).toBe(true),
    );
  });
});
