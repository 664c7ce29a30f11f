/**
 * The worker's side of the companion (companion/server.ts): HTTP to 127.0.0.1 with the token the
 * companion printed. Every failure becomes a sentence a person can act on (not running, wrong
 * token, origin not allowed), never a reward: code rewards will treat it as an infrastructure
 * failure.
 */
import type { CompanionHealth, CompanionStatus } from '../contract/system';
import type { CodeGradeRequest, CodeRewardResult } from '../rewards/code-grader';
import { GraderUnavailable } from '../rewards/code-grader';

/** How many times a 429/503 (queue full) is retried, and the longest wait between tries. */
const BUSY_RETRIES = 30;
const MAX_RETRY_WAIT_MS = 5000;

/**
 * The companion's default wall deadline, seconds (companion/protocol.ts `sandboxLimitsSchema`:
 * `wallSeconds` defaults to 30; for a session it bounds each reset and step). Restated because the
 * worker cannot compile the companion's code; cli/companion-env-resume.test.ts checks both agree.
 */
export const COMPANION_DEFAULT_WALL_SECONDS = 30;
/** The companion's environment sessions open at once by default (companion/server.ts DEFAULT_SESSIONS.max, restated). */
export const COMPANION_SESSION_PLACES = 64;

/**
 * How long opening a session waits for a place when the companion is at capacity (503/429: its
 * `sessions.max` are open, companion/env-sessions.ts `SessionsFull`). Each wait is the reply's
 * Retry-After (seconds, or an HTTP date), `defaultMs` when it has none or an unreadable one, at
 * most `maxEachMs`; the waits together stay within `totalMs`, then the open fails with
 * CompanionAtCapacity. The total is counted in waits, not wall time, so it is the same under load.
 */
export interface CapacityWait {
  totalMs: number;
  defaultMs: number;
  maxEachMs: number;
}

/**
 * 10 s in all: long enough for another run's or an evaluation's episodes to end and free their
 * places (a guess or calc episode takes seconds), short enough that the rollout's reset deadline
 * for a companion kind (companion-env.ts `companionDeadlineMs`, which adds this wait) stays modest.
 */
export const DEFAULT_CAPACITY_WAIT: CapacityWait = { totalMs: 10_000, defaultMs: 1000, maxEachMs: 5000 };

/** The companion had no free session place within the wait (CapacityWait): an infrastructure failure, never a reward. */
export class CompanionAtCapacity extends Error {
  override readonly name = 'CompanionAtCapacity';
}

/** The wait a Retry-After value asks for, ms (null when absent or unreadable). */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (value === null || !value.trim()) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : null;
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - now) : null;
}

/** Resolves after `ms`, or rejects when `signal` aborts first. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('aborted'));
    const done = () => {
      signal?.removeEventListener('abort', stop);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    };
    signal?.addEventListener('abort', stop, { once: true });
  });
}

/** `http://127.0.0.1:PORT` or `http://localhost:PORT`, nothing else (the companion binds loopback only). */
export function companionUrlProblem(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `companion address '${url}' is not a URL; expected http://127.0.0.1:PORT`;
  }
  if (
    u.protocol !== 'http:' ||
    (u.hostname !== '127.0.0.1' && u.hostname !== 'localhost') ||
    !u.port ||
    u.pathname !== '/' ||
    u.search ||
    u.hash
  ) {
    return `companion address '${url}' must be http://127.0.0.1:PORT (or localhost), with no path`;
  }
  return null;
}

/*
 * The wire shapes of the environment-session routes (`/v1/sessions`), as companion/protocol.ts
 * defines them (`EnvSessionRequest`, `EnvSessionOpened`, `EnvResetRequest`, `EnvStepRequest`,
 * `EnvResetReply`, `EnvStepReply`); restated because the worker's project cannot compile the
 * companion's (zod, Node types). cli/companion-env.test.ts checks that both agree.
 */
interface SessionLimits {
  wallSeconds?: number;
  cpuSeconds?: number;
  memoryBytes?: number;
  messageBytes?: number;
}
/** The environment's program and limits (`wallSeconds`: the deadline of each reset and step). */
export interface SessionRequest {
  files: Record<string, string>;
  argv?: string[];
  limits?: SessionLimits;
}
export interface SessionOpened {
  id: string;
  limits: Required<SessionLimits>;
}
export interface SessionResetRequest {
  task: { id: string; prompt: string; answer: string; data: Record<string, unknown> };
  tokenizer: { type: 'char'; vocab: string[]; specials: { pad: number; bos: number; eos: number } };
}
export interface SessionStepRequest {
  action: { ids: number[]; text: string; terminated: boolean };
}
/**
 * The kind of an environment session's failure, as the companion names it (companion/protocol.ts
 * `ENV_ERROR_KINDS`, restated: the worker cannot import the companion).
 */
type SessionErrorKind =
  'environment' | 'deadline' | 'exited' | 'bad-reply' | 'message-limit' | 'cancelled' | 'closed' | 'io';
export type SessionResetReply =
  | { status: 'running'; context: number[]; detail?: string; state?: string; stderr?: string }
  | { status: 'error'; context: []; detail: string; error?: SessionErrorKind; stderr?: string };
export interface SessionStepReply {
  observation: number[];
  context?: number[];
  status: 'running' | 'done' | 'error';
  reward?: number;
  detail?: string;
  /** The program's state after the step, when it sends one (companion/protocol.ts "Optional state"). */
  state?: string;
  /** With status 'error': what failed (the program's own error reply is `environment`). */
  error?: SessionErrorKind;
  /** What the program wrote to stderr since the previous reply (its end). */
  stderr?: string;
}
export interface SessionSetStateRequest {
  state: string;
}
export type SessionSetStateReply =
  | { status: 'running'; stderr?: string }
  | { status: 'error'; detail: string; error?: SessionErrorKind; stderr?: string };

export class CompanionClient {
  readonly url: string;

  constructor(
    url: string,
    private readonly token: string,
    private readonly fetchFn: typeof fetch = (...a) => fetch(...a),
  ) {
    this.url = url.replace(/\/$/, '');
  }

  /** GET /v1/health, or the reason it failed. */
  async status(): Promise<CompanionStatus> {
    try {
      return { url: this.url, connected: true, health: await this.get<CompanionHealth>('/v1/health') };
    } catch (e) {
      return { url: this.url, connected: false, error: (e as Error).message };
    }
  }

  /**
   * Environment sessions (worker/episodes/companion-env.ts). Each throws a sentence naming the
   * failure (unreachable, refused, a 404/409/5xx, cancelled through `signal`); an environment's own
   * failure is a 200 reply with status `error`.
   */
  /**
   * Opens a session within the companion's capacity: a 503 or 429 that says every place is taken
   * is waited out (its Retry-After) and retried, within `wait` (CapacityWait); past it, throws
   * CompanionAtCapacity. A 503 the companion marks as its own failure (`infrastructure`: the
   * program cannot start there) or a cancellation is not capacity and throws at once. `signal`
   * cancels the waits between tries, not a request under way: the companion may be starting the
   * program, and the caller closes the session it opens.
   */
  async openSession(
    request: SessionRequest,
    signal?: AbortSignal,
    wait: CapacityWait = DEFAULT_CAPACITY_WAIT,
  ): Promise<SessionOpened> {
    const path = '/v1/sessions';
    const init: RequestInit = {
      method: 'POST',
      body: JSON.stringify(request),
      headers: { 'content-type': 'application/json' },
    };
    let waited = 0;
    for (let tries = 1; ; tries++) {
      const res = await this.request(path, init, Error);
      const body = (await res.json().catch(() => ({}))) as {
        error?: string;
        infrastructure?: unknown;
        cancelled?: unknown;
      };
      const full = res.status === 429 || (res.status === 503 && !body.infrastructure && !body.cancelled);
      if (!full) return this.checked(res.status, body, Error) as SessionOpened;
      const asked = retryAfterMs(res.headers.get('retry-after'));
      const next = Math.min(asked ?? wait.defaultMs, wait.maxEachMs, wait.totalMs - waited);
      if (next <= 0)
        throw new CompanionAtCapacity(
          `the companion is at capacity: no environment session place came free in ${tries} tries over ` +
            `${(waited / 1000).toFixed(1)} s (it answered HTTP ${res.status}: ${body.error ?? ''}); ` +
            'wait for its other runs to end, or start it with more sessions',
        );
      try {
        await pause(next, signal);
      } catch (e) {
        throw new Error(`POST ${path} was cancelled while the companion was at capacity`, { cause: e });
      }
      waited += next;
    }
  }

  resetSession(id: string, request: SessionResetRequest, signal?: AbortSignal): Promise<SessionResetReply> {
    return this.post<SessionResetReply>(`/v1/sessions/${encodeURIComponent(id)}/reset`, request, signal);
  }

  stepSession(id: string, request: SessionStepRequest, signal?: AbortSignal): Promise<SessionStepReply> {
    return this.post<SessionStepReply>(`/v1/sessions/${encodeURIComponent(id)}/step`, request, signal);
  }

  /** Restores a state the program sent in an earlier reply (after this session's reset). */
  setSessionState(id: string, request: SessionSetStateRequest, signal?: AbortSignal): Promise<SessionSetStateReply> {
    return this.post<SessionSetStateReply>(`/v1/sessions/${encodeURIComponent(id)}/set_state`, request, signal);
  }

  /** Kills the environment's process group and deletes its directory. */
  async closeSession(id: string): Promise<void> {
    await this.post(`/v1/sessions/${encodeURIComponent(id)}/close`, undefined);
  }

  private async post<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
    const init: RequestInit = {
      method: 'POST',
      ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
      ...(signal ? { signal } : {}),
    };
    let res: Response;
    try {
      res = await this.request(path, init, Error);
    } catch (e) {
      if (signal?.aborted) throw new Error(`POST ${path} was cancelled`, { cause: e });
      throw e;
    }
    return (await this.bodyOf(res, Error)) as T;
  }

  /**
   * The code reward of one completion (POST /v1/reward/code), at most `concurrency` requests in
   * flight (the companion's workers: more would only fill its queue). A full queue (429/503 with
   * Retry-After) is waited out and retried; anything else that keeps it from grading (unreachable,
   * refused, a 5xx, a malformed answer) throws GraderUnavailable.
   */
  async gradeCode(request: CodeGradeRequest, concurrency: number): Promise<CodeRewardResult> {
    await this.acquire(concurrency);
    try {
      const body = JSON.stringify({
        completion: request.completion,
        groundTruth: request.cases,
        allOrNothing: request.allOrNothing ?? false,
      });
      for (let attempt = 0; ; attempt++) {
        const res = await this.request(
          '/v1/reward/code',
          { method: 'POST', body, headers: { 'content-type': 'application/json' } },
          GraderUnavailable,
        );
        if ((res.status === 503 || res.status === 429) && res.headers.has('retry-after') && attempt < BUSY_RETRIES) {
          await res.body?.cancel();
          const seconds = Number(res.headers.get('retry-after'));
          await new Promise((r) =>
            setTimeout(r, Math.min(MAX_RETRY_WAIT_MS, Number.isFinite(seconds) ? seconds * 1000 : 1000)),
          );
          continue;
        }
        const answer = await this.bodyOf(res, GraderUnavailable);
        const r = answer as Partial<CodeRewardResult>;
        if (typeof r.reward !== 'number' || !Array.isArray(r.cases))
          throw new GraderUnavailable(
            `the companion's code reward is not {reward, program, cases}: ${JSON.stringify(answer).slice(0, 200)}`,
          );
        return answer as CodeRewardResult;
      }
    } finally {
      this.release();
    }
  }

  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];

  private async acquire(limit: number): Promise<void> {
    while (this.inFlight >= Math.max(1, limit)) await new Promise<void>((r) => this.waiting.push(r));
    this.inFlight++;
  }

  private release(): void {
    this.inFlight--;
    this.waiting.shift()?.();
  }

  private async get<T>(path: string): Promise<T> {
    return (await this.bodyOf(await this.request(path, {}, Error), Error)) as T;
  }

  private async request(path: string, init: RequestInit, failure: new (message: string) => Error): Promise<Response> {
    try {
      return await this.fetchFn(`${this.url}${path}`, {
        ...init,
        headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${this.token}` },
      });
    } catch (e) {
      throw new failure(
        `no companion answers at ${this.url} (${(e as Error).message}): start one with npx dewpoint companion`,
      );
    }
  }

  private async bodyOf(res: Response, failure: new (message: string) => Error): Promise<unknown> {
    return this.checked(res.status, await res.json().catch(() => ({})), failure);
  }

  /** The body of a reply with `status`, or the sentence its failure gives. */
  private checked(status: number, answer: unknown, failure: new (message: string) => Error): unknown {
    const body = answer as { error?: string };
    if (status === 401)
      throw new failure(
        `the companion refused the token (${body.error ?? 'HTTP 401'}): paste the token it printed at start`,
      );
    if (status === 403) throw new failure(`the companion refused this page (${body.error ?? 'HTTP 403'})`);
    if (status < 200 || status > 299) throw new failure(`the companion answered HTTP ${status}: ${body.error ?? ''}`);
    return body;
  }
}
