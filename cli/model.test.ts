import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fixtureFolder } from '../worker/hf/node-fixture';
import { writeHfDir } from '../worker/hf/node-hf-dir';
import { trainingMemoryEstimate } from '../worker/hf/memory';
import { SFT_ARITH } from '../worker/train/sft';
import { main } from './main';
import { capture } from './testing/capture';

afterEach(() => vi.restoreAllMocks());

/** The test fixture (2 layers, d 64, vocab 32000, Llama tokenizer) written to a temporary folder. */
function folder(...args: Parameters<typeof fixtureFolder>): string {
  const dir = mkdtempSync(join(tmpdir(), 'dewpoint-model-'));
  writeHfDir(dir, fixtureFolder(...args).files);
  return dir;
}

describe('dewpoint model inspect', () => {
  it('--json: parameter count, dtypes, config and the training memory for the default (SFT) batch', async () => {
    const { out } = capture();
    const dir = folder({}, { dtype: 'BF16', shards: 2 });
    expect(await main(['model', 'inspect', dir, '--json'])).toBe(0);
    const info = JSON.parse(out.join(''));
    expect(info).toMatchObject({
      ok: true,
      dir,
      architecture: 'LlamaForCausalLM',
      parameterCount: 4_196_672,
      dtypes: ['BF16'],
      index: 'model.safetensors.index.json',
      config: {
        layers: 2,
        dModel: 64,
        heads: 4,
        kvHeads: 4,
        ffn: 176,
        vocab: 32000,
        maxSeq: 64,
        tiedEmbeddings: false,
      },
    });
    expect(info.weightFiles.map((w: { file: string }) => w.file)).toEqual([
      'model-00001-of-00002.safetensors',
      'model-00002-of-00002.safetensors',
    ]);
    expect(info.training).toEqual(trainingMemoryEstimate(info.config, SFT_ARITH.rows, SFT_ARITH.width));
    expect(info.training.total).toBe(16 * 4_196_672 + info.training.activations);
  });

  it('prints a summary; --rows/--seq set the batch', async () => {
    const { out } = capture();
    expect(await main(['model', 'inspect', folder({ tiedEmbeddings: true }), '--rows', '2', '--seq', '16'])).toBe(0);
    const text = out.join('');
    expect(text).toMatch(/: LlamaForCausalLM\n {2}parameters {2}2,148,672 \(F32\) in model\.safetensors\n/);
    expect(text).toContain(
      '  config      layers 2, hidden 64, heads 4 (kv 4), ffn 176, vocab 32000, max positions 64, tied ' +
        'embeddings true, rope_theta 10000, rms_norm_eps 0.00001\n',
    );
    expect(text).toMatch(
      / {2}training {4}[\d.]+ MiB in f32 for a 2 × 16 batch: weights 8\.2 MiB \+ grads 8\.2 MiB \+ AdamW moments 16\.4 MiB \+ activations [\d.]+ MiB\n/,
    );
  });

  it('a folder the loader refuses: exit code 1 and every problem with its file and field', async () => {
    const { out, err } = capture();
    const dir = folder();
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ architectures: ['GPT2LMHeadModel'], model_type: 'gpt2' }));
    expect(await main(['model', 'inspect', dir])).toBe(1);
    expect(err.join('')).toContain(
      `dewpoint model inspect: cannot load ${dir}:\n  config.json: architectures: got ["GPT2LMHeadModel"]; ` +
        `expected exactly one of LlamaForCausalLM or MistralForCausalLM`,
    );
    expect(out.join('')).toBe('');
    expect(await main(['model', 'inspect', dir, '--json'])).toBe(1);
    expect(JSON.parse(out.join('')).problems[0]).toMatchObject({ file: 'config.json', field: 'architectures' });
  });

  it('bad usage: exit code 2 naming what is wrong', async () => {
    const { err } = capture();
    expect(await main(['model'])).toBe(2);
    expect(await main(['model', 'inspect'])).toBe(2);
    expect(await main(['model', 'inspect', join(tmpdir(), 'no-such-dewpoint-model')])).toBe(2);
    expect(await main(['model', 'inspect', folder(), '--rows', '0'])).toBe(2);
    const message = err.join('');
    expect(message).toContain("dewpoint model: expected the subcommand 'inspect', got nothing");
    expect(message).toContain('dewpoint model inspect: the model folder DIR is required');
    expect(message).toMatch(/model folder '.*no-such-dewpoint-model' does not exist or is not a folder/);
    expect(message).toContain('dewpoint model inspect: --rows must be a positive integer, got 0');
  });
});

describe('dewpoint model inspect: the memory plan of a GRPO step on wasm', () => {
  it('prints each part and whether it fits; too many ids a pass does not, and names the idsPerPass that would', async () => {
    const dir = folder({ tiedEmbeddings: true });
    const fits = capture();
    expect(
      await main(['model', 'inspect', dir, '--prompts', '2', '--group', '2', '--new', '8', '--prompt-ids', '8']),
    ).toBe(0);
    const text = fits.out.join('');
    expect(text).toMatch(
      / {2}grpo step {3}\d\.\d\d GiB on wasm for 2 prompts × 2, 8 prompt ids, 8 new, idsPerPass \d+: fits the wasm memory \(4 GiB\)\n/,
    );
    expect(text).toContain(
      "              trained model: weights, gradients, AdamW m and v, the embedding lookup's own gradient (tied): 0.04 GiB\n",
    );
    vi.restoreAllMocks();
    const over = capture();
    const args = ['--prompts', '64', '--group', '64', '--prompt-ids', '32', '--new', '32', '--ids-per-pass', '1000000'];
    expect(await main(['model', 'inspect', dir, ...args, '--json'])).toBe(0);
    const info = JSON.parse(over.out.join(''));
    expect(info.grpo).toMatchObject({ prompts: 64, group: 64, idsPerPass: 1_000_000, fitsWasm: false });
    expect(info.grpo.total).toBeGreaterThan(2 ** 32);
    expect(info.grpo.problem).toMatch(
      /^the run needs [\d.]+ GiB, more than the wasm memory's 4\.00 GiB: .* idsPerPass \d+ or fewer would fit/,
    );
  });
  it('with --lora-rank: the frozen base (no reference copy) and the adapters with their optimizer state', async () => {
    const dir = folder({ tiedEmbeddings: true });
    const args = ['--prompts', '2', '--group', '2', '--new', '8', '--prompt-ids', '8'];
    const full = capture();
    expect(await main(['model', 'inspect', dir, ...args, '--json'])).toBe(0);
    const fullPlan = JSON.parse(full.out.join('')).grpo;
    vi.restoreAllMocks();
    const lora = capture();
    expect(await main(['model', 'inspect', dir, ...args, '--lora-rank', '2', '--json'])).toBe(0);
    const plan = JSON.parse(lora.out.join('')).grpo;
    expect(plan.loraRank).toBe(2);
    const part = (p: { parts: { part: string; bytes: number }[] }, start: string) =>
      p.parts.find((x) => x.part.startsWith(start))?.bytes;
    // The base once (weights only) instead of four times and the tied lookup's gradient (vocab 32000 × 64);
    // the adapters are far smaller than it.
    expect(part(plan, 'base model (frozen')).toBe((part(fullPlan, 'trained model')! - 4 * 32000 * 64) / 4);
    expect(part(plan, 'LoRA adapters (rank 2)')).toBeLessThan(part(plan, 'base model (frozen')!);
    expect(plan.total).toBeLessThan(fullPlan.total);
  });
});
