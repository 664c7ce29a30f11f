/**
 * One step's sessions as one compact record for the store: per-session and per-call scalars as
 * plain objects, and every call's ids and log-probs concatenated into four typed arrays, one per
 * column (IndexedDB keeps a typed array as its bytes; four columns per step beat four arrays per
 * call). Log-probs stay float64, as sampled: they become the old log-probs of the objective, so a
 * replay must read the same numbers. Top-k/top-p support sets are not kept.
 */
import type { SessionRecord } from '../contract/records';
import type { Session } from '../rl/types';

export interface SessionsRow {
  sessions: (Omit<SessionRecord, 'calls'> & {
    calls: { finishReason: 'stop' | 'length'; version: number; prompt: number; sampled: number; raw: boolean }[];
  })[];
  promptIds: Int32Array;
  sampledIds: Int32Array;
  behaviorLogProbs: Float64Array;
  /** 0 where a call did not record raw log-probs (its `raw` is false). */
  rawLogProbs: Float64Array;
}

export function encodeSessions(sessions: readonly Session[]): SessionsRow {
  const calls = sessions.flatMap((s) => s.calls);
  const prompts = calls.reduce((n, c) => n + c.promptIds.length, 0);
  const sampled = calls.reduce((n, c) => n + c.sampledIds.length, 0);
  const row: SessionsRow = {
    sessions: [],
    promptIds: new Int32Array(prompts),
    sampledIds: new Int32Array(sampled),
    behaviorLogProbs: new Float64Array(sampled),
    rawLogProbs: new Float64Array(sampled),
  };
  let [p, q] = [0, 0];
  for (const s of sessions) {
    row.sessions.push({
      task: s.task,
      group: s.group,
      sample: s.sample,
      attempt: s.attempt,
      status: s.status,
      reward: s.reward,
      components: { ...s.components },
      ...(s.termination ? { termination: s.termination } : {}),
      ...(s.detail !== undefined ? { detail: s.detail } : {}),
      ...(s.cases ? { cases: s.cases.map((c) => ({ ...c })) } : {}),
      ...(s.critic
        ? {
            critic: {
              values: [...s.critic.values],
              returns: [...s.critic.returns],
              advantages: [...s.critic.advantages],
            },
          }
        : {}),
      calls: s.calls.map((c) => {
        if (
          c.behaviorLogProbs.length !== c.sampledIds.length ||
          (c.rawLogProbs && c.rawLogProbs.length !== c.sampledIds.length)
        ) {
          throw new Error(
            `encodeSessions: session ${s.task}#${s.sample} has ${c.sampledIds.length} sampled ids but ` +
              `${c.behaviorLogProbs.length} behavior / ${c.rawLogProbs?.length ?? '–'} raw log-probs`,
          );
        }
        row.promptIds.set(c.promptIds, p);
        row.sampledIds.set(c.sampledIds, q);
        row.behaviorLogProbs.set(c.behaviorLogProbs, q);
        if (c.rawLogProbs) row.rawLogProbs.set(c.rawLogProbs, q);
        p += c.promptIds.length;
        q += c.sampledIds.length;
        return {
          finishReason: c.finishReason,
          version: c.version,
          prompt: c.promptIds.length,
          sampled: c.sampledIds.length,
          raw: !!c.rawLogProbs,
        };
      }),
    });
  }
  return row;
}

export function decodeSessions(row: SessionsRow): SessionRecord[] {
  let [p, q] = [0, 0];
  return row.sessions.map(({ calls, ...s }) => ({
    ...s,
    calls: calls.map((c) => {
      const call = {
        promptIds: row.promptIds.slice(p, p + c.prompt),
        sampledIds: row.sampledIds.slice(q, q + c.sampled),
        behaviorLogProbs: row.behaviorLogProbs.slice(q, q + c.sampled),
        rawLogProbs: c.raw ? row.rawLogProbs.slice(q, q + c.sampled) : null,
        finishReason: c.finishReason,
        version: c.version,
      };
      p += c.prompt;
      q += c.sampled;
      return call;
    }),
  }));
}
