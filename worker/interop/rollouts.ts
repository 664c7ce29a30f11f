/**
 * A run's rollouts as rows another framework reads: one row per sampled session (a completion, or
 * a whole multi-turn episode), with the columns verl's trainer dumps to `rollout_data_dir`
 * (`input`, `output`, `gts`, `score`, `step`: verl/trainer/ppo/ray_trainer.py `_dump_generations`
 * @ verl-project/verl 1dda039) plus the DataProto tensors of that batch under verl's names:
 * `uid` (the advantage group), `prompt_ids`, `response_ids`, `response_mask` (1 on sampled ids,
 * 0 on an environment's tokens inside an episode's response), `rollout_log_probs` (the sampler's
 * behavior log-probs), `old_log_probs` (the ratio's denominator, through float32: null when the
 * session was not packed for training), `advantages` (per response id, as trained), and the policy
 * versions that served its calls, oldest and newest (`param_version_start`, `param_version_end`,
 * as verl's fully async trainer records a trajectory's). Rows are built from what the run store
 * keeps of a step (groups, sessions, the packed batch), so the app and the CLI export the same
 * bytes. Pure: no files.
 */
import type { BatchRecord, GroupRecord, SessionRecord } from '../contract/records';
import type { RunStore } from '../store/run-store';

export interface RolloutRow {
  step: number;
  /** The advantage group, unique in the run: `step:group`. */
  uid: string;
  sample: number;
  /** The preset (verl picks the reward function by `data_source`). */
  data_source: string;
  input: string;
  output: string;
  gts: string;
  score: number | null;
  status: string;
  finish_reason: 'stop' | 'length';
  prompt_ids: number[];
  response_ids: number[];
  response_mask: number[];
  rollout_log_probs: number[];
  /** Null: the session carried no loss mass and was not packed (or the step kept no batch). */
  old_log_probs: number[] | null;
  advantages: number[];
  /** The oldest and newest policy version among its calls (equal unless an episode was resumed under newer weights). */
  param_version_start: number;
  param_version_end: number;
}

interface StepRollouts {
  step: number;
  groups: readonly GroupRecord[];
  sessions: readonly SessionRecord[];
  batch?: BatchRecord | null;
}

/** The response of a session: every call's new context (mask 0) after the first prompt, then its sampled ids (mask 1). */
function responseOf(s: SessionRecord): { prompt: Int32Array; ids: number[]; mask: number[]; behavior: number[] } {
  const first = s.calls[0];
  const ids: number[] = [];
  const mask: number[] = [];
  const behavior: number[] = [];
  let context = first.promptIds.length;
  for (const c of s.calls) {
    if (c.promptIds.length < context)
      throw new Error(
        `session ${s.group}/${s.sample}: a call's prompt (${c.promptIds.length} ids) is shorter than the context before it (${context})`,
      );
    for (let i = context; i < c.promptIds.length; i++) {
      ids.push(c.promptIds[i]);
      mask.push(0);
      behavior.push(0);
    }
    for (let i = 0; i < c.sampledIds.length; i++) {
      ids.push(c.sampledIds[i]);
      mask.push(1);
      behavior.push(c.behaviorLogProbs[i]);
    }
    context = c.promptIds.length + c.sampledIds.length;
  }
  return { prompt: first.promptIds, ids, mask, behavior };
}

/** Per session (by its index in the step), the packed positions of its sampled ids, in order. */
function packedPositions(batch: BatchRecord, sessions: number): number[][] {
  const out: number[][] = Array.from({ length: sessions }, () => []);
  const mask = batch.layers.responseMask;
  for (let i = 0; i < batch.sessionIds.length; i++) {
    const s = batch.sessionIds[i] - 1;
    if (s >= 0 && s < sessions && mask[i]) out[s].push(i);
  }
  return out;
}

export function rolloutRows(step: StepRollouts, dataSource: string): RolloutRow[] {
  const groups = new Map(step.groups.map((g) => [g.group, g]));
  const positions = step.batch ? packedPositions(step.batch, step.sessions.length) : null;
  return step.sessions.map((s, i) => {
    const g = groups.get(s.group);
    const gs = g?.samples.find((x) => x.sample === s.sample);
    const r = responseOf(s);
    const sampled = r.mask.reduce((n, m) => n + m, 0);
    /** Per response id: `values(k, i)` at the k-th sampled id (response index i), 0 on the environment's ids. */
    const onSampled = (values: (k: number, i: number) => number) => {
      let k = 0;
      return r.mask.map((m, i) => (m ? values(k++, i) : 0));
    };
    const pos = positions?.[i];
    const packed = pos !== undefined && pos.length === sampled && sampled > 0;
    // Old as the Batch view defines it (behavior + mismatch): the trainer's rescoring when the
    // batch took several updates, else the sampler's raw log-probs (equal to the behavior ones
    // when it sampled without a top-k/top-p filter, which is when it records none).
    const b = step.batch!;
    const advantages = packed
      ? onSampled((k) => b.layers.advantage[pos[k]])
      : s.critic
        ? onSampled((k) => s.critic!.advantages[k])
        : onSampled(() => gs?.advantage ?? 0);
    const last = s.calls[s.calls.length - 1];
    return {
      step: step.step,
      uid: `${step.step}:${s.group}`,
      sample: s.sample,
      data_source: dataSource,
      input: g?.prompt ?? '',
      output: gs?.completion ?? '',
      gts: g?.answer ?? '',
      score: s.reward,
      status: s.status,
      finish_reason: last.finishReason,
      prompt_ids: Array.from(r.prompt),
      response_ids: r.ids,
      response_mask: r.mask,
      rollout_log_probs: r.behavior,
      old_log_probs: packed ? onSampled((k, i) => r.behavior[i] + b.layers.mismatch[pos[k]]) : null,
      advantages,
      param_version_start: Math.min(...s.calls.map((c) => c.version)),
      param_version_end: Math.max(...s.calls.map((c) => c.version)),
    };
  });
}

/** A distinct prompt of the run, with its ground truth, as datasets list it. */
export interface PromptRow {
  prompt: string;
  answer: string;
}

/** The run's distinct (prompt, answer) pairs in the order it first sampled them. */
export function distinctPrompts(rows: readonly Pick<RolloutRow, 'input' | 'gts'>[]): PromptRow[] {
  const seen = new Set<string>();
  const out: PromptRow[] = [];
  for (const r of rows) {
    const key = JSON.stringify([r.input, r.gts]);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ prompt: r.input, answer: r.gts });
  }
  return out;
}

/** A preference pair: a DPO step's chosen and rejected completions, or a GRPO group's best and worst when their rewards differ. */
export interface PairRow {
  prompt: string;
  chosen: string;
  rejected: string;
  /** The task's ground truth, and the rewards the chosen and rejected completions got (what the pair was built by). */
  answer: string;
  chosenReward: number;
  rejectedReward: number;
  step: number;
  source: 'dpo-pair' | 'group-best-worst';
}

export function preferencePairs(steps: readonly { step: number; groups: readonly GroupRecord[] }[]): PairRow[] {
  const out: PairRow[] = [];
  for (const { step, groups } of steps) {
    for (const g of groups) {
      if (g.kind === 'dpo-pair') {
        const chosen = g.samples.find((x) => x.sample === 0);
        const rejected = g.samples.find((x) => x.sample === 1);
        if (chosen && rejected)
          out.push({
            prompt: g.prompt,
            chosen: chosen.completion,
            rejected: rejected.completion,
            answer: g.answer,
            chosenReward: chosen.reward,
            rejectedReward: rejected.reward,
            step,
            source: 'dpo-pair',
          });
        continue;
      }
      if (g.samples.length < 2) continue;
      let best = g.samples[0];
      let worst = g.samples[0];
      for (const x of g.samples) {
        if (x.reward > best.reward) best = x;
        if (x.reward < worst.reward) worst = x;
      }
      if (best.reward > worst.reward)
        out.push({
          prompt: g.prompt,
          chosen: best.completion,
          rejected: worst.completion,
          answer: g.answer,
          chosenReward: best.reward,
          rejectedReward: worst.reward,
          step,
          source: 'group-best-worst',
        });
    }
  }
  return out;
}

/** Every stored step of a run with its groups and rollout rows (a step without sessions gives groups only). */
export async function storedSteps(
  store: Pick<RunStore, 'groupSteps' | 'groupsAt' | 'sessionsAt' | 'batchAt'>,
  runId: string,
  dataSource: string,
): Promise<{ step: number; groups: GroupRecord[]; rows: RolloutRow[] }[]> {
  const out = [];
  for (const step of await store.groupSteps(runId)) {
    const [groups, sessions, batch] = await Promise.all([
      store.groupsAt(runId, step),
      store.sessionsAt(runId, step),
      store.batchAt(runId, step),
    ]);
    if (!groups) continue;
    out.push({ step, groups, rows: sessions ? rolloutRows({ step, groups, sessions, batch }, dataSource) : [] });
  }
  return out;
}
