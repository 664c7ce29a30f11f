import { describe, expect, it } from 'vitest';
import type { BaseModelRunOptions, RunOptions } from '../contract/options';
import { checkRunOptions, optionFields, PRESETS } from './table';

const defaults = (name: RunOptions['preset']) =>
  structuredClone(PRESETS.find((p) => p.name === name)!.defaults) as RunOptions;
const BASE: BaseModelRunOptions = { kind: 'hf', id: 'hf-0123456789abcdef', name: 'tiny-llama', parameters: 4_210_000 };
const withBase = (b: Record<string, unknown>, preset: RunOptions['preset'] = 'grpo-arith') => ({
  ...defaults(preset),
  base: { ...BASE, ...b },
});
const messages = (o: unknown) => checkRunOptions(o).map((p) => p.message);

describe('the base run option (a picked model)', () => {
  it('grpo-arith, ppo-arith and dpo-arith take one; the episode presets, SFT and Flow-GRPO do not', () => {
    for (const name of ['grpo-arith', 'ppo-arith', 'dpo-arith'] as const)
      expect(checkRunOptions(withBase({}, name)), name).toEqual([]);
    for (const name of ['grpo-calc', 'grpo-guess', 'grpo-code', 'ppo-calc', 'sft-arith', 'flowgrpo-2d'] as const)
      expect(messages(withBase({}, name)), name).toEqual([`base is not an option of ${name}`]);
  });

  it('is not a form field (the model picker sets it)', () => {
    for (const p of PRESETS)
      expect(
        optionFields(p.name).filter((f) => f.path.startsWith('base')),
        p.name,
      ).toEqual([]);
  });

  it('names the field and what it must be', () => {
    expect(messages(withBase({ kind: 'gguf' }))).toEqual(["base.kind must be one of hf, got 'gguf'"]);
    expect(messages(withBase({ id: 'model-1' }))).toEqual([
      "base.id must be useModel's model id (hf- and 16 hex digits), got 'model-1'",
    ]);
    expect(messages(withBase({ name: '' }))).toEqual(["base.name must be the model folder's name, got ''"]);
    expect(messages(withBase({ parameters: 0 }))).toEqual([
      'base.parameters must be the parameter count, a positive integer, got 0',
    ]);
    expect(messages(withBase({ extra: true }))).toEqual(['base.extra is not an option of grpo-arith']);
    expect(messages({ ...defaults('grpo-arith'), base: 'tiny-llama' })).toEqual([
      "base must be a picked model {kind: 'hf', id, name, parameters} (useModel gives one), or absent for the shipped base, got 'tiny-llama'",
    ]);
  });

  it('maxNew goes to 1024 on a picked model, and to 48 on the shipped base, past which it is refused by name', () => {
    for (const name of ['grpo-arith', 'ppo-arith', 'dpo-arith'] as const) {
      expect(checkRunOptions({ ...withBase({}, name), maxNew: 1024 }), name).toEqual([]);
      expect(messages({ ...defaults(name), maxNew: 48 }), name).toEqual([]);
      expect(messages({ ...defaults(name), maxNew: 49 }), name).toEqual([
        'Max new tokens (maxNew) must be at most 48 on the shipped base (64 positions), got 49; up to 1024 with a model of your own',
      ]);
    }
    expect(messages({ ...withBase({}), maxNew: 1025 })[0]).toMatch(
      /^Max new tokens \(maxNew\) must be an integer in 1\.\.1024/,
    );
  });
});
