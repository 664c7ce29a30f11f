import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetReadObjects } from 'hyparquet';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixtureFolder } from '../worker/hf/node-fixture';
import { writeHfDir } from '../worker/hf/node-hf-dir';
import { findPreset } from '../worker/presets/table';
import { main } from './main';
import { capture } from './testing/capture';

// A person's own model and prompts through the CLI: a random Llama with grouped-query attention
// (4 heads, 2 kv heads) and the 32000-piece tokenizer, written as a Hugging Face folder by our own
// exporter, trained by GRPO on a JSONL file. A random model never writes EOS in 16 ids, so every
// completion is truncated: truncation 'score' keeps them, and the reward is the last lowercase
// letter against the ground truth (a regex), which random text hits often enough to split groups.
let dir: string;
let data: string;
let config: string;

beforeAll(() => {
  const root = mkdtempSync(join(tmpdir(), 'dewpoint-hf-'));
  dir = join(root, 'tiny-llama');
  writeHfDir(dir, fixtureFolder({ kvHeads: 2 }).files);
  data = join(root, 'letters.jsonl');
  writeFileSync(
    data,
    ['e', 'a', 't', 'o', 'i', 'n']
      .map((l, i) => JSON.stringify({ prompt: `Letter ${i + 1}:`, ground_truth: l }))
      .join('\n'),
  );
  config = join(root, 'run.json');
  writeFileSync(config, JSON.stringify({ ...findPreset('grpo-arith')!.defaults, truncation: 'score' }));
});

describe('train --checkpoint HF_FOLDER --dataset FILE', () => {
  it('runs GRPO on the folder and the file; the saved rollouts are in its vocabulary and export for verl', async () => {
    const { out, err } = capture();
    const run = join(dir, '..', 'run');
    const code = await main([
      'train',
      '--config',
      config,
      '--checkpoint',
      dir,
      '--dataset',
      data,
      '--reward',
      'regex',
      '--reward-pattern',
      '([a-z])[^a-z]*$',
      '--held-out',
      '1',
      '--steps',
      '3',
      '--prompts',
      '2',
      '--eval-every',
      '0',
      '--backend',
      'wasm',
      '--save',
      run,
      '--json',
    ]);
    expect(code, err.join('')).toBe(0);
    expect(err.join('')).toContain(`from ${dir}, 3 steps`);
    const steps = out
      .join('')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, number>);
    expect(steps).toHaveLength(3);
    // Some group split: a gradient flowed into the model.
    expect(steps.some((s) => s['opt/grad_norm'] > 0 && s['reward/std'] > 0)).toBe(true);
    out.length = 0;
    // The bundle is written; the fixture's small model is refused for vLLM, naming the rule.
    expect(await main(['export', run, '--to', 'verl'])).toBe(1);
    expect(err.join('')).toContain('preflight refused (head-dim-multiple-of-32): head_dim = 16 (config.json)');
    expect(err.join('')).toContain('preflight refused (chat-template): tokenizer_config.json has no chat_template');
    expect(err.join('')).toContain("reward.py gives Dewpoint's score on 48 of 48 rollouts");
    // A Hugging Face base's bundle carries its tokenizer as a Hugging Face folder does.
    expect(readdirSync(join(run, 'verl', 'model'))).toEqual(expect.arrayContaining(['tokenizer_config.json']));
    const rows = await parquetReadObjects({
      file: new Uint8Array(readFileSync(join(run, 'verl', 'rollouts.parquet'))).buffer,
    });
    expect(rows).toHaveLength(3 * 2 * 8);
    // BOS is the tokenizer's <s> (1), and the sampled ids range over the 32000-piece vocabulary.
    expect(rows.every((r) => (r.prompt_ids as number[])[0] === 1)).toBe(true);
    expect(Math.max(...rows.flatMap((r) => r.response_ids as number[]))).toBeGreaterThan(1000);
    expect(rows.every((r) => /^Letter \d:$/.test(r.input as string))).toBe(true);
  });

  it("refuses a config whose base names a model picked in the app (that model lives in the tab's worker)", async () => {
    const { err } = capture();
    const picked = join(dir, '..', 'picked.json');
    writeFileSync(
      picked,
      JSON.stringify({
        ...findPreset('grpo-arith')!.defaults,
        base: { kind: 'hf', id: 'hf-0123456789abcdef', name: 'tiny-llama', parameters: 1000 },
      }),
    );
    expect(await main(['train', '--config', picked, '--steps', '1', '--backend', 'cpu'])).toBe(2);
    expect(err.join('')).toContain('give its folder with --checkpoint DIR');
  });

  it('refuses a folder that is not a model, naming the file', async () => {
    const { err } = capture();
    const empty = mkdtempSync(join(tmpdir(), 'dewpoint-hf-empty-'));
    expect(
      await main(['train', '--preset', 'grpo-arith', '--checkpoint', empty, '--steps', '1', '--backend', 'cpu']),
    ).toBe(2);
    expect(err.join('')).toMatch(/--checkpoint .*: .*config\.json/);
  });
});
