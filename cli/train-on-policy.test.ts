/**
 * On-policy by construction (issue 37 item 1): the sampler's log-probs are the trainer's bit for bit
 * on cpu and wasm (worker/rollout/invariance.test.ts), so a grpo-arith run reads `mismatch/kl`
 * exactly 0 on every step, and so does its first update's ratio (`rl/ppo_kl`). With two
 * mini-batches the old log-probs are the trainer's own rescoring (not the sampler's), so `mismatch/*`
 * there compares trainer with sampler, in one pass or in passes of a few rows (`idsPerPass`).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from './main';
import { capture } from './testing/capture';

afterEach(() => vi.restoreAllMocks());

async function run(backend: 'wasm' | 'cpu', options: Record<string, unknown>): Promise<Record<string, number>[]> {
  const { out } = capture();
  const config = join(mkdtempSync(join(tmpdir(), 'dewpoint-on-policy-')), 'config.json');
  writeFileSync(config, JSON.stringify({ preset: 'grpo-arith', ...options }));
  expect(
    await main(['train', '--config', config, '--steps', '3', '--eval-every', '0', '--backend', backend, '--json']),
  ).toBe(0);
  vi.restoreAllMocks();
  return out
    .join('')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, number>);
}

function expectOnPolicy(lines: Record<string, number>[]): void {
  expect(lines).toHaveLength(3);
  for (const l of lines) {
    expect(l['mismatch/kl'], `step ${l.step}`).toBe(0);
    expect(l['mismatch/k3_kl'], `step ${l.step}`).toBe(0);
    expect(l['mismatch/log_ppl_diff_max'], `step ${l.step}`).toBe(0);
    expect(l['mismatch/log_ppl_diff_min'], `step ${l.step}`).toBe(0);
  }
}

describe.each(['wasm', 'cpu'] as const)('grpo-arith on %s, 3 steps', (backend) => {
  it("reads mismatch/kl = 0 on every step, and the first update's ratio is exactly 1", async () => {
    const lines = await run(backend, {});
    expectOnPolicy(lines);
    for (const l of lines) expect(l['rl/ppo_kl'], `step ${l.step}`).toBe(0);
  });

  it('with two mini-batches (old log-probs rescored by the trainer) reads mismatch/kl = 0 on every step', async () => {
    expectOnPolicy(await run(backend, { miniBatches: 2 }));
  });
});

it('grpo-arith on wasm scored in passes of a few rows (idsPerPass) reads mismatch/kl = 0 on every step', async () => {
  // The whole run is pass-invariant too, gradients included (worker/train/pass-invariance.test.ts).
  expectOnPolicy(await run('wasm', { miniBatches: 2, idsPerPass: 3 * 64 }));
});
