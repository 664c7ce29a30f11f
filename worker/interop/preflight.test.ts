import { describe, expect, it } from 'vitest';
import type { RunOptions } from '../contract/options';
import { PRESETS } from '../presets/table';
import { headDimOf, preflight, type ModelJson } from './preflight';

const defaults = (name: string) => PRESETS.find((p) => p.name === name)!.defaults as RunOptions;
/** A Hugging Face model's JSON files: hidden 192 over `heads` heads, a BPE tokenizer, a chat template or none. */
const hfModel = (heads: number, template: string | null = '{{ messages }}'): ModelJson => ({
  config: { hidden_size: 192, num_attention_heads: heads },
  tokenizer: { model: { type: 'BPE' } },
  tokenizerConfig: template === null ? {} : { chat_template: template },
});
const rule = (r: ReturnType<typeof preflight>, name: string) => r.find((c) => c.rule === name);

describe('preflight', () => {
  it('refuses a model with head_dim 24, naming the rule and the value; passes head_dim 64', () => {
    expect(headDimOf(hfModel(8).config)).toBe(24);
    expect(rule(preflight(defaults('grpo-arith'), hfModel(8), 'verl'), 'head-dim-multiple-of-32')).toEqual({
      rule: 'head-dim-multiple-of-32',
      status: 'refused',
      detail: expect.stringMatching(
        /^head_dim = 24 \(config\.json\); vLLM's and FlashAttention's.*refuses.*FLEX_ATTENTION/,
      ),
    });
    expect(rule(preflight(defaults('grpo-arith'), hfModel(3), 'verl'), 'head-dim-multiple-of-32')?.detail).toMatch(
      /^head_dim = 64 .* and this is one$/,
    );
    const ok = preflight(defaults('grpo-arith'), hfModel(3), 'verl');
    expect(ok.filter((c) => c.status === 'refused')).toEqual([]);
    expect(rule(ok, 'optimizer-state')?.status).toBe('note');
  });

  it('refuses a tokenizer without a chat template, a character tokenizer, a missing model and a launch verl lacks', () => {
    expect(rule(preflight(defaults('grpo-arith'), hfModel(3, null), 'verl'), 'chat-template')?.status).toBe('refused');
    const char = { ...hfModel(3), tokenizer: { type: 'char' } };
    expect(rule(preflight(defaults('grpo-arith'), char, 'verl'), 'hf-tokenizer')?.status).toBe('refused');
    expect(rule(preflight(defaults('grpo-arith'), null, 'verl'), 'model-saved')?.status).toBe('refused');
    expect(rule(preflight(defaults('dpo-arith'), hfModel(3), 'verl'), 'launch')).toMatchObject({
      status: 'refused',
      detail: expect.stringContaining('dpo-arith is DPO'),
    });
    expect(rule(preflight(defaults('grpo-code'), hfModel(3), 'skyrl'), 'reward-twin')?.status).toBe('refused');
  });

  it('SkyRL: the launch passes for GRPO and is refused for DPO by name; an unregistered env class and too few rows are refused', () => {
    const ok = preflight(defaults('grpo-arith'), hfModel(3), 'skyrl', 16);
    expect(rule(ok, 'launch')?.status).toBe('pass');
    expect(rule(ok, 'skyrl-env')?.status).toBe('pass');
    expect(rule(ok, 'train-rows')?.status).toBe('pass');
    expect(ok.filter((c) => c.status === 'refused')).toEqual([]);
    expect(rule(preflight(defaults('dpo-arith'), hfModel(3), 'skyrl'), 'launch')).toMatchObject({
      status: 'refused',
      detail: expect.stringMatching(/^dpo-arith is DPO: SkyRL has no DPO trainer/),
    });
    // grpo-code's reward runs programs: no reward.py, so nothing registers dewpoint_reward.
    expect(rule(preflight(defaults('grpo-code'), hfModel(3), 'skyrl'), 'skyrl-env')).toMatchObject({
      status: 'refused',
      detail: expect.stringContaining('skyrl_gym.make refuses the id'),
    });
    expect(rule(preflight(defaults('grpo-arith'), hfModel(3), 'skyrl', 15), 'train-rows')).toEqual({
      rule: 'train-rows',
      status: 'refused',
      detail:
        'train.parquet has 15 prompts; SkyRL asserts at least trainer.train_batch_size (16) rows before it starts: ' +
        'add prompts to TRAIN_FILES or lower train_batch_size',
    });
    expect(rule(preflight(defaults('grpo-arith'), hfModel(3), 'verl', 15), 'train-rows')).toBeUndefined();
  });
});
