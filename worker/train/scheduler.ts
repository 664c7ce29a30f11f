/**
 * Asynchronous rollouts with a staleness bound (dew `RolloutScheduler`, "train on complete rollout
 * groups from source, ahead task batches early"). Batch k (1-based, one batch per step) trains on
 * policy version k − 1: the weights after k − 1 batches' updates. With capacity s the scheduler
 * launches batches k … k + s as soon as the trainer stands at version k − 1, each on a sampler
 * model of its own that holds the trainer's weights of that moment (a published version), so every
 * call of batch k + j was served under version k − 1 and trains at version k − 1 + j: its staleness
 * is j ≤ s. While the trainer updates on batch k, batches k + 1 … k + s sample, and their
 * environment and grading calls (a companion's processes) run. s = 0 launches each batch when it is
 * needed, under the trainer's own model: the synchronous loop, unchanged.
 *
 * No stale batch is ever produced, so none is dropped (prime-rl drops groups older than its bound;
 * here a batch is not launched before its bound allows). The sampler models run on the trainer's
 * ops in the same thread: what overlaps is the waiting (an environment's or a grader's answers),
 * not the arithmetic. With `samplerWorker`, each slot is a worker of its own (a Web Worker, a
 * worker thread) holding the published weights, and the sampling's arithmetic overlaps too. A
 * worker's weights are in shared memory that the trainer writes each version into
 * (rollout/shared-weights.ts), and the s + 1 slots are the ring of live versions: version k − 1,
 * published at take(k), goes to the slot of batch k + s, whose previous batch, k − 1, was taken
 * (the first version, drawn by batches 1 … s + 1, to every slot).
 * Under LoRA the published weights are the adapters merged into the base (Model.getMergedWeights):
 * a sampler is a plain model.
 *
 * The mismatch lab (`samplerBf16`, `samplerTemperature`: run options that inject a known gap
 * between the behaviour and the training policies) acts here, on the sampler alone: a bf16
 * sampler is a sampler model that holds the published weights' layer matrices as bf16 (at s = 0
 * too, where the trainer's model would otherwise sample), and a sampler temperature draws every
 * batch at that temperature, its behaviour log-probs the sampler's, while the trainer scores at
 * the run's.
 */
import type { ModelConfig } from '../model/config';
import { Model } from '../model/model';
import type { KindServices } from '../episodes/kinds';
import { generate } from '../rollout/generate';
import type { Sampler } from '../rollout/prompt-source';
import type { RemoteSampler } from '../rollout/remote-sampler';
import type { Session } from '../rl/types';

/** A launched batch: what its collection returns, once every one of its sessions has been collected. */
interface InFlight<B> {
  batch: number;
  done: Promise<B>;
}

interface SchedulerOptions<B> {
  /** The capacity s: how many versions a call may trail the weights it trains on. An integer ≥ 0. */
  staleness: number;
  /** Batches of the run in all: none is launched past it. */
  total: number;
  /** Collects batch `batch` on `policy` (served under `version`): the trainer's model at s = 0, a sampler model or thread at s > 0. */
  launch(batch: number, version: number, policy: Model | Sampler): Promise<B>;
  /** At s > 0, sampler slots elsewhere (workers: `samplerSlots`) instead of sampler models in this thread; absent: models. */
  remote?: (() => RemoteSampler) | undefined;
  /** Where the run's task stream stands: recorded before each launch, so a position can leave the batches in flight out. */
  streamPosition: () => number;
  /** The mismatch lab: sampler models hold the layer matrices as bf16 (`samplerBf16`). */
  samplerBf16?: boolean;
  /** The mismatch lab: the temperature every batch is drawn at, whatever the run's (`samplerTemperature`). */
  samplerTemperature?: number;
}

export class RolloutScheduler<B> {
  private readonly inFlight: (InFlight<B> & { streamAt: number })[] = [];
  private readonly samplers: Model[] = [];
  private readonly remotes: RemoteSampler[] = [];
  /** The last batch launched. */
  private launched = 0;
  /** Batches being collected now; the time some batch was (ms), and since when the current stretch runs. */
  private inFlightCount = 0;
  private busyMs = 0;
  private busySince: number | null = null;
  private waitedMs = 0;
  /** The busy and waited times when the last batch's figures were taken, and when. */
  private last = { at: performance.now(), busyMs: 0, waitedMs: 0 };
  private isClosed = false;

  constructor(
    private readonly trainer: Model,
    private readonly o: SchedulerOptions<B>,
  ) {
    if (!Number.isInteger(o.staleness) || o.staleness < 0)
      throw new Error(`RolloutScheduler: staleness = ${o.staleness}; expected an integer ≥ 0`);
  }

  get staleness(): number {
    return this.o.staleness;
  }

  /** Whether `close` was called: the collections in flight stop at their next round (an episode's `shouldCancel`). */
  get closed(): boolean {
    return this.isClosed;
  }

  /** Launches nothing more; a batch in flight is abandoned (a multi-turn one cancels its episodes at their next round). */
  close(): void {
    this.isClosed = true;
    this.inFlight.length = 0;
    for (const r of this.remotes) r.close();
  }

  /** Batches launched and not yet taken, oldest first. */
  get pending(): readonly number[] {
    return this.inFlight.map((f) => f.batch);
  }

  /** The task stream's position before the oldest batch in flight drew, or `now` with none in flight. */
  streamPositionBefore(now: number): number {
    return Math.min(now, ...this.inFlight.map((f) => f.streamAt));
  }

  /** Continues after `trained` batches (a resumed run): nothing is in flight, the next launch is batch trained + 1. */
  resumeAt(trained: number): void {
    if (this.inFlight.length)
      throw new Error(`RolloutScheduler.resumeAt: batches ${this.pending.join(', ')} are in flight`);
    this.launched = trained;
  }

  /**
   * Batch `batch`, to train on version batch − 1 (the trainer's weights now): first launches every
   * batch up to batch + s that is not launched yet, under this version, then waits for `batch`.
   */
  async take(batch: number): Promise<B> {
    if (this.isClosed) throw new Error(`RolloutScheduler.take(${batch}): the scheduler is closed`);
    const version = batch - 1;
    const last = Math.min(this.o.total, batch + this.o.staleness);
    // A bf16 sampler samples on weights of its own even at s = 0.
    const own = this.o.staleness > 0 || this.o.samplerBf16 === true;
    const weights = own && this.launched < last ? await this.trainer.getMergedWeights() : null;
    while (this.launched < last) {
      const k = ++this.launched;
      const streamAt = this.o.streamPosition();
      this.started();
      const done = this.launchOn(k, version, weights).finally(() => this.ended());
      done.catch(() => {}); // awaited by take(k); a run stopped before then leaves it unobserved
      this.inFlight.push({ batch: k, done, streamAt });
    }
    const i = this.inFlight.findIndex((f) => f.batch === batch);
    if (i < 0) throw new Error(`RolloutScheduler.take(${batch}): not launched (launched up to ${this.launched})`);
    const [f] = this.inFlight.splice(i, 1);
    const t = performance.now();
    try {
      return await f.done;
    } finally {
      this.waitedMs += performance.now() - t;
    }
  }

  /**
   * The batch's figures, once it has trained: the staleness of its calls (trained version − the
   * version each was served under; mean over calls, min, max: rLLM's async/staleness_*) and the
   * distinct versions among them (verl's param_version_diversity); over the wall time since the
   * previous batch's figures, the fraction the trainer waited for its batch (verl
   * trainer/idle_ratio) and the fraction no batch was being collected (verl rollouter/idle_ratio).
   * None at s = 0: the synchronous loop logs what it always did.
   */
  metrics(sessions: readonly Session[], trainedVersion: number): Record<string, number> {
    if (this.o.staleness === 0) return {};
    const now = performance.now();
    const busy = this.busyMs + (this.busySince === null ? 0 : now - this.busySince);
    const wall = Math.max(1e-9, now - this.last.at);
    const out = {
      ...stalenessMetrics(sessions, trainedVersion),
      'trainer/idle_ratio': Math.min(1, (this.waitedMs - this.last.waitedMs) / wall),
      'rollouter/idle_ratio': Math.max(0, 1 - (busy - this.last.busyMs) / wall),
    };
    this.last = { at: now, busyMs: busy, waitedMs: this.waitedMs };
    return out;
  }

  /**
   * Batch `k` on its slot (one per batch that can be in flight at once) holding the published
   * weights: a sampler model here, or a remote sampler once they reached it; the trainer's own
   * model without weights (s = 0).
   */
  private launchOn(k: number, version: number, weights: ReadonlyMap<string, Float32Array> | null): Promise<B> {
    const T = this.o.samplerTemperature;
    if (T !== undefined) {
      const policy = this.policyOf(k, version, weights);
      const sampler: Sampler = (prompts, options) =>
        policy instanceof Model
          ? generate(policy, prompts, { ...options, temperature: T })
          : policy(prompts, { ...options, temperature: T });
      return this.o.launch(k, version, sampler);
    }
    return this.o.launch(k, version, this.policyOf(k, version, weights));
  }

  /** What draws batch `k`: the trainer's model (no weights published), a sampler model of its slot, or a remote sampler. */
  private policyOf(k: number, version: number, weights: ReadonlyMap<string, Float32Array> | null): Model | Sampler {
    if (!weights) return this.trainer;
    const slot = k % (this.o.staleness + 1);
    if (this.o.remote) {
      const remote = (this.remotes[slot] ??= this.o.remote());
      // Launched now, so batches take their tasks in launch order; each draw waits for the weights.
      // The slot's batch before this one was taken, so nothing draws from the weights written over.
      const published = remote.publish(version, weights);
      return async (prompts, options) => (await published)(prompts, options);
    }
    this.samplers[slot] ??= new Model(this.trainer.ops, this.trainer.config, {
      frozen: true,
      ...(this.o.samplerBf16 ? { storage: 'bf16' as const } : {}),
    });
    this.samplers[slot].setWeights(weights);
    return this.samplers[slot];
  }

  private started(): void {
    if (this.inFlightCount++ === 0) this.busySince = performance.now();
  }
  private ended(): void {
    if (--this.inFlightCount === 0 && this.busySince !== null) {
      this.busyMs += performance.now() - this.busySince;
      this.busySince = null;
    }
  }
}

/**
 * The sampler slots a run's `samplerWorker` asks for: workers the host starts (`services.remoteSampler`)
 * for a model of `model`'s shape. Absent without the option; refused, naming it, where the host has none.
 */
export function samplerSlots(
  config: { samplerWorker?: boolean },
  services: KindServices,
  model: ModelConfig,
): (() => RemoteSampler) | undefined {
  if (!config.samplerWorker) return undefined;
  const start = services.remoteSampler;
  if (!start)
    throw new Error('samplerWorker: this host starts no sampler workers (the app in a browser and the CLI do)');
  return () => start(model);
}

/** Staleness of every model call of `sessions` trained on `trainedVersion`: mean, min, max and the distinct versions. */
function stalenessMetrics(sessions: readonly Session[], trainedVersion: number): Record<string, number> {
  const lags = sessions.flatMap((s) => s.calls.map((c) => trainedVersion - c.version));
  if (lags.length === 0) return {};
  return {
    'async/staleness_mean': lags.reduce((a, b) => a + b, 0) / lags.length,
    'async/staleness_min': Math.min(...lags),
    'async/staleness_max': Math.max(...lags),
    'async/version_diversity': new Set(lags).size,
  };
}
