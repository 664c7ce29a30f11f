/**
 * Runs long work without holding a comlink promise open: `start` returns a run id at once, the
 * loop reports through the event callback and yields between steps so that pause, resume and stop
 * (other API calls) are delivered. One run at a time.
 */
import type { Ops } from '../../kernels/ops';
import { exportCheckpoint } from '../model/checkpoint';
import type { CheckpointDownload, RunEvent, RunStatus, SftRunOptions } from '../protocol';
import { SFT_ARITH, SftRun } from '../train/sft';

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

  constructor(private readonly getOps: () => Ops) {}

  startSft(options: SftRunOptions, emit: (e: RunEvent) => void): string {
    if (this.active) this.stop(this.active.id);
    const id = `sft-${Date.now().toString(36)}-${++this.counter}`;
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

  private async loop(run: Active, o: SftRunOptions, emit: (e: RunEvent) => void): Promise<void> {
    const runId = run.id;
    try {
      emit({ type: 'status', runId, status: 'running' });
      const sft = new SftRun(this.getOps(), { ...SFT_ARITH, steps: o.steps, lr: o.lr, seed: o.seed, evalEvery: o.evalEvery, evalN: o.evalN });
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
        const m = await sft.next();
        emit({ type: 'step', runId, step, totalSteps: o.steps, metrics: { ...m } });
        if ((o.checkpointEvery > 0 && step % o.checkpointEvery === 0) || step === o.steps) {
          const files = await exportCheckpoint(sft.model, sft.tok, { kind: 'dewpoint-checkpoint', trainedWith: 'Experiments view (sft-arith)', runId, step, sft: sft.config });
          this.latest = { runId, step, files: { ...files } };
          emit({ type: 'checkpoint', runId, step, bytes: Object.values(files).reduce((n, f) => n + f.byteLength, 0) });
        }
        if (o.evalEvery > 0 && (step % o.evalEvery === 0 || step === o.steps)) {
          const ev = await sft.evaluate();
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
