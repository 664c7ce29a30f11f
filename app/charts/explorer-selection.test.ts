import { describe, expect, it } from 'vitest';
import { shownSelection } from './explorer-selection';

const DEFAULTS = ['rl/entropy', 'perf/tokens_per_s'];
const GRPO = ['loss/total', 'opt/lr', 'perf/tokens_per_s', 'rl/entropy'];

describe('shownSelection', () => {
  it('keeps the chosen keys the run reported, in the order chosen', () => {
    expect(shownSelection(['opt/lr', 'loss/sft', 'loss/total'], GRPO, DEFAULTS)).toEqual(['opt/lr', 'loss/total']);
  });

  it('falls back to the first default the run has when none of the chosen keys remain, or nothing was chosen', () => {
    expect(shownSelection(['loss/sft'], GRPO, DEFAULTS)).toEqual(['rl/entropy']);
    expect(shownSelection(['loss/sft'], ['opt/lr', 'perf/tokens_per_s'], DEFAULTS)).toEqual(['perf/tokens_per_s']);
    expect(shownSelection(null, GRPO, DEFAULTS)).toEqual(['rl/entropy']);
    expect(shownSelection([], GRPO, DEFAULTS)).toEqual(['rl/entropy']);
  });

  it('plots the first key when the run has no default key (a DPO run), nothing when it has no keys', () => {
    expect(shownSelection(['rl/entropy'], ['loss/dpo', 'rewards/margins'], DEFAULTS)).toEqual(['loss/dpo']);
    expect(shownSelection(['rl/entropy'], [], DEFAULTS)).toEqual([]);
  });
});
