import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../kernels/common/random';
import {
  encodeTrace,
  resolveTraces,
  traceStats,
  type ResetReason,
  type ResolvedTrace,
  type TraceParent,
  type TraceRecord,
} from './traces';

type Rand = () => number;
const int = (rand: Rand, lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
/** Token ids including the int32 extremes, so a lossy round trip cannot pass by accident. */
const EXTREMES = [0, 1, -1, 2 ** 31 - 1, -(2 ** 31), 50_257];
const tokens = (rand: Rand, n: number) =>
  Array.from({ length: n }, () => (rand() < 0.1 ? EXTREMES[int(rand, 0, EXTREMES.length - 1)] : int(rand, 2, 40)));

function ok(res: ResolvedTrace | undefined): Extract<ResolvedTrace, { ok: true }> {
  if (!res || !res.ok) throw new Error(`expected a resolved trace, got ${JSON.stringify(res)}`);
  return res;
}
function failed(res: ResolvedTrace | undefined): Extract<ResolvedTrace, { ok: false }> {
  if (!res || res.ok) throw new Error(`expected an unresolved trace, got ${res ? 'ok' : 'nothing'}`);
  return res;
}
function shuffle<T>(xs: T[], rand: Rand): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = int(rand, 0, i);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

/** A call as the caller sees it: the full prompt it sent and the completion it got. */
interface Call extends TraceParent {
  promptIds: number[];
  completionIds: number[];
}
type Kind = 'root' | 'extends' | 'replay' | ResetReason;

/** One append-only episode: a system prompt, then per turn an observation and a completion. */
function appendOnlyEpisode(
  turns: number,
  rand: Rand,
  sizes = { system: [6, 10], obs: [4, 12], completion: [6, 16] },
): { records: TraceRecord[]; calls: Call[] } {
  const calls: Call[] = [];
  const records: TraceRecord[] = [];
  let prev: Call | null = null;
  for (let t = 0; t < turns; t++) {
    const head: number[] = prev
      ? [...prev.promptIds, ...prev.completionIds]
      : tokens(rand, int(rand, sizes.system[0], sizes.system[1]));
    const call: Call = {
      traceId: `turn${t}`,
      promptIds: [...head, ...tokens(rand, int(rand, sizes.obs[0], sizes.obs[1]))],
      completionIds: tokens(rand, int(rand, sizes.completion[0], sizes.completion[1])),
    };
    records.push(encodeTrace(call.traceId, call.promptIds, call.completionIds, prev));
    calls.push(call);
    prev = call;
  }
  return { records, calls };
}

describe('encodeTrace: the rules against a parent P (Pp = [1,2,3], Pc = [4,5])', () => {
  const P: TraceParent = { traceId: 'P', promptIds: [1, 2, 3], completionIds: [4, 5] };

  it('extends: stores only the ids after Pp ++ Pc', () => {
    const r = encodeTrace('c', [1, 2, 3, 4, 5, 6, 7], [8], P);
    expect(r).toEqual({ traceId: 'c', parentTraceId: 'P', promptDeltaIds: [6, 7], completionIds: [8] });
    expect(r.reset).toBeUndefined();
    expect(r.replayOf).toBeUndefined();
  });

  it('an identical resend (p = Pp, c = Pc) is a replay, not a reset', () => {
    const r = encodeTrace('c', [1, 2, 3], [4, 5], P);
    expect(r).toEqual({ traceId: 'c', parentTraceId: 'P', promptDeltaIds: [], completionIds: [4, 5], replayOf: 'P' });
    expect(r.reset).toBeUndefined();
  });

  const resets: Array<[string, number[], number[], ResetReason, number]> = [
    ['p = Pp ++ Pc: no new ids', [1, 2, 3, 4, 5], [9], 'empty_delta', 5],
    ['p = Pp ++ Pc, even with c = Pc', [1, 2, 3, 4, 5], [4, 5], 'empty_delta', 5],
    ['p = Pp, c differs', [1, 2, 3], [4, 6], 'duplicate', 3],
    ['p = Pp, c empty', [1, 2, 3], [], 'duplicate', 3],
    ['a changed id inside Pp', [1, 9, 3, 4, 5, 6], [7], 'prefix_changed', 1],
    ['a changed id inside Pc', [1, 2, 3, 4, 0, 6], [7], 'prefix_changed', 4],
    ['the first id changed', [0, 2, 3, 4, 5, 6], [7], 'prefix_changed', 0],
    ['p a proper prefix of Pp ++ Pc, longer than Pp', [1, 2, 3, 4], [7], 'prefix_changed', 4],
    ['p a proper prefix of Pp', [1, 2], [7], 'prefix_changed', 2],
    ['p empty', [], [7], 'prefix_changed', 0],
  ];
  it.each(resets)('reset on %s: reason, index and candidate', (_name, p, c, reason, index) => {
    const r = encodeTrace('c', p, c, P);
    expect(r).toEqual({
      traceId: 'c',
      parentTraceId: null,
      promptDeltaIds: p,
      completionIds: c,
      reset: { reason, index, candidate: 'P' },
    });
    // A reset is a new root: it resolves to its own prompt, inheriting nothing.
    const res = ok(resolveTraces([r]).get('c'));
    expect(Array.from(res.promptIds)).toEqual(p);
    expect(res).toMatchObject({ inherited: 0, root: 'c', depth: 0 });
  });

  it('with an empty parent completion, p = Pp is a replay when c is empty too, empty_delta otherwise', () => {
    const Q: TraceParent = { traceId: 'Q', promptIds: [1, 2], completionIds: [] };
    expect(encodeTrace('a', [1, 2], [], Q).replayOf).toBe('Q');
    expect(encodeTrace('b', [1, 2], [3], Q).reset).toEqual({ reason: 'empty_delta', index: 2, candidate: 'Q' });
  });

  it('no parent: a root without a reset; arrays are plain copies of the input', () => {
    const prompt = Int32Array.from([5, 6, 7]);
    const r = encodeTrace('a', prompt, new Uint16Array([8]), null);
    expect(r).toEqual({ traceId: 'a', parentTraceId: null, promptDeltaIds: [5, 6, 7], completionIds: [8] });
    expect(Array.isArray(r.promptDeltaIds) && Array.isArray(r.completionIds)).toBe(true);
    prompt[0] = 99;
    expect(r.promptDeltaIds[0]).toBe(5);
    const child = encodeTrace('b', Int32Array.from([5, 6, 7, 8, 9]), [1], {
      traceId: 'a',
      promptIds: [5, 6, 7],
      completionIds: [8],
    });
    expect(Array.isArray(child.promptDeltaIds)).toBe(true);
    expect(child.promptDeltaIds).toEqual([9]);
  });

  it('refuses ids that are not int32 integers, and a parent with the same id', () => {
    expect(() => encodeTrace('a', [1, 2.5], [], null)).toThrow(/promptIds\[1\] = 2.5/);
    expect(() => encodeTrace('a', [1], [2 ** 31], null)).toThrow(/completionIds\[0\]/);
    expect(() => encodeTrace('P', [1, 2, 3, 4, 5, 6], [], P)).toThrow(/same trace id/);
  });
});

describe('replays', () => {
  it('resolve to the parent prompt, inherit all of it, and chain on (a replay of a replay, a child of a replay)', () => {
    const a = encodeTrace('a', [1, 2], [3], null);
    const b = encodeTrace('b', [1, 2, 3, 4], [5, 6], { traceId: 'a', promptIds: [1, 2], completionIds: [3] });
    const r1 = encodeTrace('r1', [1, 2, 3, 4], [5, 6], {
      traceId: 'b',
      promptIds: [1, 2, 3, 4],
      completionIds: [5, 6],
    });
    const r2 = encodeTrace('r2', [1, 2, 3, 4], [5, 6], {
      traceId: 'r1',
      promptIds: [1, 2, 3, 4],
      completionIds: [5, 6],
    });
    const c = encodeTrace('c', [1, 2, 3, 4, 5, 6, 7], [8], {
      traceId: 'r2',
      promptIds: [1, 2, 3, 4],
      completionIds: [5, 6],
    });
    expect([r1.replayOf, r2.replayOf, c.replayOf]).toEqual(['b', 'r1', undefined]);
    expect(c.promptDeltaIds).toEqual([7]);
    const res = resolveTraces([c, r2, r1, b, a]);
    for (const id of ['r1', 'r2']) {
      const t = ok(res.get(id));
      expect(Array.from(t.promptIds)).toEqual([1, 2, 3, 4]);
      expect(t.inherited).toBe(4);
      expect(t.root).toBe('a');
    }
    expect(ok(res.get('r2')).depth).toBe(3);
    expect(ok(res.get('c'))).toMatchObject({ inherited: 6, depth: 4, root: 'a' });
    expect(Array.from(ok(res.get('c')).promptIds)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // A replay stores its completion and a reference, nothing else, and adds no unique position.
    const stats = traceStats([a, b, r1, r2, c]);
    expect(stats.storedTokens).toBe(3 + 3 + 2 + 2 + 2); // a, b = [4] + [5, 6], r1, r2, c = [7] + [8]
    expect(stats.uniqueTokens).toBe(8);
  });

  it('a replay whose prompt is not its parent is flagged as malformed', () => {
    const a = encodeTrace('a', [1], [2], null);
    const bad: TraceRecord = {
      traceId: 'r',
      parentTraceId: 'a',
      promptDeltaIds: [3],
      completionIds: [2],
      replayOf: 'a',
    };
    const wrongRef: TraceRecord = {
      traceId: 's',
      parentTraceId: 'a',
      promptDeltaIds: [],
      completionIds: [2],
      replayOf: 'x',
    };
    const res = resolveTraces([a, bad, wrongRef]);
    expect(failed(res.get('r')).reason).toMatch(/replay stores 1 prompt delta/);
    expect(failed(res.get('s')).reason).toMatch(/replayOf 'x' is not its parent 'a'/);
  });
});

describe('round trips: random chains with extensions, branches, replays and every reset, byte-exact', () => {
  /** Random calls, each offered a random earlier call (or none) as parent; the kind is chosen first, the prompt built to match. */
  function randomCalls(n: number, seed: number) {
    const rand = mulberry32(seed);
    const calls: Call[] = [];
    const kinds: Kind[] = [];
    const parents: (Call | null)[] = [];
    const resetIndex: number[] = [];
    for (let i = 0; i < n; i++) {
      const P =
        calls.length && rand() < 0.95 ? calls[calls.length - 1 - Math.min(calls.length - 1, int(rand, 0, 3))] : null;
      const kind: Kind =
        P === null
          ? 'root'
          : (['extends', 'extends', 'extends', 'replay', 'duplicate', 'empty_delta', 'prefix_changed'] as const)[
              int(rand, 0, 6)
            ];
      let promptIds: number[];
      let completionIds = tokens(rand, int(rand, 1, 6));
      let index = -1;
      if (P === null) promptIds = tokens(rand, int(rand, 1, 8));
      else {
        const expected = [...P.promptIds, ...P.completionIds];
        if (kind === 'extends') promptIds = [...expected, ...tokens(rand, int(rand, 1, 5))];
        else if (kind === 'replay') [promptIds, completionIds] = [[...P.promptIds], [...P.completionIds]];
        else if (kind === 'duplicate') {
          promptIds = [...P.promptIds];
          if (
            completionIds.length === P.completionIds.length &&
            completionIds.every((v, j) => v === P.completionIds[j])
          )
            completionIds.push(7);
          index = P.promptIds.length;
        } else if (kind === 'empty_delta') {
          promptIds = expected;
          index = expected.length;
        } else {
          index = int(rand, 0, expected.length - 1);
          promptIds = [...expected, ...tokens(rand, int(rand, 0, 4))];
          promptIds[index] = expected[index] === 41 ? 42 : 41; // ids are never 41/42 otherwise
        }
      }
      calls.push({ traceId: `t${i}`, promptIds, completionIds });
      kinds.push(kind);
      parents.push(P);
      resetIndex.push(index);
    }
    return { calls, kinds, parents, resetIndex };
  }

  for (const seed of [1, 2, 3, 0xdead]) {
    it(`seed ${seed}: 400 calls encode to the chosen kind and resolve to the exact prompt, in any order and through JSON`, () => {
      const { calls, kinds, parents, resetIndex } = randomCalls(400, seed);
      const records = calls.map((c, i) => encodeTrace(c.traceId, c.promptIds, c.completionIds, parents[i]));

      const seen = new Map<Kind, number>();
      records.forEach((r, i) => {
        const kind: Kind = r.reset ? r.reset.reason : r.replayOf ? 'replay' : r.parentTraceId ? 'extends' : 'root';
        expect(kind, `call ${i}`).toBe(kinds[i]);
        seen.set(kind, (seen.get(kind) ?? 0) + 1);
        if (r.reset)
          expect(r.reset, `call ${i}`).toEqual({
            reason: kinds[i],
            index: resetIndex[i],
            candidate: parents[i]!.traceId,
          });
      });
      // Every kind occurs, so the round trip below covers each.
      for (const k of ['root', 'extends', 'replay', 'duplicate', 'empty_delta', 'prefix_changed'] as const)
        expect(seen.get(k) ?? 0, k).toBeGreaterThan(0);

      const rand = mulberry32(seed + 1000);
      for (const input of [
        records,
        shuffle(records, rand),
        JSON.parse(JSON.stringify(shuffle(records, rand))) as TraceRecord[],
      ]) {
        const res = resolveTraces(input);
        expect(res.size).toBe(calls.length);
        calls.forEach((c, i) => {
          const t = ok(res.get(c.traceId));
          expect(t.promptIds, c.traceId).toEqual(Int32Array.from(c.promptIds));
          const P = parents[i];
          const inherited =
            kinds[i] === 'extends'
              ? P!.promptIds.length + P!.completionIds.length
              : kinds[i] === 'replay'
                ? c.promptIds.length
                : 0;
          expect(t.inherited, c.traceId).toBe(inherited);
          if (kinds[i] === 'extends' || kinds[i] === 'replay') {
            const pt = ok(res.get(P!.traceId));
            expect([t.depth, t.root]).toEqual([pt.depth + 1, pt.root]);
          } else expect([t.depth, t.root]).toEqual([0, c.traceId]);
        });
      }
    });
  }

  it('a 1000-turn chain resolves byte-exact at depth 999, and each prompt is its own array', () => {
    const { records, calls } = appendOnlyEpisode(1000, mulberry32(5), {
      system: [1, 3],
      obs: [1, 2],
      completion: [1, 2],
    });
    const res = resolveTraces([...records].reverse());
    const last = ok(res.get('turn999'));
    expect(last.depth).toBe(999);
    expect(last.promptIds).toEqual(Int32Array.from(calls[999].promptIds));
    ok(res.get('turn0')).promptIds[0] = 12345;
    expect(ok(res.get('turn1')).promptIds[0]).toBe(calls[1].promptIds[0]);
  });
});

describe('unresolvable chains are flagged, never filled in', () => {
  it('a missing parent flags its child and every descendant with the missing id', () => {
    const { records } = appendOnlyEpisode(6, mulberry32(11));
    const kept = records.filter((r) => r.traceId !== 'turn2');
    const res = resolveTraces(kept);
    ok(res.get('turn0'));
    ok(res.get('turn1'));
    expect(res.has('turn2')).toBe(false);
    for (const id of ['turn3', 'turn4', 'turn5']) {
      const f = failed(res.get(id));
      expect(f.missing, id).toBe('turn2');
      expect(f.reason, id).toContain("'turn2'");
    }
    expect(failed(res.get('turn3')).reason).toBe("parent trace 'turn2' of 'turn3' is not in the records");
    const stats = traceStats(kept);
    expect(stats.unresolved).toBe(3);
    // Only resolved sequences count as unique or full; turn1 is the last one: its prompt + completion.
    const t1 = ok(res.get('turn1'));
    expect(stats.uniqueTokens).toBe(t1.promptIds.length + records[1].completionIds.length);
  });

  it('a 100 000-trace chain over a missing root is flagged without recursion', () => {
    const records: TraceRecord[] = Array.from({ length: 100_000 }, (_, i) => ({
      traceId: `x${i}`,
      parentTraceId: `x${i - 1}`,
      promptDeltaIds: [i % 7],
      completionIds: [],
    }));
    const res = resolveTraces(records);
    expect(failed(res.get('x99999')).missing).toBe('x-1');
    expect(failed(res.get('x0')).missing).toBe('x-1');
  });

  it('cycles, repeated ids and malformed records are flagged, with their descendants', () => {
    const rec = (traceId: string, parentTraceId: string | null, promptDeltaIds: number[] = [1]): TraceRecord => ({
      traceId,
      parentTraceId,
      promptDeltaIds,
      completionIds: [2],
    });
    const records = [
      rec('x', 'y'),
      rec('y', 'x'),
      rec('z', 'x'), // a two-trace cycle and a child of it
      rec('s', 's'), // a self-loop
      rec('d', null),
      rec('d', null),
      rec('dc', 'd'), // a repeated id and a child of it
      rec('m', null, [1, 0.5]),
      rec('mc', 'm'), // a malformed id and a child of it
      rec('fine', null),
      rec('fine2', 'fine'),
    ];
    const res = resolveTraces(records);
    for (const id of ['x', 'y', 's']) expect(failed(res.get(id)).reason, id).toMatch(/cycle through/);
    expect(failed(res.get('z')).reason).toMatch(/unresolved ancestor 'x'.*cycle/);
    expect(failed(res.get('d')).reason).toMatch(/'d' appears more than once/);
    expect(failed(res.get('dc')).reason).toMatch(/unresolved ancestor 'd'/);
    expect(failed(res.get('m')).reason).toMatch(/promptDeltaIds\[1\] = 0.5/);
    expect(failed(res.get('mc')).reason).toMatch(/unresolved ancestor 'm'/);
    expect(Array.from(ok(res.get('fine2')).promptIds)).toEqual([1, 2, 1]);
    expect(traceStats(records).unresolved).toBe(9);
  });
});

describe('storage: linear in turns, against quadratic full prompts', () => {
  it('fixed sizes: stored = unique = S + 16n, full = nS + 8n(n + 1) (system S = 8, observation 8, completion 8)', () => {
    const rand = mulberry32(3);
    for (const n of [1, 10, 50]) {
      const { records } = appendOnlyEpisode(n, rand, { system: [8, 8], obs: [8, 8], completion: [8, 8] });
      const s = traceStats(records);
      expect(s).toMatchObject({
        storedTokens: 8 + 16 * n,
        uniqueTokens: 8 + 16 * n,
        fullPromptTokens: n * 8 + 8 * n * (n + 1),
        unresolved: 0,
      });
    }
  });

  it('a 50-turn append-only episode stores exactly its unique tokens; full storage grows quadratically', () => {
    const s25 = traceStats(appendOnlyEpisode(25, mulberry32(7)).records);
    const { records, calls } = appendOnlyEpisode(50, mulberry32(7));
    const s50 = traceStats(records);
    const last = calls[49];
    expect(s50.uniqueTokens).toBe(last.promptIds.length + last.completionIds.length);
    expect(s50.storedTokens).toBe(s50.uniqueTokens);
    expect(s50.storedTokens / s25.storedTokens).toBeLessThan(2.2); // linear: about 2× for 2× the turns
    expect(s50.fullPromptTokens / s25.fullPromptTokens).toBeGreaterThan(3.5); // quadratic: about 4×
    expect(s50.fullPromptTokens / s50.storedTokens).toBeGreaterThan(15);
    expect(s50.fullPromptBytes / s50.storedBytes).toBeGreaterThan(10);
  });

  it('a 50-turn episode with a retry, an edited observation and a resend stores at most 1.2× its unique tokens', () => {
    const rand = mulberry32(9);
    const records: TraceRecord[] = [];
    /** Encodes `call` against `parent`; the episode continues from `call`. */
    const push = (call: Call, parent: Call | null): Call => {
      records.push(encodeTrace(call.traceId, call.promptIds, call.completionIds, parent));
      return call;
    };
    let prev: Call | null = null;
    for (let t = 0; t < 50; t++) {
      const head = prev ? [...prev.promptIds, ...prev.completionIds] : tokens(rand, 8);
      const cur = push(
        {
          traceId: `turn${t}`,
          promptIds: [...head, ...tokens(rand, int(rand, 4, 12))],
          completionIds: tokens(rand, int(rand, 6, 16)),
        },
        prev,
      );
      prev = cur;
      if (t === 2)
        prev = push({ traceId: 'retry2', promptIds: cur.promptIds, completionIds: [...cur.completionIds, 3] }, cur); // duplicate
      if (t === 4) {
        const edited = [...cur.promptIds];
        edited[edited.length - 2] = 41; // the environment rewrote its last answer: prefix_changed
        prev = push({ traceId: 'edit4', promptIds: edited, completionIds: tokens(rand, 8) }, cur);
      }
      if (t === 30)
        prev = push({ traceId: 'resend30', promptIds: cur.promptIds, completionIds: cur.completionIds }, cur); // replay
    }
    expect(records.map((r) => r.reset?.reason ?? (r.replayOf ? 'replay' : null)).filter(Boolean)).toEqual([
      'duplicate',
      'prefix_changed',
      'replay',
    ]);
    const res = resolveTraces(records);
    expect([...res.values()].every((r) => r.ok)).toBe(true);
    const s = traceStats(records, res);
    const ratio = s.storedTokens / s.uniqueTokens;
    expect(ratio).toBeGreaterThan(1); // the resets stored their whole prompts
    expect(ratio).toBeLessThanOrEqual(1.2);
  });

  it('unique positions are the prefix tree of the resolved sequences; bytes follow the stated encoding', () => {
    const r = encodeTrace('r', [1, 2], [3], null);
    const R = { traceId: 'r', promptIds: [1, 2], completionIds: [3] };
    const a = encodeTrace('a', [1, 2, 3, 4, 5], [6], R);
    const b = encodeTrace('b', [1, 2, 3, 4, 7], [8], R); // a sibling of a: shares the position of 4
    const s = traceStats([r, a, b]);
    expect(s).toEqual({
      storedTokens: 9,
      uniqueTokens: 8, // 1 2 3 | 4 5 6 | 7 8
      fullPromptTokens: 3 + 6 + 6,
      storedBytes:
        4 * 9 + '{"traceId":"r","parentTraceId":null}'.length + 2 * '{"traceId":"a","parentTraceId":"r"}'.length,
      fullPromptBytes: 4 * 15 + 3 * '{"traceId":"r"}'.length,
      unresolved: 0,
    });
  });
});
