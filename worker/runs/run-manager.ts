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
import type { BatchRecord, GroupRecord, RunEvent, RunOptions, RunStatus } from '../protocol';
import type { RunStore } from '../store/run-store';
import { StorageFullError } from '../store/run-store';
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

interface Active {
  id: string;
  status: RunStatus;
  wake: (() => void) | null;
}

export class RunManager {
  private active: Active | null = null;
  private counter = 0;
  /** The id of the run started last (still active or not), for the latest checkpoint. */
  lastRunId: string | null = null;

  /**
   * `getOps`: the active backend. `loadBase`: the files of the shipped base checkpoint
   * (public/checkpoints/arith-base), fetched by the page's origin in the browser. `store`: where
   * runs, steps, groups, batches and checkpoints are committed (IndexedDB in the browser).
   */
  constructor(
    private readonly getOps: () => Ops,
    private readonly loadBase: () => Promise<CheckpointFiles>,
    readonly store: RunStore,
  ) {}

  start(options: RunOptions, emit: (e: RunEvent) => void): string {
    if (this.active) this.stop(this.active.id);
    const id = `${options.preset.split('-')[0]}-${Date.now().toString(36)}-${++this.counter}`;
    const run: Active = { id, status: 'running', wake: null };
    this.active = run;
    this.lastRunId = id;
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
    const setStatus = async (status: RunStatus, message?: string, errorName?: string) => {
      emit({ type: 'status', runId, status, ...(message ? { message } : {}), ...(errorName ? { errorName } : {}) });
      await this.store.setStatus(runId, status, message).catch((e: Error) => console.error(`run ${runId}: could not store status ${status}: ${e.message}`));
    };
    try {
      await this.store.putRun({ runId, options: o, createdAt: Date.now(), status: 'running', lastStep: 0 });
      emit({ type: 'status', runId, status: 'running' });
      const trainer = await this.trainer(o);
      for (let step = 1; step <= o.steps; step++) {
        // Yield to the event loop so pause / stop messages are handled between steps.
        await new Promise((r) => setTimeout(r, 0));
        if (run.status === 'paused') await this.waitWhilePaused(run, setStatus);
        if (run.status === 'stopped') {
          await setStatus('stopped', `stopped after step ${step - 1}`);
          return;
        }
        const { metrics, groups, batch } = await trainer.next();
        let evaluation;
        if (o.evalEvery > 0 && (step % o.evalEvery === 0 || step === o.steps)) {
          const ev = await trainer.evaluate();
          evaluation = { step, accuracy: ev.accuracy, meanLength: ev.meanLength, n: ev.n };
          emit({ type: 'eval', runId, step, accuracy: ev.accuracy, meanLength: ev.meanLength, n: ev.n, samples: ev.samples });
        }
        // One transaction per step; a full store pauses the run until the person frees space and resumes.
        for (;;) {
          try {
            await this.store.commitStep(runId, { step, metrics, ...(groups ? { groups } : {}), ...(batch ? { batch } : {}), ...(evaluation ? { evaluation } : {}) });
            break;
          } catch (e) {
            if (!(e instanceof StorageFullError)) throw e;
            run.status = 'paused';
            await this.waitWhilePaused(run, setStatus, e.message);
            if ((run.status as RunStatus) === 'stopped') break;
          }
        }
        emit({ type: 'step', runId, step, totalSteps: o.steps, metrics });
        if ((o.checkpointEvery > 0 && step % o.checkpointEvery === 0) || step === o.steps) {
          const files = await exportCheckpoint(trainer.model, trainer.tok, { kind: 'dewpoint-checkpoint', trainedWith: `Experiments view (${o.preset})`, runId, step, [o.preset.split('-')[0]]: trainer.config });
          await this.store.saveCheckpoint(runId, step, files);
          emit({ type: 'checkpoint', runId, step, bytes: Object.values(files).reduce((n, f) => n + f.byteLength, 0) });
        }
      }
      run.status = 'finished';
      await setStatus('finished');
    } catch (e) {
      run.status = 'failed';
      const err = e as Error;
      await setStatus('failed', err.message, err.name);
    }
  }

  private async waitWhilePaused(run: Active, setStatus: (s: RunStatus, m?: string) => Promise<void>, message?: string): Promise<void> {
    await setStatus('paused', message);
    await new Promise<void>((r) => (run.wake = r));
    run.wake = null;
    if ((run.status as RunStatus) === 'running') await setStatus('running');
  }
}
