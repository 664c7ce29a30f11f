import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { importCheckpoint } from '../model/checkpoint';
import type { EpisodeGrpoRunOptions, RunOptions } from '../contract/options';
import type { RunEvent } from '../contract/records';
import { openIdbStore } from '../store/idb-store';
import type { RunStore, StepCommit } from '../store/run-store';
import { MemoryRunStore, StorageFullError } from '../store/run-store';
import { findPreset } from '../presets/table';
import { memoryRunLocks } from './run-locks';
import { RunManager } from './run-manager';
import { BASE_CHECKPOINT_DIR, readCheckpointDir } from '../model/node-checkpoint-dir';

const BASE = readCheckpointDir(BASE_CHECKPOINT_DIR);
const tok = importCheckpoint(BASE).tokenizer;

/** GRPO from the shipped base (it solves some sums, so groups have reward spread and the weights move). */
const GRPO = {
  ...findPreset('grpo-arith')!.defaults,
  steps: 4,
  prompts: 3,
  group: 4,
  lr: 3e-3,
  seed: 5,
  evalEvery: 0,
  evalN: 1,
  checkpointEvery: 1,
} as RunOptions;

const manager = (store: RunStore) => new RunManager({ getOps: createCpuOps, loadBase: async () => BASE, store });

/** Starts (or continues) a run and resolves when it ends; `stopAfter` stops it once that step is reported. */
function drive(m: RunManager, begin: (emit: (e: RunEvent) => void) => string | Promise<unknown>, stopAfter?: number) {
  const events: RunEvent[] = [];
  let id = '';
  const done = new Promise<RunEvent[]>((resolve) => {
    const emit = (e: RunEvent) => {
      events.push(e);
      id = e.runId;
      if (e.type === 'step' && e.step === stopAfter) m.stop(e.runId);
      if (e.type === 'status' && e.status !== 'running' && e.status !== 'paused') resolve(events);
    };
    void begin(emit);
  });
  return done.then((evs) => ({ events: evs, id }));
}

/** What two computations of a step must agree on exactly: every metric but timings. */
async function history(store: RunStore, runId: string): Promise<Record<string, number>[]> {
  return (await store.stepMetrics(runId)).map(({ step, metrics }) => ({
    step,
    ...Object.fromEntries(Object.entries(metrics).filter(([k]) => !k.startsWith('perf/'))),
  }));
}

describe('continuing a stored run (CPU, fake-indexeddb)', () => {
  it('stopped after step 1 and continued from its checkpoint, a GRPO run computes the steps of one that never stopped', async () => {
    const store = await openIdbStore('dewpoint-continue-exact');
    const options = { ...GRPO, steps: 3 } as RunOptions;
    const whole = await drive(manager(store), (emit) => manager(store).start(options, emit));
    expect(whole.events.at(-1)).toMatchObject({ type: 'status', status: 'finished' });
    const reference = await history(store, whole.id);
    expect(reference.map((s) => s.step)).toEqual([1, 2, 3]);
    // Not vacuous: the run learns (reward spread within groups, moving weights), so a lost AdamW state would show.
    expect(reference.some((s) => s['reward/frac_reward_zero_std'] < 1 && s['opt/grad_norm'] > 0)).toBe(true);

    const m = manager(store);
    const first = await drive(m, (emit) => m.start(options, emit), 1);
    expect(first.events.at(-1)).toMatchObject({
      type: 'status',
      status: 'stopped',
      message: 'stopped after step 1; continue from its checkpoint',
    });
    const stopped = (await m.listRuns()).find((r) => r.runId === first.id)!;
    expect(stopped).toMatchObject({ status: 'stopped', lastStep: 1, checkpointStep: 1 });

    const again = await drive(m, (emit) =>
      m.continue(first.id, emit).then((r) => expect(r).toEqual({ ok: true, fromStep: 1 })),
    );
    expect(again.events.filter((e) => e.type === 'step').map((e) => e.type === 'step' && e.step)).toEqual([2, 3]);
    expect(again.events.at(-1)).toMatchObject({ type: 'status', status: 'finished' });
    expect(await history(store, first.id)).toEqual(reference);
    expect((await m.listRuns()).find((r) => r.runId === first.id)).toMatchObject({
      status: 'finished',
      lastStep: 3,
      checkpointStep: 3,
    });

    // The sessions of a continued step are those of the uninterrupted run, id for id and log-prob for log-prob.
    const [a, b] = [await store.sessionsAt(whole.id, 3), await store.sessionsAt(first.id, 3)];
    expect(a).toHaveLength(12);
    expect(b).toEqual(a);
    // And they are what was sampled: the groups view's completions decode from the stored ids.
    const groups = (await store.groupsAt(first.id, 3))!;
    for (const s of b!) {
      expect(s.calls[0].version).toBe(2);
      expect(s.calls[0].behaviorLogProbs.length).toBe(s.calls[0].sampledIds.length);
      const shown = groups.find((g) => g.group === s.group)!.samples.find((x) => x.sample === s.sample)!;
      expect(tok.decode(s.calls[0].sampledIds)).toBe(shown.completion);
      expect(s.reward).toBe(shown.reward);
    }
  });

  it(
    'stopped after step 1 and continued from its checkpoint, a Flow-GRPO run computes the steps and ' +
      'clouds of one that never stopped, without pretraining again',
    async () => {
      const store = await openIdbStore('dewpoint-continue-flow');
      // β > 0: the checkpoint must carry the pretrained reference as well as the trained policy.
      const options = {
        ...findPreset('flowgrpo-2d')!.defaults,
        steps: 3,
        groups: 4,
        group: 4,
        sdeSteps: 4,
        beta: 0.5,
        lr: 3e-3,
        pretrainSteps: 20,
        evalEvery: 2,
        evalN: 16,
        checkpointEvery: 0,
      } as RunOptions;
      const whole = await drive(manager(store), (emit) => manager(store).start(options, emit));
      expect(whole.events.at(-1)).toMatchObject({ type: 'status', status: 'finished' });
      const reference = await history(store, whole.id);
      expect(reference.map((s) => s.step)).toEqual([1, 2, 3]);
      // Not vacuous: every step trains (a lost AdamW state, step count or reference would show in the metrics).
      expect(reference.every((s) => s['rl/carried_frac'] > 0 && s['opt/grad_norm'] > 0 && s['loss/kl'] > 0)).toBe(true);

      const m = manager(store);
      const first = await drive(m, (emit) => m.start(options, emit), 1);
      expect(first.events.at(-1)).toMatchObject({
        type: 'status',
        status: 'stopped',
        message: 'stopped after step 1; continue from its checkpoint',
      });
      expect((await m.listRuns()).find((r) => r.runId === first.id)).toMatchObject({
        status: 'stopped',
        lastStep: 1,
        checkpointStep: 1,
      });
      const files = (await store.latestCheckpoint(first.id))!.files;
      expect(Object.keys(files).sort()).toEqual([
        'config.json',
        'dewpoint.json',
        'model.safetensors',
        'reference.safetensors',
      ]);

      const again = await drive(m, (emit) =>
        m.continue(first.id, emit).then((r) => expect(r).toEqual({ ok: true, fromStep: 1 })),
      );
      expect(again.events.filter((e) => e.type === 'step').map((e) => e.type === 'step' && e.step)).toEqual([2, 3]);
      expect(again.events.some((e) => e.type === 'phase' && e.phase === 'pretraining')).toBe(false);
      expect(again.events.at(-1)).toMatchObject({ type: 'status', status: 'finished' });
      expect(await history(store, first.id)).toEqual(reference);
      for (const step of [2, 3]) expect(await store.flowAt(first.id, step)).toEqual(await store.flowAt(whole.id, step));
      expect((await store.evaluations(first.id)).filter((e) => e.step > 1)).toEqual(
        (await store.evaluations(whole.id)).filter((e) => e.step > 1),
      );
    },
  );

  it('stopped during a step, a run commits that step, reports it as the last one, writes its checkpoint and continues from it', async () => {
    const store = await openIdbStore('dewpoint-stop-mid-step');
    const options = { ...GRPO, steps: 3, checkpointEvery: 0 } as RunOptions;
    const m = manager(store);
    // The stop arrives while step 2 is sampling (its first phase event), not between steps.
    const first = await drive(m, (emit) => {
      const id = m.start(options, (e) => {
        emit(e);
        if (e.type === 'phase' && e.step === 2 && e.phase === 'sampling') m.stop(id);
      });
      return id;
    });
    expect(first.events.filter((e) => e.type === 'step').map((e) => e.type === 'step' && e.step)).toEqual([1, 2]);
    expect(first.events.filter((e) => e.type === 'checkpoint').map((e) => e.type === 'checkpoint' && e.step)).toEqual([
      0, 2,
    ]); // the start (the base) and the stop's
    expect(first.events.at(-1)).toMatchObject({
      type: 'status',
      status: 'stopped',
      message: 'stopped after step 2; continue from its checkpoint',
    });
    expect((await m.listRuns()).find((r) => r.runId === first.id)).toMatchObject({
      status: 'stopped',
      lastStep: 2,
      checkpointStep: 2,
    });
    const again = await drive(m, (emit) =>
      m.continue(first.id, emit).then((r) => expect(r).toEqual({ ok: true, fromStep: 2 })),
    );
    expect(again.events.filter((e) => e.type === 'step').map((e) => e.type === 'step' && e.step)).toEqual([3]);
    expect(again.events.at(-1)).toMatchObject({ type: 'status', status: 'finished' });
  });

  it('reports the phases of a GRPO step in order, and evaluates before the first step (step 0)', async () => {
    const store = new MemoryRunStore();
    const m = manager(store);
    const { events, id } = await drive(m, (emit) =>
      m.start({ ...GRPO, steps: 1, evalEvery: 1, evalN: 2 } as RunOptions, emit),
    );
    const phases = events.flatMap((e) => (e.type === 'phase' ? [`${e.step}:${e.phase}`] : []));
    expect([...new Set(phases)]).toEqual([
      '0:checkpointing',
      '0:evaluating',
      '1:sampling',
      '1:training',
      '1:evaluating',
      '1:storing',
      '1:checkpointing',
    ]);
    const sampling = events.filter((e) => e.type === 'phase' && e.phase === 'sampling');
    expect(sampling[0]).toMatchObject({ done: 0, total: 12, unit: 'sequences' });
    expect(sampling.at(-1)).toMatchObject({ done: 12, total: 12 });
    expect(events.filter((e) => e.type === 'eval').map((e) => e.type === 'eval' && e.step)).toEqual([0, 1]);
    expect((await store.evaluations(id)).map((e) => e.step)).toEqual([0, 1]);
    // Step 0 is an evaluation, not a step: the metrics start at step 1.
    expect((await store.stepMetrics(id)).map((s) => s.step)).toEqual([1]);
    const run = (await m.listRuns()).find((r) => r.runId === id)!;
    expect(run).toMatchObject({ backend: 'cpu', lastStep: 1, latest: { accuracyStep: 1 } });
    expect(run.name).toMatch(/^grpo-arith · /);
    expect(run.activeMs).toBeGreaterThan(0);
  });

  it('reports the phases of a DPO step: sampling pairs, the reference, training', async () => {
    const m = manager(new MemoryRunStore());
    const dpo = {
      ...findPreset('dpo-arith')!.defaults,
      steps: 1,
      pairs: 2,
      evalEvery: 0,
      checkpointEvery: 0,
    } as RunOptions;
    const { events } = await drive(m, (emit) => m.start(dpo, emit));
    expect(events.at(-1)).toMatchObject({ type: 'status', status: 'finished' });
    const phases = events.flatMap((e) => (e.type === 'phase' ? [e.phase] : []));
    expect([...new Set(phases)]).toEqual(['checkpointing', 'sampling', 'reference log-probs', 'training', 'storing']); // the start's checkpoint first, then step 1's (its phase already seen)
    expect(events.find((e) => e.type === 'phase' && e.phase === 'sampling')).toMatchObject({
      done: 0,
      total: 2,
      unit: 'pairs found',
    });
  });

  it('names, annotates and deletes a stored run; refuses to delete a live one', async () => {
    const store = await openIdbStore('dewpoint-meta-delete');
    const m = manager(store);
    const done = await drive(m, (emit) => m.start({ ...GRPO, steps: 2 } as RunOptions, emit));
    expect(await m.updateMeta(done.id, { name: '  lr 3e-3 probe ', notes: 'too high?' })).toEqual({ ok: true });
    expect((await m.listRuns()).find((r) => r.runId === done.id)).toMatchObject({
      name: 'lr 3e-3 probe',
      notes: 'too high?',
    });
    expect(await m.updateMeta(done.id, { name: 'x'.repeat(101) })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/name must be text of at most 100 characters/),
    });
    expect(await m.updateMeta(done.id, { name: '' })).toEqual({ ok: true });
    expect((await m.listRuns()).find((r) => r.runId === done.id)!.name).toMatch(/^grpo-arith · /);
    expect(await m.updateMeta('nope', { name: 'a' })).toEqual({ ok: false, reason: "no stored run 'nope'" });

    let live = '';
    const running = drive(m, (emit) => (live = m.start({ ...GRPO, steps: 3 } as RunOptions, emit)));
    await new Promise((r) => setTimeout(r, 0));
    expect(await m.deleteRun(live)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/is running: stop it first/),
    });
    m.stop(live);
    await running;

    const deleted = await m.deleteRun(done.id);
    expect(deleted).toMatchObject({ ok: true, steps: 2 });
    // Two steps of sessions, groups and batches and a checkpoint with AdamW state: well over 100 kB.
    expect(deleted.ok && deleted.bytes).toBeGreaterThan(100_000);
    expect((await m.listRuns()).some((r) => r.runId === done.id)).toBe(false);
    expect(await store.stepMetrics(done.id)).toEqual([]);
    expect(await store.groupSteps(done.id)).toEqual([]);
    expect(await store.sessionsAt(done.id, 1)).toBeNull();
    expect(await store.latestCheckpoint(done.id)).toBeNull();
    expect(await store.resumePoint(done.id)).toBeNull();
    expect((await m.listRuns()).some((r) => r.runId === live)).toBe(true);
    expect(await m.deleteRun(done.id)).toEqual({ ok: false, reason: `no stored run '${done.id}'` });
  });

  it('a run left running by a closed tab lists as interrupted; continuing drops steps after its checkpoint and finishes', async () => {
    const store = await openIdbStore('dewpoint-continue-interrupted');
    const options = { ...GRPO, checkpointEvery: 2 } as RunOptions;
    // A closed tab: the worker dies after committing step 3; nothing it would write after that lands.
    let dead = false;
    const dying = new Proxy(store, {
      get: (target, key) => {
        const v = Reflect.get(target, key, target);
        return typeof v === 'function'
          ? (...args: unknown[]) => (dead ? new Promise(() => {}) : v.apply(target, args))
          : v;
      },
    });
    const m = manager(dying);
    const first = await new Promise<{ id: string }>((resolve) => {
      const id = m.start(options, (e) => {
        if (e.type === 'step' && e.step === 3) {
          dead = true;
          resolve({ id });
        }
      });
    });
    // As a closed tab leaves it: steps 1–3 committed, the checkpoint at 2, the status still 'running'.
    expect((await store.listRuns()).find((r) => r.runId === first.id)).toMatchObject({
      status: 'running',
      lastStep: 3,
      checkpointStep: 2,
    });

    const reopened = manager(store); // the page after a reload: a new worker, nothing active
    expect((await reopened.listRuns()).find((r) => r.runId === first.id)?.status).toBe('interrupted');
    const again = await drive(reopened, (emit) => reopened.continue(first.id, emit));
    expect(again.events[0]).toMatchObject({
      type: 'status',
      status: 'running',
      message: 'continuing from the checkpoint at step 2',
    });
    expect(again.events.filter((e) => e.type === 'step').map((e) => e.type === 'step' && e.step)).toEqual([3, 4]);
    expect(again.events.at(-1)).toMatchObject({ type: 'status', status: 'finished' });
    const steps = await history(store, first.id);
    expect(steps.map((s) => s.step)).toEqual([1, 2, 3, 4]);
    const whole = await drive(manager(store), (emit) => manager(store).start(GRPO, emit));
    expect(steps).toEqual(await history(store, whole.id));
  });

  it('two pages of one origin: a run live in one lists as running elsewhere in the other, which cannot continue it until its lock is gone', async () => {
    const store = await openIdbStore('dewpoint-continue-two-tabs');
    const locks = memoryRunLocks(); // stands for the Web Locks both pages of an origin share
    const [a, b] = [
      new RunManager({ getOps: createCpuOps, loadBase: async () => BASE, store, locks }),
      new RunManager({ getOps: createCpuOps, loadBase: async () => BASE, store, locks }),
    ];
    let onPaused = () => {};
    let onEnded = () => {};
    const paused = new Promise<void>((r) => (onPaused = r));
    const ended = new Promise<void>((r) => (onEnded = r));
    const id = a.start({ ...GRPO, steps: 3 } as RunOptions, (e) => {
      if (e.type === 'step' && e.step === 1) a.pause(e.runId);
      if (e.type === 'status' && e.status === 'paused') onPaused();
      if (e.type === 'status' && e.status === 'stopped') onEnded();
    });
    await paused;
    expect((await b.listRuns()).find((r) => r.runId === id)).toMatchObject({
      status: 'paused',
      elsewhere: true,
      checkpointStep: 1,
    });
    expect(await b.continue(id, () => {})).toEqual({ ok: false, reason: `run '${id}' is paused in another tab` });
    // Page a stops it: its loop ends and gives the lock back; b may now continue the stopped run.
    a.stop(id);
    await ended;
    // The status event comes before its write; the lock goes when the loop returns, after it.
    while ((await locks.held()).size) await new Promise((r) => setTimeout(r, 5));
    expect((await b.listRuns()).find((r) => r.runId === id)).toMatchObject({ status: 'stopped' });
    const again = await drive(b, (emit) => b.continue(id, emit));
    expect(again.events.at(-1)).toMatchObject({ type: 'status', status: 'finished' });

    // A page that holds a run's lock but no loop here: listed as live elsewhere; once released (the tab closed), interrupted.
    await store.putRun({ runId: 'other-tab', options: GRPO, createdAt: 2, status: 'running', lastStep: 0 });
    const release = (await locks.acquire('other-tab'))!;
    expect(await locks.acquire('other-tab')).toBeNull();
    expect((await b.listRuns()).find((r) => r.runId === 'other-tab')).toMatchObject({
      status: 'running',
      elsewhere: true,
    });
    expect(await b.continue('other-tab', () => {})).toEqual({
      ok: false,
      reason: "run 'other-tab' is running in another tab",
    });
    release();
    expect((await b.listRuns()).find((r) => r.runId === 'other-tab')?.status).toBe('interrupted');
  });

  it('refuses, with the reason, an unknown run, a finished one, the live one and one without a resumable checkpoint', async () => {
    const store = await openIdbStore('dewpoint-continue-refusals');
    const m = manager(store);
    expect(await m.continue('nope', () => {})).toEqual({ ok: false, reason: "no stored run 'nope'" });
    const done = await drive(m, (emit) => m.start({ ...GRPO, steps: 1 } as RunOptions, emit));
    expect(await m.continue(done.id, () => {})).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/is finished \(1 of 1 steps\)/),
    });

    await store.putRun({ runId: 'no-checkpoint', options: GRPO, createdAt: 1, status: 'stopped', lastStep: 1 });
    expect(await m.continue('no-checkpoint', () => {})).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/no checkpoint to continue from/),
    });

    let live = '';
    const running = drive(m, (emit) => (live = m.start({ ...GRPO, steps: 3 } as RunOptions, emit)));
    await new Promise((r) => setTimeout(r, 0));
    expect((await m.listRuns()).find((r) => r.runId === live)?.status).toBe('running');
    expect(await m.continue(live, () => {})).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/is running now/),
    });
    m.stop(live);
    await running;
  });

  it('a full store pauses the run with its message; stopped then, the uncommitted step is neither reported nor checkpointed', async () => {
    /** Fake: a memory store whose commit of step 2 fails as a full IndexedDB quota does. */
    class FullAtStep2Store extends MemoryRunStore {
      override async commitStep(runId: string, commit: StepCommit): Promise<number> {
        if (commit.step === 2) throw new StorageFullError('storage is full: step 2 was not stored; the run is paused');
        return super.commitStep(runId, commit);
      }
    }
    const store = new FullAtStep2Store();
    const m = manager(store);
    const run = drive(m, (emit) => {
      const id = m.start({ ...GRPO, steps: 3 } as RunOptions, (e) => {
        emit(e);
        if (e.type === 'status' && e.status === 'paused') m.stop(id);
      });
      return id;
    });
    const { events, id } = await run;
    expect(events.find((e) => e.type === 'status' && e.status === 'paused')).toMatchObject({
      message: expect.stringMatching(/storage is full/),
    });
    expect(events.filter((e) => e.type === 'step').map((e) => e.type === 'step' && e.step)).toEqual([1]);
    expect(events.filter((e) => e.type === 'checkpoint').map((e) => e.type === 'checkpoint' && e.step)).toEqual([0, 1]);
    expect(events.at(-1)).toMatchObject({
      type: 'status',
      status: 'stopped',
      message: 'stopped after step 1 (step 2 could not be stored); continue from the checkpoint at step 1',
    });
    expect((await m.listRuns()).find((r) => r.runId === id)).toMatchObject({
      status: 'stopped',
      lastStep: 1,
      checkpointStep: 1,
    });
  });
});

describe('a multi-turn run (grpo-calc, CPU)', () => {
  const CALC_BASE = readCheckpointDir('public/checkpoints/calc-base');
  // One batch a step (no dynamic sampling): every journaled turn of a step belongs to a trained episode.
  const { filterGroups: _filter, ...calcDefaults } = findPreset('grpo-calc')!.defaults as EpisodeGrpoRunOptions;
  const CALC = {
    ...calcDefaults,
    steps: 2,
    prompts: 2,
    group: 2,
    seed: 3,
    evalEvery: 0,
    evalN: 1,
    checkpointEvery: 0,
  } as RunOptions;
  const calcManager = (store: RunStore) =>
    new RunManager({
      getOps: createCpuOps,
      loadBase: async (name) => (name === 'calc-base' ? CALC_BASE : BASE),
      store,
    });

  it(
    'cut off mid-step before any checkpoint of its own, continues from its start: the journaled turns ' +
      'are restored, none is committed twice, and it computes what an uninterrupted run does',
    async () => {
      const reference = new MemoryRunStore();
      const whole = await drive(calcManager(reference), (emit) => calcManager(reference).start(CALC, emit));
      expect(whole.events.at(-1)).toMatchObject({ type: 'status', status: 'finished' });
      expect(await reference.journal.steps(whole.id)).toEqual([1, 2]);

      // The journal refuses step 2's third commit (the tab closed then): step 1 is stored, step 2 has its starts and one round of turns.
      const store = new MemoryRunStore();
      const commit = store.journal.commit.bind(store.journal);
      let commits = 0;
      store.journal.commit = async (records) => {
        if (records[0]?.step === 2 && ++commits === 3) throw new Error('the tab closed');
        return commit(records);
      };
      const m = calcManager(store);
      const cut = await drive(m, (emit) => m.start(CALC, emit));
      expect(cut.events.at(-1)).toMatchObject({ type: 'status', status: 'failed', message: 'the tab closed' });
      const listed = (await m.listRuns()).find((r) => r.runId === cut.id)!;
      expect(listed).toMatchObject({ lastStep: 1, checkpointStep: 0 });
      const turns = async (step: number) => (await store.journal.load(cut.id, step)).filter((r) => r.turn > 0).length;
      const [all1, kept2] = [await turns(1), await turns(2)];
      expect(kept2).toBeGreaterThan(0);

      const again = await drive(m, (emit) =>
        m.continue(cut.id, emit).then((r) => expect(r).toEqual({ ok: true, fromStep: 0 })),
      );
      expect(again.events.at(-1)).toMatchObject({ type: 'status', status: 'finished' });
      // Continued from the start: step 1 is computed again from its journal alone, step 2 from where it was cut off.
      const steps = await store.stepMetrics(cut.id);
      expect(steps.map((s) => s.metrics['episodes/resumed_turns'])).toEqual([all1, kept2]);
      expect(await turns(2)).toBe((await reference.journal.load(whole.id, 2)).filter((r) => r.turn > 0).length);
      const exact = (h: Record<string, number>[]) => h.map(({ 'episodes/resumed_turns': _r, ...rest }) => rest);
      expect(exact(await history(store, cut.id))).toEqual(exact(await history(reference, whole.id)));
    },
  );
});
