/**
 * Runs long work without holding a comlink promise open: `start` returns a run id at once, the
 * loop reports through the event callback and yields between steps so that pause, resume and stop
 * (other API calls) are delivered. One run at a time.
 */
import type { Ops } from '../../kernels/ops';
import type { CharTokenizer } from '../data/tokenizer';
import type { CheckpointFiles, LoadedCheckpoint } from '../model/checkpoint';
import { exportCheckpoint, importCheckpoint } from '../model/checkpoint';
import type { Model } from '../model/model';
import type { BatchRecord, CheckpointDownload, GroupRecord, RunEvent, RunOptions, RunStatus } from '../protocol';
import { batchRecord, groupRecords } from './groups';
import type { EvalResult } from '../train/evaluate';
import { DPO_ARITH, DpoRun } from '../train/dpo';
import { GRPO_ARITH, GrpoRun } from '../train/grpo';
import { SFT_ARITH, SftRun } from '../train/sft';

/** What the loop needs of a run, whatever its objective. */
interface Trainer {
  model: Model;
  tok: CharTokenizer;
  config: object;
  next(): Promise<{ metrics: Record<string, number>; groups?: GroupRecord[]; batch?: BatchRecord }>;
  evaluate(): Promise<EvalResult>;
}

const MAX_KEPT_STEPS = 500;
const MAX_KEPT_BATCHES = 50;

interface Active {
  id: string;
  status: RunStatus;
  wake: (() => void) | null;
}

export class RunManager {
  private active: Active | null = null;
  private counter = 0;
  /** The latest checkpoint written by any run (in memory; persistence comes with IndexedDB). */
  latest: CheckpointDownload | null = null;
  /** Advantage groups per step of the current or last run (in memory until the IndexedDB store). */
  private kept: { runId: string; groups: Map<number, GroupRecord[]>; batches: Map<number, BatchRecord> } | null = null;

  groupSteps(runId: string): number[] {
    return this.kept?.runId === runId ? [...this.kept.groups.keys()] : [];
  }

  groupsAt(runId: string, step: number): GroupRecord[] | null {
    return this.kept?.runId === runId ? (this.kept.groups.get(step) ?? null) : null;
  }

  batchAt(runId: string, step: number): BatchRecord | null {
    return this.kept?.runId === runId ? (this.kept.batches.get(step) ?? null) : null;
  }

  private keep(runId: string, step: number, groups: GroupRecord[], batch: BatchRecord): void {
    if (this.kept?.runId !== runId) this.kept = { runId, groups: new Map(), batches: new Map() };
    this.kept.groups.set(step, groups);
    this.kept.batches.set(step, batch);
    if (this.kept.groups.size > MAX_KEPT_STEPS) this.kept.groups.delete(this.kept.groups.keys().next().value!);
    if (this.kept.batches.size > MAX_KEPT_BATCHES) this.kept.batches.delete(this.kept.batches.keys().next().value!);
  }

  /**
   * `getOps`: the active backend. `loadBase`: the files of the shipped base checkpoint
   * (public/checkpoints/arith-base), fetched by the page's origin in the browser.
   */
  constructor(private readonly getOps: () => Ops, private readonly loadBase: () => Promise<CheckpointFiles>) {}

  start(options: RunOptions, emit: (e: RunEvent) => void): string {
    if (this.active) this.stop(this.active.id);
    const id = `${options.preset.split('-')[0]}-${Date.now().toString(36)}-${++this.counter}`;
    const run: Active = { id, status: 'running', wake: null };
    this.active = run;
    void this.loop(run, options, emit);
    return id;
  }

  pause(id: string): void {
    const run = this.get(id);
    if (run.status === 'running') run.status = 'paused';
  }

  resume(id: string): void {
    const run = this.get(id);
    if (run.status === 'paused') {
      run.status = 'running';
      run.wake?.();
    }
  }

  stop(id: string): void {
    const run = this.get(id);
    if (run.status === 'running' || run.status === 'paused') {
      run.status = 'stopped';
      run.wake?.();
    }
  }

  private get(id: string): Active {
    if (!this.active || this.active.id !== id) {
      const e = new Error(`no active run '${id}'${this.active ? ` (active: '${this.active.id}')` : ''}`);
      e.name = 'UnknownRun';
      throw e;
    }
    return this.active;
  }

  private async trainer(o: RunOptions): Promise<Trainer> {
    if (o.preset === 'sft-arith') {
      const sft = new SftRun(this.getOps(), { ...SFT_ARITH, steps: o.steps, lr: o.lr, seed: o.seed, evalEvery: o.evalEvery, evalN: o.evalN });
      return { model: sft.model, tok: sft.tok, config: sft.config, next: async () => ({ metrics: { ...(await sft.next()) } }), evaluate: () => sft.evaluate() };
    }
    let base: LoadedCheckpoint;
    try {
      base = importCheckpoint(await this.loadBase());
    } catch (e) {
      throw new Error(`could not load the base checkpoint (public/checkpoints/arith-base): ${(e as Error).message}`);
    }
    if (o.preset === 'dpo-arith') {
      const config = { ...DPO_ARITH, steps: o.steps, lr: o.lr, seed: o.seed, pairs: o.pairs, beta: o.beta, nllWeight: o.nllWeight, evalEvery: o.evalEvery, evalN: o.evalN };
      const dpo = new DpoRun(this.getOps(), config, base);
      return { model: dpo.model, tok: base.tokenizer, config, next: async () => ({ metrics: (await dpo.next()).metrics }), evaluate: () => dpo.evaluate() };
    }
    const config = { ...GRPO_ARITH, steps: o.steps, lr: o.lr, seed: o.seed, prompts: o.prompts, group: o.group, temperature: o.temperature, evalEvery: o.evalEvery, evalN: o.evalN };
    const grpo = new GrpoRun(this.getOps(), config, base);
    return {
      model: grpo.model, tok: base.tokenizer, config,
      next: async () => {
        const s = await grpo.next();
        return { metrics: s.metrics, groups: groupRecords(s, base.tokenizer), batch: batchRecord(s, base.tokenizer) };
      },
      evaluate: () => grpo.evaluate(),
    };
  }

  private async loop(run: Active, o: RunOptions, emit: (e: RunEvent) => void): Promise<void> {
    const runId = run.id;
    try {
      emit({ type: 'status', runId, status: 'running' });
      const trainer = await this.trainer(o);
      for (let step = 1; step <= o.steps; step++) {
        // Yield to the event loop so pause / stop messages are handled between steps.
        await new Promise((r) => setTimeout(r, 0));
        if (run.status === 'paused') {
          emit({ type: 'status', runId, status: 'paused' });
          await new Promise<void>((r) => (run.wake = r));
          run.wake = null;
          if ((run.status as RunStatus) === 'running') emit({ type: 'status', runId, status: 'running' });
        }
        if (run.status === 'stopped') {
          emit({ type: 'status', runId, status: 'stopped', message: `stopped after step ${step - 1}` });
          return;
        }
        const { metrics, groups, batch } = await trainer.next();
        if (groups && batch) this.keep(runId, step, groups, batch);
        emit({ type: 'step', runId, step, totalSteps: o.steps, metrics });
        if ((o.checkpointEvery > 0 && step % o.checkpointEvery === 0) || step === o.steps) {
          const files = await exportCheckpoint(trainer.model, trainer.tok, { kind: 'dewpoint-checkpoint', trainedWith: `Experiments view (${o.preset})`, runId, step, [o.preset.split('-')[0]]: trainer.config });
          this.latest = { runId, step, files: { ...files } };
          emit({ type: 'checkpoint', runId, step, bytes: Object.values(files).reduce((n, f) => n + f.byteLength, 0) });
        }
        if (o.evalEvery > 0 && (step % o.evalEvery === 0 || step === o.steps)) {
          const ev = await trainer.evaluate();
          emit({ type: 'eval', runId, step, accuracy: ev.accuracy, meanLength: ev.meanLength, n: ev.n, samples: ev.samples });
        }
      }
      run.status = 'finished';
      emit({ type: 'status', runId, status: 'finished' });
    } catch (e) {
      run.status = 'failed';
      const err = e as Error;
      emit({ type: 'status', runId, status: 'failed', message: err.message, errorName: err.name });
    }
  }
}
