/**
 * Delta-chain traces: how the prompt of each model call of a multi-turn episode is stored. Turn k's
 * prompt usually equals turn k−1's prompt + completion + the new tokens of the environment's
 * answer, so a trace stores only those new tokens (`promptDeltaIds`) and the `parentTraceId` it
 * extends; the full prompt is rebuilt on read by walking the chain from its root. Storage grows
 * linearly with the number of turns instead of quadratically.
 *
 * - `encodeTrace` classifies a call against the parent it is offered (`classifyCall`): it extends
 *   it, replays it (an identical resend: same prompt, same completion), or starts a new chain root
 *   and records why (`duplicate`, `prefix_changed`, `empty_delta`), at which index, and against
 *   which candidate.
 * - `resolveTraces` rebuilds every prompt, byte-exact, iteratively and memoised (each trace is
 *   built once from its parent's result: linear in the size of the output, any chain depth). A
 *   trace whose chain cannot be rebuilt (a parent absent from the records, a cycle, a repeated
 *   trace id, a malformed record, or an ancestor that is any of these) is flagged `ok: false` with
 *   the reason; nothing is ever filled in.
 * - `traceStats` measures the storage: stored tokens and bytes, unique token positions and the
 *   cost of storing every prompt in full.
 *
 * What this is not: not the journal (worker/episodes/journal.ts stores the records, with
 * checksums), not a tokenizer, and not a compressor of arbitrary sequences: a prompt that does not
 * extend its parent is stored whole, as a new root, not diffed.
 *
 * Reference: docs/rl-core.md "Journal and traces" (delta-chain traces).
 */

/** Why a call that was offered a parent did not extend it (and became a new chain root). */
export type ResetReason = 'duplicate' | 'prefix_changed' | 'empty_delta';

/** One model call stored as a delta on its parent trace. */
export interface TraceRecord {
  traceId: string;
  /** The trace this one extends; null for a chain root (the first turn, or a reset). */
  parentTraceId: string | null;
  /** Ids appended after the parent's prompt + completion; a root: its whole prompt; a replay: empty. */
  promptDeltaIds: number[];
  /** The call's sampled ids. */
  completionIds: number[];
  /** Why this call did not extend the parent it was offered (a new root): the reason and the first divergent index. */
  reset?: { reason: ResetReason; index: number; candidate: string };
  /** An identical resend of `replayOf` (same prompt, same completion): nothing stored but the reference. */
  replayOf?: string;
}

/** The candidate parent of a call, with its full (resolved) prompt and its completion. */
export interface TraceParent {
  traceId: string;
  promptIds: ArrayLike<number>;
  completionIds: ArrayLike<number>;
}

/** A trace's rebuilt prompt, or why it cannot be rebuilt. */
export type ResolvedTrace =
  | {
      ok: true;
      /** The full prompt of the call, byte-exact. Each trace owns its array. */
      promptIds: Int32Array;
      /** How many leading ids of `promptIds` came from ancestors: 0 for a root, all of them for a replay. */
      inherited: number;
      /** The traceId of the chain root. */
      root: string;
      /** Parent links from the root: 0 for a root. */
      depth: number;
    }
  | {
      ok: false;
      reason: string;
      /** The trace id absent from the records that breaks this chain, where that is the cause. */
      missing?: string;
    };

/** How a call relates to the parent it is offered (the rules of docs/rl-core.md "Journal and traces"). */
type CallRelation =
  /** The prompt is parent prompt + parent completion + at least one id: store `prompt[deltaStart:]`. */
  | { kind: 'extends'; deltaStart: number }
  /** Same prompt and same completion as the parent: an identical resend. */
  | { kind: 'replay' }
  /** Anything else: a new chain root, the reason, and the first index where the rule broke. */
  | { kind: 'reset'; reason: ResetReason; index: number };

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** The first index of `ids` that is not an int32 integer, or -1. Token ids are stored as Int32Array. */
function firstBadId(ids: ArrayLike<number>): number {
  for (let i = 0; i < ids.length; i++) {
    const v = ids[i];
    if (!Number.isInteger(v) || v < INT32_MIN || v > INT32_MAX) return i;
  }
  return -1;
}

/** `ids[start:]` as a plain number[]. */
function copyIds(ids: ArrayLike<number>, start: number): number[] {
  const out: number[] = [];
  for (let i = start; i < ids.length; i++) out.push(ids[i]);
  return out;
}

function sameIds(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Classifies a call (prompt `p`, completion `c`) against its candidate parent P, with
 * expected = Pp ++ Pc, in this order: extends (p starts with expected and is longer); replay
 * (p = Pp and c = Pc); reset `empty_delta` (p = expected, index = expected.length); reset
 * `duplicate` (p = Pp, c ≠ Pc, index = Pp.length); otherwise reset `prefix_changed` (index = the
 * first i with p[i] ≠ expected[i], or min(p.length, expected.length) when one is a prefix of the
 * other). When Pc is empty, p = Pp = expected: c = Pc is a replay, any other c is `empty_delta`.
 */
function classifyCall(
  promptIds: ArrayLike<number>,
  completionIds: ArrayLike<number>,
  parent: TraceParent,
): CallRelation {
  const pp = parent.promptIds;
  const pc = parent.completionIds;
  const expectedLength = pp.length + pc.length;
  const n = Math.min(promptIds.length, expectedLength);
  // First index where p leaves expected = pp ++ pc, without building expected.
  let m = 0;
  while (m < n && m < pp.length && promptIds[m] === pp[m]) m++;
  if (m === pp.length) while (m < n && promptIds[m] === pc[m - pp.length]) m++;

  if (m === expectedLength && promptIds.length > expectedLength) return { kind: 'extends', deltaStart: expectedLength };
  const promptIsParentPrompt = promptIds.length === pp.length && m >= pp.length;
  if (promptIsParentPrompt && sameIds(completionIds, pc)) return { kind: 'replay' };
  if (m === expectedLength && promptIds.length === expectedLength)
    return { kind: 'reset', reason: 'empty_delta', index: expectedLength };
  if (promptIsParentPrompt) return { kind: 'reset', reason: 'duplicate', index: pp.length };
  return { kind: 'reset', reason: 'prefix_changed', index: m };
}

/**
 * The record of one call: a delta on `parent` when the call extends it, a replay reference when it
 * is an identical resend, otherwise a new root carrying its whole prompt and the `reset` that says
 * why. `parent` null (the first call of an episode): a root with no `reset`. The record's arrays
 * are plain number[] copies. Throws on ids that are not int32 integers, or a parent with the same id.
 */
export function encodeTrace(
  traceId: string,
  promptIds: ArrayLike<number>,
  completionIds: ArrayLike<number>,
  parent: TraceParent | null,
): TraceRecord {
  for (const [name, ids] of [
    ['promptIds', promptIds],
    ['completionIds', completionIds],
  ] as const) {
    const bad = firstBadId(ids);
    if (bad >= 0)
      throw new Error(
        `encodeTrace '${traceId}': ${name}[${bad}] = ${ids[bad]} is not an int32 integer; token ids are stored as Int32Array`,
      );
  }
  const completion = copyIds(completionIds, 0);
  if (parent === null)
    return { traceId, parentTraceId: null, promptDeltaIds: copyIds(promptIds, 0), completionIds: completion };
  if (parent.traceId === traceId)
    throw new Error(
      `encodeTrace '${traceId}': the candidate parent has the same trace id; every call needs its own id`,
    );

  const rel = classifyCall(promptIds, completionIds, parent);
  switch (rel.kind) {
    case 'extends':
      return {
        traceId,
        parentTraceId: parent.traceId,
        promptDeltaIds: copyIds(promptIds, rel.deltaStart),
        completionIds: completion,
      };
    case 'replay':
      return {
        traceId,
        parentTraceId: parent.traceId,
        promptDeltaIds: [],
        completionIds: completion,
        replayOf: parent.traceId,
      };
    case 'reset':
      return {
        traceId,
        parentTraceId: null,
        promptDeltaIds: copyIds(promptIds, 0),
        completionIds: completion,
        reset: { reason: rel.reason, index: rel.index, candidate: parent.traceId },
      };
  }
}

/** Why a record cannot be used by itself, or null. */
function malformed(r: TraceRecord): string | null {
  for (const [name, ids] of [
    ['promptDeltaIds', r.promptDeltaIds],
    ['completionIds', r.completionIds],
  ] as const) {
    if (!Array.isArray(ids)) return `malformed trace '${r.traceId}': ${name} is not an array`;
    const bad = firstBadId(ids);
    if (bad >= 0)
      return `malformed trace '${r.traceId}': ${name}[${bad}] = ${String(ids[bad])} is not an int32 integer`;
  }
  if (r.replayOf !== undefined) {
    if (r.replayOf !== r.parentTraceId)
      return `malformed trace '${r.traceId}': replayOf '${r.replayOf}' is not its parent '${String(r.parentTraceId)}'`;
    if (r.promptDeltaIds.length > 0)
      return `malformed trace '${r.traceId}': a replay stores ${r.promptDeltaIds.length} prompt delta ids, expected 0`;
  }
  return null;
}

type Failure = Extract<ResolvedTrace, { ok: false }>;

/**
 * Rebuilds the full prompt of every trace in `records` (any order), keyed by traceId. A root's
 * prompt is its `promptDeltaIds`; an extension's is parent prompt ++ parent completion ++ delta; a
 * replay's is its parent's prompt. Iterative and memoised: each trace is built once, from its
 * parent's result, so the work is linear in the total length of the rebuilt prompts, for chains of
 * any depth. Unresolvable traces are flagged `ok: false`, and so is every descendant of one; the
 * reason names the trace that breaks the chain, and `missing` is set when that trace is absent.
 */
export function resolveTraces(records: readonly TraceRecord[]): Map<string, ResolvedTrace> {
  const byId = new Map<string, TraceRecord>();
  const out = new Map<string, ResolvedTrace>();
  for (const r of records) {
    if (byId.has(r.traceId))
      out.set(r.traceId, { ok: false, reason: `trace id '${r.traceId}' appears more than once in the records` });
    else byId.set(r.traceId, r);
  }

  const resolveOne = (r: TraceRecord): ResolvedTrace => {
    const bad = malformed(r);
    if (bad) return { ok: false, reason: bad };
    const pid = r.parentTraceId;
    if (pid === null) {
      if (r.replayOf !== undefined)
        return { ok: false, reason: `malformed trace '${r.traceId}': a root cannot be a replay` };
      return { ok: true, promptIds: Int32Array.from(r.promptDeltaIds), inherited: 0, root: r.traceId, depth: 0 };
    }
    const parent = out.get(pid);
    if (parent === undefined)
      return { ok: false, reason: `parent trace '${pid}' of '${r.traceId}' is not in the records`, missing: pid };
    if (!parent.ok) {
      // Keep the root cause (not a nested string): reasons stay short on long chains.
      const cause = parent.reason.startsWith('unresolved ancestor')
        ? parent.reason
        : `unresolved ancestor '${pid}': ${parent.reason}`;
      return parent.missing === undefined
        ? { ok: false, reason: cause }
        : { ok: false, reason: cause, missing: parent.missing };
    }
    const depth = parent.depth + 1;
    if (r.replayOf !== undefined)
      return {
        ok: true,
        promptIds: parent.promptIds.slice(),
        inherited: parent.promptIds.length,
        root: parent.root,
        depth,
      };
    const pc = byId.get(pid)!.completionIds;
    const pl = parent.promptIds.length;
    const promptIds = new Int32Array(pl + pc.length + r.promptDeltaIds.length);
    promptIds.set(parent.promptIds, 0);
    promptIds.set(pc, pl);
    promptIds.set(r.promptDeltaIds, pl + pc.length);
    return { ok: true, promptIds, inherited: pl + pc.length, root: parent.root, depth };
  };

  const onPath = new Map<string, number>(); // traceId -> index in `path`, for the walk in progress
  for (const start of records) {
    if (out.has(start.traceId)) continue;
    // Walk up to the first trace whose result is known (or a root, a missing parent, a cycle),
    // then build back down. Every trace on the path is settled here, so each is walked once.
    const path: TraceRecord[] = [];
    onPath.clear();
    let cur = start;
    let cycleFrom = -1;
    for (;;) {
      onPath.set(cur.traceId, path.length);
      path.push(cur);
      const pid = cur.parentTraceId;
      if (pid === null || out.has(pid)) break;
      const seen = onPath.get(pid);
      if (seen !== undefined) {
        cycleFrom = seen;
        break;
      }
      const next = byId.get(pid);
      if (next === undefined) break;
      cur = next;
    }
    let from = path.length - 1;
    if (cycleFrom >= 0) {
      const through = path[cycleFrom].traceId;
      for (let i = cycleFrom; i < path.length; i++) {
        out.set(path[i].traceId, {
          ok: false,
          reason: `parent links form a cycle through '${through}' (${path.length - cycleFrom} traces)`,
        } satisfies Failure);
      }
      from = cycleFrom - 1;
    }
    for (let i = from; i >= 0; i--) out.set(path[i].traceId, resolveOne(path[i]));
  }
  return out;
}

/** What a set of traces costs to store, against storing every prompt in full. */
interface TraceStats {
  /** Sum over records of promptDeltaIds.length + completionIds.length. */
  storedTokens: number;
  /** The stated encoding: 4 bytes per stored id plus the UTF-8 JSON of the other fields (traceId, parentTraceId, reset, replayOf). */
  storedBytes: number;
  /** Distinct token positions across the resolved sequences (prompt ++ completion of each resolved trace), i.e. the nodes of their prefix tree: for one unbroken chain, final prompt + final completion. */
  uniqueTokens: number;
  /** Sum over resolved traces of full prompt length + completion length: the cost of storing every prompt in full. */
  fullPromptTokens: number;
  /** The same encoding for full storage: 4 bytes per id plus the UTF-8 JSON of {traceId}, per resolved trace. */
  fullPromptBytes: number;
  /** Records whose chain did not resolve; they count in storedTokens/storedBytes only. */
  unresolved: number;
}

/**
 * Storage statistics of `records` (resolved with `resolveTraces` unless `resolved` is given).
 * Linear in the stored tokens: the prefix tree behind `uniqueTokens` is extended from each trace's
 * parent, never rebuilt from a full prompt.
 */
export function traceStats(
  records: readonly TraceRecord[],
  resolved: Map<string, ResolvedTrace> = resolveTraces(records),
): TraceStats {
  const utf8 = new TextEncoder();
  let storedTokens = 0;
  let storedBytes = 0;
  for (const r of records) {
    const ids = r.promptDeltaIds.length + r.completionIds.length;
    storedTokens += ids;
    const rest = { traceId: r.traceId, parentTraceId: r.parentTraceId, reset: r.reset, replayOf: r.replayOf };
    storedBytes += 4 * ids + utf8.encode(JSON.stringify(rest)).length;
  }

  // Resolved traces, parents before children (bucketed by depth), each seen once.
  const levels: TraceRecord[][] = [];
  const taken = new Set<string>();
  let fullPromptTokens = 0;
  let fullPromptBytes = 0;
  let resolvedCount = 0;
  for (const r of records) {
    const res = resolved.get(r.traceId);
    if (!res || !res.ok || taken.has(r.traceId)) continue;
    taken.add(r.traceId);
    resolvedCount++;
    (levels[res.depth] ??= []).push(r);
    const len = res.promptIds.length + r.completionIds.length;
    fullPromptTokens += len;
    fullPromptBytes += 4 * len + utf8.encode(JSON.stringify({ traceId: r.traceId })).length;
  }

  // Prefix tree of all resolved sequences; node 0 is the empty prefix.
  const kids: (Map<number, number> | undefined)[] = [undefined];
  const walk = (node: number, ids: readonly number[]): number => {
    for (const id of ids) {
      let m = kids[node];
      if (m === undefined) kids[node] = m = new Map();
      let next = m.get(id);
      if (next === undefined) {
        next = kids.length;
        kids.push(undefined);
        m.set(id, next);
      }
      node = next;
    }
    return node;
  };
  const promptEnd = new Map<string, number>();
  const seqEnd = new Map<string, number>();
  for (const level of levels) {
    for (const r of level ?? []) {
      const pid = r.parentTraceId;
      let pEnd: number;
      if (pid === null) pEnd = walk(0, r.promptDeltaIds);
      else if (r.replayOf !== undefined) pEnd = promptEnd.get(pid)!;
      else pEnd = walk(seqEnd.get(pid)!, r.promptDeltaIds);
      promptEnd.set(r.traceId, pEnd);
      seqEnd.set(r.traceId, walk(pEnd, r.completionIds));
    }
  }

  return {
    storedTokens,
    storedBytes,
    uniqueTokens: kids.length - 1,
    fullPromptTokens,
    fullPromptBytes,
    unresolved: records.length - resolvedCount,
  };
}
