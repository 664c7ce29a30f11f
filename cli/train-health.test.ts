import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { main } from './main';
import { capture } from './testing/capture';

afterEach(() => vi.restoreAllMocks());

it('train --json prints health/* on every step line; a flag that fires is written to stderr with its reason', async () => {
  const { out, err } = capture();
  // grpo-calc's old configuration (temperature 1, one batch a step): its base seldom succeeds, most
  // groups carry no signal from the first steps on.
  const config = join(mkdtempSync(join(tmpdir(), 'dewpoint-health-')), 'old-calc.json');
  writeFileSync(config, JSON.stringify({ preset: 'grpo-calc', temperature: 1, filterGroups: null, evalSamples: null }));
  expect(
    await main(['train', '--config', config, '--steps', '6', '--eval-every', '0', '--backend', 'wasm', '--json']),
  ).toBe(0);
  const lines = out
    .join('')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, number>);
  expect(lines).toHaveLength(6);
  for (const l of lines) {
    expect(Object.keys(l).filter((k) => k.startsWith('health/'))).toHaveLength(9);
    expect(l['reward/group_std_mean']).toBeGreaterThanOrEqual(0);
    expect(l['response/distinct_frac']).toBeGreaterThan(0);
  }
  expect(lines[0]['health/low-signal']).toBe(0); // a window of 5 steps first
  expect(lines[5]['health/low-signal']).toBe(1);
  expect(err.join('')).toMatch(/health: low-signal from step 5: .*reward\/frac_reward_zero_std/);
});
