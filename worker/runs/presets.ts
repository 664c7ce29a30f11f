/**
 * The presets the Experiments view offers: each one's defaults are its trainer config (through
 * configs.ts) and its form fields come from its schema (fields.ts). Validation is schema.ts's.
 */
import type { PresetInfo } from '../protocol';
import { DPO_ARITH } from '../train/dpo';
import { GRPO_ARITH } from '../train/grpo';
import { SFT_ARITH } from '../train/sft';
import { GRPO_CALC, GRPO_CODE, GRPO_GUESS, PPO_CALC } from '../train/grpo-episodes';
import {
  dpoOptionsOf,
  episodeGrpoOptionsOf,
  flowOptionsOf,
  grpoOptionsOf,
  ppoEpisodeOptionsOf,
  ppoOptionsOf,
  sftOptionsOf,
} from './configs';
import { FLOW_GRPO_2D, PRETRAIN_DEFAULTS } from '../flow/index';
import { PPO_ARITH } from '../train/ppo';
import { optionFields } from './fields';

export const PRESETS: PresetInfo[] = [
  {
    name: 'sft-arith',
    title: 'SFT: 2-digit addition',
    description:
      'Supervised fine-tuning of the small Llama-style model (2 layers, d 64, 102k parameters) on prompts like 47+35= with completions \\boxed{82}. Loss falls within the first steps; held-out exact-match accuracy climbs after ~500 steps (calibration.md).',
    defaults: sftOptionsOf(SFT_ARITH, { evalN: 100, checkpointEvery: 100 }),
    fields: optionFields('sft-arith'),
  },
  {
    name: 'grpo-arith',
    title: 'GRPO from the base checkpoint',
    description:
      'GRPO on 2-digit addition from public/checkpoints/arith-base: 16 prompts × 8 samples per step, MathReward (exact \\boxed{} answer), group-normalised advantages, PPO clip 0.2, token-mean, lr 1e-4, β = 0. Reward and held-out accuracy rise over ~150 steps (calibration.md).',
    defaults: grpoOptionsOf(GRPO_ARITH, { evalN: 100, checkpointEvery: 50 }),
    fields: optionFields('grpo-arith'),
  },
  {
    name: 'grpo-calc',
    title: 'GRPO with a calculator tool (multi-turn)',
    description:
      "Multi-turn GRPO from public/checkpoints/calc-base on a+b+c problems: the model calls calc(47+35), reads the answer the environment appends (=82), calls again and finishes with \\boxed{101}, up to 4 turns. 8 tasks × 8 episodes per step; the environment's tokens are context, masked from the loss; reward 1 for the right boxed answer. Every turn is journaled: close the tab mid-run and Continue, then open any episode in Episodes and replay it. Measured: this base samples the right answer ~3% of the time at T = 1 and its held-out accuracy collapses (33.5% to 0–1.5% over 150 steps, README).",
    defaults: episodeGrpoOptionsOf(GRPO_CALC, { evalN: 100, checkpointEvery: 10 }),
    fields: optionFields('grpo-calc'),
  },
  {
    name: 'grpo-guess',
    title: 'GRPO on guess-a-number (multi-turn feedback)',
    description:
      'Multi-turn GRPO from public/checkpoints/guess-base: find a secret in 1..63 from higher (>) and lower (<) answers in at most 7 guesses. 8 secrets × 8 episodes per step, reward 1 when found. Journaled like grpo-calc. Measured: the sampled success rate rises 5–7 points in 150 steps, the greedy one stays at ~56% (README).',
    defaults: episodeGrpoOptionsOf(GRPO_GUESS, { evalN: 63, checkpointEvery: 10 }),
    fields: optionFields('grpo-guess'),
  },
  {
    name: 'grpo-code',
    title: 'GRPO with code rewards (needs the companion)',
    description:
      'GRPO from public/checkpoints/code-base on one-turn tasks such as "add 3, mul 5:": the model writes a fenced Python program (x=int(input()), then x=x+3 and x=x*5, then print(x)), and the companion runs it in its sandbox on three inputs; the reward is the fraction of cases whose stdout matches. 8 tasks × 8 samples per step; the Groups view shows each case\'s verdict, the session panel its stdout and stderr. Needs a companion: run npx dewpoint companion and open the link it prints (or paste it in System); without one every episode fails as an infrastructure failure (masked, never reward 0). Measured: greedy 53.2% on the 62 held-out tasks rises to 58–66% in 150 steps (3 seeds, README).',
    defaults: episodeGrpoOptionsOf(GRPO_CODE, { evalN: 100, checkpointEvery: 10 }),
    fields: optionFields('grpo-code'),
  },
  {
    name: 'ppo-arith',
    title: 'PPO with a critic (value head, GAE)',
    description:
      "PPO on 2-digit addition from public/checkpoints/arith-base, on the same sample budget as grpo-arith (16 prompts × 8 completions): a value head on the last hidden state (zero-initialised) is trained with the policy on one loss (value coefficient 0.5, value clip 0.2); GAE with γ 1, λ 0.95 over each completion's tokens, whitened over the batch; PPO clip 0.2, token-mean, 2 epochs × 2 mini-batches with old log-probs and values scored before the first update. Curves: value loss, explained variance, value clip fraction, returns and the advantage distribution; Batch shows per-token values and returns. Measured: +13.6 to +19.2 points held-out over 150 steps (3 seeds; GRPO +12.2 to +16.0, README).",
    defaults: ppoOptionsOf(PPO_ARITH, { evalN: 100, checkpointEvery: 50 }),
    fields: optionFields('ppo-arith'),
  },
  {
    name: 'ppo-calc',
    title: 'PPO with a critic on the calculator episodes (multi-turn)',
    description:
      "grpo-calc's episodes from public/checkpoints/calc-base (8 tasks × 8 episodes, up to 4 turns) trained with ppo-arith's critic: a value head on every action id, GAE (γ 1, λ 0.95) over each episode's action ids (the environment's ids are skipped), whitened, clipped value loss, 2 epochs × 2 mini-batches. Journaled and replayable like grpo-calc; Groups, Batch and the inspector show each id's value, return and advantage. Measured: it collapses as grpo-calc does (33.5% to 0–0.5% in 150 steps, README).",
    defaults: ppoEpisodeOptionsOf(PPO_CALC, { evalN: 100, checkpointEvery: 10 }),
    fields: optionFields('ppo-calc'),
  },
  {
    name: 'dpo-arith',
    title: 'DPO from the base checkpoint',
    description:
      "DPO on pairs from the base model's own samples (8 per prompt at T = 1; chosen = a correct completion, rejected = an incorrect one), the frozen base as reference, β = 0.1, plus an NLL term on the chosen completion (weight 1, TRL rpo_alpha): plain DPO collapses accuracy here (calibration.md).",
    defaults: dpoOptionsOf(DPO_ARITH, { evalN: 100, checkpointEvery: 50 }),
    fields: optionFields('dpo-arith'),
  },
  {
    name: 'flowgrpo-2d',
    title: 'Flow-GRPO: land 2-D points inside a shape',
    description:
      'A rectified-flow policy over 2-D points (an MLP velocity field, 3 × 64, time-conditioned) is first pretrained by flow matching to carry N(0, I) to three blobs, then trained with Flow-GRPO: 8 groups × 8 samples per step drawn with the SDE sampler (10 denoising steps, a Gaussian log-probability per step), reward 1 inside the shape (the ring 0.75 ≤ |p| ≤ 0.9) and exp(−(d/0.15)²) outside, group advantages (population std, 1e-4), clip 0.05 per transition. The Flow view shows the sample cloud of any step over the reward field; the accuracy is the fraction of 256 fixed ODE samples inside the shape. Flow runs keep no checkpoint: they cannot be continued. Measured: 1–6% of the preview inside the ring at the start, 90–97% after 200 steps (3 seeds, README).',
    defaults: flowOptionsOf(FLOW_GRPO_2D, PRETRAIN_DEFAULTS, { checkpointEvery: 0 }),
    fields: optionFields('flowgrpo-2d'),
  },
];
