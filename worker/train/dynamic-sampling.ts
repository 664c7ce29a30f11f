/**
 * DAPO's dynamic sampling (Yu et al. 2025, §3.2), as verl's DAPO trainer runs it
 * (recipe/dapo/dapo_ray_trainer.py, options `algorithm.filter_groups.{enable, metric,
 * max_num_gen_batches}`): a step samples batches of P prompts × G under the same weights, keeps
 * the groups whose chosen metric varies among their members (`np.std(values) > 0`, or a group of
 * one), and samples again until P groups are kept; the kept groups are then cut to the first P,
 * in the order they were sampled. Each batch draws new prompts from the task stream.
 *
 * The metric: `success` is whether a member's reward before any shaping (the overlong penalty) is
 * 1, as held-out accuracy counts it (verl `acc`); `score` is its reward as trained (verl
 * `seq_final_reward`, the overlong penalty included). Filtering on a shaped score lets groups
 * whose members all fail through, as long as their penalties differ.
 *
 * Where Dewpoint differs from verl, on purpose:
 * - a group with a member that has no reward (an environment error aborted it) is lost: it carries
 *   no loss mass in Dewpoint's update (verl's rollouts never fail that way), and it is not replaced:
 *   a lost group counts toward the P groups as if kept, so a failing environment does not make
 *   the step draw batch after batch of failures (the batch trains on fewer groups, `filter/lost_groups`);
 * - at `maxGenBatches` batches with fewer than P groups kept, verl raises ("Generated too many");
 *   Dewpoint trains on the kept groups and fills the batch with the first rejected ones, which
 *   carry no advantage (masked when `maskZeroAdvantage`), and reports `filter/short` = 1;
 * - a task drawn again by a later batch of the step keeps only its first group.
 *
 * What the filter saw is logged beside what it kept (DAPO logs both): `filter/groups_drawn`,
 * `filter/reward_mean_before` (every drawn member with a reward) and `filter/frac_zero_std_before`
 * (drawn groups whose members all scored alike), while `reward/*` describe the batch trained on.
 */
import type { Session } from '../rl/types';

export interface DynamicSampling {
  /** verl `filter_groups.metric`: see the file's comment. */
  metric: 'success' | 'score';
  /** verl `filter_groups.max_num_gen_batches`: batches sampled at most per step (DAPO's recipe: 10). */
  maxGenBatches: number;
}

/** The dynamic sampling a run's options ask for (`filterGroups`, `maxGenBatches`, absent: 10); null: off. */
export function dynamicSamplingOf(o: {
  filterGroups?: DynamicSampling['metric'];
  maxGenBatches?: number;
}): DynamicSampling | null {
  return o.filterGroups ? { metric: o.filterGroups, maxGenBatches: o.maxGenBatches ?? 10 } : null;
}

/** A member's value of the metric: success before shaping (`components.score` when shaped), or the trained reward. */
function metricOf(s: Session, metric: DynamicSampling['metric']): number | null {
  if (s.reward === null) return null;
  if (metric === 'score') return s.reward;
  return (s.components?.score ?? s.reward) === 1 ? 1 : 0;
}

/** A step's sessions grouped by advantage group (task, group), in the order the groups first appear. */
function groupsOf<S extends Session>(sessions: readonly S[]): S[][] {
  const groups = new Map<string, S[]>();
  for (const s of sessions) {
    const key = `${s.task}\u0000${s.group}`;
    const g = groups.get(key);
    if (g) g.push(s);
    else groups.set(key, [s]);
  }
  return [...groups.values()];
}

/** Whether a group carries a signal on `metric`: every member has a value and they are not all equal (or it has one member). */
export function groupVaries(group: readonly Session[], metric: DynamicSampling['metric']): boolean {
  const values = group.map((s) => metricOf(s, metric));
  if (values.some((v) => v === null)) return false;
  return values.length === 1 || values.some((v) => v !== values[0]);
}

/**
 * Samples batches with `draw(k)` (k = 0, 1, … the batch's number within the step) until `prompts`
 * groups vary on the metric or `maxGenBatches` batches were drawn; returns the batch to train on
 * (prompts groups, each whole) and `filter/*` metrics: batches drawn, groups kept, whether it came up short.
 */
export async function fillBatch<S extends Session>(
  prompts: number,
  o: DynamicSampling,
  draw: (batch: number) => Promise<S[]>,
): Promise<{ sessions: S[]; metrics: Record<string, number> }> {
  if (!Number.isInteger(o.maxGenBatches) || o.maxGenBatches < 1)
    throw new Error(`fillBatch: maxGenBatches = ${o.maxGenBatches}; expected an integer ≥ 1`);
  const kept: S[][] = [];
  const rejected: S[][] = [];
  const lost: S[][] = [];
  // A task drawn again within the step keeps its first group only: two groups of one (task, group) would pack as one.
  const seen = new Set<string>();
  let batches = 0;
  while (kept.length + lost.length < prompts && batches < o.maxGenBatches) {
    for (const g of groupsOf(await draw(batches))) {
      const key = `${g[0].task}\u0000${g[0].group}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (g.some((s) => s.reward === null)) lost.push(g);
      else (groupVaries(g, o.metric) ? kept : rejected).push(g);
    }
    batches++;
  }
  const short = kept.length + lost.length < prompts;
  const room = Math.max(0, prompts - kept.length);
  const groups = [
    ...kept.slice(0, prompts),
    ...lost.slice(0, room),
    ...rejected.slice(0, Math.max(0, room - lost.length)),
  ];
  const drawn = [...kept, ...rejected, ...lost];
  const scored = drawn.flat().filter((s) => s.reward !== null);
  const scoredGroups = [...kept, ...rejected];
  const alike = scoredGroups.filter((g) => g.every((s) => s.reward === g[0].reward)).length;
  return {
    sessions: groups.flat(),
    metrics: {
      'filter/gen_batches': batches,
      'filter/groups_drawn': drawn.length,
      'filter/kept_groups': kept.length,
      'filter/lost_groups': lost.length,
      'filter/short': short ? 1 : 0,
      'filter/reward_mean_before': scored.length ? scored.reduce((a, s) => a + s.reward!, 0) / scored.length : 0,
      'filter/frac_zero_std_before': scoredGroups.length ? alike / scoredGroups.length : 0,
    },
  };
}
