/**
 * Boundary checks for calls and sessions before they reach the packer: every refusal is an Error
 * whose message names the session, the call and the index at fault, with the bad value and what
 * was expected.
 *
 * Not a vocabulary check (upper bounds on ids belong to the model-aware caller, as in dew's
 * `Action`) and not a reward check beyond "finite when trainable". Reference: the invariants dew's
 * `Call`/`Session`/`Action` dataclasses state (docs/rl-core.md "Data model").
 */
import {
  AGENT_OUTCOMES,
  INFRASTRUCTURE_FAILURES,
  STATUSES,
  statusOf,
  trainable,
  type Call,
  type Session,
} from './types';

/** `session 3 (task "a", group "g", sample 1, attempt 0)`: how messages name a session. */
export function describeSession(session: Session, index: number): string {
  return `session ${index} (task ${JSON.stringify(session.task)}, group ${JSON.stringify(session.group)}, sample ${session.sample}, attempt ${session.attempt})`;
}

function checkIds(name: string, ids: ArrayLike<number> | undefined, where: string): void {
  if (ids == null || typeof ids.length !== 'number')
    throw new Error(`${where}: ${name} is missing; expected an array of ids`);
  for (let k = 0; k < ids.length; k++) {
    const v = ids[k];
    if (!Number.isInteger(v) || v < 0)
      throw new Error(`${where}, index ${k}: ${name}[${k}] = ${v}: expected a non-negative integer id`);
  }
}

function checkLogProbs(name: string, lp: ArrayLike<number>, n: number, where: string): void {
  if (lp == null || typeof lp.length !== 'number')
    throw new Error(`${where}: ${name} is missing; expected ${n} log-probabilities`);
  if (lp.length !== n) {
    const k = Math.min(lp.length, n);
    throw new Error(
      `${where}, index ${k}: ${name} has ${lp.length} entries but sampledIds has ${n}; expected one log-probability per sampled id`,
    );
  }
  for (let k = 0; k < n; k++) {
    if (!Number.isFinite(lp[k])) {
      throw new Error(
        `${where}, index ${k}: ${name}[${k}] = ${lp[k]}: expected a finite log-probability of a sampled id`,
      );
    }
  }
}

/** Throws unless `call` is well formed; `where` names it (`session 3 (...), call 2`). */
export function validateCall(call: Call, where: string): void {
  checkIds('promptIds', call.promptIds, where);
  checkIds('sampledIds', call.sampledIds, where);
  if (call.promptIds.length === 0) {
    throw new Error(
      `${where}, index 0: promptIds is empty; a sampled id needs at least one context id to be scored from`,
    );
  }
  const n = call.sampledIds.length;
  checkLogProbs('behaviorLogProbs', call.behaviorLogProbs, n, where);
  if (call.rawLogProbs !== undefined) checkLogProbs('rawLogProbs', call.rawLogProbs, n, where);
  if (call.finishReason !== 'stop' && call.finishReason !== 'length') {
    throw new Error(`${where}: finishReason = ${JSON.stringify(call.finishReason)}: expected "stop" or "length"`);
  }
  if (!Number.isInteger(call.version) || call.version < 0) {
    throw new Error(`${where}: version = ${call.version}: expected a non-negative integer policy version`);
  }
  if (call.support !== undefined) {
    if (call.support.length !== n) {
      throw new Error(
        `${where}, index ${Math.min(call.support.length, n)}: support has ${call.support.length} entries but sampledIds has ${n}; expected one kept-id set per sampled id`,
      );
    }
    for (let k = 0; k < n; k++) {
      const kept = call.support[k];
      checkIds(`support[${k}]`, kept, `${where}, index ${k}`);
      let found = false;
      for (let j = 0; j < kept.length && !found; j++) found = kept[j] === call.sampledIds[k];
      if (!found) {
        throw new Error(
          `${where}, index ${k}: support[${k}] does not contain the sampled id ${call.sampledIds[k]}; a sampler cannot draw an id its filter removed`,
        );
      }
    }
  }
}

/**
 * Throws unless `session` is well formed. `label` names it in messages (default
 * `describeSession(session, index)`), `callNoun` names its calls (`call`, or `action` for an
 * episode read by `sessionOf`).
 */
export function validateSession(session: Session, index: number, label?: string, callNoun = 'call'): void {
  const where = label ?? describeSession(session, index);
  if (typeof session.task !== 'string')
    throw new Error(`${where}: task = ${String(session.task)}: expected a string id`);
  if (typeof session.group !== 'string')
    throw new Error(`${where}: group = ${String(session.group)}: expected a string`);
  for (const field of ['sample', 'attempt'] as const) {
    const v = session[field];
    if (!Number.isInteger(v) || v < 0) throw new Error(`${where}: ${field} = ${v}: expected a non-negative integer`);
  }
  if (!STATUSES.includes(session.status)) {
    throw new Error(`${where}: status = ${JSON.stringify(session.status)}: expected one of ${STATUSES.join(', ')}`);
  }
  if (session.termination !== undefined) {
    const known = [...AGENT_OUTCOMES, ...INFRASTRUCTURE_FAILURES] as readonly string[];
    if (!known.includes(session.termination)) {
      throw new Error(
        `${where}: termination = ${JSON.stringify(session.termination)}: expected one of ${known.join(', ')}`,
      );
    }
    const implied = statusOf(session.termination);
    if (implied !== session.status) {
      throw new Error(
        `${where}: termination "${session.termination}" implies status "${implied}", but status is "${session.status}"`,
      );
    }
  }
  if (trainable(session.status) && (typeof session.reward !== 'number' || !Number.isFinite(session.reward))) {
    throw new Error(
      `${where}: reward = ${String(session.reward)} but status "${session.status}" is trainable; a trainable session needs a finite verifier reward`,
    );
  }
  if (!Array.isArray(session.calls)) throw new Error(`${where}: calls is not an array`);
  session.calls.forEach((call, c) => validateCall(call, `${where}, ${callNoun} ${c}`));
}

/** Validates every session, naming the first bad one by its index in `sessions`. */
export function validateSessions(sessions: readonly Session[]): void {
  sessions.forEach((s, i) => validateSession(s, i));
}
