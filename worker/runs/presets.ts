/**
 * The presets the Experiments view offers, and the validation of the options a person may change
 * (each problem names the field and the allowed range).
 */
import type { DpoRunOptions, GrpoRunOptions, PresetInfo, RunOptions } from '../protocol';
import { DPO_ARITH } from '../train/dpo';
import { GRPO_ARITH } from '../train/grpo';
import { SFT_ARITH } from '../train/sft';

export const PRESETS: PresetInfo[] = [
  {
    name: 'sft-arith',
    title: 'SFT: 2-digit addition',
    description:
      'Supervised fine-tuning of the small Llama-style model (2 layers, d 64, 102k parameters) on prompts like 47+35= with completions \\boxed{82}. Loss falls within the first steps; held-out exact-match accuracy climbs after ~500 steps (calibration.md).',
    defaults: { preset: 'sft-arith', steps: SFT_ARITH.steps, lr: SFT_ARITH.lr, seed: SFT_ARITH.seed, evalEvery: SFT_ARITH.evalEvery, evalN: 100, checkpointEvery: 100 },
  },
  {
    name: 'grpo-arith',
    title: 'GRPO from the base checkpoint',
    description:
      'GRPO on 2-digit addition from public/checkpoints/arith-base: 16 prompts × 8 samples per step, MathReward (exact \\boxed{} answer), group-normalised advantages, PPO clip 0.2, token-mean, lr 1e-4, β = 0. Reward and held-out accuracy rise over ~150 steps (calibration.md).',
    defaults: {
      preset: 'grpo-arith', steps: GRPO_ARITH.steps, lr: GRPO_ARITH.lr, seed: GRPO_ARITH.seed, prompts: GRPO_ARITH.prompts, group: GRPO_ARITH.group,
      temperature: GRPO_ARITH.temperature, evalEvery: GRPO_ARITH.evalEvery, evalN: 100, checkpointEvery: 50,
    },
  },
  {
    name: 'dpo-arith',
    title: 'DPO from the base checkpoint',
    description:
      "DPO on pairs from the base model's own samples (8 per prompt at T = 1; chosen = a correct completion, rejected = an incorrect one), the frozen base as reference, β = 0.1, plus an NLL term on the chosen completion (weight 1, TRL rpo_alpha): plain DPO collapses accuracy here (calibration.md).",
    defaults: {
      preset: 'dpo-arith', steps: DPO_ARITH.steps, lr: DPO_ARITH.lr, seed: DPO_ARITH.seed, pairs: DPO_ARITH.pairs, beta: DPO_ARITH.beta, nllWeight: DPO_ARITH.nllWeight,
      evalEvery: DPO_ARITH.evalEvery, evalN: 100, checkpointEvery: 50,
    },
  },
];

/** Problems with the options, each naming the field and the allowed values; empty when valid. */
export function validateRunOptions(o: RunOptions): string[] {
  const problems: string[] = [];
  const int = (field: string, v: number, lo: number, hi: number) => {
    if (!Number.isInteger(v) || v < lo || v > hi) problems.push(`${field} must be an integer in ${lo}..${hi}, got ${v}`);
  };
  if (!PRESETS.some((p) => p.name === o.preset)) problems.push(`preset must be one of ${PRESETS.map((p) => p.name).join(', ')}, got '${o.preset}'`);
  int('steps', o.steps, 1, 5000);
  int('seed', o.seed, 0, 2 ** 31 - 1);
  int('evalEvery', o.evalEvery, 0, 5000);
  int('evalN', o.evalN, 1, 1000);
  int('checkpointEvery', o.checkpointEvery, 0, 5000);
  if (!(o.lr > 0 && o.lr <= 0.1)) problems.push(`lr must be in (0, 0.1], got ${o.lr}`);
  if (o.preset === 'dpo-arith') {
    const d = o as DpoRunOptions;
    int('pairs', d.pairs, 1, 256);
    if (!(d.beta > 0 && d.beta <= 10)) problems.push(`beta must be in (0, 10], got ${d.beta}`);
    if (!(d.nllWeight >= 0 && d.nllWeight <= 10)) problems.push(`nllWeight must be in [0, 10], got ${d.nllWeight}`);
  }
  if (o.preset === 'grpo-arith') {
    const g = o as GrpoRunOptions;
    int('prompts', g.prompts, 1, 256);
    int('group', g.group, 2, 64);
    if (!(g.temperature > 0 && g.temperature <= 10)) problems.push(`temperature must be in (0, 10], got ${g.temperature}`);
  }
  return problems;
}
