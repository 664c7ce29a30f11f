/**
 * `bench pack`: sessions/s of the RL core's `pack` (strict call merging, first-fit decreasing, all
 * arrays and GRPO advantages) on seeded synthetic GRPO batches, and its packing efficiency against
 * the padding baseline of one session per row, measured in the same run.
 */
import { mulberry32 } from '../../kernels/common/random';
import type { Session } from '../../worker/rl/index';
import { pack } from '../../worker/rl/index';
import { median } from '../../worker/selftest';
import type { BenchArgs } from './args';

/** P prompts × G one-call sessions with prompt 6–12 ids and completion 4–24 ids. */
function syntheticBatch(P: number, G: number, seed: number): Session[] {
  const rand = mulberry32(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const sessions: Session[] = [];
  for (let p = 0; p < P; p++) {
    const prompt = Array.from({ length: int(6, 12) }, () => int(3, 40));
    for (let g = 0; g < G; g++) {
      const n = int(4, 24);
      sessions.push({
        task: `t${p}`,
        group: `t${p}`,
        sample: g,
        attempt: 0,
        status: 'completed',
        reward: rand() < 0.3 ? 1 : 0,
        calls: [
          {
            promptIds: prompt,
            sampledIds: Array.from({ length: n }, () => int(3, 40)),
            behaviorLogProbs: Array.from({ length: n }, () => -rand() * 3),
            finishReason: 'stop',
            version: 0,
          },
        ],
      });
    }
  }
  return sessions;
}

export async function benchPack(args: BenchArgs) {
  const runs = args.runs ?? 5;
  const rows: {
    P: number;
    G: number;
    width: number;
    sessionsPerS: number;
    efficiency: number;
    oneRowEfficiency: number;
    rowsNeeded: number;
    oneRowRows: number;
  }[] = [];
  for (const [P, G] of [
    [16, 8],
    [64, 8],
    [256, 8],
  ]) {
    const sessions = syntheticBatch(P, G, P * 31 + G);
    const width = 64;
    const times: number[] = [];
    let last: ReturnType<typeof pack> | null = null;
    for (let r = 0; r < runs; r++) {
      const t0 = performance.now();
      last = pack(sessions, width, { estimator: 'grpo' });
      times.push(performance.now() - t0);
    }
    if (!last || !last.ok) throw new Error('bench pack: a synthetic batch did not pack');
    const longest = Math.max(...sessions.map((s) => s.calls[0].promptIds.length + s.calls[0].sampledIds.length));
    const real = last.realTokens;
    rows.push({
      P,
      G,
      width,
      sessionsPerS: sessions.length / (median(times) / 1000),
      efficiency: last.efficiency,
      rowsNeeded: last.rowsNeeded,
      oneRowRows: sessions.length,
      oneRowEfficiency: real / (sessions.length * longest),
    });
  }
  const json = {
    bench: 'pack',
    runs,
    statistic: 'median wall time of pack()',
    baseline: 'one session per row, width = longest session',
    rows,
  };
  const table = [
    `pack (GRPO estimator, width 64), median of ${runs}`,
    '| P × G | sessions/s | rows (packed) | efficiency (packed) | rows (one per row) | efficiency (one per row) |',
    '|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.P} × ${r.G} | ${r.sessionsPerS.toFixed(0)} | ${r.rowsNeeded} | ` +
        `${(100 * r.efficiency).toFixed(1)}% | ${r.oneRowRows} | ${(100 * r.oneRowEfficiency).toFixed(1)}% |`,
    ),
  ].join('\n');
  return { table: `${table}\n`, json };
}
