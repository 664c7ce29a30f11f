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
export interface SessionLimits {
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
export type SessionResetReply =
  { status: 'running'; context: number[]; detail?: string } | { status: 'error'; context: []; detail: string };
export interface SessionStepReply {
  observation: number[];
  context?: number[];
  status: 'running' | 'done' | 'error';
  reward?: number;
  detail?: string;
}

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
  openSession(request: SessionRequest, signal?: AbortSignal): Promise<SessionOpened> {
    return this.post<SessionOpened>('/v1/sessions', request, signal);
  }

  resetSession(id: string, request: SessionResetRequest, signal?: AbortSignal): Promise<SessionResetReply> {
    return this.post<SessionResetReply>(`/v1/sessions/${encodeURIComponent(id)}/reset`, request, signal);
  }

  stepSession(id: string, request: SessionStepRequest, signal?: AbortSignal): Promise<SessionStepReply> {
    return this.post<SessionStepReply>(`/v1/sessions/${encodeURIComponent(id)}/step`, request, signal);
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
    const body = (await res.json().catch(() => ({}))) as { error?: string };
    if (res.status === 401)
      throw new failure(
        `the companion refused the token (${body.error ?? 'HTTP 401'}): paste the token it printed at start`,
      );
    if (res.status === 403) throw new failure(`the companion refused this page (${body.error ?? 'HTTP 403'})`);
    if (!res.ok) throw new failure(`the companion answered HTTP ${res.status}: ${body.error ?? ''}`);
    return body;
  }
}
