/**
 * PromptSource: turns single-turn tasks into one-call Sessions. `submit(task, samples, { version })`
 * returns one promise per sample; each draws one completion of the task's prompt under the
 * current weights and scores its decoded text with the reward.
 *
 * Reference: dew `PromptSource` and `SessionSource` (docs/rl-core.md "Rollouts and sources"). The
 * reward scores the completion with EOS excluded; a draw that ends on its token budget is
 * `truncated` and still scored; a reward that reports a `failure` (a grader that cannot grade)
 * makes the session `failed`, unscored. Deviations: no scorer threads (a reward may return a promise);
 * a failed draw or reward rejects the promises it concerns (dew raises an infrastructure failure),
 * so no promise is left pending.
 *
 * Batching: submissions made in the same tick (before the next microtask) are drawn together, in
 * submission order, in one `generate()` call per policy version; draws never overlap on the model.
 * Seeds: the n-th batch this source draws at version v (n from 0) samples with generate seed
 * `seed + v` (n = 0) or that mixed with n, and generate seeds each row from (seed, row): the same
 * seed and the same submissions give the same sessions.
 */
import type { Model } from '../model/model';
import type { CaseResult } from '../contract/records';
import type { InfrastructureFailure, Session } from '../rl/types';
import type { SamplingOptions } from '../../kernels/sample/distribution.ref';
import type { GenerateOptions, Generated } from './generate';
import { generate } from './generate';

/** What a reward says about one completion. */
interface PromptRewardResult {
  /** The reward; must be finite. */
  score: number;
  /** Named sub-scores, stored on the session. */
  components?: Readonly<Record<string, number>>;
  /** Why, stored on the session. */
  detail?: string;
  /** A code reward's verdict per test case, stored on the session. */
  cases?: readonly CaseResult[];
  /**
   * The reward could not be computed (a code grader that cannot grade): the session is `failed`
   * with this termination, unscored and masked from training; `score` is ignored.
   */
  failure?: InfrastructureFailure;
}

/** Scores a completion's decoded text (EOS excluded) against its task. May throw or reject. */
export type PromptReward<T> = (completion: string, task: T) => PromptRewardResult | Promise<PromptRewardResult>;

/** Draws completions with `generate()`'s contract (one row per prompt, in order). */
export type Sampler = (prompts: readonly ArrayLike<number>[], options: GenerateOptions) => Promise<Generated[]>;

/** The one call of a sampled session: generate's arrays (the support when recorded), and the version that drew them. */
interface SampledCall extends Omit<Generated, 'support'> {
  version: number;
  /** Per sampled id, the ids the top-k/top-p filter kept (`recordSupport`). */
  support?: Int32Array[];
}

/** A single-turn session as a PromptSource makes it. */
export interface SampledSession extends Session {
  calls: readonly [SampledCall];
}

export interface PromptSourceOptions<T> {
  /** The policy: a Model (drawn with `generate`, KV cache) or a sampler over it. */
  model: Model | Sampler;
  reward: PromptReward<T>;
  /** Text of a completion's ids, EOS excluded (the tokenizer's `decode`). */
  decode: (ids: ArrayLike<number>) => string;
  /** A task's prompt ids (e.g. BOS + prompt text). */
  prompt: (task: T) => ArrayLike<number>;
  /** The stop id: sampled, it ends the completion and is left out of the reward's text. */
  eos: number;
  /** More stop ids, treated as `eos` (a Hugging Face tokenizer's eos_token_id list). */
  stop?: readonly number[];
  /** Largest number of sampled ids per completion, EOS included. */
  maxNewTokens: number;
  /** Behavior policy: temperature, top-k, top-p. Default: temperature 1, no filter. */
  sampling?: SamplingOptions;
  /** Seed of the samplers (see the module comment). Default 0. */
  seed?: number;
  /** Keep each sampled id's top-k/top-p support on its call (for training renormalised over it). Default false. */
  recordSupport?: boolean;
  /** Told after each sampled position of a draw: rows finished, rows in the draw (a Model policy only). */
  onProgress?: (finished: number, rows: number) => void;
}

/** The error a cancelled session's promise rejects with. */
export class Cancelled extends Error {
  override name = 'Cancelled';
}

interface Pending<T> {
  task: T;
  sample: number;
  version: number;
  state: 'queued' | 'drawing' | 'settled';
  resolve: (s: SampledSession) => void;
  reject: (e: unknown) => void;
}

export class PromptSource<T extends { id: string }> {
  private readonly sampler: Sampler;
  private readonly seed: number;
  private readonly byPromise = new WeakMap<Promise<SampledSession>, Pending<T>>();
  private queue: Pending<T>[] = [];
  /** Batches drawn so far per version. */
  private readonly drawsAt = new Map<number, number>();
  /** The last draw: the next waits for it. */
  private drawing: Promise<void> = Promise.resolve();
  private flushScheduled = false;
  private closed = false;

  constructor(private readonly o: PromptSourceOptions<T>) {
    const m = o.model;
    this.sampler = typeof m === 'function' ? m : (prompts, options) => generate(m, prompts, options);
    this.seed = o.seed ?? 0;
    if (!Number.isInteger(o.maxNewTokens) || o.maxNewTokens < 1)
      throw new Error(`PromptSource: maxNewTokens = ${o.maxNewTokens}; expected an integer ≥ 1`);
  }

  /** Starts `samples` sessions of `task` under policy version `version`: one promise per session, sample order. */
  submit(task: T, samples: number, { version }: { version: number }): Promise<SampledSession>[] {
    if (this.closed)
      throw new Error(
        `PromptSource.submit(task ${JSON.stringify(task.id)}): the source is closed; create a new PromptSource to draw more`,
      );
    if (!Number.isInteger(samples) || samples < 0)
      throw new Error(`PromptSource.submit: samples = ${samples}; expected an integer ≥ 0`);
    if (!Number.isInteger(version) || version < 0)
      throw new Error(`PromptSource.submit: version = ${version}; expected an integer ≥ 0`);
    if (samples > 0 && !this.flushScheduled) {
      this.flushScheduled = true;
      queueMicrotask(() => this.flush());
    }
    return Array.from({ length: samples }, (_, sample) => {
      let pending!: Pending<T>;
      const promise = new Promise<SampledSession>((resolve, reject) => {
        pending = { task, sample, version, state: 'queued', resolve, reject };
      });
      this.queue.push(pending);
      this.byPromise.set(promise, pending);
      return promise;
    });
  }

  /**
   * Forgets the sessions: each promise not yet settled rejects with `Cancelled` at once (marked
   * handled, so an unawaited one raises no unhandled rejection). A queued one is not drawn; one
   * being drawn finishes with its batch and is not scored. Throws for a promise this source did
   * not return.
   */
  cancel(promises: readonly Promise<SampledSession>[]): void {
    for (const p of promises) {
      const pending = this.byPromise.get(p);
      if (!pending) throw new Error('PromptSource.cancel: a promise this source did not return from submit');
      if (pending.state === 'settled') continue;
      if (pending.state === 'queued') this.queue = this.queue.filter((q) => q !== pending);
      pending.state = 'settled';
      p.catch(() => {});
      pending.reject(
        new Cancelled(
          `session ${pending.sample} of task ${JSON.stringify(pending.task.id)} (version ${pending.version}) was cancelled`,
        ),
      );
    }
  }

  /** Refuses later submits. Sessions already submitted are still drawn and scored; the model belongs to the caller. */
  close(): void {
    this.closed = true;
  }

  /** Draws the queued submissions: one batch per version, versions in order of first submission. */
  private flush(): void {
    const queued = this.queue;
    this.queue = [];
    this.flushScheduled = false;
    const versions = [...new Set(queued.map((q) => q.version))];
    for (const v of versions) {
      const batch = queued.filter((q) => q.version === v);
      const n = this.drawsAt.get(v) ?? 0;
      this.drawsAt.set(v, n + 1);
      const seed = n === 0 ? this.seed + v : (this.seed + v + Math.imul(n, 0x9e3779b1)) | 0;
      this.drawing = this.drawing.then(() => this.draw(batch, seed));
    }
  }

  private async draw(batch: Pending<T>[], seed: number): Promise<void> {
    const live = batch.filter((q) => q.state === 'queued');
    if (live.length === 0) return;
    for (const q of live) q.state = 'drawing';
    let generated: Generated[];
    try {
      const { eos, stop, maxNewTokens, sampling } = this.o;
      generated = await this.sampler(
        live.map((q) => this.o.prompt(q.task)),
        {
          ...sampling,
          maxNew: maxNewTokens,
          eos,
          ...(stop ? { stop } : {}),
          seed,
          ...(this.o.recordSupport ? { recordSupport: true } : {}),
          ...(this.o.onProgress ? { onProgress: this.o.onProgress } : {}),
        },
      );
      if (generated.length !== live.length)
        throw new Error(
          `PromptSource: the sampler returned ${generated.length} completions for ${live.length} prompts`,
        );
    } catch (e) {
      for (const q of live) this.settle(q, (p) => p.reject(e));
      return;
    }
    // Scoring does not hold up the next draw.
    live.forEach((q, i) => void this.score(q, generated[i]));
  }

  private async score(q: Pending<T>, g: Generated): Promise<void> {
    if (q.state !== 'drawing') return; // cancelled while drawn
    try {
      const ids = g.finishReason === 'stop' ? g.sampledIds.subarray(0, g.sampledIds.length - 1) : g.sampledIds;
      const r = await this.o.reward(this.o.decode(ids), q.task);
      if (!r.failure && !Number.isFinite(r.score))
        throw new Error(
          `PromptSource: the reward of session ${q.sample} of task ${JSON.stringify(q.task.id)} is ${r.score}; expected a finite number`,
        );
      const call: SampledCall = {
        promptIds: g.promptIds,
        sampledIds: g.sampledIds,
        behaviorLogProbs: g.behaviorLogProbs,
        rawLogProbs: g.rawLogProbs,
        finishReason: g.finishReason,
        version: q.version,
        ...(g.support ? { support: g.support } : {}),
      };
      const session: SampledSession = {
        task: q.task.id,
        group: q.task.id,
        sample: q.sample,
        attempt: 0,
        calls: [call],
        status: r.failure ? 'failed' : g.finishReason === 'stop' ? 'completed' : 'truncated',
        ...(r.failure ? { termination: r.failure } : {}),
        reward: r.failure ? null : r.score,
        components: { ...r.components },
        detail: r.detail ?? '',
        ...(r.cases ? { cases: r.cases.map((c) => ({ ...c })) } : {}),
      };
      this.settle(q, (p) => p.resolve(session));
    } catch (e) {
      this.settle(q, (p) => p.reject(e));
    }
  }

  private settle(q: Pending<T>, f: (q: Pending<T>) => void): void {
    if (q.state === 'settled') return;
    q.state = 'settled';
    f(q);
  }
}
