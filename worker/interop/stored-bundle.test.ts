import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { exportCheckpoint } from '../model/checkpoint';
import { batchRecord, groupRecords } from '../presets/records';
import { MemoryRunStore } from '../store/run-store';
import { GRPO_ARITH, GrpoRun } from '../train/grpo';
import { tinySftBase } from '../train/testing/tiny-base';
import { exportStoredBundle } from './stored-bundle';

const CONFIG = { ...GRPO_ARITH, prompts: 2, group: 4, maxNew: 8, evalN: 4 };

// A stored GRPO run of two steps on a tiny model, checkpointed after the first: what the app bundles.
describe('exportStoredBundle', () => {
  it('bundles the latest checkpoint as model/, notes an older one, refuses what has nothing to bundle', async () => {
    const base = await tinySftBase();
    const run = new GrpoRun(createCpuOps(), CONFIG, base);
    const store = new MemoryRunStore();
    await store.putRun({ runId: 'r1', options: CONFIG, createdAt: 0, status: 'finished', lastStep: 0 });
    const commit = async (n: number) => {
      const s = await run.next();
      const groups = groupRecords(s, base.tokenizer);
      await store.commitStep('r1', {
        step: n,
        metrics: {},
        groups,
        batch: batchRecord(s, base.tokenizer),
        sessions: s.sessions,
      });
    };

    // No checkpoint yet: the bundle is written without model/, and the preflight refuses by name.
    await commit(1);
    const bare = await exportStoredBundle(store, 'r1', 'verl');
    if (!bare.ok) throw new Error(bare.reason);
    expect(bare.checkpointStep).toBeNull();
    expect(bare.files.some((f) => f.name.startsWith('model/'))).toBe(false);
    expect(bare.preflight.find((c) => c.rule === 'model-saved')?.status).toBe('refused');

    const files = await exportCheckpoint(run.model, base.tokenizer, { note: 'step 1' });
    await store.saveCheckpoint('r1', 1, files);
    const one = await exportStoredBundle(store, 'r1', 'verl');
    if (!one.ok) throw new Error(one.reason);
    expect(one.checkpointStep).toBe(1);
    for (const [name, bytes] of Object.entries(files))
      expect(one.files.find((f) => f.name === `model/${name}`)?.bytes, name).toEqual(bytes);
    expect(one.files.map((f) => f.name)).toEqual(
      expect.arrayContaining([
        'rollouts.parquet',
        'train.parquet',
        'reward.py',
        'parity.jsonl',
        'launch.sh',
        'preflight.json',
        'README.md',
      ]),
    );
    expect(one.preflight.find((c) => c.rule === 'model-saved')?.status).toBe('pass');
    expect(one.preflight.find((c) => c.rule === 'head-dim-multiple-of-32')?.status).toBe('refused'); // the tiny model's head_dim
    expect(one.preflight.some((c) => c.rule === 'model-step')).toBe(false);
    const preflightJson = JSON.parse(
      new TextDecoder().decode(one.files.find((f) => f.name === 'preflight.json')!.bytes),
    );
    expect(preflightJson).toEqual(one.preflight);

    // A step past the checkpoint: model/ is older than the rollouts, and the preflight says so.
    await commit(2);
    const two = await exportStoredBundle(store, 'r1', 'skyrl');
    if (!two.ok) throw new Error(two.reason);
    expect(two.preflight.find((c) => c.rule === 'model-step')).toEqual({
      rule: 'model-step',
      status: 'note',
      detail: "model/ is the run's latest checkpoint, of step 1; its rollouts go on to step 2",
    });
    // SkyRL: its launch, the entrypoint that registers the environment, and the environment over reward.py.
    expect(two.files.map((f) => f.name)).toEqual(
      expect.arrayContaining(['launch.sh', 'skyrl_main.py', 'skyrl_env.py']),
    );
    const launch = new TextDecoder().decode(two.files.find((f) => f.name === 'launch.sh')!.bytes);
    expect(launch).toContain('${SKYRL_PYTHON:-python3} -m skyrl_main');
    expect(two.preflight.find((c) => c.rule === 'skyrl-env')?.status).toBe('pass');

    expect(await exportStoredBundle(store, 'nope', 'verl')).toEqual({ ok: false, reason: "no stored run 'nope'" });
    const imported = { preset: 'verl-import' } as never;
    await store.putRun({ runId: 'v1', options: imported, createdAt: 0, status: 'imported' as never, lastStep: 0 });
    expect(await exportStoredBundle(store, 'v1', 'verl')).toEqual({
      ok: false,
      reason: expect.stringMatching(/imported from verl rollout dumps/),
    });
    await store.putRun({
      runId: 'f1',
      options: { preset: 'flowgrpo-2d' } as never,
      createdAt: 0,
      status: 'finished',
      lastStep: 0,
    });
    const flowFiles = {
      'model.safetensors': new Uint8Array(1),
      'config.json': new Uint8Array(1),
      'dewpoint.json': new Uint8Array(1),
    };
    await store.saveCheckpoint('f1', 1, flowFiles);
    expect(await exportStoredBundle(store, 'f1', 'verl')).toEqual({
      ok: false,
      reason: expect.stringContaining("flow policy's weights, not a language model"),
    });
  });
});
