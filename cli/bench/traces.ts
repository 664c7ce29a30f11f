/**
 * `bench traces`: what delta-chain traces (worker/episodes/traces.ts) store for seeded synthetic
 * append-only episodes of 10, 50 and 200 turns (a 6–10 id system prompt, then per turn an
 * observation of 4–12 ids and a completion of 6–16 ids), against storing every prompt in full,
 * and how long encoding every turn and resolving the episode take (median over runs). Bytes follow
 * the encoding stated in `traceStats`: 4 bytes per id plus the JSON of the other fields.
 */
import { mulberry32 } from '../../kernels/common/random';
import {
  encodeTrace,
  resolveTraces,
  traceStats,
  type ResolvedTrace,
  type TraceParent,
  type TraceRecord,
} from '../../worker/episodes/traces';
import { median } from '../../worker/selftest';
import type { BenchArgs } from './args';

/** The full prompt and completion of every call of one append-only episode. */
function syntheticEpisode(turns: number, seed: number): TraceParent[] {
  const rand = mulberry32(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const ids = (n: number) => Array.from({ length: n }, () => int(3, 50_000));
  const calls: TraceParent[] = [];
  let head = ids(int(6, 10));
  for (let t = 0; t < turns; t++) {
    const promptIds = [...head, ...ids(int(4, 12))];
    const completionIds = ids(int(6, 16));
    calls.push({ traceId: `turn${t}`, promptIds, completionIds });
    head = [...promptIds, ...completionIds];
  }
  return calls;
}

function encodeEpisode(calls: readonly TraceParent[]): TraceRecord[] {
  return calls.map((c, t) => encodeTrace(c.traceId, c.promptIds, c.completionIds, t > 0 ? calls[t - 1] : null));
}

export async function benchTraces(args: BenchArgs) {
  const runs = args.runs ?? 7;
  const rows: {
    turns: number;
    storedTokens: number;
    storedBytes: number;
    uniqueTokens: number;
    fullPromptTokens: number;
    fullPromptBytes: number;
    storedOverUnique: number;
    fullOverStored: number;
    encodeMs: number;
    resolveMs: number;
  }[] = [];
  for (const turns of [10, 50, 200]) {
    const calls = syntheticEpisode(turns, 1000 + turns);
    const encodeTimes: number[] = [];
    const resolveTimes: number[] = [];
    let records: TraceRecord[] = [];
    let resolved = new Map<string, ResolvedTrace>();
    for (let r = 0; r < runs; r++) {
      const t0 = performance.now();
      records = encodeEpisode(calls);
      const t1 = performance.now();
      resolved = resolveTraces(records);
      encodeTimes.push(t1 - t0);
      resolveTimes.push(performance.now() - t1);
    }
    // The bench is only worth its numbers if the round trip is exact.
    calls.forEach((c) => {
      const res = resolved.get(c.traceId);
      if (
        !res ||
        !res.ok ||
        res.promptIds.length !== c.promptIds.length ||
        res.promptIds.some((v, i) => v !== c.promptIds[i])
      ) {
        throw new Error(`bench traces: ${c.traceId} of the ${turns}-turn episode did not round-trip`);
      }
    });
    const s = traceStats(records, resolved);
    rows.push({
      turns,
      storedTokens: s.storedTokens,
      storedBytes: s.storedBytes,
      uniqueTokens: s.uniqueTokens,
      fullPromptTokens: s.fullPromptTokens,
      fullPromptBytes: s.fullPromptBytes,
      storedOverUnique: s.storedTokens / s.uniqueTokens,
      fullOverStored: s.fullPromptTokens / s.storedTokens,
      encodeMs: median(encodeTimes),
      resolveMs: median(resolveTimes),
    });
  }
  const json = {
    bench: 'traces',
    runs,
    statistic: 'median wall time of encoding every turn (encodeTrace) and of resolveTraces, per episode',
    episode: 'append-only: system prompt 6–10 ids, per turn observation 4–12 ids and completion 6–16 ids',
    bytes: '4 bytes per id + UTF-8 JSON of the other fields',
    rows,
  };
  const table = [
    `traces (one seeded append-only episode per size), median of ${runs}`,
    '| turns | stored tokens | stored bytes | unique tokens | full-prompt tokens | full-prompt bytes | stored / unique | full / stored | encode ms | resolve ms |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.turns} | ${r.storedTokens} | ${r.storedBytes} | ${r.uniqueTokens} | ${r.fullPromptTokens} | ${r.fullPromptBytes} | ${r.storedOverUnique.toFixed(2)} | ${r.fullOverStored.toFixed(1)} | ${r.encodeMs.toFixed(3)} | ${r.resolveMs.toFixed(3)} |`,
    ),
  ].join('\n');
  return { table: `${table}\n`, json };
}
