import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { testGpuOps } from '../../kernels/common/node-test-gpu';
import type { Ops } from '../../kernels/ops';
import { importCheckpoint } from '../model/checkpoint';
import type { OptimizerState } from '../model/model';
import { DPO_ARITH, DpoRun } from './dpo';
import type { ResumePoint } from './resume';
import { SFT_ARITH, SftRun } from './sft';
import { BASE_CHECKPOINT_DIR, readCheckpointDir } from '../model/node-checkpoint-dir';

/** Without timings: what two computations of one step must agree on exactly. */
const exact = (m: object) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('perf/')));

/** Weights, AdamW state and position of a run, copied (as a store would keep them). */
async function snapshot(run: { model: SftRun['model']; position: SftRun['position'] }): Promise<ResumePoint> {
  return {
    position: structuredClone(run.position()),
    weights: await run.model.getWeights(),
    optimizer: await run.model.getOptimizerState(),
  };
}

const TINY_SFT = {
  ...SFT_ARITH,
  model: 'tiny' as const,
  steps: 4,
  examples: 8,
  rows: 4,
  lr: 1e-2,
  warmup: 1,
  evalEvery: 0,
  evalN: 1,
};

const gpu = await testGpuOps();
const backends: [string, () => Ops][] = [['cpu', createCpuOps]];
if (gpu) backends.push(['webgpu', () => gpu]);

describe.each(backends)('AdamW state on %s', (_name, makeOps) => {
  it('reads back what the steps wrote, and a model given it steps exactly like the original', async () => {
    const a = new SftRun(makeOps(), TINY_SFT);
    await a.next();
    await a.next();
    const state = await a.model.getOptimizerState();
    expect(state.t).toBe(2);
    const m = state.m.get('model.layers.0.mlp.down_proj.weight')!;
    expect(m.some((x) => x !== 0)).toBe(true); // two steps moved the first moment
    expect([...state.m.keys()]).toEqual([...(await a.model.getWeights()).keys()]);

    const b = new SftRun(makeOps(), TINY_SFT);
    b.resumeAt(await snapshot(a));
    expect(await b.model.getOptimizerState()).toEqual(state);
    const [sa, sb] = [await a.next(), await b.next()];
    expect(exact(sb)).toEqual(exact(sa));
    expect(await b.model.getWeights()).toEqual(await a.model.getWeights());
  });
});

describe('continuing a trainer from its position (CPU)', () => {
  it('SFT: steps 3 and 4 after a resume at 2 are those of the run that never stopped; fresh AdamW moments are not', async () => {
    const ops = createCpuOps();
    const whole = new SftRun(ops, TINY_SFT);
    const wholeSteps = [];
    let at2: ResumePoint | null = null;
    for (let i = 1; i <= 4; i++) {
      wholeSteps.push(exact(await whole.next()));
      if (i === 2) at2 = await snapshot(whole);
    }
    expect(at2!.position).toEqual({ step: 2, tasksDrawn: 16 });

    const continued = new SftRun(ops, TINY_SFT);
    continued.resumeAt(at2!);
    expect(exact(await continued.next())).toEqual(wholeSteps[2]);
    expect(exact(await continued.next())).toEqual(wholeSteps[3]);

    // The control: the same weights and position with zeroed moments step differently.
    const zero = (s: OptimizerState): OptimizerState => ({
      t: s.t,
      m: new Map([...s.m].map(([k, v]) => [k, new Float32Array(v.length)])),
      v: new Map([...s.v].map(([k, v]) => [k, new Float32Array(v.length)])),
    });
    const forgetful = new SftRun(ops, TINY_SFT);
    forgetful.resumeAt({ ...at2!, optimizer: zero(at2!.optimizer) });
    expect((await forgetful.next())['loss/sft']).toBe(wholeSteps[2]['loss/sft']); // same weights, same batch
    expect((await forgetful.next())['loss/sft']).not.toBe(wholeSteps[3]['loss/sft']);
  });

  it('refuses a run that already stepped, and optimizer state of the wrong shape', async () => {
    const ops = createCpuOps();
    const run = new SftRun(ops, TINY_SFT);
    await run.next();
    const point = await snapshot(run);
    expect(() => run.resumeAt(point)).toThrow(/already drawn 8 tasks/);
    const other = new SftRun(ops, TINY_SFT);
    const m = new Map(point.optimizer.m);
    m.set('model.norm.weight', new Float32Array(3));
    expect(() => other.resumeAt({ ...point, optimizer: { ...point.optimizer, m } })).toThrow(
      /m of 'model.norm.weight' has 3 values, expected/,
    );
  });

  it('DPO: the pairs waiting in the pool and the sampling rounds carry over; step 3 matches', async () => {
    const base = importCheckpoint(readCheckpointDir(BASE_CHECKPOINT_DIR));
    const config = { ...DPO_ARITH, pairs: 2, samplesPerPrompt: 6, evalN: 1, lr: 1e-3 };
    const ops = createCpuOps();
    const whole = new DpoRun(ops, config, base);
    await whole.next();
    await whole.next();
    const at2 = await snapshot(whole);
    expect(at2.position.dpo!.sampled).toBeGreaterThan(0);
    const third = await whole.next();

    const continued = new DpoRun(ops, config, base);
    continued.resumeAt(at2);
    const again = await continued.next();
    expect(again.pairs.map((p) => p.task.id)).toEqual(third.pairs.map((p) => p.task.id));
    expect(exact(again.metrics)).toEqual(exact(third.metrics));
    expect(() => new DpoRun(ops, config, base).resumeAt({ ...at2, position: { step: 2, tasksDrawn: 4 } })).toThrow(
      /no DPO state/,
    );
  });
});
