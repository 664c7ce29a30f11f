/**
 * The words the Groups view puts beside a group: its reward statistics as the advantage estimator
 * used them (`GroupRecord.estimate`, computed by the RL core) and the formula with the numbers
 * filled in; and a DPO pair's margin and loss. Text only, no math of its own: every number comes
 * from the stored record. References: docs/rl-formulas.md §3.1–3.3, §3.5–3.8 (GRPO, RLOO, REINFORCE++, GPG, pass@k, GDPO, OTB) and §8.2 (DPO).
 */
import type { GroupRecord } from '../../worker/protocol';
import { fixed, significant } from './format';

type Estimate = NonNullable<GroupRecord['estimate']>;

const ESTIMATORS: Record<Estimate['estimator'], string> = {
  grpo: 'GRPO',
  rloo: 'RLOO',
  'reinforce++-baseline': 'REINFORCE++-baseline',
  gpg: 'GPG',
  'grpo-passk': 'GRPO pass@k',
  gdpo: 'GDPO',
  otb: 'OTB',
  'otb-tir': 'OTB (TIR)',
};

const f3 = (v: number) => fixed(v, 3);
/** Signed, three decimals: +1.500, −0.250, 0.000. */
export const signed = (v: number) => {
  const s = f3(v);
  return Number(s) > 0 ? `+${s}` : Number(s) < 0 ? `−${s.slice(1)}` : s;
};

/** The caption's statistics: mean reward, the baseline and the std the advantages used. */
export function groupStats(g: GroupRecord): string {
  const e = g.estimate;
  const mean = `mean reward ${f3(g.rewardMean)}`;
  // Stored before the estimator's working was kept: only the description is there.
  if (!e) return `${mean} · std ${f3(g.rewardStd)} (population; the estimator's std was not recorded)`;
  const otb = e.estimator === 'otb' || e.estimator === 'otb-tir';
  const baseline =
    e.estimator === 'gdpo'
      ? `each reward component centred in the group (${e.settings.weights})`
      : otb
        ? 'baseline per token (Baseline column: its mean over the completion)'
        : e.baseline === null
          ? 'baseline per completion (leave-one-out)'
          : `baseline ${f3(e.baseline)}`;
  const std =
    e.estimator === 'gdpo'
      ? e.settings.scale === 'none'
        ? 'no std scaling'
        : "each scaled by its group's std"
      : e.std === null
        ? 'no std scaling'
        : `std ${f3(e.std)}${e.estimator === 'grpo' ? ` (${e.settings.stdType}, ${e.settings.scale === 'batch' ? 'batch' : 'group'})` : ''}`;
  const members = e.members < g.samples.length ? ` · ${e.members} of ${g.samples.length} trained` : '';
  return `${mean} · ${baseline} · ${std}${members}`;
}

/** The estimator and the options it read, compat's defaults filled in: "GRPO · compat verl · scale group · stdType unbiased · epsilon 1e-6". */
export function estimateSettings(e: Estimate): string {
  const opts = Object.entries(e.settings).map(([k, v]) => `${k} ${typeof v === 'number' ? significant(v) : String(v)}`);
  return [ESTIMATORS[e.estimator], ...opts].join(' · ');
}

function batchStep(e: Estimate, input: string): string {
  if (!e.batch) return '';
  const { mean, std, divisor } = e.batch;
  return `; then over the whole batch a = (${input} − m) / d with m = ${f3(mean)}, std ${f3(std)}, d = ${significant(divisor)}`;
}

/** The formula this group's advantages came from, with its numbers. */
export function estimateFormula(e: Estimate, members: number): string {
  const eps = significant(Number(e.settings.epsilon ?? 0));
  if (e.estimator === 'grpo') {
    if (e.zero)
      return members > 1
        ? 'all rewards equal: advantage 0 (no learning signal)'
        : 'a single member: μ = r, so advantage 0';
    const mu =
      members === 1 ? 'μ = 0 (a single member keeps its raw score)' : `μ = ${f3(e.baseline ?? 0)} (group mean)`;
    if (e.std === null) return `a = r − μ, ${mu}; no std scaling (scale none)`;
    const sigma =
      members === 1 && e.settings.scale !== 'batch'
        ? 'σ = 1'
        : `σ = ${f3(e.std)} (${e.settings.stdType} std of the ${e.settings.scale === 'batch' ? 'batch' : 'group'})`;
    return `a = (r − μ) / (σ + ε), ${mu}, ${sigma}, ε = ${eps}`;
  }
  if (e.estimator === 'rloo') {
    const own =
      members === 1
        ? e.zero
          ? 'a single member: a = 0'
          : 'a single member keeps its raw score: a = r'
        : e.zero
          ? 'all rewards equal: a = 0'
          : 'a = r − b, b = the mean reward of the other members (Baseline column)';
    return own + batchStep(e, 'a');
  }
  if (e.estimator === 'gpg') {
    const alpha = significant(Number(e.settings.alpha));
    if (e.zero) return 'all rewards equal: advantage 0 (no learning signal)';
    const mu = members === 1 ? 'μ = 0 (a single member)' : `μ = ${f3(e.baseline ?? 0)} (group mean)`;
    return `a = α·(r − μ), ${mu}, α = ${alpha} (the batch's samples / those with a non-zero reward)`;
  }
  if (e.estimator === 'grpo-passk') {
    if (e.zero)
      return members > 1 ? 'all rewards equal: advantage 0 (no learning signal)' : 'a single member: advantage 0';
    const scaled = e.std === null ? 'no std scaling' : `σ = ${f3(e.std)} (unbiased std of the group), ε = ${eps}`;
    return `the best sample gets a = (r_max − r_2nd)${e.std === null ? '' : ' / (σ + ε)'}, every other 0; ${scaled}`;
  }
  if (e.estimator === 'otb' || e.estimator === 'otb-tir') {
    if (members === 1) return 'a single member: no baseline, each token keeps its reward-to-go (a = G)';
    const at = e.estimator === 'otb' ? 'response position t' : 'action token t (observations skipped)';
    const tail = e.settings.handleZeroTail ? '; a completion longer than all others has B = 0 past them' : '';
    const rho = e.settings.isWeights ? ' · ρ̄_t²' : '';
    return (
      `per token a_t = G_t − B_t, B_t = Σ G_t·W_t / (Σ W_t + ${eps}) over the group's members at ${at}, ` +
      `W_t = Σ_{j ≤ t} (1 − 2π_j + Σπ²_j)${rho}, G_t the reward-to-go${tail}; Advantage column: the mean a_t`
    );
  }
  if (e.estimator === 'gdpo') {
    const eps = e.settings.compat === 'trl' ? '1e-4' : '1e-6';
    const per = e.settings.scale === 'none' ? 'A_k = r_k − μ_k' : `A_k = (r_k − μ_k) / (σ_k + ${eps})`;
    const own = e.zero
      ? 'every weighted component equal in the group: c = 0'
      : `c = Σ w_k·A_k over the components (${e.settings.weights}), ${per} within the group`;
    return own + (e.batch ? batchStep(e, 'c') : '; no trainable token in the batch: a = 0');
  }
  const own = e.zero
    ? 'c = 0 (all rewards equal, or a single member)'
    : `c = r − μ, μ = ${f3(e.baseline ?? 0)} (${members === 1 ? 'a single member' : 'group mean'})`;
  return own + (e.batch ? batchStep(e, 'c') : '; no trainable token in the batch: a = 0');
}

/** A DPO pair's caption: margin, whether the pair is ranked correctly, and its loss. */
export function pairStats(p: NonNullable<GroupRecord['pair']>): string {
  return `margin ${signed(p.margin)} · ${p.rankedCorrectly ? 'ranked correctly' : 'ranked wrongly'} · ${p.lossType} loss ${fixed(p.loss, 4)} (β ${significant(p.beta)})`;
}
