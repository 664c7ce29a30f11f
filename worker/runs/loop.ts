/**
 * The step loop of one run: evaluate before training, then step, evaluate, store (one transaction
 * per step) and checkpoint, to the run's `steps`, yielding between steps so that pause, resume
 * and stop (other API calls, handled by run-manager.ts through `ActiveRun.status`) are delivered.
 * A stop between steps writes a checkpoint of the last committed step (unless it has one), so a
 * stopped run can continue; a full store pauses the run until the person frees space.
 *
 * The trainer comes from the preset table (worker/presets/table.ts); nothing here names a preset.
 */
import type { Ops } from '../../kernels/ops';
import type { RunOptions } from '../contract/options';
import type { FailedEpisode, PhaseReport, RunEvent, RunStatus } from '../contract/records';
import { EnvironmentBroken } from '../episodes/infrastructure';
import type { RunBackendChoice } from '../contract/system';
import { presetOf } from '../presets/table';
import type { Trainer } from '../presets/trainers';
import type { RunCheckpointFiles } from '../store/run-store';
import type { ResumeRecord, RunStore } from '../store/run-store';
import { StorageFullError } from '../store/run-store';
import { passMetrics } from '../train/evaluate';

/** The run the loop drives, as the run manager sees it: its status is how pause and stop reach the loop. */
export interface ActiveRun {
  id: string;
  status: RunStatus;
  wake: (() => void) | null;
  /** Settles when the run's loop has returned (its last write done); null before it starts. */
  done: Promise<void> | null;
  ended: boolean;
}

/** Where a continued run starts: the stored checkpoint and what resuming it needs. */
export interface From {
  step: number;
  files: RunCheckpointFiles;
  resume: ResumeRecord;
}

/** What the loop needs from outside: the store, the backend and why, and the run's trainer. */
export interface LoopServices {
  store: RunStore;
  ops(): Ops;
  backendChoice(): RunBackendChoice | null;
  /** The run's trainer; `writer` names this loop in the episode journal. */
  trainer(o: RunOptions, runId: string, writer: string): Promise<Trainer>;
  /**
   * False: the loop writes no checkpoint, not even the base's or the last step's (the CLI's
   * `dewpoint train`, whose runs are never continued and whose presets set checkpointEvery 0).
   * Absent: it checkpoints as the options say, for a run that can continue.
   */
  checkpoints?: boolean;
}

/**
 * A trainer config as a checkpoint's dewpoint.json records it: a dataset's records are left out
 * (their count stays), so a checkpoint does not carry a copy of the person's file; the run's
 * stored options keep them.
 */
function checkpointConfig(config: object): object {
  const d = (config as { dataset?: { records: unknown[] } }).dataset;
  return d ? { ...config, dataset: { ...d, records: d.records.length } } : config;
}

/**
 * Runs steps to `o.steps`: from 1 (after the evaluation before training, step 0, when the run
 * evaluates at all), or from the step after the checkpoint `from`.
 */
export async function runLoop(
  services: LoopServices,
  run: ActiveRun,
  o: RunOptions,
  emit: (e: RunEvent) => void,
  from: From | null,
  writer: string,
): Promise<void> {
  const { store } = services;
  const runId = run.id;
  const setStatus = async (status: RunStatus, message?: string, errorName?: string, failedEpisode?: FailedEpisode) => {
    // The failing episode is the stored run's (the dashboard reads it from the listing), not the event's.
    emit({ type: 'status', runId, status, ...(message ? { message } : {}), ...(errorName ? { errorName } : {}) });
    await store
      .setStatus(runId, status, message, failedEpisode)
      .catch((e: Error) => console.error(`run ${runId}: could not store status ${status}: ${e.message}`));
  };
  const phase =
    (step: number): PhaseReport =>
    (p, done, total, unit) =>
      emit({
        type: 'phase',
        runId,
        step,
        phase: p,
        ...(done !== undefined ? { done } : {}),
        ...(total !== undefined ? { total } : {}),
        ...(unit ? { unit } : {}),
      });
  let opened: Trainer | null = null;
  try {
    if (from) {
      await store.truncateAfter(runId, from.step);
      await setStatus('running', `continuing from the checkpoint at step ${from.step}`);
    } else {
      await store.putRun({ runId, options: o, createdAt: Date.now(), status: 'running', lastStep: 0 });
      emit({ type: 'status', runId, status: 'running' });
    }
    const choice = services.backendChoice();
    await store.setBackend(runId, services.ops().backend, choice ?? undefined);
    const trainer = await services.trainer(o, runId, writer);
    opened = trainer;
    if (from) {
      if (!trainer.checkpoints) throw new Error(`${o.preset} runs keep no checkpoint: start a new run`);
      trainer.checkpoints.resume(from);
    }
    // What an evaluation is announced as: the items it scores (an environment may have fewer held-out tasks than evalN).
    const evalN = trainer.evalCount ?? o.evalN;
    /** The last step stored, and the step of the run's checkpoint (the one continuing would start from). */
    let committed = from?.step ?? 0;
    let checkpointed = from?.step ?? null;
    const checkpoint = async (step: number) => {
      if (!trainer.checkpoints || services.checkpoints === false) return;
      phase(step)('checkpointing');
      // The files of the trainer's kind (a language model's folder, the flow policy's) and, beside
      // them, AdamW's state and the trainer's position: a checkpoint a run can continue from.
      const { files, resume } = await trainer.checkpoints.write({
        kind: 'dewpoint-checkpoint',
        trainedWith: `Experiments view (${o.preset})`,
        runId,
        step,
        [o.preset.split('-')[0]]: checkpointConfig(trainer.config),
      });
      await store.saveCheckpoint(runId, step, files, resume);
      checkpointed = step;
      emit({ type: 'checkpoint', runId, step, bytes: Object.values(files).reduce((n, f) => n + f.byteLength, 0) });
    };
    // A run from a base checkpoint can continue from its start (the base, fresh AdamW) when it
    // is cut off before its first checkpoint: a multi-turn run then resumes its first step's
    // journaled turns instead of losing them.
    if (!from && presetOf(o).base !== null) await checkpoint(0);
    // The held-out accuracy before any update, so the accuracy curve starts where the model started.
    if (!from && o.evalEvery > 0) {
      phase(0)('evaluating', 0, evalN, 'problems');
      const t0 = performance.now();
      trainer.onProgress?.(phase(0));
      const ev = await trainer.evaluate((done, total) => phase(0)('evaluating', done, total, 'completions'));
      trainer.onProgress?.(null);
      // Step 0 has no step event: its sampled evaluation's pass rates travel with the evaluation.
      const metrics = passMetrics(ev);
      emit({
        type: 'eval',
        runId,
        step: 0,
        accuracy: ev.accuracy,
        meanLength: ev.meanLength,
        n: ev.n,
        samples: ev.samples,
        ...(Object.keys(metrics).length ? { metrics } : {}),
      });
      await store.commitStep(runId, {
        step: 0,
        metrics,
        evaluation: { step: 0, accuracy: ev.accuracy, meanLength: ev.meanLength, n: ev.n },
        ms: performance.now() - t0,
      });
    }
    for (let step = committed + 1; step <= o.steps; step++) {
      // Yield to the event loop so pause / stop messages are handled between steps.
      await new Promise((r) => setTimeout(r, 0));
      if (run.status === 'paused') await waitWhilePaused(run, setStatus);
      if (run.status === 'stopped') {
        // The trainer stands exactly at the last committed step: its checkpoint is one to continue from.
        if (committed > 0 && checkpointed !== committed) await checkpoint(committed);
        await setStatus(
          'stopped',
          committed === 0
            ? 'stopped before the first step'
            : trainer.checkpoints
              ? `stopped after step ${committed}; continue from its checkpoint`
              : `stopped after step ${committed} (this run keeps no checkpoint to continue from)`,
        );
        return;
      }
      const t0 = performance.now();
      const report = phase(step);
      if (trainer.onProgress) trainer.onProgress(report);
      else report('step');
      const { metrics: stepMetrics, groups, batch, sessions, flow } = await trainer.next();
      let metrics = stepMetrics;
      trainer.onProgress?.(null);
      let evaluation;
      if (o.evalEvery > 0 && (step % o.evalEvery === 0 || step === o.steps)) {
        report('evaluating', 0, evalN, 'problems');
        const ev = await trainer.evaluate((done, total) => report('evaluating', done, total, 'completions'));
        evaluation = { step, accuracy: ev.accuracy, meanLength: ev.meanLength, n: ev.n };
        // The evaluation's own metrics (pass rates, errors) are stored with the step, and told with the evaluation.
        const evalMetrics = passMetrics(ev);
        metrics = { ...metrics, ...evalMetrics };
        emit({
          type: 'eval',
          runId,
          step,
          accuracy: ev.accuracy,
          meanLength: ev.meanLength,
          n: ev.n,
          samples: ev.samples,
          ...(Object.keys(evalMetrics).length ? { metrics: evalMetrics } : {}),
        });
      }
      report('storing');
      // One transaction per step; a full store pauses the run until the person frees space and resumes.
      let t: number | undefined;
      while (t === undefined) {
        try {
          t = await store.commitStep(runId, {
            step,
            metrics,
            ms: performance.now() - t0,
            ...(groups ? { groups } : {}),
            ...(batch ? { batch } : {}),
            ...(sessions ? { sessions } : {}),
            ...(flow ? { flow } : {}),
            ...(evaluation ? { evaluation } : {}),
          });
        } catch (e) {
          if (!(e instanceof StorageFullError)) throw e;
          run.status = 'paused';
          await waitWhilePaused(run, setStatus, e.message);
          if ((run.status as RunStatus) === 'stopped') break;
        }
      }
      // Stopped while waiting for space: this step was never committed, so it is neither reported
      // nor checkpointed, and the trainer has moved past the last committed step (no checkpoint of it now).
      if (t === undefined) {
        await setStatus(
          'stopped',
          `stopped after step ${committed} (step ${step} could not be stored)${checkpointed !== null ? `; continue from the checkpoint at step ${checkpointed}` : ''}`,
        );
        return;
      }
      committed = step;
      // The commit time as stored (commitStep's answer, not a second clock), so the live dashboard's steps carry what a reload reads.
      emit({ type: 'step', runId, step, totalSteps: o.steps, metrics, t });
      if ((o.checkpointEvery > 0 && step % o.checkpointEvery === 0) || step === o.steps) await checkpoint(step);
    }
    run.status = 'finished';
    await setStatus('finished');
  } catch (e) {
    run.status = 'failed';
    const err = e as Error;
    // An environment that broke names the episode it broke on, when the journal holds it.
    await setStatus(
      'failed',
      err.message,
      err.name,
      e instanceof EnvironmentBroken ? (e.episode ?? undefined) : undefined,
    );
  } finally {
    // Batches sampled ahead of a run that ended, stopped or failed are let go.
    opened?.close?.();
  }
}

async function waitWhilePaused(
  run: ActiveRun,
  setStatus: (s: RunStatus, m?: string) => Promise<void>,
  message?: string,
): Promise<void> {
  await setStatus('paused', message);
  // A resume or stop may arrive while the status is being reported, before there is a wake to call.
  if (run.status === 'paused') await new Promise<void>((r) => (run.wake = r));
  run.wake = null;
  if ((run.status as RunStatus) === 'running') await setStatus('running');
}
