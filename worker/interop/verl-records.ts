/**
 * One step of checked verl rows (verl-import.ts) as the records a Dewpoint step commits: the
 * advantage groups (Groups), and, when the dump has token ids, the sessions (the session
 * inspector) and the batch in verl's own layout, one sample a row (Batch), with the step's reward
 * metrics. Advantages come from the dump's `advantages` column when it has one; otherwise the RL
 * core's GRPO estimator recomputes them with verl's defaults (compat 'verl': the group's unbiased
 * std, ε = 1e-6, a singleton keeps r / (1 + ε), as verl `compute_grpo_outcome_advantage`), and
 * every group's estimate says so. Pure: no store, no files.
 */
import type { BatchRecord, GroupRecord, GroupSample } from '../contract/records';
import { outcomeAdvantageDetails } from '../rl/advantages/index';
import type { Call, Session } from '../rl/types';
import type { StepCommit } from '../store/run-store';

/** One checked sample of a dump. Optional fields are present only when the dump has the column. */
export interface VerlRow {
  file: string;
  line: number;
  unit: 'line' | 'row';
  step: number;
  input: string;
  output: string;
  /** `gts` as text (a string as is, another JSON value as JSON); absent when null. */
  answer?: string;
  score: number;
  uid?: string;
  /** The sample's advantage (a per-id list: its first id's, which an outcome estimator shares over the response). */
  advantage?: number;
  tokenAdvantages?: number[];
  promptIds?: number[];
  responseIds?: number[];
  responseMask?: number[];
  rolloutLogProbs?: number[];
  oldLogProbs?: number[];
  finishReason?: 'stop' | 'length';
  /** The policy version that served the sample (`param_version_start`, as verl's fully async trainer records it); absent: step − 1. */
  paramVersion?: number;
  /** Numeric extra columns (verl's `reward_extra_infos`, e.g. `acc`). */
  components: Record<string, number>;
  /** The optional columns this row has a value in. */
  has: Set<string>;
}

/** Rows × width above which a step keeps no batch (the Batch view draws every id). */
export const MAX_BATCH_IDS = 500_000;

/** What recomputed advantages carry in their estimate's settings, so no view passes them off as verl's. */
export const RECOMPUTED = 'recomputed by Dewpoint (verl dumps no advantages)';

/**
 * A uid's group: verl's v1 trainer dumps its TransferQueue key `{uid}_{session_id}_{index}`
 * (verl/trainer/ppo/v1/agent_loop_tq.py), whose samples share the `{uid}` part; other uids are
 * the group key as they are (the legacy trainer's uuid4, Dewpoint's export `step:group`).
 */
export function groupOfUid(uid: string): string {
  return /^(.+)_\d+_\d+$/.exec(uid)?.[1] ?? uid;
}

/** The mean of `xs`; population std beside it (a description, as GroupRecord.rewardStd). */
function stats(xs: readonly number[]): { mean: number; std: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  return { mean, std: Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length) };
}

const maskOf = (r: VerlRow) => r.responseMask ?? r.responseIds!.map(() => 1);

/**
 * A sample's model calls: the response split where its mask changes (the inverse of the export's
 * `responseOf`): ids under mask 0 (an environment's, multi-turn) join the next call's prompt, each
 * run under mask 1 is one call's sampled ids. Without rollout_log_probs the behavior log-probs are
 * NaN (not recorded); without old_log_probs there are no raw ones.
 */
function callsOf(r: VerlRow, version: number): Call[] {
  const ids = r.responseIds!,
    mask = maskOf(r);
  const context = [...(r.promptIds ?? [])];
  const calls: Call[] = [];
  for (let i = 0; i < ids.length;) {
    while (i < ids.length && mask[i] === 0) context.push(ids[i++]);
    if (i >= ids.length) break;
    const start = i;
    while (i < ids.length && mask[i] === 1) i++;
    const sampled = ids.slice(start, i);
    calls.push({
      promptIds: Int32Array.from(context),
      sampledIds: Int32Array.from(sampled),
      behaviorLogProbs: r.rolloutLogProbs
        ? Float64Array.from(r.rolloutLogProbs.slice(start, i))
        : new Float64Array(sampled.length).fill(NaN),
      ...(r.oldLogProbs ? { rawLogProbs: Float64Array.from(r.oldLogProbs.slice(start, i)) } : {}),
      finishReason: 'stop',
      version,
    });
    context.push(...sampled);
  }
  if (!calls.length)
    calls.push({
      promptIds: Int32Array.from(context),
      sampledIds: new Int32Array(0),
      behaviorLogProbs: new Float64Array(0),
      finishReason: 'stop',
      version,
    });
  if (r.finishReason === 'length') calls[calls.length - 1] = { ...calls[calls.length - 1], finishReason: 'length' };
  return calls;
}

/** verl's layout: one sample a row, the prompt right-aligned in the first P columns, the response from column P. */
function batchOf(rows: readonly VerlRow[], advantages: readonly number[], version: number): BatchRecord {
  const P = Math.max(0, ...rows.map((r) => r.promptIds?.length ?? 0));
  const width = P + Math.max(1, ...rows.map((r) => r.responseIds!.length));
  const B = rows.length,
    n = B * width;
  const tokens: string[] = new Array(n).fill('');
  const sessionIds = new Int32Array(n);
  const segments = new Float32Array(n),
    responseMask = new Float32Array(n),
    advantage = new Float32Array(n);
  const versions = new Float32Array(n).fill(-1);
  const mismatchKnown = rows.some((r) => r.rolloutLogProbs && r.oldLogProbs);
  const mismatch = new Float32Array(n).fill(mismatchKnown ? 0 : NaN);
  let real = 0;
  rows.forEach((r, b) => {
    const put = (col: number, id: number) => {
      const i = b * width + col;
      tokens[i] = `#${id}`;
      sessionIds[i] = b + 1;
      segments[i] = b + 1;
      real++;
      return i;
    };
    const prompt = r.promptIds ?? [];
    prompt.forEach((id, j) => put(P - prompt.length + j, id));
    const mask = maskOf(r);
    r.responseIds!.forEach((id, j) => {
      const i = put(P + j, id);
      if (!mask[j]) return;
      responseMask[i] = 1;
      advantage[i] = r.tokenAdvantages ? r.tokenAdvantages[j] : advantages[b];
      versions[i] = r.paramVersion ?? version;
      if (mismatchKnown)
        mismatch[i] = r.rolloutLogProbs && r.oldLogProbs ? r.oldLogProbs[j] - r.rolloutLogProbs[j] : NaN;
    });
  });
  return {
    rows: B,
    width,
    rowsNeeded: B,
    efficiency: real / n,
    tokens,
    sessionIds,
    notPacked: 0,
    layers: { segments, responseMask, advantage, mismatch, dlogp: new Float32Array(n).fill(NaN), version: versions },
  };
}

/** One step's rows, grouped, with their advantages: from the dump, or recomputed (and the estimate that says so). */
function groupsOf(
  rows: readonly VerlRow[],
  grouping: 'uid' | 'input',
): { groups: GroupRecord[]; ordered: VerlRow[]; advantages: number[] } {
  const byKey = new Map<string, VerlRow[]>();
  for (const r of rows) {
    const key = grouping === 'uid' ? groupOfUid(r.uid!) : r.input;
    byKey.set(key, [...(byKey.get(key) ?? []), r]);
  }
  const keyed = [...byKey.entries()].map(([key, members], k) => ({
    name: grouping === 'uid' ? key : `input ${k + 1}`,
    members,
  }));
  const ordered = keyed.flatMap((g) => g.members);
  const fromDump = ordered.every((r) => r.advantage !== undefined);
  const scores = ordered.map((r) => r.score);
  const names = keyed.flatMap((g) => g.members.map(() => g.name));
  const d = fromDump
    ? null
    : outcomeAdvantageDetails(
        'grpo',
        scores,
        names,
        ordered.map(() => 0),
        { compat: 'verl' },
      );
  const advantages = d ? Array.from(d.advantages) : ordered.map((r) => r.advantage!);
  let at = 0;
  const groups = keyed.map(({ name, members }, k): GroupRecord => {
    const first = at;
    at += members.length;
    const samples = members.map((r, j): GroupSample => {
      const sampled = r.responseIds ? maskOf(r).reduce((a, b) => a + b, 0) : NaN;
      return {
        sample: j,
        completion: r.output,
        reward: r.score,
        components: { ...r.components },
        advantage: advantages[first + j],
        ...(d ? { baseline: d.baselines[first + j] } : {}),
        status: r.finishReason === 'length' ? 'truncated' : r.finishReason === 'stop' ? 'completed' : 'not recorded',
        length: sampled,
        truncated: r.finishReason === 'length',
      };
    });
    const { mean, std } = stats(samples.map((s) => s.reward));
    const g = d?.groups[k];
    return {
      group: name,
      prompt: members[0].input,
      answer: members[0].answer ?? '',
      rewardMean: mean,
      rewardStd: std,
      zeroStd: samples.every((s) => s.reward === samples[0].reward),
      samples,
      ...(d && g
        ? {
            estimate: {
              estimator: 'grpo' as const,
              settings: { ...d.settings, source: RECOMPUTED },
              members: g.members.length,
              baseline: g.baseline,
              std: g.std,
              divisor: g.divisor,
              zero: g.zero,
              batch: d.batch,
            },
          }
        : {}),
    };
  });
  return { groups, ordered, advantages };
}

/** Every step of the rows as a commit, ascending; `tooLarge` lists the steps whose batch was left out (MAX_BATCH_IDS). */
export function stepRecords(
  rows: readonly VerlRow[],
  grouping: 'uid' | 'input',
): { step: number; commit: StepCommit; tooLarge: boolean }[] {
  const bySteps = new Map<number, VerlRow[]>();
  for (const r of rows) bySteps.set(r.step, [...(bySteps.get(r.step) ?? []), r]);
  return [...bySteps.entries()]
    .sort(([a], [b]) => a - b)
    .map(([step, mine]) => {
      const { groups, ordered, advantages } = groupsOf(mine, grouping);
      // verl's synchronous trainer samples step s with the weights after s − 1 updates: that, unless a row says (param_version_start).
      const version = Math.max(0, step - 1);
      const rewards = ordered.map((r) => r.score);
      const zero = groups.filter((g) => g.zeroStd);
      const metrics: Record<string, number> = {
        'reward/mean': stats(rewards).mean,
        'reward/std': stats(rewards).std,
        'reward/groups': groups.length,
        'reward/zero_std_groups': zero.length,
        'reward/frac_reward_zero_std': zero.reduce((n, g) => n + g.samples.length, 0) / ordered.length,
      };
      const commit: StepCommit = { step, metrics, groups };
      let tooLarge = false;
      if (ordered[0].responseIds) {
        metrics['response_length/mean'] = stats(ordered.map((r) => r.responseIds!.length)).mean;
        let i = 0;
        commit.sessions = groups.flatMap((g) =>
          g.samples.map((sample): Session => {
            const r = ordered[i++];
            return {
              task: g.group,
              group: g.group,
              sample: sample.sample,
              attempt: 0,
              calls: callsOf(r, r.paramVersion ?? version),
              status: r.finishReason === 'length' ? 'truncated' : 'completed',
              reward: r.score,
              components: { ...r.components },
              detail: `${r.file} ${r.unit} ${r.line}${r.finishReason ? '' : '; finish reason not recorded'}`,
            };
          }),
        );
        const P = Math.max(0, ...ordered.map((r) => r.promptIds?.length ?? 0));
        const width = P + Math.max(1, ...ordered.map((r) => r.responseIds!.length));
        tooLarge = ordered.length * width > MAX_BATCH_IDS;
        if (!tooLarge) commit.batch = batchOf(ordered, advantages, version);
      }
      return { step, commit, tooLarge };
    });
}
