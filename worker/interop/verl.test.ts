import { describe, expect, it } from 'vitest';
import type { GrpoRunOptions, PpoRunOptions, RunOptions } from '../contract/options';
import { defaultsOf } from './testing/variants';
import type { Unmapped } from './types';
import { hydraValue, NO_DUAL_CLIP, VERL_ASYNC_ENTRY, VERL_ENTRY, verlCommand, type VerlExport } from './verl';

function verl(o: RunOptions): VerlExport {
  const r = verlCommand(o);
  if (!r.ok) throw new Error(`verlCommand refused ${o.preset}: ${r.reason}`);
  return r;
}
const grpo = (patch: Partial<GrpoRunOptions>) => verl({ ...defaultsOf<GrpoRunOptions>('grpo-arith'), ...patch });
const ppo = (patch: Partial<PpoRunOptions>) => verl({ ...defaultsOf<PpoRunOptions>('ppo-arith'), ...patch });
/** The value of one override key, or undefined. */
const at = (e: VerlExport, key: string) => e.overrides.find((s) => s.startsWith(`${key}=`))?.slice(key.length + 1);
const unmapped = (e: VerlExport, path: string) => e.unmapped.filter((u) => u.path === path);
const kinds = (list: Unmapped[]) => list.map((u) => `${u.path}:${u.kind}`);

const LAUNCH = [
  'data.train_files=$TRAIN_FILES',
  'data.val_files=$VAL_FILES',
  'actor_rollout_ref.model.path=$MODEL_PATH',
  'actor_rollout_ref.rollout.name=vllm',
  'trainer.n_gpus_per_node=1',
  'trainer.nnodes=1',
];

const ACTOR_OPTIM = [
  'actor_rollout_ref.actor.optim.lr=0.0001',
  'actor_rollout_ref.actor.optim.betas=[0.9,0.99]',
  'actor_rollout_ref.actor.optim.override_optimizer_config={eps:1e-8}',
  'actor_rollout_ref.actor.optim.weight_decay=0',
  'actor_rollout_ref.actor.optim.clip_grad=1',
];

const GRPO_ARITH = [
  ...LAUNCH,
  'trainer.total_training_steps=150',
  'trainer.total_epochs=150',
  'data.seed=1',
  'actor_rollout_ref.rollout.seed=1',
  'data.train_batch_size=16',
  'actor_rollout_ref.rollout.n=8',
  'actor_rollout_ref.actor.ppo_mini_batch_size=16',
  'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=128',
  'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=128',
  'actor_rollout_ref.actor.ppo_epochs=1',
  ...ACTOR_OPTIM,
  'actor_rollout_ref.rollout.temperature=1',
  'actor_rollout_ref.rollout.top_k=-1',
  'actor_rollout_ref.rollout.top_p=1',
  'data.max_response_length=16',
  'actor_rollout_ref.actor.policy_loss.loss_mode=vanilla',
  'actor_rollout_ref.actor.clip_ratio_low=0.2',
  'actor_rollout_ref.actor.clip_ratio_high=0.2',
  'actor_rollout_ref.actor.clip_ratio_c=3',
  'actor_rollout_ref.actor.loss_agg_mode=token-mean',
  'algorithm.adv_estimator=grpo',
  'algorithm.norm_adv_by_std_in_grpo=true',
  'actor_rollout_ref.actor.use_kl_loss=false',
  'actor_rollout_ref.actor.kl_loss_type=low_var_kl',
  'algorithm.rollout_correction.rollout_is=null',
  'trainer.test_freq=10',
  'trainer.val_before_train=true',
  'data.val_max_samples=100',
  'trainer.save_freq=50',
];

// grpo-calc: 8 tasks × 8 episodes of up to 4 actions of 14 ids, truncated episodes scored, checkpoints every 10.
const GRPO_CALC = [
  ...LAUNCH,
  'trainer.total_training_steps=150',
  'trainer.total_epochs=150',
  'data.seed=1',
  'actor_rollout_ref.rollout.seed=1',
  'data.train_batch_size=8',
  'actor_rollout_ref.rollout.n=8',
  'actor_rollout_ref.actor.ppo_mini_batch_size=8',
  'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=64',
  'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=64',
  'actor_rollout_ref.actor.ppo_epochs=1',
  ...ACTOR_OPTIM,
  'actor_rollout_ref.rollout.temperature=1',
  'actor_rollout_ref.rollout.top_k=-1',
  'actor_rollout_ref.rollout.top_p=1',
  'data.max_response_length=56',
  'actor_rollout_ref.rollout.multi_turn.enable=true',
  'actor_rollout_ref.rollout.multi_turn.max_assistant_turns=4',
  'actor_rollout_ref.actor.policy_loss.loss_mode=vanilla',
  'actor_rollout_ref.actor.clip_ratio_low=0.2',
  'actor_rollout_ref.actor.clip_ratio_high=0.2',
  'actor_rollout_ref.actor.clip_ratio_c=3',
  'actor_rollout_ref.actor.loss_agg_mode=token-mean',
  'algorithm.adv_estimator=grpo',
  'algorithm.norm_adv_by_std_in_grpo=true',
  'actor_rollout_ref.actor.use_kl_loss=false',
  'actor_rollout_ref.actor.kl_loss_type=low_var_kl',
  'algorithm.rollout_correction.rollout_is=null',
  'trainer.test_freq=10',
  'trainer.val_before_train=true',
  'data.val_max_samples=100',
  'trainer.save_freq=10',
];

const PPO_ARITH = [
  ...LAUNCH,
  'algorithm.adv_estimator=gae',
  'critic.model.path=$MODEL_PATH',
  'trainer.total_training_steps=150',
  'trainer.total_epochs=150',
  'data.seed=1',
  'actor_rollout_ref.rollout.seed=1',
  'data.train_batch_size=16',
  'actor_rollout_ref.rollout.n=8',
  'actor_rollout_ref.actor.ppo_mini_batch_size=8',
  'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=64',
  'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=64',
  'critic.ppo_micro_batch_size_per_gpu=64',
  'actor_rollout_ref.actor.ppo_epochs=2',
  ...ACTOR_OPTIM,
  'critic.optim.lr=0.0001',
  'critic.optim.betas=[0.9,0.99]',
  'critic.optim.override_optimizer_config={eps:1e-8}',
  'critic.optim.weight_decay=0',
  'critic.optim.clip_grad=1',
  'actor_rollout_ref.rollout.temperature=1',
  'actor_rollout_ref.rollout.top_k=-1',
  'actor_rollout_ref.rollout.top_p=1',
  'data.max_response_length=16',
  'actor_rollout_ref.actor.policy_loss.loss_mode=vanilla',
  'actor_rollout_ref.actor.clip_ratio_low=0.2',
  'actor_rollout_ref.actor.clip_ratio_high=0.2',
  'actor_rollout_ref.actor.clip_ratio_c=3',
  'actor_rollout_ref.actor.loss_agg_mode=token-mean',
  'algorithm.gamma=1',
  'algorithm.lam=0.95',
  'critic.cliprange_value=0.2',
  'actor_rollout_ref.actor.use_kl_loss=false',
  'actor_rollout_ref.actor.kl_loss_type=low_var_kl',
  'algorithm.rollout_correction.rollout_is=null',
  'trainer.test_freq=10',
  'trainer.val_before_train=true',
  'data.val_max_samples=100',
  'trainer.save_freq=50',
];

/** `list` with the overrides of `changes` written over (same key, same place) or, for a new key, appended after `after`. */
function edit(list: string[], changes: Record<string, string>, removed: string[] = []): string[] {
  const out = list.filter((s) => !removed.includes(s.slice(0, s.indexOf('='))));
  for (const [key, value] of Object.entries(changes)) {
    const i = out.findIndex((s) => s.startsWith(`${key}=`));
    if (i < 0) throw new Error(`edit: no override ${key} to change`);
    out[i] = `${key}=${value}`;
  }
  return out;
}

/**
 * A calc (or code) preset's own defaults on top of `base`: temperature 0.3, dynamic sampling on success
 * (verl's DAPO filter_groups, before the KL keys) and 4 samples per held-out task (before the
 * checkpoint cadence, the last key).
 */
function calcDefaults(base: string[], sampledEvaluation = true): string[] {
  const out = edit(base, { 'actor_rollout_ref.rollout.temperature': '0.3' });
  out.splice(
    out.indexOf('actor_rollout_ref.actor.use_kl_loss=false'),
    0,
    'algorithm.filter_groups.enable=true',
    'algorithm.filter_groups.metric=acc',
    'algorithm.filter_groups.max_num_gen_batches=10',
    'data.gen_batch_size=8',
  );
  if (!sampledEvaluation) return out;
  out.splice(
    out.length - 1,
    0,
    'actor_rollout_ref.rollout.val_kwargs.do_sample=true',
    'actor_rollout_ref.rollout.val_kwargs.n=4',
    'actor_rollout_ref.rollout.val_kwargs.temperature=0.3',
    'actor_rollout_ref.rollout.val_kwargs.top_k=-1',
    'actor_rollout_ref.rollout.val_kwargs.top_p=1',
  );
  return out;
}

describe("verlCommand: each preset's defaults", () => {
  it('grpo-arith: GRPO, vanilla PPO loss with dual clip 3, token-mean, no KL, no corrections', () => {
    const e = verl(defaultsOf('grpo-arith'));
    expect(e.overrides).toEqual(GRPO_ARITH);
    expect(kinds(e.unmapped)).toEqual([
      'preset:none',
      'maskZeroAdvantage:none',
      'truncation:none',
      'entropyBonus.kind:default',
    ]);
    expect(e.launch).toEqual([
      ...LAUNCH,
      'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=128',
      'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=128',
    ]);
    expect(e.command.split(' \\\n    ')[0]).toBe('python3 -m verl.trainer.main_ppo');
    expect(e.command).toContain(" \\\n    'actor_rollout_ref.actor.optim.betas=[0.9,0.99]' \\\n");
  });

  it('grpo-calc: multi-turn, the episode budget 4 × 14 and the per-action limit listed', () => {
    const e = verl(defaultsOf('grpo-calc'));
    expect(e.overrides).toEqual(calcDefaults(GRPO_CALC));
    // Dynamic sampling is an option of verl's DAPO recipe: its trainer runs the command.
    expect(e.command.split(' \\\n    ')[0]).toBe('python3 -m recipe.dapo.main_dapo');
    expect(kinds(e.unmapped)).toEqual([
      'preset:none',
      'maxNew:none',
      'maskZeroAdvantage:none',
      'truncation:default',
      'entropyBonus.kind:default',
    ]);
    expect(unmapped(e, 'preset')[0].reason).toMatch(/multi_turn: tool_config_path/);
  });

  it('grpo-guess: 7 guesses of 3 ids, 63 held-out secrets', () => {
    const e = verl(defaultsOf('grpo-guess'));
    expect(e.overrides).toEqual(
      edit(calcDefaults(GRPO_CALC), {
        'data.max_response_length': '21',
        'actor_rollout_ref.rollout.multi_turn.max_assistant_turns': '7',
        'data.val_max_samples': '63',
      }),
    );
  });

  it('grpo-code: one action of 50 ids (single-turn rollout), the grader listed with the task', () => {
    const e = verl(defaultsOf('grpo-code'));
    // grpo-code samples as grpo-calc but evaluates greedily only.
    expect(e.overrides).toEqual(
      edit(calcDefaults(GRPO_CALC, false), { 'data.max_response_length': '50' }, [
        'actor_rollout_ref.rollout.multi_turn.enable',
        'actor_rollout_ref.rollout.multi_turn.max_assistant_turns',
      ]),
    );
    expect(kinds(e.unmapped)).toEqual([
      'preset:none',
      'maxTurns:default',
      'maskZeroAdvantage:none',
      'truncation:default',
      'entropyBonus.kind:default',
    ]);
    expect(unmapped(e, 'preset')[0].reason).toMatch(/sandbox/);
  });

  it('ppo-arith: GAE with the critic, its optimizer mirroring the one AdamW, the value weight listed', () => {
    const e = verl(defaultsOf('ppo-arith'));
    expect(e.overrides).toEqual(PPO_ARITH);
    expect(kinds(e.unmapped)).toEqual([
      'preset:none',
      'shiftMean:default',
      'valueCoefficient:none',
      'truncation:default',
      'entropyBonus.kind:default',
    ]);
  });

  it('ppo-calc: ppo-arith on the calculator episodes (8 tasks, 4 turns × 14 ids)', () => {
    const e = verl(defaultsOf('ppo-calc'));
    const expected = edit(PPO_ARITH, {
      'data.train_batch_size': '8',
      'actor_rollout_ref.actor.ppo_mini_batch_size': '4',
      'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu': '32',
      'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu': '32',
      'critic.ppo_micro_batch_size_per_gpu': '32',
      'data.max_response_length': '56',
      'trainer.save_freq': '10',
    });
    expected.splice(
      expected.indexOf('data.max_response_length=56') + 1,
      0,
      'actor_rollout_ref.rollout.multi_turn.enable=true',
      'actor_rollout_ref.rollout.multi_turn.max_assistant_turns=4',
    );
    expect(e.overrides).toEqual(calcDefaults(expected));
    expect(kinds(e.unmapped)).toEqual([
      'preset:none',
      'maxNew:none',
      'shiftMean:default',
      'valueCoefficient:none',
      'truncation:default',
      'entropyBonus.kind:default',
    ]);
  });

  it('refuses SFT, Flow-GRPO and DPO with a reason', () => {
    const reasons = { 'sft-arith': /supervised/, 'flowgrpo-2d': /rectified-flow/, 'dpo-arith': /DPO.*TRL/ } as const;
    for (const [preset, reason] of Object.entries(reasons)) {
      const r = verlCommand(defaultsOf(preset as keyof typeof reasons));
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason).toMatch(reason);
    }
  });
});

describe('verlCommand: options', () => {
  it('clip-higher sets clip_ratio_low/high; a dual clip sets clip_ratio_c; no dual clip is c above e^20', () => {
    expect([
      at(grpo({ policyLoss: { name: 'ppo', clipLow: 0.2, clipHigh: 0.28 } }), 'actor_rollout_ref.actor.clip_ratio_low'),
      at(
        grpo({ policyLoss: { name: 'ppo', clipLow: 0.2, clipHigh: 0.28 } }),
        'actor_rollout_ref.actor.clip_ratio_high',
      ),
    ]).toEqual(['0.2', '0.28']);
    expect(at(grpo({ policyLoss: { name: 'ppo', dualClip: 5 } }), 'actor_rollout_ref.actor.clip_ratio_c')).toBe('5');
    const trl = grpo({ policyLoss: { name: 'ppo', compat: 'trl' } });
    expect(at(trl, 'actor_rollout_ref.actor.clip_ratio_c')).toBe(String(NO_DUAL_CLIP));
    expect(NO_DUAL_CLIP).toBeGreaterThan(Math.exp(20));
    // TRL's compat has no clamp: verl always clamps, so that is listed (as a resolved default).
    expect(unmapped(trl, 'policyLoss.logRatioClamp')).toMatchObject([{ value: 'none', kind: 'none', unset: true }]);
    expect(unmapped(trl, 'policyLoss.compat')).toMatchObject([{ kind: 'resolved' }]);
  });

  it("TRL's δ > 1 + ε_high is verl's dual clip; δ ≤ 1 + ε_high is listed", () => {
    const d = grpo({ policyLoss: { name: 'ppo', delta: 2, compat: 'trl' } });
    expect(at(d, 'actor_rollout_ref.actor.clip_ratio_c')).toBe('2');
    expect(d.mapped.find((m) => m.path === 'policyLoss.delta')).toMatchObject({
      key: 'actor_rollout_ref.actor.clip_ratio_c',
      to: 2,
    });
    const small = grpo({ policyLoss: { name: 'ppo', delta: 1.1 } });
    expect(at(small, 'actor_rollout_ref.actor.clip_ratio_c')).toBe('3');
    expect(unmapped(small, 'policyLoss.delta')).toMatchObject([{ value: 1.1, kind: 'none' }]);
    expect(
      unmapped(grpo({ policyLoss: { name: 'ppo', logRatioClamp: 20 } }), 'policyLoss.logRatioClamp'),
    ).toMatchObject([{ kind: 'default' }]);
  });

  it('loss modes by verl name: gspo, cispo, gpg, dppo; GSPO forces seq-mean-token-mean', () => {
    const mode = (p: GrpoRunOptions['policyLoss']) =>
      at(grpo({ policyLoss: p }), 'actor_rollout_ref.actor.policy_loss.loss_mode');
    expect([
      mode({ name: 'gspo' }),
      mode({ name: 'cispo' }),
      mode({ name: 'reinforce' }),
      mode({ name: 'dppo_tv' }),
      mode({ name: 'dppo_kl' }),
    ]).toEqual(['gspo', 'cispo', 'gpg', 'dppo_tv', 'dppo_kl']);
    expect(unmapped(grpo({ policyLoss: { name: 'gspo' } }), 'aggregation.mode')[0].reason).toMatch(
      /seq-mean-token-mean/,
    );
    expect(
      unmapped(
        grpo({ policyLoss: { name: 'gspo' }, aggregation: { mode: 'seq-mean-token-mean' } }),
        'aggregation.mode',
      ),
    ).toEqual([]);
    const dppo = grpo({ policyLoss: { name: 'dppo_tv', deltaLow: 0.15, truncation: 10000 } });
    expect(
      ['clip_ratio_low', 'clip_ratio_high', 'clip_ratio_c'].map((k) => at(dppo, `actor_rollout_ref.actor.${k}`)),
    ).toEqual(['0.15', '0.15', '10000']);
    expect(at(grpo({ policyLoss: { name: 'dppo_tv', compat: 'rllm' } }), 'actor_rollout_ref.actor.clip_ratio_c')).toBe(
      String(NO_DUAL_CLIP),
    );
    const cispoTrl = grpo({ policyLoss: { name: 'cispo', compat: 'trl' } });
    expect(at(cispoTrl, 'actor_rollout_ref.actor.policy_loss.loss_mode')).toBeUndefined();
    expect(kinds(unmapped(cispoTrl, 'policyLoss.name'))).toEqual(['policyLoss.name:none']);
  });

  it('geo_mean: loss_mode geo_mean with the log-ratio clips; verl fixes its aggregation and weighs IS per sequence', () => {
    const g = grpo({ policyLoss: { name: 'geo_mean', clipLow: 0.4 }, aggregation: { mode: 'seq-mean-token-mean' } });
    expect(
      ['policy_loss.loss_mode', 'clip_ratio_low', 'clip_ratio_high'].map((k) => at(g, `actor_rollout_ref.actor.${k}`)),
    ).toEqual(['geo_mean', '0.4', '0.4']);
    expect(unmapped(g, 'aggregation.mode')).toEqual([]);
    const t = grpo({
      policyLoss: { name: 'geo_mean' },
      importance: { kind: 'tis', level: 'token', cap: 2, batchNormalize: false },
    });
    expect(kinds([...unmapped(t, 'aggregation.mode'), ...unmapped(t, 'importance.kind')])).toEqual([
      'aggregation.mode:none',
      'importance.kind:none',
    ]);
    expect(unmapped(t, 'importance.kind')[0].reason).toMatch(/geometric mean of its IS weights/);
  });

  it('clip_cov: loss_mode clip_cov with its ratio and covariance bounds, defaults written out', () => {
    const keys = ['loss_mode', 'clip_cov_ratio', 'clip_cov_lb', 'clip_cov_ub'].map(
      (k) => `actor_rollout_ref.actor.policy_loss.${k}`,
    );
    const c = grpo({ policyLoss: { name: 'clip_cov', ratio: 0.01, lb: 0.5, ub: 4 } });
    expect(keys.map((k) => at(c, k))).toEqual(['clip_cov', '0.01', '0.5', '4']);
    expect(keys.map((k) => at(grpo({ policyLoss: { name: 'clip_cov' } }), k))).toEqual([
      'clip_cov',
      '0.0002',
      '1',
      '5',
    ]);
    expect(at(c, 'actor_rollout_ref.actor.clip_ratio_low')).toBe('0.2');
  });

  it('kl_cov: loss_mode kl_cov with its ratio and coefficient, defaults written out', () => {
    const keys = ['loss_mode', 'kl_cov_ratio', 'ppo_kl_coef'].map((k) => `actor_rollout_ref.actor.policy_loss.${k}`);
    expect(keys.map((k) => at(grpo({ policyLoss: { name: 'kl_cov', ratio: 0.01, coef: 1 } }), k))).toEqual([
      'kl_cov',
      '0.01',
      '1',
    ]);
    expect(keys.map((k) => at(grpo({ policyLoss: { name: 'kl_cov' } }), k))).toEqual(['kl_cov', '0.0002', '0.1']);
  });

  it('sapo: loss_mode sapo with tau_pos/tau_neg; verl clamps and fixes seq-mean-token-mean', () => {
    const g = grpo({ policyLoss: { name: 'sapo', tauPos: 0.9 }, aggregation: { mode: 'seq-mean-token-mean' } });
    expect(['policy_loss.loss_mode', 'tau_pos', 'tau_neg'].map((k) => at(g, `actor_rollout_ref.actor.${k}`))).toEqual([
      'sapo',
      '0.9',
      '1.05',
    ]);
    expect(g.unmapped.filter((u) => u.path.startsWith('policyLoss') || u.path === 'aggregation.mode')).toEqual([]);
    const t = grpo({ policyLoss: { name: 'sapo', compat: 'trl' } });
    expect(kinds([...unmapped(t, 'policyLoss.compat'), ...unmapped(t, 'aggregation.mode')])).toEqual([
      'policyLoss.compat:none',
      'aggregation.mode:none',
    ]);
  });

  it('dro: loss_mode dro with dro_beta', () => {
    const d = grpo({ policyLoss: { name: 'dro', beta: 0.05 } });
    expect(['loss_mode', 'dro_beta'].map((k) => at(d, `actor_rollout_ref.actor.policy_loss.${k}`))).toEqual([
      'dro',
      '0.05',
    ]);
  });

  it('vespo has no verl equivalent', () => {
    const v = grpo({ policyLoss: { name: 'vespo', kPos: 1 } });
    expect(kinds(v.unmapped.filter((u) => u.path.startsWith('policyLoss')))).toEqual([
      'policyLoss.name:none',
      'policyLoss.kPos:none',
    ]);
    expect(at(v, 'actor_rollout_ref.actor.policy_loss.loss_mode')).toBeUndefined();
  });

  it('icepop is bypass-mode REINFORCE with an IcePop band; reinforce_kl has no equivalent', () => {
    const e = grpo({ policyLoss: { name: 'icepop' } });
    for (const s of [
      'algorithm.rollout_correction.bypass_mode=true',
      'algorithm.rollout_correction.loss_type=reinforce',
      'algorithm.rollout_correction.rollout_is=token',
      'algorithm.rollout_correction.rollout_is_threshold="0.5_5"',
      'algorithm.rollout_correction.rollout_is_batch_normalize=false',
    ])
      expect(e.overrides).toContain(s);
    expect(at(e, 'actor_rollout_ref.actor.policy_loss.loss_mode')).toBeUndefined();
    expect(e.command).toContain(`'algorithm.rollout_correction.rollout_is_threshold="0.5_5"'`);
    const k = grpo({ policyLoss: { name: 'reinforce_kl', klApprox: true, bwdKlCoef: 0.1 } });
    expect(kinds(k.unmapped.filter((u) => u.path.startsWith('policyLoss')))).toEqual([
      'policyLoss.name:none',
      'policyLoss.klApprox:none',
      'policyLoss.bwdKlCoef:none',
    ]);
  });

  it('aggregation modes onto loss_agg_mode', () => {
    const agg = (a: GrpoRunOptions['aggregation']) =>
      at(grpo({ aggregation: a }), 'actor_rollout_ref.actor.loss_agg_mode');
    expect(
      (['token-mean', 'token-sum', 'seq-mean-token-mean', 'seq-mean-token-sum', 'session-mean', 'grpo'] as const).map(
        (mode) => agg({ mode }),
      ),
    ).toEqual([
      'token-mean',
      'token-sum',
      'seq-mean-token-mean',
      'seq-mean-token-sum',
      'seq-mean-token-mean',
      'seq-mean-token-mean',
    ]);
    const norm = grpo({ aggregation: { mode: 'seq-mean-token-sum-norm', lossScaleFactor: 64 } });
    expect([
      at(norm, 'actor_rollout_ref.actor.loss_agg_mode'),
      at(norm, 'actor_rollout_ref.actor.loss_scale_factor'),
    ]).toEqual(['seq-mean-token-sum-norm', '64']);
    expect(
      unmapped(grpo({ aggregation: { mode: 'seq-mean-token-sum-norm' } }), 'aggregation.lossScaleFactor'),
    ).toMatchObject([{ unset: true, kind: 'none' }]);
    expect(
      unmapped(
        grpo({ aggregation: { mode: 'seq-mean-token-sum-norm', compat: 'verl-legacy' } }),
        'aggregation.compat',
      )[0].reason,
    ).toMatch(/v0\.7\.0/);
    const dr = grpo({ aggregation: { mode: 'dr_grpo', maxCompletionLength: 16 } });
    expect([
      at(dr, 'actor_rollout_ref.actor.loss_agg_mode'),
      at(dr, 'actor_rollout_ref.actor.loss_scale_factor'),
    ]).toEqual(['seq-mean-token-sum-norm', '16']);
  });

  it('advantage estimators: grpo (with or without std), rloo (loop or vectorised), reinforce_plus_plus_baseline', () => {
    const adv = (a: GrpoRunOptions['advantage']) => grpo({ advantage: a });
    expect(at(adv({ estimator: 'grpo', scale: 'none' }), 'algorithm.norm_adv_by_std_in_grpo')).toBe('false');
    const batch = adv({ estimator: 'grpo', scale: 'batch' });
    expect(at(batch, 'algorithm.norm_adv_by_std_in_grpo')).toBeUndefined();
    expect(kinds(unmapped(batch, 'advantage.scale'))).toEqual(['advantage.scale:none']);
    expect(at(adv({ estimator: 'rloo', normalize: false }), 'algorithm.adv_estimator')).toBe('rloo');
    expect(at(adv({ estimator: 'rloo', singleton: 'zero', normalize: true }), 'algorithm.adv_estimator')).toBe(
      'rloo_vectorized',
    );
    expect(
      kinds(unmapped(adv({ estimator: 'rloo', singleton: 'zero', normalize: true }), 'advantage.normalize')),
    ).toEqual(['advantage.normalize:none']);
    expect(at(adv({ estimator: 'reinforce++-baseline' }), 'algorithm.adv_estimator')).toBe(
      'reinforce_plus_plus_baseline',
    );
    expect(
      kinds(unmapped(adv({ estimator: 'reinforce++-baseline', shiftMean: false }), 'advantage.shiftMean')),
    ).toEqual(['advantage.shiftMean:none']);
    expect(kinds(unmapped(adv({ estimator: 'reinforce++-baseline', compat: 'rllm' }), 'advantage.compat'))).toEqual([
      'advantage.compat:none',
    ]);
  });

  it('gpg and grpo_passk by their adv_estimator names; pass@k carries norm_adv_by_std_in_grpo', () => {
    expect(at(grpo({ advantage: { estimator: 'gpg' } }), 'algorithm.adv_estimator')).toBe('gpg');
    const k = grpo({ advantage: { estimator: 'grpo-passk', scale: 'none' } });
    expect(at(k, 'algorithm.adv_estimator')).toBe('grpo_passk');
    expect(at(k, 'algorithm.norm_adv_by_std_in_grpo')).toBe('false');
  });

  it('otb: optimal_token_baseline (tir_ on episodes) with the actor writing Σπ²; handle_zero_tail off is listed', () => {
    const o = grpo({ advantage: { estimator: 'otb' }, maskZeroAdvantage: false });
    expect(at(o, 'algorithm.adv_estimator')).toBe('optimal_token_baseline');
    expect(at(o, 'actor_rollout_ref.actor.calculate_sum_pi_squared')).toBe('true');
    expect(o.unmapped.filter((u) => u.path.startsWith('advantage'))).toEqual([]);
    const off = grpo({ advantage: { estimator: 'otb', handleZeroTail: false }, maskZeroAdvantage: false });
    expect(unmapped(off, 'advantage.handleZeroTail')[0]).toMatchObject({ kind: 'none', value: false });
    expect(unmapped(off, 'advantage.handleZeroTail')[0].reason).toMatch(/never passes handle_zero_tail/);
    const tir = verl({
      ...defaultsOf('grpo-calc'),
      advantage: { estimator: 'otb-tir', handleZeroTail: true },
      maskZeroAdvantage: false,
    } as RunOptions);
    expect(at(tir, 'algorithm.adv_estimator')).toBe('tir_optimal_token_baseline');
    expect(unmapped(tir, 'advantage.handleZeroTail')[0]).toMatchObject({ kind: 'default', value: true });
  });

  it("gdpo: adv_estimator gdpo, its keys and weights added with '+' (AlgoConfig fields outside the YAML); shaping's listed", () => {
    const o = grpo({ advantage: { estimator: 'gdpo', weights: { correct: 2, boxed: 1 } } });
    expect(at(o, 'algorithm.adv_estimator')).toBe('gdpo');
    expect(at(o, 'algorithm.norm_adv_by_std_in_grpo')).toBe('true');
    expect(at(o, '+algorithm.gdpo_reward_keys')).toBe('[boxed,correct]');
    expect(at(o, '+algorithm.gdpo_reward_weights')).toBe('[1,2]');
    const shaped = grpo({ advantage: { estimator: 'gdpo', weights: { correct: 1, overlong: 1 } }, overlongBuffer: 4 });
    expect(shaped.overrides).toContain('+algorithm.gdpo_reward_keys=[correct]');
    expect(shaped.unmapped.find((u) => u.path === 'advantage.weights.overlong')?.reason).toMatch(/DAPO reward manager/);
  });

  it("compat trl's GRPO defaults (ε 1e-4, singleton 0) are listed as unset values verl cannot take", () => {
    const e = grpo({ advantage: { estimator: 'grpo', compat: 'trl' } });
    expect(e.unmapped.filter((u) => u.path.startsWith('advantage'))).toMatchObject([
      { path: 'advantage.epsilon', value: 1e-4, kind: 'none', unset: true },
      { path: 'advantage.singleton', value: 'zero', kind: 'none', unset: true },
      { path: 'advantage.compat', value: 'trl', kind: 'resolved' },
    ]);
    const verlSet = grpo({
      advantage: { estimator: 'grpo', scale: 'group', stdType: 'unbiased', epsilon: 1e-6, singleton: 'raw' },
    });
    expect(kinds(verlSet.unmapped.filter((u) => u.path.startsWith('advantage')))).toEqual([
      'advantage.stdType:default',
      'advantage.epsilon:default',
      'advantage.singleton:default',
    ]);
  });

  it("KL estimators by verl's kl_loss_type names, '+' for the straight-through k2 gradient", () => {
    const type = (estimator: GrpoRunOptions['kl']['estimator']) =>
      at(grpo({ beta: 0.01, kl: { estimator } }), 'actor_rollout_ref.actor.kl_loss_type');
    expect((['k1', 'abs', 'k2', 'k3', 'k1+', 'abs+', 'k2+', 'k3+'] as const).map(type)).toEqual([
      'kl',
      'abs',
      'mse',
      'low_var_kl',
      '"kl+"',
      '"abs+"',
      '"mse+"',
      '"low_var_kl+"',
    ]);
    const on = grpo({ beta: 0.01, kl: { estimator: 'k3' } });
    expect([
      at(on, 'actor_rollout_ref.actor.use_kl_loss'),
      at(on, 'actor_rollout_ref.actor.kl_loss_coef'),
      at(on, 'actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu'),
    ]).toEqual(['true', '0.01', '128']);
    expect(unmapped(grpo({ beta: 0.01, kl: { estimator: 'k3', compat: 'trl' } }), 'kl.compat')[0].reason).toMatch(
      /unclamped/,
    );
    expect(
      unmapped(grpo({ beta: 0.01, kl: { estimator: 'k3' }, aggregation: { mode: 'seq-mean-token-mean' } }), 'beta')[0]
        .reason,
    ).toMatch(/token-mean/);
  });

  it('IS weights and rejection masks onto algorithm.rollout_correction, quoted for Hydra and the shell', () => {
    const tis = grpo({ importance: { kind: 'tis', level: 'sequence', cap: 5, batchNormalize: true } });
    expect(
      ['rollout_is', 'rollout_is_threshold', 'rollout_is_batch_normalize'].map((k) =>
        at(tis, `algorithm.rollout_correction.${k}`),
      ),
    ).toEqual(['sequence', '5', 'true']);
    const band = grpo({ importance: { kind: 'band', level: 'token', low: 0.5, high: 5, batchNormalize: false } });
    expect(at(band, 'algorithm.rollout_correction.rollout_is_threshold')).toBe('"0.5_5"');
    expect(
      kinds(
        grpo({ importance: { kind: 'band', level: 'token', low: 0, high: 2, batchNormalize: false } }).unmapped.filter(
          (u) => u.path.startsWith('importance'),
        ),
      ),
    ).toEqual(['importance.low:none', 'importance.high:none']);
    const rs = grpo({ rejection: { seq_mean_k3: 0.01, token_k1: 2 } });
    expect(at(rs, 'algorithm.rollout_correction.rollout_rs')).toBe('"token_k1,seq_mean_k3"');
    expect(at(rs, 'algorithm.rollout_correction.rollout_rs_threshold')).toBe('"2,0.01"');
    expect(rs.command).toContain(`'algorithm.rollout_correction.rollout_rs="token_k1,seq_mean_k3"'`);
  });

  it("TRL's off-policy sequence mask has no verl equivalent: listed, nothing written", () => {
    const e = grpo({ offPolicyMask: 0.5 });
    expect(kinds(unmapped(e, 'offPolicyMask'))).toEqual(['offPolicyMask:none']);
    expect(unmapped(e, 'offPolicyMask')[0].reason).toMatch(/no off-policy sequence mask/);
    expect(e.overrides).toEqual(grpo({}).overrides);
  });

  it("TRL's high-entropy token mask has no verl equivalent: listed, nothing written", () => {
    const e = grpo({ topEntropyQuantile: 0.2 });
    expect(kinds(unmapped(e, 'topEntropyQuantile'))).toEqual(['topEntropyQuantile:none']);
    expect(e.overrides).toEqual(grpo({}).overrides);
  });

  it('mini-batches in prompts; a split verl cannot make is listed; run bookkeeping', () => {
    const four = grpo({ miniBatches: 4, epochs: 2 });
    expect([
      at(four, 'actor_rollout_ref.actor.ppo_mini_batch_size'),
      at(four, 'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu'),
      at(four, 'actor_rollout_ref.actor.ppo_epochs'),
    ]).toEqual(['4', '32', '2']);
    const three = grpo({ miniBatches: 3 });
    expect(at(three, 'actor_rollout_ref.actor.ppo_mini_batch_size')).toBe('16');
    expect(kinds(unmapped(three, 'miniBatches'))).toEqual(['miniBatches:none']);
    const run = grpo({
      temperature: 0.7,
      topK: 5,
      trainProblems: 16,
      renormalize: true,
      evalEvery: 0,
      checkpointEvery: 0,
      maskZeroAdvantage: false,
      truncation: 'score',
    });
    expect(
      [
        'actor_rollout_ref.rollout.top_k',
        'data.train_max_samples',
        'trainer.test_freq',
        'trainer.val_before_train',
        'trainer.save_freq',
      ].map((k) => at(run, k)),
    ).toEqual(['5', '16', '-1', 'false', '150']);
    // A temperature ≠ 1 maps whole: verl's actor and Dewpoint's trainer both score logits / T.
    expect(kinds(run.unmapped)).toEqual([
      'preset:none',
      'renormalize:none',
      'maskZeroAdvantage:default',
      'truncation:default',
      'entropyBonus.kind:default',
    ]);
    expect(kinds(unmapped(grpo({ trainProblems: 8 }), 'trainProblems'))).toEqual(['trainProblems:none']);
  });

  it("LoRA onto actor_rollout_ref.model's lora keys; adapter dropout, which verl's LoraConfig lacks, is listed", () => {
    const model = 'actor_rollout_ref.model';
    const e = grpo({ loraRank: 8, loraTargets: 'q_proj,v_proj', loraDropout: 0.1 });
    expect([`${model}.lora_rank`, `${model}.lora_alpha`, `${model}.target_modules`].map((k) => at(e, k))).toEqual([
      '8',
      '8',
      hydraValue(['q_proj', 'v_proj']),
    ]);
    expect(kinds(unmapped(e, 'loraDropout'))).toEqual(['loraDropout:none']);
    // verl's LoRA guide requires vLLM to load the base as safetensors (its default load_format is dummy).
    expect(at(e, 'actor_rollout_ref.rollout.load_format')).toBe('safetensors');
    expect(at(grpo({}), 'actor_rollout_ref.rollout.load_format')).toBeUndefined();
    expect(at(grpo({ loraRank: 4, loraAlpha: 16 }), `${model}.lora_alpha`)).toBe('16');
    expect(unmapped(grpo({ loraRank: 4 }), 'loraDropout')).toEqual([]);
    expect(at(grpo({}), `${model}.lora_rank`)).toBeUndefined();
    expect(at(grpo({ recomputeLayers: true }), `${model}.enable_gradient_checkpointing`)).toBe('true');
    expect(at(grpo({}), `${model}.enable_gradient_checkpointing`)).toBeUndefined();
  });

  it('PPO: GAE γ, λ and the value clip; shiftMean off is listed', () => {
    const e = ppo({ gamma: 0.99, lam: 0.9, valueClip: 0.5, shiftMean: false });
    expect(
      ['algorithm.gamma', 'algorithm.lam', 'critic.cliprange_value', 'algorithm.adv_estimator'].map((k) => at(e, k)),
    ).toEqual(['0.99', '0.9', '0.5', 'gae']);
    expect(kinds(unmapped(e, 'shiftMean'))).toEqual(['shiftMean:none']);
  });

  it("an lr schedule onto the actor optimizer's scheduler keys; the overlong buffer onto DAPO's reward manager", () => {
    const e = grpo({ lrSchedule: 'cosine', lrWarmup: 5, minLrRatio: 0.1, overlongBuffer: 4, overlongPenalty: 0.5 });
    const optim = 'actor_rollout_ref.actor.optim';
    expect(
      [`${optim}.lr_scheduler_type`, `${optim}.lr_warmup_steps`, `${optim}.min_lr_ratio`].map((k) => at(e, k)),
    ).toEqual(['cosine', '5', '0.1']);
    expect(
      [
        'reward_model.reward_manager',
        'reward_model.overlong_buffer.enable',
        'reward_model.overlong_buffer.len',
        'reward_model.overlong_buffer.penalty_factor',
      ].map((k) => at(e, k)),
    ).toEqual(['dapo', 'true', '4', '0.5']);
    const plain = grpo({});
    expect(at(plain, `${optim}.lr_warmup_steps`)).toBeUndefined();
    expect(at(plain, 'reward_model.overlong_buffer.enable')).toBeUndefined();
    // A warmup alone is verl's constant schedule with that warmup, and no cosine floor.
    const warm = grpo({ lrWarmup: 3 });
    expect([`${optim}.lr_scheduler_type`, `${optim}.lr_warmup_steps`].map((k) => at(warm, k))).toEqual([
      'constant',
      '3',
    ]);
    expect(at(warm, `${optim}.min_lr_ratio`)).toBeUndefined();
  });

  it("dynamic sampling onto DAPO's filter_groups: acc for success, seq_final_reward for the score", () => {
    const e = grpo({ filterGroups: 'success', maxGenBatches: 6 });
    expect(
      [
        'algorithm.filter_groups.enable',
        'algorithm.filter_groups.metric',
        'algorithm.filter_groups.max_num_gen_batches',
        'data.gen_batch_size',
      ].map((k) => at(e, k)),
    ).toEqual(['true', 'acc', '6', '16']);
    expect(at(grpo({ filterGroups: 'score' }), 'algorithm.filter_groups.metric')).toBe('seq_final_reward');
    expect(at(grpo({ filterGroups: 'score' }), 'algorithm.filter_groups.max_num_gen_batches')).toBe('10');
    expect(at(grpo({}), 'algorithm.filter_groups.enable')).toBeUndefined();
  });

  it("a staleness bound onto verl's fully async trainer: one sync a batch, whole batches, no partial rollout, old recomputed", () => {
    const e = grpo({ staleness: 2, miniBatches: 2 });
    expect(e.command.startsWith(VERL_ASYNC_ENTRY)).toBe(true);
    const keys = ['staleness_threshold', 'trigger_parameter_sync_step', 'require_batches', 'partial_rollout'];
    expect([...keys, 'use_rollout_log_probs'].map((k) => at(e, `async_training.${k}`))).toEqual([
      '2',
      '1',
      '2',
      'false',
      'false',
    ]);
    const sync = grpo({});
    expect(sync.command.startsWith(VERL_ENTRY)).toBe(true);
    expect(at(sync, 'async_training.staleness_threshold')).toBeUndefined();
  });

  it('hydraValue quotes what Hydra would misread', () => {
    expect([
      hydraValue('grpo'),
      hydraValue('low_var_kl+'),
      hydraValue('0.5_5'),
      hydraValue('a,b'),
      hydraValue(null),
      hydraValue([0.9, 0.99]),
      hydraValue({ eps: 1e-8 }),
      hydraValue(true),
      hydraValue('$MODEL_PATH'),
    ]).toEqual([
      'grpo',
      '"low_var_kl+"',
      '"0.5_5"',
      '"a,b"',
      'null',
      '[0.9,0.99]',
      '{eps:1e-8}',
      'true',
      '$MODEL_PATH',
    ]);
  });
});
