/**
 * What the Replay view and the episode export read, from the journal: a step's episodes as
 * summaries, one episode's turns with their delta-chain traces resolved, a replay of an episode's
 * journaled actions against a fresh environment, and the JSONL export (one line per episode).
 * Pure reads of journal records; nothing here trains or writes.
 */
import type { CharTokenizer } from '../data/tokenizer';
import type { EpisodeDetail, EpisodeSummary, EpisodeTurnView, ReplayResult } from '../contract/records';
import { trains, type Truncation } from '../rl/types';
import type { EnvironmentKind } from './environment';
import type { JournalRecord, TurnRecord } from './journal';
import { checksumOk } from './journal';
import type { CollectedEpisode } from './rollout';
import { readJournal } from './rollout';
import { resolveTraces } from './traces';

/** What reading a run's episodes needs of the run: its environment, tokenizer and the options deciding what trains. */
export interface EpisodeContext {
  kind: EnvironmentKind;
  tok: CharTokenizer;
  /** Episodes per task (G). */
  group: number;
  truncation: Truncation;
  maskZeroAdvantage: boolean;
  /**
   * The groups the step trained on, from its stored advantage groups: with dynamic sampling a step
   * journals every batch it drew, and only the groups kept trained. Absent: decided by pack's rule alone.
   */
  trainedGroups?: ReadonlySet<string>;
}

function summary(
  e: CollectedEpisode,
  all: readonly CollectedEpisode[],
  step: number,
  c: EpisodeContext,
): EpisodeSummary {
  const ep = e.episode;
  const rewards = all.filter((x) => x.group === e.group).map((x) => x.episode.reward);
  const zeroStd = rewards.every((r) => r === rewards[0]);
  // pack's rule (worker/rl/pack.ts `carries`): a trainable status under the truncation rule, a whole group, not all rewards equal when those are masked.
  const trainable = (ep.status === 'completed' || ep.status === 'truncated') && trains(ep.status, c.truncation);
  const kept = !c.trainedGroups || c.trainedGroups.has(e.group);
  const trained = kept && trainable && !e.groupAborted && !e.corrupt && !(c.maskZeroAdvantage && zeroStd);
  return {
    step,
    index: e.index,
    group: e.group,
    sample: e.sample,
    task: { id: e.task.id, prompt: e.task.prompt, answer: e.task.answer },
    status: ep.status,
    ...(ep.termination ? { termination: ep.termination } : {}),
    reward: ep.reward,
    turns: ep.transitions.length,
    policyVersion: ep.transitions[0]?.action.policyStep ?? ep.policyStep,
    trained,
    groupAborted: e.groupAborted,
    corrupt: e.corrupt,
    ...(ep.detail ? { detail: ep.detail } : {}),
    resumedTurns: 0,
    ms: e.ms,
    ...(e.stderr ? { stderr: e.stderr } : {}),
  };
}

/** Turns of an episode written by another process than its last record's: executed before a restart, restored after it. */
function resumedTurns(records: readonly JournalRecord[], index: number): Set<number> {
  const mine = records.filter((r) => r.episode === index);
  const last = mine.at(-1)?.writer;
  return new Set(mine.filter((r): r is TurnRecord => r.kind === 'turn' && r.writer !== last).map((r) => r.turn));
}

/**
 * How an episode with restored turns got its environment back (rollout.ts `restoreSlot`): from the
 * snapshot the last restored turn journaled, or by replaying the turns; absent when none was
 * restored or nothing ran after them (the environments that journal a state all restore it).
 */
function resumedBy(
  records: readonly JournalRecord[],
  index: number,
  resumed: Set<number>,
): { resumedBy?: 'state' | 'replay' } {
  if (resumed.size === 0) return {};
  const turns = records.filter((r): r is TurnRecord => r.kind === 'turn' && r.episode === index);
  const lastRestored = turns.filter((r) => resumed.has(r.turn)).at(-1)!;
  if (!turns.some((r) => r.turn > lastRestored.turn)) return {};
  return { resumedBy: lastRestored.state !== undefined ? 'state' : 'replay' };
}

export async function episodeSummaries(
  records: readonly JournalRecord[],
  step: number,
  c: EpisodeContext,
): Promise<EpisodeSummary[]> {
  const eps = await readJournal(records, c.kind, c.tok, c.group);
  return eps.map((e) => {
    const resumed = resumedTurns(records, e.index);
    return { ...summary(e, eps, step, c), resumedTurns: resumed.size, ...resumedBy(records, e.index, resumed) };
  });
}

export async function episodeDetail(
  records: readonly JournalRecord[],
  step: number,
  index: number,
  c: EpisodeContext,
): Promise<EpisodeDetail | null> {
  const eps = await readJournal(records, c.kind, c.tok, c.group);
  const e = eps.find((x) => x.index === index);
  if (!e) return null;
  const mine = records.filter((r) => r.episode === index);
  const turns = mine.filter((r): r is TurnRecord => r.kind === 'turn');
  const start = mine.find((r) => r.kind === 'start');
  const resolved = resolveTraces(turns.map((t) => t.trace));
  const resumed = resumedTurns(records, index);
  const decode = (ids: ArrayLike<number>) => c.tok.decode(ids);
  const turnViews: EpisodeTurnView[] = turns.map((r) => {
    const t = resolved.get(r.trace.traceId);
    const sampled = Int32Array.from(r.trace.completionIds);
    return {
      turn: r.turn,
      traceId: r.trace.traceId,
      parentTraceId: r.trace.parentTraceId,
      promptIds: t?.ok ? t.promptIds : null,
      inherited: t?.ok ? t.inherited : 0,
      ...(r.trace.reset ? { reset: { reason: r.trace.reset.reason, index: r.trace.reset.index } } : {}),
      ...(r.trace.replayOf ? { replayOf: r.trace.replayOf } : {}),
      ...(t && !t.ok ? { unresolved: t.reason } : {}),
      action: {
        ids: sampled,
        text: decode(sampled),
        rawLogProbs: Float64Array.from(r.action.rawLogProbs),
        behaviorLogProbs: Float64Array.from(r.action.behaviorLogProbs),
        terminated: r.action.terminated,
        policyStep: r.action.policyStep,
        temperature: r.action.sampling.temperature,
      },
      observation: {
        ids: Int32Array.from(r.observation.ids),
        text: decode(r.observation.ids),
        status: r.observation.status,
        ...(r.observation.detail ? { detail: r.observation.detail } : {}),
        ...(r.observation.termination ? { termination: r.observation.termination } : {}),
        ...(r.observation.reward !== undefined ? { reward: r.observation.reward } : {}),
      },
      sampleMs: r.sampleMs,
      envMs: r.envMs,
      resumed: resumed.has(r.turn),
      checksumOk: checksumOk(r),
    };
  });
  return {
    ...summary(e, eps, step, c),
    resumedTurns: resumed.size,
    ...resumedBy(records, index, resumed),
    initialIds: Int32Array.from(start?.kind === 'start' ? start.initial : []),
    vocab: Array.from({ length: c.tok.size }, (_, id) => c.tok.decode([id], { specials: true })),
    turnViews,
  };
}

/** The first index where two id lists differ, or -1 when they are equal. */
function firstDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

/**
 * Re-executes an episode's journaled actions against a fresh environment: the first context and
 * every observation (ids, status, reward) must come out as journaled. An action the environment
 * never saw (it ran out of ids before EOS) is not replayed.
 */
export async function replayEpisode(
  records: readonly JournalRecord[],
  index: number,
  c: EpisodeContext,
): Promise<ReplayResult> {
  const mine = records.filter((r) => r.episode === index);
  const start = mine.find((r) => r.kind === 'start');
  if (!start || start.kind !== 'start')
    return { identical: false, summary: `episode ${index} is not journaled`, turns: [] };
  const env = c.kind.create(start.task);
  const turns: ReplayResult['turns'] = [];
  try {
    const initial = await env.reset();
    const k0 = firstDifference(initial, start.initial);
    if (k0 >= 0)
      turns.push({
        turn: 0,
        identical: false,
        firstDivergentToken: k0,
        expected: c.tok.decode(start.initial, { specials: true }),
        got: c.tok.decode(initial, { specials: true }),
      });
    for (const r of mine.filter((x): x is TurnRecord => x.kind === 'turn')) {
      if (!r.action.terminated) {
        turns.push({ turn: r.turn, identical: true });
        continue;
      }
      const sampled = r.trace.completionIds;
      const ids = sampled.slice(0, sampled.length - 1);
      let got: number[];
      let status: string;
      let reward: number | undefined;
      try {
        const a = await env.step({ ids, text: c.tok.decode(ids), terminated: true });
        got = a.context !== undefined ? Array.from(a.context) : Array.from(a.observation);
        status = a.status === 'done' ? 'completed' : a.status === 'error' ? 'error' : 'running';
        reward = a.reward;
      } catch {
        // The environment threw: as journaled when the turn recorded an error, else a divergence.
        got = [];
        status = 'error';
      }
      const expected = r.observation.context ?? r.observation.ids;
      // A budget that ended the episode on this turn (the rollout's doing) leaves the environment's own answer 'running'.
      const budget =
        r.observation.termination === 'max_turns' ||
        r.observation.termination === 'max_prompt_length' ||
        r.observation.termination === 'timeout';
      const envStatus = budget ? 'running' : r.observation.status;
      const k = firstDifference(got, expected);
      const same = k < 0 && status === envStatus && reward === r.observation.reward;
      turns.push({
        turn: r.turn,
        identical: same,
        ...(same
          ? {}
          : {
              firstDivergentToken: Math.max(k, 0),
              expected: `${c.tok.decode(expected)} (${envStatus})`,
              got: `${c.tok.decode(got)} (${status})`,
            }),
      });
    }
  } finally {
    await env.close?.();
  }
  const first = turns.find((t) => !t.identical);
  return { identical: !first, summary: first ? `diverged at turn ${first.turn}` : 'identical', turns };
}

/** One JSONL line per episode of the given steps' records: turns with token ids, both log-probs, observations, statuses and rewards. */
export async function episodesJsonl(
  runId: string,
  steps: readonly { step: number; records: readonly JournalRecord[]; trainedGroups?: ReadonlySet<string> }[],
  c: EpisodeContext,
): Promise<string> {
  const lines: string[] = [];
  for (const { step, records, trainedGroups } of steps) {
    const eps = await readJournal(records, c.kind, c.tok, c.group);
    for (const e of eps) {
      const s = summary(e, eps, step, trainedGroups ? { ...c, trainedGroups } : c);
      const writers = new Map(
        records.filter((r) => r.episode === e.index && r.kind === 'turn').map((r) => [r.turn, r.writer]),
      );
      lines.push(
        JSON.stringify({
          run: runId,
          step,
          episode: e.index,
          group: e.group,
          sample: e.sample,
          task: s.task,
          environment: c.kind.name,
          status: s.status,
          termination: s.termination ?? null,
          reward: s.reward,
          trained: s.trained,
          group_aborted: s.groupAborted,
          corrupt: s.corrupt,
          detail: s.detail ?? '',
          stderr: e.stderr ?? '',
          policy_version: s.policyVersion,
          initial_ids: Array.from(e.episode.initial?.context ?? []),
          turns: e.episode.transitions.map((t, k) => ({
            turn: k + 1,
            prompt_ids: Array.from(t.action.context),
            completion_ids: Array.from(t.action.tokens),
            behavior_logprobs: Array.from(t.action.behaviorLogProbs),
            raw_logprobs: Array.from(t.action.rawLogProbs),
            ended_on_eos: t.action.terminated,
            observation_ids: Array.from(t.observation.context).slice(t.action.context.length + t.action.tokens.length),
            status: t.observation.status,
            termination: t.observation.termination ?? null,
            detail: t.observation.detail ?? '',
            trace: {
              id: e.traces[k].traceId,
              parent: e.traces[k].parentTraceId,
              delta_ids: e.traces[k].promptDeltaIds,
              ...(e.traces[k].reset ? { reset: e.traces[k].reset } : {}),
            },
            executed_by: writers.get(k + 1) ?? '',
          })),
          transcript: e.transcript,
        }),
      );
    }
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}
