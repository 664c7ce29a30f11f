/**
 * Multi-turn episode collection under one immutable weight snapshot (dew `EpisodeRollout`): G
 * episodes per task, turn by turn; every running episode's next action is drawn in one batched
 * `generate` call, every environment answers, and the round's turns are committed to the journal
 * before the next model call or environment step. Not training (worker/train/grpo-episodes.ts
 * packs and trains the result) and not an environment (environment.ts).
 *
 * Seeds: the action of episode e at turn t is drawn by a sampler seeded from (seed, e, t), so an
 * episode's draws depend neither on which other episodes share a batch nor on a restart.
 * Recovery: with a journal, an episode with committed turns is rebuilt from them, and only the
 * turns after them are sampled and executed. Its environment is restored from the last turn's
 * snapshot (`setState`: `resumedBy` 'state'; a committed turn is never executed again), or, when
 * it has no state operations (a companion program), by replay (`resumedBy` 'replay'): a fresh
 * environment is reset and sent the journaled actions in order (the model is not called for
 * them), and each answer must equal the journal's; one that differs (the environment is not
 * deterministic) ends the episode as `env_error`, an infrastructure failure that aborts its group.
 * Records of another cohort are refused; a record that
 * fails its checksum makes its episode corrupt (kept, never trained on, never continued).
 *
 * Terminations (worker/rl/types.ts): the environment ends it (`env_done`, completed); the turn
 * limit (`max_turns`), a context that leaves no room for an action (`max_prompt_length`), an action
 * that ran out of ids before EOS (`max_response_length`), the episode's time budget (`timeout`): truncated;
 * an environment that throws, hangs past its step deadline or answers with invalid ids
 * (`env_error`): failed, an infrastructure failure masked from training and never scored 0;
 * cancellation: cancelled. A failed or cancelled episode aborts its whole group (no member
 * trains), and is kept for inspection.
 */
import type { CharTokenizer } from '../data/tokenizer';
import type { Model } from '../model/model';
import type { Episode, EpisodeStatus, SamplingSettings, TerminationReason, Transition } from '../rl/types';
import type { SamplingOptions } from '../../kernels/sample/distribution.ref';
import type { GenerateOptions, Generated } from '../rollout/generate';
import { generate, rowSeed } from '../rollout/generate';
import type { EnvStep, EnvTask, Environment, EnvironmentKind } from './environment';
import { EnvironmentUnavailable, appendStderr } from './environment';
import type { Cohort, EpisodeJournal, JournalRecord, StartRecord, TurnRecord } from './journal';
import { byEpisodeTurn, checksumOk, cohortSignature, describeRecord, withChecksum } from './journal';
import type { TraceRecord } from './traces';
import { encodeTrace, resolveTraces } from './traces';

/** Draws actions with generate()'s contract. */
export type EpisodeSampler = (prompts: readonly ArrayLike<number>[], options: GenerateOptions) => Promise<Generated[]>;

export interface EpisodeRolloutOptions {
  kind: EnvironmentKind;
  tok: CharTokenizer;
  /** Largest context + action the model takes (its maxSeq). */
  maxContext: number;
  sampling: SamplingOptions;
  /** Seed of the cohort's samplers. */
  seed: number;
  /** The policy version (updates taken) of the weights drawing every action. */
  policyVersion: number;
  /** Largest observation an environment may append per turn, in ids. Default 64. */
  maxObservationTokens?: number;
  /**
   * Deadline of one environment call (reset or step), ms. Default: the kind's `stepTimeoutMs`
   * (a companion kind's is above the companion's wall: companion-env.ts `companionDeadlineMs`), else 5000.
   */
  stepTimeoutMs?: number;
  /** Wall-clock budget of one episode, ms (ended as `timeout`, truncated). Default: none. */
  episodeTimeoutMs?: number;
  /** Durable turn boundaries: the journal and the cohort this collection belongs to. */
  journal?: { journal: EpisodeJournal; cohort: Cohort };
  /**
   * The index of this collection's first episode within its step (default 0): a step that
   * collects several batches (dynamic sampling) numbers them apart, so that each batch's journal
   * records (its own cohort: another sampler seed) keep to its own range of episode indices.
   */
  episodeOffset?: number;
  /** Who executes the turns (stored with each record; default 'local'): a run loop's id, so a view can tell restored turns. */
  writer?: string;
  /**
   * Told after each round (turns taken so far, episodes finished, episodes), and within a round as
   * each episode's environment ends it (a companion's sessions answer one by one), so a count of
   * finished episodes moves as they finish, not once per round.
   */
  onProgress?: (round: number, finished: number, episodes: number) => void;
  /**
   * Told before a round's environment steps and after each one: steps answered so far, steps of
   * the round (its actions that stopped at EOS; an action that ran out of ids takes none).
   */
  onEnvSteps?: (answered: number, steps: number) => void;
  /** Checked before each round: true cancels every running episode. */
  shouldCancel?: () => boolean;
}

/** One episode as collected, with what the views and the trainer need beside the RL core's Episode. */
export interface CollectedEpisode {
  index: number;
  task: EnvTask;
  group: string;
  sample: number;
  episode: Episode;
  /** Per transition: its trace record (the prompt as a delta chain). */
  traces: TraceRecord[];
  /** Per transition: restored from the journal rather than executed here. */
  resumed: boolean[];
  /** How its environment was brought back to its journaled turns to go on: a snapshot (`setState`) or replaying them; absent when none was. */
  resumedBy?: 'state' | 'replay';
  corrupt: boolean;
  /** Another member of its group failed or was cancelled: the group does not train. */
  groupAborted: boolean;
  /** Turns' text, as the verifier reads it (environment.ts `Verifier`). */
  transcript: string;
  /** Sampling + environment milliseconds over its turns. */
  ms: number;
  /** What its environment's program wrote to stderr over the episode (its last EPISODE_STDERR_CHARS); absent when nothing. */
  stderr?: string;
}

/** Seed of episode `episode`'s sampler at turn `turn` (1-based) of a cohort seeded `seed`. */
function turnSeed(seed: number, episode: number, turn: number): number {
  return rowSeed(rowSeed(seed, episode), turn);
}

/** A promise that rejects after `ms` with `what` in its message. */
async function withDeadline<T>(value: T | Promise<T>, ms: number, what: string): Promise<T> {
  if (!(value instanceof Promise)) return value;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      value,
      new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms)),
      ),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Why `ids` are not a valid observation, or null. */
function idProblem(ids: ArrayLike<number> | undefined, V: number, max: number, what: string): string | null {
  if (ids == null || typeof ids.length !== 'number')
    return `${what} is ${ids === null ? 'null' : typeof ids}; expected an array of ids`;
  if (ids.length > max) return `${what} has ${ids.length} ids; at most ${max} are allowed per turn`;
  for (let k = 0; k < ids.length; k++) {
    const v = ids[k];
    if (!Number.isInteger(v) || v < 0 || v >= V)
      return `${what}[${k}] = ${v}: not an id of the vocabulary (0..${V - 1})`;
  }
  return null;
}

/** The live state of one episode during collection. */
interface Slot {
  index: number;
  task: EnvTask;
  group: string;
  sample: number;
  env: Environment | null;
  context: number[];
  initial: number[] | null;
  transitions: Transition[];
  traces: TraceRecord[];
  resumed: boolean[];
  resumedBy?: 'state' | 'replay';
  status: EpisodeStatus;
  termination?: TerminationReason;
  detail?: string;
  envReward?: number;
  corrupt: boolean;
  ms: number;
  texts: string[];
  /** What the environment's program wrote to stderr so far (its end). */
  stderr: string;
}

const ended = (s: Slot) => s.status !== 'running';

function end(
  slot: Slot,
  status: Exclude<EpisodeStatus, 'running'>,
  termination: TerminationReason | undefined,
  detail: string,
): void {
  slot.status = status;
  if (termination) slot.termination = termination;
  slot.detail = detail;
}

/**
 * Collects `samples` episodes of each task (group = task id). Returns them in index order
 * (group-major). Throws only for broken invariants (a journal of another cohort, a sampler that
 * returns the wrong number of draws); environment faults end their episode.
 */
export async function collectEpisodes(
  policy: Model | EpisodeSampler,
  tasks: readonly EnvTask[],
  samples: number,
  o: EpisodeRolloutOptions,
): Promise<CollectedEpisode[]> {
  // More episodes than the kind's environments may have open: waves of whole groups, each its own
  // range of the step's episode indices (as dynamic sampling's batches), so the journal and every
  // episode's seeds are the same as in one collection.
  const perWave = o.kind.maxOpen ? Math.max(1, Math.floor(o.kind.maxOpen / samples)) : tasks.length;
  if (perWave < tasks.length) {
    const out: CollectedEpisode[] = [];
    const total = tasks.length * samples;
    for (let g = 0; g < tasks.length; g += perWave) {
      const done = out.length;
      out.push(
        ...(await collectEpisodes(policy, tasks.slice(g, g + perWave), samples, {
          ...o,
          episodeOffset: (o.episodeOffset ?? 0) + g * samples,
          ...(o.onProgress ? { onProgress: (round, finished) => o.onProgress!(round, done + finished, total) } : {}),
          kind: { ...o.kind, maxOpen: undefined },
        })),
      );
    }
    return out;
  }
  const sampler: EpisodeSampler =
    typeof policy === 'function' ? policy : (prompts, options) => generate(policy, prompts, options);
  const { kind, tok } = o;
  const V = tok.size;
  const maxObs = o.maxObservationTokens ?? 64;
  const deadline = o.stepTimeoutMs ?? kind.stepTimeoutMs ?? 5000;
  const sampling: SamplingSettings = {
    temperature: o.sampling.temperature ?? 1,
    ...(o.sampling.topK ? { topK: o.sampling.topK } : {}),
    ...(o.sampling.topP !== undefined && o.sampling.topP < 1 ? { topP: o.sampling.topP } : {}),
  };
  const started = performance.now();
  const offset = o.episodeOffset ?? 0;
  const slots: Slot[] = tasks.flatMap((task, g) =>
    Array.from({ length: samples }, (_, s) => ({
      index: offset + g * samples + s,
      task,
      group: task.id,
      sample: s,
      env: null,
      context: [],
      initial: null,
      transitions: [],
      traces: [],
      resumed: [],
      status: 'running' as EpisodeStatus,
      corrupt: false,
      ms: 0,
      texts: [],
      stderr: '',
    })),
  );
  const jr = o.journal;
  const cohort = jr ? cohortSignature(jr.cohort) : '';
  const key = (slot: Slot, turn: number) => ({
    runId: jr!.cohort.runId,
    step: jr!.cohort.step,
    episode: slot.index,
    turn,
    cohort,
    writer: o.writer ?? 'local',
  });
  const commit = async (records: JournalRecord[]) => {
    if (jr && records.length) await jr.journal.commit(records);
  };

  try {
    // Recovery: rebuild every journaled episode from its records.
    // This collection's range of the step's episodes: other ranges belong to the step's other batches.
    const mine = (episode: number) => episode >= offset && episode < offset + slots.length;
    const journaled = jr ? (await jr.journal.load(jr.cohort.runId, jr.cohort.step)).filter((r) => mine(r.episode)) : [];
    const foreign = journaled.find((r) => r.cohort !== cohort);
    if (foreign)
      throw new Error(
        `journal: ${describeRecord(foreign)} was written by cohort '${foreign.cohort}', not '${cohort}': the run's journal does not belong to this collection`,
      );
    const recordsOf = new Map<number, JournalRecord[]>();
    for (const r of journaled.sort(byEpisodeTurn)) recordsOf.set(r.episode, [...(recordsOf.get(r.episode) ?? []), r]);
    for (const slot of slots) {
      const records = recordsOf.get(slot.index);
      if (records) await restoreSlot(slot, records, o, deadline, true);
    }

    // Episodes ended within a round so far (a reset that failed, a step that ended one), for onProgress as they come.
    let endedAtRoundStart = slots.filter(ended).length;
    let endedInRound = 0;
    const endedOne = (round: number) => o.onProgress?.(round, endedAtRoundStart + ++endedInRound, slots.length);
    // Fresh episodes: reset (all at once: a companion's sessions start in parallel), then commit their starts together.
    const starts: JournalRecord[] = [];
    const fresh = slots.filter((s) => s.initial === null && !ended(s));
    const opened = await Promise.all(
      fresh.map(async (slot) => {
        const t0 = performance.now();
        try {
          slot.env = kind.create(slot.task);
          const initial = await withDeadline(slot.env.reset(), deadline, `environment '${kind.name}' reset`);
          const bad = idProblem(initial, V, o.maxContext, 'the first context');
          if (bad) throw new Error(bad);
          slot.initial = Array.from(initial);
          slot.context = [...slot.initial];
          return true;
        } catch (e) {
          if (e instanceof EnvironmentUnavailable) throw e;
          end(slot, 'error', 'env_error', `environment '${kind.name}' failed to start: ${(e as Error).message}`);
          endedOne(0);
          return false;
        } finally {
          slot.ms += performance.now() - t0;
          slot.stderr = appendStderr(slot.stderr, slot.env?.takeStderr?.());
        }
      }),
    );
    for (const [k, slot] of fresh.entries()) {
      if (!opened[k]) continue;
      // A first context that leaves no room for an action ends the episode here, in its start record.
      const hit = budgetHit(slot, kind, o, started);
      if (hit) end(slot, 'truncated', hit.termination, hit.detail);
      const ending = hit
        ? { ended: { status: 'truncated' as const, termination: hit.termination, detail: hit.detail } }
        : {};
      if (jr)
        starts.push(
          withChecksum<StartRecord>({
            ...key(slot, 0),
            kind: 'start',
            turn: 0,
            task: slot.task,
            group: slot.group,
            sample: slot.sample,
            initial: slot.initial!,
            ...stateOf(slot.env),
            ...ending,
            ...(slot.stderr ? { stderr: slot.stderr } : {}),
            ms: slot.ms,
          }),
        );
    }
    await commit(starts);

    for (let round = 1; slots.some((s) => !ended(s)); round++) {
      if (o.shouldCancel?.()) {
        for (const s of slots.filter((x) => !ended(x)))
          end(s, 'cancelled', undefined, 'cancelled before turn ' + (s.transitions.length + 1));
        break;
      }
      // Budgets before the model call (an episode's last turn records the budget it hit, so this
      // only ends an episode restored from a journal written without that).
      for (const s of slots.filter((x) => !ended(x))) {
        const hit = budgetHit(s, kind, o, started);
        if (hit) end(s, 'truncated', hit.termination, hit.detail);
      }
      const live = slots.filter((s) => !ended(s));
      if (live.length === 0) break;
      const t0 = performance.now();
      const draws = await sampler(
        live.map((s) => s.context),
        {
          ...o.sampling,
          maxNew: kind.maxActionTokens,
          eos: tok.eos,
          seed: o.seed,
          rowSeeds: live.map((s) => turnSeed(o.seed, s.index, s.transitions.length + 1)),
        },
      );
      if (draws.length !== live.length)
        throw new Error(`collectEpisodes: the sampler returned ${draws.length} actions for ${live.length} contexts`);
      const sampleMs = performance.now() - t0;
      const records: JournalRecord[] = [];
      endedAtRoundStart = slots.filter(ended).length;
      endedInRound = 0;
      const envSteps = draws.filter((g) => g.finishReason === 'stop').length;
      let answered = 0;
      if (envSteps > 0) o.onEnvSteps?.(0, envSteps);
      // Every live episode's environment answers its action at once (a companion's sessions step in
      // parallel); the answers are then applied in slot order, so the journal and the episodes do
      // not depend on which answered first.
      const actions = draws.map((g) => {
        const terminated = g.finishReason === 'stop';
        const ids = terminated ? g.sampledIds.subarray(0, g.sampledIds.length - 1) : g.sampledIds;
        return { ids, text: tok.decode(ids), terminated };
      });
      const answers = await Promise.all(
        live.map(async (slot, i) => {
          const action = actions[i];
          const t1 = performance.now();
          let answer: EnvStep | null = null;
          let failure: string | null = null;
          if (action.terminated) {
            try {
              answer = await withDeadline(slot.env!.step(action), deadline, `environment '${kind.name}' step`);
              failure = stepProblem(answer, V, maxObs, o.maxContext);
            } catch (e) {
              if (e instanceof EnvironmentUnavailable) throw e;
              failure = `environment '${kind.name}' step ${slot.transitions.length + 1} failed: ${(e as Error).message}`;
            }
            o.onEnvSteps?.(++answered, envSteps);
            if (failure || answer?.status !== 'running') endedOne(round);
          }
          return { answer, failure, envMs: performance.now() - t1, stderr: slot.env!.takeStderr?.() };
        }),
      );
      for (let i = 0; i < live.length; i++) {
        const slot = live[i];
        const g = draws[i];
        const { text } = actions[i];
        const { answer, failure, envMs, stderr } = answers[i];
        slot.ms += sampleMs / live.length + envMs;
        slot.stderr = appendStderr(slot.stderr, stderr);
        const observation = observationOf(g, answer, failure, kind.maxActionTokens);
        const record = applyTurn(
          slot,
          g,
          observation,
          sampling,
          o.policyVersion,
          sampleMs,
          envMs,
          text + tok.decode(observation.ids),
        );
        // A budget this turn used up ends the episode in the same record, so the journal says how it ended.
        const hit = ended(slot) ? null : budgetHit(slot, kind, o, started);
        if (hit) {
          end(slot, 'truncated', hit.termination, hit.detail);
          Object.assign(record.observation, {
            status: 'truncated',
            termination: hit.termination,
            detail: [record.observation.detail, hit.detail].filter(Boolean).join('; '),
          });
          slot.transitions.at(-1)!.observation = {
            ...slot.transitions.at(-1)!.observation,
            status: 'truncated',
            termination: hit.termination,
            detail: record.observation.detail,
          };
        }
        if (jr)
          records.push(
            withChecksum<TurnRecord>({
              ...key(slot, slot.transitions.length),
              kind: 'turn',
              ...record,
              observation: { ...record.observation, ...(stderr ? { stderr } : {}) },
              ...stateOf(slot.env),
            }),
          );
      }
      await commit(records);
      o.onProgress?.(round, slots.filter(ended).length, slots.length);
    }
  } finally {
    await Promise.all(
      slots.map(async (s) => {
        try {
          await s.env?.close?.();
        } catch (e) {
          console.error(`episode ${s.index}: environment close failed: ${(e as Error).message}`);
        }
      }),
    );
  }
  return finish(slots, kind, samples);
}

/** The budget a running episode has used up before its next action, or null. */
function budgetHit(
  s: Slot,
  kind: EnvironmentKind,
  o: EpisodeRolloutOptions,
  started: number,
): { termination: TerminationReason; detail: string } | null {
  if (s.transitions.length >= kind.maxTurns)
    return { termination: 'max_turns', detail: `the environment was still running after ${kind.maxTurns} turns` };
  if (s.context.length + kind.maxActionTokens > o.maxContext)
    return {
      termination: 'max_prompt_length',
      detail: `the context (${s.context.length} ids) leaves no room for an action of ${kind.maxActionTokens} in ${o.maxContext} positions`,
    };
  if (o.episodeTimeoutMs !== undefined && performance.now() - started > o.episodeTimeoutMs)
    return { termination: 'timeout', detail: `the episode ran past its ${o.episodeTimeoutMs} ms budget` };
  return null;
}

/** The snapshot field of a record, for a recoverable environment. */
function stateOf(env: Environment | null): { state?: string } {
  const state = env?.getState?.();
  return state === undefined ? {} : { state };
}

/** Why an environment's answer is invalid, or null. */
function stepProblem(a: EnvStep, V: number, maxObs: number, maxContext: number): string | null {
  if (a === null || typeof a !== 'object')
    return `the environment answered ${a === null ? 'null' : typeof a}; expected { observation, status }`;
  if (a.status !== 'running' && a.status !== 'done' && a.status !== 'error')
    return `the environment's status is ${JSON.stringify(a.status)}; expected running, done or error`;
  if (a.reward !== undefined && !Number.isFinite(a.reward))
    return `the environment's reward is ${a.reward}; expected a finite number`;
  return a.context !== undefined
    ? idProblem(a.context, V, maxContext, 'the new context')
    : idProblem(a.observation, V, maxObs, 'the observation');
}

type TurnObservation = TurnRecord['observation'];

/** The observation a turn records: the environment's answer, or why the episode ended without one. */
function observationOf(
  g: Generated,
  answer: EnvStep | null,
  failure: string | null,
  maxAction: number,
): TurnObservation {
  if (g.finishReason === 'length')
    return {
      ids: [],
      status: 'truncated',
      termination: 'max_response_length',
      detail: `the action reached ${maxAction} ids without EOS`,
    };
  if (failure || !answer) return { ids: [], status: 'error', termination: 'env_error', detail: failure ?? 'no answer' };
  const detail = answer.detail ?? '';
  if (answer.status === 'error')
    return {
      ids: [],
      status: 'error',
      termination: answer.failure ?? 'env_error',
      detail: `the environment reported an error${detail ? `: ${detail}` : ''}`,
    };
  const base = {
    ids: answer.context !== undefined ? [] : Array.from(answer.observation),
    ...(answer.context !== undefined ? { context: Array.from(answer.context) } : {}),
    detail,
  };
  if (answer.status === 'done')
    return {
      ...base,
      status: 'completed',
      termination: 'env_done',
      ...(answer.reward !== undefined ? { reward: answer.reward } : {}),
      ...(answer.cases ? { cases: answer.cases.map((c) => ({ ...c })) } : {}),
    };
  return { ...base, status: 'running' };
}

/** Appends a turn to the slot; returns the journal fields of its record. */
function applyTurn(
  slot: Slot,
  g: Generated,
  obs: TurnObservation,
  sampling: SamplingSettings,
  policyStep: number,
  sampleMs: number,
  envMs: number,
  text: string,
): Omit<TurnRecord, 'runId' | 'step' | 'episode' | 'turn' | 'cohort' | 'writer' | 'checksum' | 'kind' | 'state'> {
  const prev = slot.transitions.at(-1);
  const prevTrace = slot.traces.at(-1);
  const parent =
    prev && prevTrace
      ? { traceId: prevTrace.traceId, promptIds: prev.action.context, completionIds: prev.action.tokens }
      : null;
  const trace = encodeTrace(`${slot.index}/${slot.transitions.length + 1}`, slot.context, g.sampledIds, parent);
  const next = obs.context ?? [...slot.context, ...g.sampledIds, ...obs.ids];
  slot.transitions.push({
    action: {
      context: Int32Array.from(slot.context),
      tokens: g.sampledIds,
      rawLogProbs: g.rawLogProbs,
      behaviorLogProbs: g.behaviorLogProbs,
      terminated: g.finishReason === 'stop',
      policyStep,
      sampling,
    },
    observation: {
      context: Int32Array.from(next),
      status: obs.status,
      ...(obs.detail ? { detail: obs.detail } : {}),
      ...(obs.termination ? { termination: obs.termination } : {}),
      ...(obs.cases ? { cases: obs.cases } : {}),
    },
  });
  slot.traces.push(trace);
  slot.resumed.push(false);
  slot.texts.push(text);
  slot.context = next;
  if (obs.reward !== undefined) slot.envReward = obs.reward;
  if (obs.status !== 'running')
    end(slot, obs.status as Exclude<EpisodeStatus, 'running'>, obs.termination, obs.detail ?? '');
  return {
    trace,
    action: {
      rawLogProbs: Array.from(g.rawLogProbs),
      behaviorLogProbs: Array.from(g.behaviorLogProbs),
      terminated: g.finishReason === 'stop',
      policyStep,
      sampling,
    },
    observation: {
      ids: obs.ids,
      ...(obs.context ? { context: obs.context } : {}),
      status: obs.status,
      ...(obs.detail ? { detail: obs.detail } : {}),
      ...(obs.termination ? { termination: obs.termination } : {}),
      ...(obs.reward !== undefined ? { reward: obs.reward } : {}),
      ...(obs.cases ? { cases: obs.cases } : {}),
    },
    sampleMs,
    envMs,
  };
}

/** Rebuilds a slot from its journal records (start, then turns in order). */
async function restoreSlot(
  slot: Slot,
  records: JournalRecord[],
  o: Pick<EpisodeRolloutOptions, 'kind' | 'tok'>,
  deadline: number,
  withEnvironment: boolean,
): Promise<void> {
  const bad = records.find((r) => !checksumOk(r));
  const start = records[0];
  const usable = bad ? records.slice(0, records.indexOf(bad)) : records;
  const turns = usable.filter((r): r is TurnRecord => r.kind === 'turn');
  if (start?.kind === 'start' && start === usable[0]) {
    slot.initial = [...start.initial];
    slot.context = [...start.initial];
    slot.stderr = appendStderr(slot.stderr, start.stderr);
    if (start.ended) end(slot, start.ended.status, start.ended.termination, start.ended.detail);
  }
  const resolved = resolveTraces(turns.map((t) => t.trace));
  for (const r of turns) {
    const prompt = resolved.get(r.trace.traceId);
    if (!prompt || !prompt.ok || slot.initial === null) {
      slot.corrupt = true;
      end(
        slot,
        'error',
        'env_error',
        `journal: ${describeRecord(r)}: its prompt cannot be rebuilt (${prompt && !prompt.ok ? prompt.reason : 'no start record'})`,
      );
      return;
    }
    const sampled = Int32Array.from(r.trace.completionIds);
    const obs = r.observation;
    const next = obs.context ?? [...prompt.promptIds, ...sampled, ...obs.ids];
    slot.transitions.push({
      action: {
        context: prompt.promptIds,
        tokens: sampled,
        rawLogProbs: Float64Array.from(r.action.rawLogProbs),
        behaviorLogProbs: Float64Array.from(r.action.behaviorLogProbs),
        terminated: r.action.terminated,
        policyStep: r.action.policyStep,
        sampling: r.action.sampling,
      },
      observation: {
        context: Int32Array.from(next),
        status: obs.status,
        ...(obs.detail ? { detail: obs.detail } : {}),
        ...(obs.termination ? { termination: obs.termination } : {}),
        ...(obs.cases ? { cases: obs.cases } : {}),
      },
    });
    slot.traces.push(r.trace);
    slot.resumed.push(true);
    slot.texts.push(
      o.tok.decode(r.action.terminated ? sampled.subarray(0, sampled.length - 1) : sampled) + o.tok.decode(obs.ids),
    );
    slot.ms += r.sampleMs + r.envMs;
    slot.stderr = appendStderr(slot.stderr, obs.stderr);
    slot.context = next;
    if (obs.reward !== undefined) slot.envReward = obs.reward;
    if (obs.status !== 'running')
      end(slot, obs.status as Exclude<EpisodeStatus, 'running'>, obs.termination, obs.detail ?? '');
  }
  if (bad) {
    slot.corrupt = true;
    end(
      slot,
      'error',
      'env_error',
      `journal: ${describeRecord(bad)} failed its checksum: the episode is corrupt and is not trained on`,
    );
    return;
  }
  if (slot.initial === null) {
    slot.corrupt = true;
    end(slot, 'error', 'env_error', `journal: episode ${slot.index} has turns but no start record`);
    return;
  }
  if (ended(slot) || !withEnvironment) return;
  // Still running: a fresh environment, restored to the last committed turn from its snapshot, or by replay.
  const last = usable.at(-1)!;
  let how = 'restored';
  try {
    const env = (slot.env = o.kind.create(slot.task));
    const first = await withDeadline(env.reset(), deadline, `environment '${o.kind.name}' reset`);
    if (last.state !== undefined && env.setState) {
      if (turns.length > 0) slot.resumedBy = 'state';
      await withDeadline(env.setState(last.state), deadline, `environment '${o.kind.name}' set_state`);
      return;
    }
    how = 'replayed';
    if (turns.length > 0) slot.resumedBy = 'replay';
    const differs = replayDifference({ context: first }, { ids: [], context: slot.initial }, 'its first context');
    if (differs) throw new Error(differs);
    for (const r of turns) {
      // Only an action that stopped at EOS was sent (one that ran out of ids ended its episode without a step).
      if (!r.action.terminated) continue;
      const ids = Int32Array.from(r.trace.completionIds.slice(0, -1));
      const answer = await withDeadline(
        env.step({ ids, text: o.tok.decode(ids), terminated: true }),
        deadline,
        `environment '${o.kind.name}' step ${r.turn} (replayed)`,
      );
      const problem = replayDifference(answer, r.observation, `turn ${r.turn}`);
      if (problem) throw new Error(problem);
    }
  } catch (e) {
    if (e instanceof EnvironmentUnavailable) throw e;
    end(
      slot,
      'error',
      'env_error',
      `environment '${o.kind.name}' could not be ${how} to its journaled turns: ${(e as Error).message}`,
    );
  }
}

/**
 * How a replayed answer differs from the journal's (null: it equals it): its status, and the ids
 * it appended or the context it gave. Ids are compared as numbers, so a typed array equals its list.
 */
function replayDifference(
  answer: Partial<EnvStep> | null,
  journaled: { ids: readonly number[]; context?: readonly number[] | null; status?: EpisodeStatus },
  what: string,
): string | null {
  if (answer === null || typeof answer !== 'object') return `${what}: the environment answered ${String(answer)}`;
  const expected = journaled.status === 'running' ? 'running' : undefined;
  if (expected && answer.status !== expected) {
    const why = answer.detail ? ` (${answer.detail})` : '';
    return `${what}: the environment answered status ${JSON.stringify(answer.status)} where the journal has ${expected}${why}`;
  }
  const got = Array.from(answer.context ?? answer.observation ?? []);
  const want = journaled.context ? [...journaled.context] : [...journaled.ids];
  const same =
    (answer.context !== undefined) === (journaled.context != null) &&
    got.length === want.length &&
    got.every((v, k) => v === want[k]);
  if (same) return null;
  const shown = (a: number[]) => JSON.stringify(a.length > 24 ? [...a.slice(0, 24), '…'] : a);
  return (
    `${what}: the environment answered ${answer.context !== undefined ? 'the context' : 'the ids'} ${shown(got)} ` +
    `where the journal has ${journaled.context != null ? 'the context' : 'the ids'} ${shown(want)}: it is not deterministic ` +
    'in its task and actions, so the episode cannot resume by replay'
  );
}

/**
 * The episodes of one step as its journal records them, without running anything: each start
 * record's episode with its committed turns (still `running` when the step was interrupted before
 * it ended), corrupt ones flagged. `samples`: episodes per task (G), for the episode identities.
 */
export async function readJournal(
  records: readonly JournalRecord[],
  kind: EnvironmentKind,
  tok: CharTokenizer,
  samples: number,
): Promise<CollectedEpisode[]> {
  const byEpisode = new Map<number, JournalRecord[]>();
  for (const r of [...records].sort(byEpisodeTurn)) byEpisode.set(r.episode, [...(byEpisode.get(r.episode) ?? []), r]);
  const slots: Slot[] = [];
  for (const [index, recs] of byEpisode) {
    const start = recs.find((r): r is StartRecord => r.kind === 'start');
    const task: EnvTask = start?.task ?? { id: `episode ${index}`, prompt: '', answer: '', data: {} };
    const slot: Slot = {
      index,
      task,
      group: start?.group ?? task.id,
      sample: start?.sample ?? 0,
      env: null,
      context: [],
      initial: null,
      transitions: [],
      traces: [],
      resumed: [],
      status: 'running',
      corrupt: false,
      ms: start?.ms ?? 0,
      texts: [],
      stderr: '',
    };
    await restoreSlot(slot, recs, { kind, tok }, 0, false);
    slots.push(slot);
  }
  return finish(slots, kind, samples);
}

/** Rewards, group aborts and the RL core's Episode of every slot. */
function finish(slots: Slot[], kind: EnvironmentKind, samples: number): CollectedEpisode[] {
  const aborted = new Set(
    slots.filter((s) => s.status === 'error' || s.status === 'cancelled' || s.corrupt).map((s) => s.group),
  );
  return slots.map((s) => {
    const transcript = s.texts.join('\n');
    const scored = s.status === 'completed' || s.status === 'truncated';
    const reward = scored ? (s.envReward ?? kind.verify(s.task, transcript)) : null;
    const episode: Episode = {
      identity: { task: Math.floor(s.index / samples), attempt: 0, sample: s.sample, seed: [] },
      policyStep: s.transitions[0]?.action.policyStep ?? 0,
      initial: s.initial ? { context: Int32Array.from(s.initial), status: 'running' } : null,
      transitions: s.transitions,
      status: s.status,
      ...(s.detail ? { detail: s.detail } : {}),
      reward,
      ...(s.termination ? { termination: s.termination } : {}),
    };
    return {
      index: s.index,
      task: s.task,
      group: s.group,
      sample: s.sample,
      episode,
      traces: s.traces,
      resumed: s.resumed,
      ...(s.resumedBy ? { resumedBy: s.resumedBy } : {}),
      corrupt: s.corrupt,
      groupAborted: aborted.has(s.group),
      transcript,
      ms: s.ms,
      ...(s.stderr ? { stderr: s.stderr } : {}),
    };
  });
}
