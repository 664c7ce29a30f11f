/** The presets' measured speeds and the first-visit guide's suggestions (table.ts `speed`, `firstStep`). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PRESETS } from './table';

describe("the presets' measured speeds", () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

  it('are each quoted from the README (the figure appears there as cited)', () => {
    expect(readme).toContain('*0.17*'); // grpo-arith's median step in Chromium
    expect(readme).toContain('A step takes 0.52–0.63 s on wasm');
    expect(readme).toContain('A step takes 3–4 s here');
    expect(readme).toContain('A step takes ~1 s (0.8–1.4 s measured');
    expect(readme).toContain('took 0.47–0.65 s (grpo-calc), 0.8–1.4 s (ppo-calc),');
    expect(readme).toContain('0.7–1.2 s (grpo-guess)');
    expect(readme).toContain('took 7–16 s (10th–90th percentile'); // grpo-env
    expect(readme).toMatch(/flowgrpo-2d --seed S`, wasm, ~15 s/);
    expect(readme).toMatch(/this machine \(2 cores/);
    for (const p of PRESETS) if (p.speed) expect(p.speed.source, p.name).toMatch(/^README "/);
  });

  it('cover the presets the guide suggests, grpo-arith, flowgrpo-2d and ppo-arith in that order', () => {
    const first = PRESETS.filter((p) => p.firstStep).sort((a, b) => a.firstStep!.rank - b.firstStep!.rank);
    expect(first.map((p) => p.name)).toEqual(['grpo-arith', 'flowgrpo-2d', 'ppo-arith']);
    for (const p of first) expect(p.speed, p.name).toBeDefined();
  });
});
