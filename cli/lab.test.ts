/**
 * The mismatch lab (worker/presets/mismatch-lab.ts) through the CLI: each injection makes the gap
 * it says, measured by `mismatch/kl` where on-policy reads exactly 0 (cli/train-on-policy.test.ts),
 * and the trainer treats an injected sampler as it treats a lagging one: its old log-probs are its
 * own forward, so the first update's ratio is 1 (`rl/ppo_kl` 0) while `mismatch/kl` shows the gap.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LabRow } from '../worker/presets/mismatch-lab';
import { main } from './main';
import { capture } from './testing/capture';

afterEach(() => vi.restoreAllMocks());

async function lab(...args: string[]): Promise<{ code: number; rows: LabRow[]; err: string }> {
  const { out, err } = capture();
  const code = await main([
    'lab',
    'mismatch',
    '--steps',
    '2',
    '--eval-n',
    '10',
    '--backend',
    'wasm',
    '--json',
    ...args,
  ]);
  vi.restoreAllMocks();
  return { code, rows: code === 0 ? (JSON.parse(out.join('')) as { rows: LabRow[] }).rows : [], err: err.join('') };
}

describe('dewpoint lab mismatch', () => {
  it('injects the gap it names: bf16 weights a small one, a hotter sampler a larger one the hotter it is', async () => {
    const bf16 = await lab('--inject', 'bf16', '--corrections', 'none');
    expect(bf16.code).toBe(0);
    expect(bf16.rows[1].kl).not.toBe(0);
    expect(Math.abs(bf16.rows[1].kl)).toBeLessThan(1e-3);
    const warm = (await lab('--inject', 'temperature:1.2', '--corrections', 'none')).rows[1];
    const hot = await lab('--inject', 'temperature:1.5', '--corrections', 'none,trl-sequence-mask');
    expect(warm.kl).toBeGreaterThan(0);
    expect(hot.rows[1].kl).toBeGreaterThan(warm.kl);
    expect(hot.rows.map((r) => r.correction)).toEqual(['on-policy', 'none', 'trl-sequence-mask']);
    // The reference is on-policy by construction: exactly 0, the weights all 1 (ESS 1 up to verl's ε in its means).
    expect(hot.rows[0].kl).toBe(0);
    expect(hot.rows[0].ess).toBeCloseTo(1, 6);
    // The weights spread: the ESS falls below 1 under the gap.
    expect(hot.rows[2].ess).toBeLessThan(0.99);
    expect(hot.rows[2].shareWhat).toBe('masked');
    expect(hot.err).toMatch(
      /^lab mismatch: sampler at temperature 1\.5, uncorrected, grpo-arith seed 1, 2 steps per run, 2 corrections and the on-policy reference/,
    );
  }, 120_000);

  it('an injected sampler is rescored by the trainer: the first update starts at ratio 1 while mismatch/kl shows the gap', async () => {
    const { out } = capture();
    const config = join(mkdtempSync(join(tmpdir(), 'dewpoint-lab-')), 'config.json');
    writeFileSync(config, JSON.stringify({ preset: 'grpo-arith', samplerBf16: true, prompts: 4 }));
    expect(
      await main(['train', '--config', config, '--steps', '1', '--eval-every', '0', '--backend', 'cpu', '--json']),
    ).toBe(0);
    const [step] = out.map((l) => JSON.parse(l) as Record<string, number>);
    expect(step['rl/ppo_kl']).toBe(0);
    expect(step['mismatch/kl']).not.toBe(0);
  }, 60_000);

  it('refuses a wrong injection or correction, naming what it takes', async () => {
    const e1 = await lab('--inject', 'noise:2');
    expect(e1.code).toBe(2);
    expect(e1.err).toContain(
      `--inject: injection "noise:2" names no injection ('noise'); expected one of bf16, stale:K (K in 1..8)`,
    );
    const e2 = await lab('--inject', 'bf16', '--corrections', 'none,clip');
    expect(e2.code).toBe(2);
    expect(e2.err).toMatch(/--corrections: no correction 'clip'; allowed: none, tis, icepop/);
    const e3 = await lab();
    expect(e3.err).toMatch(/--inject is required: bf16, stale:K/);
  });
});
