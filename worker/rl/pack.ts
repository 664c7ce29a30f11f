/**
 * `pack`: strictly merge each trained session's calls into chains, compute the sessions'
 * advantages over their `(task, group)`, and pack the chains first-fit decreasing into
 * `[rows, width]` arrays aligned with `inputIds`.
 *
 * Not a scorer (the model scores packed rows, each id given its own chain's prefix) and not GAE
 * (run `gae` on the packed arrays with `tokenRewards`, `sessionIds` and `callIndex`). Reference:
 * dew `pack` (docs/rl-core.md "Packing", "Advantages"; docs/rl-formulas.md §9.2). Bad sessions throw (see
 * validate.ts); a batch that does not fit is an expected outcome, `{ ok: false, reason, rowsNeeded }`.
 */
import { OUTCOME_ESTIMATORS, outcomeAdvantageDetails, outcomeAdvantages } from './advantages/index';
import { groupScores, outcome } from './advantages/groups';
import { chainsOf, placeChains } from './pack-chains';
import { fillArrays } from './pack-fill';
import type { ChainPlacement, PackedAdvantageDetails, PackOptions, PackResult, SessionCounts } from './pack-types';
import { STATUSES, trains, type Session } from './types';
import { describeSession, validateSessions } from './validate';

export type {
  ChainPlacement,
  PackedAdvantageDetails,
  PackedBatch,
  PackOptions,
  PackRefusal,
  PackResult,
  SessionCounts,
} from './pack-types';

/** Packs `sessions` into rows of `width` ids. See `PackOptions` for each option and its default. */
export function pack(sessions: readonly Session[], width: number, options: PackOptions = {}): PackResult {
  if (!Number.isInteger(width) || width <= 0) throw new Error(`pack: width = ${width}: expected a positive integer`);
  const { rows, estimator = 'grpo', truncation = 'mask', include = 'trained', maskZeroAdvantage = false } = options;
  if (rows !== undefined && (!Number.isInteger(rows) || rows < 0))
    throw new Error(`pack: rows = ${rows}: expected a non-negative integer`);
  if (truncation !== 'mask' && truncation !== 'score')
    throw new Error(`pack: truncation = ${JSON.stringify(truncation)}: expected "mask" or "score"`);
  if (include !== 'trained' && include !== 'all' && include !== 'carried')
    throw new Error(`pack: include = ${JSON.stringify(include)}: expected "trained", "all" or "carried"`);
  validateSessions(sessions);

  const trained = sessions.map((s) => trains(s.status, truncation));
  const { advantage, fracRewardZeroStd, zeroStdGroups, groups, details, allEqual } = sessionAdvantages(
    sessions,
    trained,
    estimator,
    options,
  );
  // Under 'none' no advantage is known yet: the groups of several members whose rewards are all equal are masked.
  const carries = trained.map(
    (t, i) => t && !(maskZeroAdvantage && (estimator === 'none' ? allEqual[i] : advantage[i] === 0)),
  );

  const placedSession = (i: number) => (include === 'all' ? true : include === 'carried' ? carries[i] : trained[i]);
  const chains = sessions.flatMap((s, i) => (placedSession(i) ? chainsOf(s, i) : []));
  const placed = placeChains(
    chains.map((c) => c.length),
    width,
  );
  if (!placed.ok) {
    const c = chains[placed.tooLong[0]];
    const calls = c.calls > 1 ? `calls ${c.firstCall}–${c.firstCall + c.calls - 1}` : `call ${c.firstCall}`;
    return {
      ok: false,
      reason: 'width',
      rowsNeeded: placed.rowsNeeded,
      message: `${describeSession(sessions[c.session], c.session)}, ${calls}: a chain of ${c.length} ids does not fit in width ${width} (${placed.tooLong.length} chain(s) too long)`,
    };
  }
  if (rows !== undefined && placed.rowsNeeded > rows) {
    return {
      ok: false,
      reason: 'rows',
      rowsNeeded: placed.rowsNeeded,
      message: `the batch needs ${placed.rowsNeeded} rows of width ${width} but rows = ${rows}`,
    };
  }
  const R = rows ?? placed.rowsNeeded;
  const placements: ChainPlacement[] = placed.placements.map((p) => ({
    ...chains[p.chain],
    row: p.row,
    offset: p.offset,
    segment: p.segment,
  }));
  const arrays = fillArrays({ sessions, chains: placements, rows: R, width, carries, advantage });

  const counts = countSessions(sessions, carries);
  const rewards = sessions.filter((_, i) => carries[i]).map((s) => s.reward as number);
  const efficiency = R * width > 0 ? arrays.realTokens / (R * width) : 0;
  let mass = 0;
  for (let t = 0; t < arrays.responseMask.length; t++) mass += arrays.responseMask[t];
  const metrics: Record<string, number> = {
    'batch/packing_efficiency': efficiency,
    'batch/rows': R,
    'batch/rows_needed': placed.rowsNeeded,
    'batch/chains': placements.length,
    'batch/real_tokens': arrays.realTokens,
    'batch/trainable_tokens': mass,
    'sessions/total': counts.total,
    'sessions/trained': counts.trained,
    // Trained sessions left out of the rows because they carry no loss mass (include 'carried').
    'sessions/not_packed': sessions.filter((_, i) => trained[i] && !placedSession(i)).length,
    'sessions/truncated': counts.byStatus.truncated,
    'sessions/cancelled': counts.byStatus.cancelled,
    'sessions/infrastructure_failures': counts.byStatus.failed,
    'reward/groups': groups,
    'reward/zero_std_groups': zeroStdGroups,
    'reward/frac_reward_zero_std': fracRewardZeroStd,
  };
  if (rewards.length > 0) metrics['reward/mean'] = rewards.reduce((a, b) => a + b, 0) / rewards.length;
  const sessionAdvantage = Float64Array.from(advantage, (a, i) => (carries[i] ? a : 0));
  return {
    ok: true,
    rows: R,
    width,
    ...arrays,
    chains: placements,
    sessionAdvantages: sessionAdvantage,
    advantageDetails: details,
    rowsNeeded: placed.rowsNeeded,
    efficiency,
    counts,
    metrics,
  };
}

/**
 * Per input session, its advantage among the trained members of its `(task, group)`; 0 for the
 * others. With an outcome estimator, also its working (`details`, indices the input sessions').
 */
function sessionAdvantages(
  sessions: readonly Session[],
  trained: readonly boolean[],
  estimator: NonNullable<PackOptions['estimator']>,
  options: PackOptions,
) {
  const advantage = new Float64Array(sessions.length);
  const allEqual: boolean[] = sessions.map(() => false);
  const idx = sessions.map((_, i) => i).filter((i) => trained[i]);
  const scores = idx.map((i) => sessions[i].reward as number);
  const keys = idx.map((i) => JSON.stringify([sessions[i].task, sessions[i].group]));
  if (typeof estimator === 'object') {
    if (estimator.given.length !== sessions.length) {
      throw new Error(`pack: estimator.given has ${estimator.given.length} advantages for ${sessions.length} sessions`);
    }
    for (const i of idx) {
      if (!Number.isFinite(estimator.given[i]))
        throw new Error(
          `pack: estimator.given[${i}] = ${estimator.given[i]} for ${describeSession(sessions[i], i)}: expected a finite advantage`,
        );
      advantage[i] = estimator.given[i];
    }
    const stats = outcomeAdvantages('grpo', scores, keys, []); // only its zero-std counts are used
    return {
      advantage,
      fracRewardZeroStd: stats.fracRewardZeroStd,
      zeroStdGroups: stats.zeroStdGroups,
      groups: stats.groups,
      details: null,
      allEqual,
    };
  }
  if (estimator !== 'none' && !OUTCOME_ESTIMATORS.includes(estimator)) {
    throw new Error(
      `pack: estimator = ${JSON.stringify(estimator)}: expected ${OUTCOME_ESTIMATORS.join(', ')}, "none" or { given }`,
    );
  }
  const lengths = idx.map((i) => sessions[i].calls.reduce((n, c) => n + c.sampledIds.length, 0));
  if (estimator === 'none') {
    const out = outcomeAdvantages('grpo', scores, keys, lengths, {}); // only its zero-std counts are used
    const g = groupScores(scores, keys);
    g.members.forEach((m, k) => {
      if (m.length > 1 && g.zeroStd[k]) for (const j of m) allEqual[idx[j]] = true;
    });
    return { ...counted(out), advantage, details: null, allEqual };
  }
  const d = outcomeAdvantageDetails(
    estimator,
    scores,
    keys,
    lengths,
    options.advantage,
    estimator === 'gdpo' ? rewardParts(sessions, idx, options.advantage?.weights ?? {}) : undefined,
  );
  idx.forEach((i, k) => (advantage[i] = d.advantages[k]));
  const baselines = new Float64Array(sessions.length);
  idx.forEach((i, k) => (baselines[i] = d.baselines[k]));
  const details: PackedAdvantageDetails = {
    estimator,
    settings: d.settings,
    groups: d.groups.map((g) => ({ ...g, members: g.members.map((k) => idx[k]) })),
    baselines,
    batch: d.batch,
  };
  return { ...counted(outcome(d.advantages, d.grouping)), advantage, details, allEqual };
}

/** GDPO's input: per weighted component, its value in each trained session (`Session.components`); a session without one throws. */
function rewardParts(sessions: readonly Session[], idx: readonly number[], weights: Readonly<Record<string, unknown>>) {
  const names = Object.keys(weights).filter((k) => weights[k] !== undefined);
  return Object.fromEntries(
    names.map((name) => [
      name,
      idx.map((i) => {
        const v = sessions[i].components?.[name];
        if (v === undefined || !Number.isFinite(v))
          throw new Error(
            `pack: gdpo weighs the reward component "${name}", but ${describeSession(sessions[i], i)} has ${
              v === undefined ? `only ${JSON.stringify(Object.keys(sessions[i].components ?? {}))}` : `${name} = ${v}`
            }: expected a finite value in every trained session`,
          );
        return v;
      }),
    ]),
  );
}

/** An estimator's group counts, as pack's metrics report them. */
const counted = (o: { fracRewardZeroStd: number; zeroStdGroups: number; groups: number }) => ({
  fracRewardZeroStd: o.fracRewardZeroStd,
  zeroStdGroups: o.zeroStdGroups,
  groups: o.groups,
});

function countSessions(sessions: readonly Session[], carries: readonly boolean[]): SessionCounts {
  const byStatus = Object.fromEntries(STATUSES.map((s) => [s, 0])) as SessionCounts['byStatus'];
  const byTermination: SessionCounts['byTermination'] = {};
  for (const s of sessions) {
    byStatus[s.status]++;
    if (s.termination) byTermination[s.termination] = (byTermination[s.termination] ?? 0) + 1;
  }
  return { total: sessions.length, trained: carries.filter(Boolean).length, byStatus, byTermination };
}
