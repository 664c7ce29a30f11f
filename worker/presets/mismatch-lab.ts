/**
 * The mismatch lab: the same GRPO run, same seed, with a known gap injected between the behaviour
 * policy (the sampler) and the training policy, once per behaviour correction, so the corrections
 * can be compared on a gap whose size and cause are known. Dewpoint's sampler and trainer use the
 * same kernels, so on-policy `mismatch/kl` is exactly 0 (docs/rl-formulas.md §7.5) and every
 * mismatch here is the injected one.
 *
 * Injections (run options, worker/contract/run-options/grpo.ts): `bf16` (the sampler's layer
 * matrices rounded to bf16: `samplerBf16`), `stale:K` (batches sampled K versions ahead:
 * `staleness`), `temperature:T` (the sampler draws at T, the trainer scores at the run's
 * temperature, uncorrected: `samplerTemperature`).
 *
 * Corrections (existing options, docs/rl-formulas.md §7): none; verl's token TIS (cap 2) and
 * IcePop's token band [0.5, 5]; verl's rejection masks per token (token_k1 2), per sequence
 * (seq_sum_k1 3: dew's `sequence_mask`) and geometric (seq_mean_k1 1.1: dew's `geometric_mask`);
 * TRL's four `vllm_importance_sampling_mode`s at its default cap 3 (trl f2cd577, GRPOTrainer
 * `_generate_and_score_completions`): `token_truncate` and `sequence_truncate` are a TIS cap at
 * that level, `token_mask` and `sequence_mask` a band [0, 3] (weights above the cap zeroed, the
 * others kept as weights).
 *
 * Pure: the runs' options, and a row per run from its steps' metrics. The CLI (`dewpoint lab
 * mismatch`) runs them.
 */
import type { GrpoRunOptions } from '../contract/options';
import type { LabRow, MismatchLabPlan } from '../contract/records';

export type { LabRow };

/** One correction of the lab: its name (the CLI's), what it is, and the options it sets. */
export interface LabCorrection {
  name: string;
  title: string;
  patch: Pick<GrpoRunOptions, 'importance' | 'rejection'>;
  /** The metric of the share it masks or caps, and which of the two. */
  share: { metric: string; what: 'masked' | 'capped' } | null;
}

const OFF = { kind: 'off' } as const;
const tis = (level: 'token' | 'sequence', cap: number) => ({ kind: 'tis' as const, level, cap, batchNormalize: false });
const band = (level: 'token' | 'sequence', low: number, high: number) => ({
  kind: 'band' as const,
  level,
  low,
  high,
  batchNormalize: false,
});
const CAPPED = { metric: 'mismatch/rollout_is_ratio_fraction_high', what: 'capped' } as const;
const ZEROED = { metric: 'mismatch/rollout_is_oob_ratio', what: 'masked' } as const;
const REJECTED = { metric: 'mismatch/rollout_rs_masked_fraction', what: 'masked' } as const;

export const LAB_CORRECTIONS: readonly LabCorrection[] = [
  { name: 'none', title: 'no correction', patch: { importance: OFF, rejection: {} }, share: null },
  {
    name: 'tis',
    title: 'TIS, token, cap 2 (verl)',
    patch: { importance: tis('token', 2), rejection: {} },
    share: CAPPED,
  },
  {
    name: 'icepop',
    title: 'IcePop band [0.5, 5], token',
    patch: { importance: band('token', 0.5, 5), rejection: {} },
    share: ZEROED,
  },
  {
    name: 'token-mask',
    title: 'reject token k1, [1/2, 2] (verl)',
    patch: { importance: OFF, rejection: { token_k1: 2 } },
    share: REJECTED,
  },
  {
    name: 'sequence-mask',
    title: 'reject seq-sum k1, [1/3, 3] (verl)',
    patch: { importance: OFF, rejection: { seq_sum_k1: 3 } },
    share: REJECTED,
  },
  {
    name: 'geometric-mask',
    title: 'reject seq-mean k1, [1/1.1, 1.1] (verl)',
    patch: { importance: OFF, rejection: { seq_mean_k1: 1.1 } },
    share: REJECTED,
  },
  {
    name: 'trl-token-truncate',
    title: 'TRL token_truncate, cap 3',
    patch: { importance: tis('token', 3), rejection: {} },
    share: CAPPED,
  },
  {
    name: 'trl-token-mask',
    title: 'TRL token_mask, cap 3',
    patch: { importance: band('token', 0, 3), rejection: {} },
    share: ZEROED,
  },
  {
    name: 'trl-sequence-truncate',
    title: 'TRL sequence_truncate, cap 3',
    patch: { importance: tis('sequence', 3), rejection: {} },
    share: CAPPED,
  },
  {
    name: 'trl-sequence-mask',
    title: 'TRL sequence_mask, cap 3 (its default)',
    patch: { importance: band('sequence', 0, 3), rejection: {} },
    share: ZEROED,
  },
];

/** An injected mismatch: what it is and the options that make it. */
export interface LabInjection {
  text: string;
  title: string;
  patch: Pick<GrpoRunOptions, 'samplerBf16' | 'samplerTemperature' | 'staleness'>;
}

export const INJECTION_FORMS = ['bf16', 'stale:K (K in 1..8)', 'temperature:T (T in (0, 10])'] as const;

/** `bf16`, `stale:K` or `temperature:T` as a lab injection, or why not (naming the allowed forms). */
export function parseInjection(text: string): { ok: true; injection: LabInjection } | { ok: false; message: string } {
  const bad = (why: string) => ({
    ok: false as const,
    message: `injection ${JSON.stringify(text)} ${why}; expected one of ${INJECTION_FORMS.join(', ')}`,
  });
  const [kind, value, ...rest] = text.split(':');
  if (rest.length) return bad('has more than one ":"');
  if (kind === 'bf16') {
    if (value !== undefined) return bad('takes no value');
    return { ok: true, injection: { text, title: 'sampler weights in bf16', patch: { samplerBf16: true } } };
  }
  const x = Number(value);
  if (kind === 'stale') {
    if (!Number.isInteger(x) || x < 1 || x > 8) return bad('needs K, an integer in 1..8');
    return {
      ok: true,
      injection: { text, title: `sampler ${x} version${x === 1 ? '' : 's'} stale`, patch: { staleness: x } },
    };
  }
  if (kind === 'temperature') {
    if (value === undefined || !(x > 0 && x <= 10)) return bad('needs T, a number in (0, 10]');
    return {
      ok: true,
      injection: { text, title: `sampler at temperature ${x}, uncorrected`, patch: { samplerTemperature: x } },
    };
  }
  return bad(`names no injection ('${kind}')`);
}

/** The corrections named in `names` (all when absent), or why not. */
export function labCorrections(
  names?: readonly string[],
): { ok: true; corrections: LabCorrection[] } | { ok: false; message: string } {
  if (!names) return { ok: true, corrections: [...LAB_CORRECTIONS] };
  const unknown = names.filter((n) => !LAB_CORRECTIONS.some((c) => c.name === n));
  if (unknown.length)
    return {
      ok: false,
      message: `no correction ${unknown.map((n) => `'${n}'`).join(', ')}; allowed: ${LAB_CORRECTIONS.map((c) => c.name).join(', ')}`,
    };
  return { ok: true, corrections: LAB_CORRECTIONS.filter((c) => names.includes(c.name)) };
}

/** The lab's reference run: the same options and seed, nothing injected and nothing corrected (on-policy: mismatch/kl 0). */
export const ON_POLICY: { injection: LabInjection; correction: LabCorrection } = {
  injection: { text: 'none', title: 'nothing injected', patch: {} },
  correction: {
    name: 'on-policy',
    title: 'on-policy reference (nothing injected)',
    patch: LAB_CORRECTIONS[0].patch,
    share: null,
  },
};

/** A lab run's options: `base` with the injection and the correction, same seed for every correction. */
export function labRunOptions(
  base: GrpoRunOptions,
  injection: LabInjection,
  correction: LabCorrection,
): GrpoRunOptions {
  return { ...base, ...injection.patch, ...correction.patch };
}

/**
 * The lab's runs: the on-policy reference, then `injection` under each correction named (all when
 * absent), each `base` with the same seed, named for the runs table; or why not.
 */
export function labPlan(
  base: GrpoRunOptions,
  injection: string,
  corrections?: readonly string[],
): { ok: true; plan: MismatchLabPlan } | { ok: false; message: string } {
  const inj = parseInjection(injection);
  if (!inj.ok) return inj;
  const picked = labCorrections(corrections);
  if (!picked.ok) return picked;
  const runs = [ON_POLICY, ...picked.corrections.map((correction) => ({ injection: inj.injection, correction }))].map(
    ({ injection: i, correction: c }) => ({
      correction: c.name,
      title: c.title,
      name: c === ON_POLICY.correction ? `lab ${injection}: on-policy reference` : `lab ${injection}: ${c.name}`,
      options: labRunOptions(base, i, c),
    }),
  );
  return { ok: true, plan: { title: inj.injection.title, runs } };
}

/** The correction a lab row is named for (the on-policy reference's included). */
export function labCorrectionOf(name: string): LabCorrection | undefined {
  return name === ON_POLICY.correction.name ? ON_POLICY.correction : LAB_CORRECTIONS.find((c) => c.name === name);
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
const of = (steps: readonly Record<string, number>[], key: string) =>
  steps.map((m) => m[key]).filter((v): v is number => v !== undefined && Number.isFinite(v));

/** A run's row: its steps' metrics (in order) and its final held-out accuracy. */
export function labRow(
  correction: LabCorrection,
  steps: readonly Record<string, number>[],
  accuracy: number,
  window = 5,
): LabRow {
  return {
    correction: correction.name,
    title: correction.title,
    reward: mean(of(steps.slice(-window), 'reward/mean')),
    accuracy,
    kl: mean(of(steps, 'mismatch/kl')),
    ess: mean(of(steps, 'mismatch/ess')),
    share: correction.share ? mean(of(steps, correction.share.metric)) : null,
    shareWhat: correction.share?.what ?? null,
  };
}

const g = (x: number, digits = 3) => (Number.isFinite(x) ? String(+x.toPrecision(digits)) : '–');

/** The table's header over a reward window of `window` steps. */
export const labHeader = (window = 5): string[] => [
  'correction',
  `reward (last ${window} steps)`,
  'held-out accuracy',
  'mismatch/kl',
  'ESS',
  'masked or capped',
];

/** A row's cells as the table shows them (the CLI's Markdown and the app's table). */
export function labCells(r: LabRow): string[] {
  return [
    r.title,
    g(r.reward),
    g(r.accuracy),
    g(r.kl),
    g(r.ess, 4),
    r.share === null ? '–' : `${g(100 * r.share, 2)}% ${r.shareWhat}`,
  ];
}

/** The rows as a Markdown table (the README's). */
export function labTable(rows: readonly LabRow[], window = 5): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [
    line(labHeader(window)),
    line(labHeader(window).map(() => '---')).replaceAll(' ', ''),
    ...rows.map((r) => line(labCells(r))),
  ].join('\n');
}
