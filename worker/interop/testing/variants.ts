/**
 * Run options for the export tests: every preset's defaults (worker/presets/table.ts) and
 * variants that reach each branch of verl.ts and trl.ts (each loss, aggregation mode, estimator,
 * KL estimator, correction). Test data only; every entry passes checkRunOptions (tested).
 */
import type { GrpoRunOptions, PpoRunOptions, RunOptions } from '../../contract/options';
import { PRESETS } from '../../presets/table';

export const defaultsOf = <T extends RunOptions>(name: RunOptions['preset']) =>
  structuredClone(PRESETS.find((p) => p.name === name)!.defaults) as T;

const grpo = (patch: Partial<GrpoRunOptions>): GrpoRunOptions => ({
  ...defaultsOf<GrpoRunOptions>('grpo-arith'),
  ...patch,
});
const ppo = (patch: Partial<PpoRunOptions>): PpoRunOptions => ({ ...defaultsOf<PpoRunOptions>('ppo-arith'), ...patch });

export const VARIANTS: Record<string, RunOptions> = {
  ...Object.fromEntries(PRESETS.map((p) => [`${p.name} defaults`, structuredClone(p.defaults)])),
  'clip-higher': grpo({ policyLoss: { name: 'ppo', clipLow: 0.2, clipHigh: 0.28 } }),
  'dual clip 5': grpo({ policyLoss: { name: 'ppo', dualClip: 5 } }),
  'ppo compat trl': grpo({ policyLoss: { name: 'ppo', compat: 'trl' } }),
  'ppo delta 2 compat trl': grpo({ policyLoss: { name: 'ppo', delta: 2, compat: 'trl' } }),
  'ppo delta 1.1, clamp 10': grpo({ policyLoss: { name: 'ppo', delta: 1.1, logRatioClamp: 10, dualClip: 1.1 } }),
  'ppo clamp 20 set': grpo({ policyLoss: { name: 'ppo', logRatioClamp: 20, compat: 'rllm' } }),
  gspo: grpo({
    policyLoss: { name: 'gspo', clipLow: 3e-4, clipHigh: 4e-4 },
    aggregation: { mode: 'seq-mean-token-mean' },
  }),
  'gspo trl token-mean': grpo({ policyLoss: { name: 'gspo', compat: 'trl' } }),
  'gspo cap 10': grpo({ policyLoss: { name: 'gspo', logRatioCap: 10 }, aggregation: { mode: 'grpo' } }),
  cispo: grpo({ policyLoss: { name: 'cispo', clipHigh: 0.28 } }),
  'cispo trl': grpo({ policyLoss: { name: 'cispo', compat: 'trl', cap: 4, clipLow: 0.1 } }),
  'cispo trl seq-mean': grpo({
    policyLoss: { name: 'cispo', compat: 'trl' },
    aggregation: { mode: 'seq-mean-token-mean' },
  }),
  reinforce: grpo({ policyLoss: { name: 'reinforce' } }),
  'dppo_tv recipe': grpo({
    policyLoss: { name: 'dppo_tv', deltaLow: 0.15, truncation: 10000 },
    aggregation: { mode: 'seq-mean-token-sum-norm' },
  }),
  'dppo_tv rllm': grpo({ policyLoss: { name: 'dppo_tv', compat: 'rllm' } }),
  'dppo_kl rllm': grpo({ policyLoss: { name: 'dppo_kl', deltaLow: 0.05, compat: 'rllm' } }),
  icepop: grpo({ policyLoss: { name: 'icepop' } }),
  'icepop with TIS': grpo({
    policyLoss: { name: 'icepop', alpha: 0.4, beta: 3 },
    importance: { kind: 'tis', level: 'token', cap: 2, batchNormalize: false },
  }),
  'icepop alpha 0': grpo({ policyLoss: { name: 'icepop', alpha: 0 } }),
  reinforce_kl: grpo({ policyLoss: { name: 'reinforce_kl', klApprox: true, bwdKlCoef: 0.1, ratioClampMax: 5 } }),
  geo_mean: grpo({ policyLoss: { name: 'geo_mean', clipLow: 0.4 }, aggregation: { mode: 'seq-mean-token-mean' } }),
  'geo_mean token-mean tis': grpo({
    policyLoss: { name: 'geo_mean' },
    importance: { kind: 'tis', level: 'token', cap: 2, batchNormalize: false },
  }),
  clip_cov: grpo({ policyLoss: { name: 'clip_cov', clipHigh: 0.28, ratio: 0.01, lb: 0.5, ub: 4 } }),
  'clip_cov defaults': grpo({ policyLoss: { name: 'clip_cov' } }),
  kl_cov: grpo({ policyLoss: { name: 'kl_cov', ratio: 0.01, coef: 1 } }),
  'kl_cov defaults': grpo({ policyLoss: { name: 'kl_cov' } }),
  sapo: grpo({ policyLoss: { name: 'sapo', tauPos: 0.9 }, aggregation: { mode: 'seq-mean-token-mean' } }),
  'sapo trl grpo': grpo({ policyLoss: { name: 'sapo', tauNeg: 2, compat: 'trl' }, aggregation: { mode: 'grpo' } }),
  dro: grpo({ policyLoss: { name: 'dro', beta: 0.05 } }),
  vespo: grpo({ policyLoss: { name: 'vespo', kPos: 1, lambdaNeg: 4 } }),
  'vespo tis seq-mean': grpo({
    policyLoss: { name: 'vespo' },
    importance: { kind: 'tis', level: 'token', cap: 2, batchNormalize: false },
    aggregation: { mode: 'seq-mean-token-mean' },
  }),
  luspo: grpo({ policyLoss: { name: 'gspo', compat: 'trl' }, aggregation: { mode: 'seq-mean-token-sum' } }),
  'token-sum': grpo({ aggregation: { mode: 'token-sum' } }),
  'seq-mean-token-sum': grpo({ aggregation: { mode: 'seq-mean-token-sum' } }),
  'seq-mean-token-sum-norm K': grpo({
    aggregation: { mode: 'seq-mean-token-sum-norm', lossScaleFactor: 64, compat: 'verl' },
  }),
  'seq-mean-token-sum-norm legacy': grpo({ aggregation: { mode: 'seq-mean-token-sum-norm', compat: 'verl-legacy' } }),
  'session-mean': grpo({ aggregation: { mode: 'session-mean' } }),
  'grpo agg': grpo({ aggregation: { mode: 'grpo' } }),
  dr_grpo: grpo({ aggregation: { mode: 'dr_grpo' }, advantage: { estimator: 'grpo', scale: 'none' } }),
  'dr_grpo 16': grpo({ aggregation: { mode: 'dr_grpo', maxCompletionLength: 16 } }),
  'dr_grpo 32': grpo({ aggregation: { mode: 'dr_grpo', maxCompletionLength: 32 } }),
  'grpo adv trl compat': grpo({ advantage: { estimator: 'grpo', compat: 'trl' } }),
  'grpo adv batch population': grpo({
    advantage: { estimator: 'grpo', scale: 'batch', stdType: 'population', epsilon: 1e-4, singleton: 'zero' },
  }),
  'grpo adv set to verl': grpo({
    advantage: {
      estimator: 'grpo',
      scale: 'group',
      stdType: 'unbiased',
      epsilon: 1e-6,
      singleton: 'raw',
      compat: 'verl',
    },
  }),
  'grpo adv none eps': grpo({ advantage: { estimator: 'grpo', scale: 'none', epsilon: 0.01 } }),
  rloo: grpo({ advantage: { estimator: 'rloo', normalize: false } }),
  'rloo zero normalize': grpo({ advantage: { estimator: 'rloo', singleton: 'zero', normalize: true, compat: 'trl' } }),
  'reinforce++-baseline': grpo({ advantage: { estimator: 'reinforce++-baseline' } }),
  'reinforce++-baseline scale only': grpo({ advantage: { estimator: 'reinforce++-baseline', shiftMean: false } }),
  'reinforce++-baseline rllm': grpo({ advantage: { estimator: 'reinforce++-baseline', compat: 'rllm' } }),
  ...Object.fromEntries(
    (['k1', 'abs', 'k2', 'k3', 'k1+', 'abs+', 'k2+', 'k3+'] as const).map((e) => [
      `kl ${e}`,
      grpo({ beta: 0.05, kl: { estimator: e } }),
    ]),
  ),
  'kl k3 trl': grpo({ beta: 0.001, kl: { estimator: 'k3', compat: 'trl' } }),
  'kl k3 verl seq-mean': grpo({
    beta: 0.001,
    kl: { estimator: 'k3', compat: 'verl' },
    aggregation: { mode: 'seq-mean-token-mean' },
  }),
  'kl unused compat': grpo({ kl: { estimator: 'k2', compat: 'rllm' } }),
  'tis token': grpo({ importance: { kind: 'tis', level: 'token', cap: 2, batchNormalize: true } }),
  'tis sequence': grpo({ importance: { kind: 'tis', level: 'sequence', cap: 5, batchNormalize: false } }),
  'band sequence': grpo({ importance: { kind: 'band', level: 'sequence', low: 0.5, high: 5, batchNormalize: false } }),
  'band low 0': grpo({ importance: { kind: 'band', level: 'token', low: 0, high: 2, batchNormalize: false } }),
  'band low = high': grpo({ importance: { kind: 'band', level: 'token', low: 2, high: 2, batchNormalize: false } }),
  rejection: grpo({ rejection: { seq_mean_k3: 0.01, token_k1: 2 } }),
  'sampling and run': grpo({
    temperature: 0.7,
    topK: 5,
    topP: 0.9,
    trainProblems: 16,
    renormalize: true,
    evalEvery: 0,
    checkpointEvery: 0,
    maskZeroAdvantage: false,
    truncation: 'score',
    weightDecay: 0.01,
  }),
  'renormalize off': grpo({ renormalize: false }),
  'mini-batches 4 epochs 2': grpo({ miniBatches: 4, epochs: 2 }),
  'mini-batches 3': grpo({ miniBatches: 3 }),
  'group 6 eval': grpo({ group: 6, prompts: 4 }),
  'ppo clip-higher dual': ppo({
    policyLoss: { name: 'ppo', clipHigh: 0.28, dualClip: 4, delta: 2 },
    shiftMean: false,
    beta: 0.01,
    aggregation: { mode: 'seq-mean-token-mean' },
    importance: { kind: 'tis', level: 'token', cap: 2, batchNormalize: false },
    rejection: { token_k2: 0.5 },
  }),
  'ppo gspo trl': ppo({
    policyLoss: { name: 'gspo', compat: 'trl' },
    miniBatches: 3,
    topK: 3,
    topP: 0.5,
    truncation: 'mask',
    evalEvery: 0,
  }),
  'ppo-arith compat trl': ppo({ policyLoss: { name: 'ppo', compat: 'trl', clipLow: 0.1, clipHigh: 0.1 } }),
  'grpo-calc single turn': { ...defaultsOf('grpo-calc'), maxTurns: 1 } as RunOptions,
  'grpo-calc env error limit': { ...defaultsOf('grpo-calc'), envErrorLimit: 0.25 } as RunOptions,
  // Options no other variant sets, so the index test makes each one mapped or listed (index.test.ts checks that every option is set somewhere).
  stabilisers: grpo({ lrSchedule: 'cosine', lrWarmup: 2, minLrRatio: 0.1, overlongBuffer: 4, overlongPenalty: 0.5 }),
  'sampler workers': grpo({ staleness: 1, samplerWorker: true }),
  'mismatch lab: bf16 sampler': grpo({ samplerBf16: true }),
  'mismatch lab: sampler temperature': grpo({ samplerTemperature: 1.5 }),
  lora: grpo({ loraRank: 8, loraAlpha: 16, loraTargets: 'q_proj,v_proj', loraDropout: 0.05 }),
  'passes and storage': grpo({ beta: 0.01, idsPerPass: 256, recomputeLayers: true, frozenWeights: 'bf16' }),
  'grpo-code two turns': { ...defaultsOf('grpo-code'), maxTurns: 2 } as RunOptions,
  'dpo robust': {
    ...defaultsOf('dpo-arith'),
    loss: { type: 'robust', labelSmoothing: 0.1 },
    nllWeight: 0.5,
    evalEvery: 0,
  } as RunOptions,
  'dpo robust unset': { ...defaultsOf('dpo-arith'), loss: { type: 'robust' } } as RunOptions,
  'dpo cdpo': { ...defaultsOf('dpo-arith'), loss: { type: 'sigmoid', labelSmoothing: 0.1 } } as RunOptions,
  'dpo ipo': { ...defaultsOf('dpo-arith'), loss: { type: 'ipo' }, nllWeight: 0, weightDecay: 0.1 } as RunOptions,
  'dpo hinge': { ...defaultsOf('dpo-arith'), loss: { type: 'hinge' } } as RunOptions,
};
