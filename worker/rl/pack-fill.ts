/**
 * Writes placed chains into the `[rows, width]` arrays of a packed batch.
 *
 * Not the layout decision (pack-chains.ts) nor the advantages (pack.ts): this only copies ids,
 * log-probs, versions and the per-session figures to the positions the placement chose, and
 * derives the session-mean weights. Reference: dew `pack` (docs/rl-core.md "Packing").
 */
import { sessionMeanWeights } from './aggregate';
import type { ChainPlacement } from './pack-types';
import type { Session } from './types';
import { describeSession } from './validate';

interface FillInput {
  sessions: readonly Session[];
  chains: readonly ChainPlacement[];
  rows: number;
  width: number;
  /** Per input session: whether its sampled ids carry loss mass. */
  carries: readonly boolean[];
  /** Per input session: its advantage. */
  advantage: ArrayLike<number>;
}

export function fillArrays({ sessions, chains, rows, width, carries, advantage }: FillInput) {
  const n = rows * width;
  const inputIds = new Int32Array(n);
  const segmentIds = new Int32Array(n);
  const positions = new Int32Array(n);
  const responseMask = new Float64Array(n);
  const behaviorLogProbs = new Float64Array(n);
  const versions = new Int32Array(n).fill(-1);
  const callIndex = new Int32Array(n).fill(-1);
  const sessionIds = new Int32Array(n);
  const advantages = new Float64Array(n);
  const tokenRewards = new Float64Array(n);

  const inInputOrder = [...chains].sort((a, b) => a.session - b.session || a.firstCall - b.firstCall);
  const calls = inInputOrder.flatMap((ch) =>
    sessions[ch.session].calls
      .slice(ch.firstCall, ch.firstCall + ch.calls)
      .map((call, k) => ({ ch, k: ch.firstCall + k, call })),
  );
  const withRaw = calls.filter(({ call }) => call.rawLogProbs !== undefined).length;
  if (withRaw > 0 && withRaw < calls.length) {
    const { ch, k } = calls.find(({ call }) => call.rawLogProbs === undefined)!;
    throw new Error(
      `${describeSession(sessions[ch.session], ch.session)}, call ${k}: rawLogProbs is missing while ${withRaw} other calls in the batch have it; oldLogProbs needs all or none`,
    );
  }
  const oldLogProbs = withRaw > 0 ? new Float64Array(n) : null;
  const hasSupport = calls.some(({ call }) => call.support !== undefined);
  const kept: (ArrayLike<number> | undefined)[] = hasSupport ? new Array(n) : [];

  const lastSampled = new Map<number, { call: number; at: number }>();
  let realTokens = 0;
  for (const ch of chains) {
    const s = sessions[ch.session];
    const last = s.calls[ch.firstCall + ch.calls - 1];
    const base = ch.row * width + ch.offset;
    const a = carries[ch.session] ? advantage[ch.session] : 0;
    for (let j = 0; j < ch.length; j++) {
      inputIds[base + j] = j < last.promptIds.length ? last.promptIds[j] : last.sampledIds[j - last.promptIds.length];
      segmentIds[base + j] = ch.segment;
      positions[base + j] = j;
      sessionIds[base + j] = ch.session + 1;
      advantages[base + j] = a;
    }
    realTokens += ch.length;
    for (let k = ch.firstCall; k < ch.firstCall + ch.calls; k++) {
      const call = s.calls[k];
      const start = base + call.promptIds.length;
      for (let i = 0; i < call.sampledIds.length; i++) {
        const t = start + i;
        if (carries[ch.session]) responseMask[t] = 1;
        behaviorLogProbs[t] = call.behaviorLogProbs[i];
        if (oldLogProbs) oldLogProbs[t] = call.rawLogProbs![i];
        versions[t] = call.version;
        callIndex[t] = k;
        if (call.support) kept[t] = call.support[i];
      }
      if (call.sampledIds.length > 0 && carries[ch.session]) {
        const prev = lastSampled.get(ch.session);
        if (!prev || prev.call < k) lastSampled.set(ch.session, { call: k, at: start + call.sampledIds.length - 1 });
      }
    }
  }
  for (const [session, { at }] of lastSampled) tokenRewards[at] = sessions[session].reward as number;
  const sessionWeights = sessionMeanWeights(sessionIds, responseMask);

  let support: { offsets: Int32Array; ids: Int32Array } | null = null;
  if (hasSupport) {
    const offsets = new Int32Array(n + 1);
    for (let t = 0; t < n; t++) offsets[t + 1] = offsets[t] + (kept[t]?.length ?? 0);
    const ids = new Int32Array(offsets[n]);
    for (let t = 0; t < n; t++) if (kept[t]) ids.set(Array.from(kept[t]!), offsets[t]);
    support = { offsets, ids };
  }
  return {
    inputIds,
    segmentIds,
    positions,
    responseMask,
    behaviorLogProbs,
    oldLogProbs,
    versions,
    callIndex,
    sessionIds,
    advantages,
    tokenRewards,
    sessionWeights,
    support,
    realTokens,
  };
}
