/**
 * The companion's open environment sessions (SubprocessEnvironment) by id: bounded in number (a
 * full table refuses with SessionsFull, which the server answers 503 + Retry-After), each closed
 * after `idleSeconds` without a request, all closed by `close` (the companion's shutdown). A
 * session that failed keeps its id (and its place) until it is closed or idles out, so its client
 * learns why; its process is already dead and its directory deleted.
 *
 * Not the process (subprocess-env.ts) nor the routes (server.ts).
 */
import { randomUUID } from 'node:crypto';
import type { ProcessRunner } from './process-runner';
import type { SandboxLimits } from './protocol';
import type { SubprocessProgram } from './subprocess-env';
import { SubprocessEnvironment } from './subprocess-env';

/** Every session place is taken: try again later. Never an environment error. */
export class SessionsFull extends Error {
  override name = 'SessionsFull';
}

interface EnvSessionsOptions {
  /** Starts the programs (its launcher, PATH and job-directory root). */
  launcher: ProcessRunner;
  /** Sessions open at once at most (starting ones included). */
  max: number;
  /** A session without a request for this long is closed. */
  idleSeconds: number;
}

interface Entry {
  env: SubprocessEnvironment;
  idle?: NodeJS.Timeout;
}

export class EnvSessions {
  private readonly entries = new Map<string, Entry>();
  private starting = 0;
  private closed = false;

  constructor(readonly o: EnvSessionsOptions) {
    if (!Number.isInteger(o.max) || o.max < 1) throw new Error(`EnvSessions: max must be an integer ≥ 1, got ${o.max}`);
    if (!(o.idleSeconds > 0)) throw new Error(`EnvSessions: idleSeconds must be > 0, got ${o.idleSeconds}`);
  }

  /** Sessions open or starting. */
  get open(): number {
    return this.entries.size + this.starting;
  }

  /** Starts a session and returns its id; SessionsFull when every place is taken, RunnerUnavailable when it cannot start. */
  async start(program: SubprocessProgram, limits: SandboxLimits): Promise<string> {
    if (this.closed) throw new SessionsFull('the companion is shutting down');
    if (this.open >= this.o.max)
      throw new SessionsFull(
        `all ${this.o.max} environment sessions are open; close one or wait (idle sessions close after ${this.o.idleSeconds} s)`,
      );
    this.starting++;
    let env: SubprocessEnvironment;
    try {
      env = await SubprocessEnvironment.start(this.o.launcher, program, limits);
    } finally {
      this.starting--;
    }
    if (this.closed) {
      await env.close();
      throw new SessionsFull('the companion is shutting down');
    }
    const id = randomUUID();
    this.entries.set(id, { env });
    this.arm(id);
    return id;
  }

  get(id: string): SubprocessEnvironment | undefined {
    return this.entries.get(id)?.env;
  }

  /** Runs `f` on session `id` with its idle clock stopped, then restarts the clock. */
  async use<T>(id: string, f: (env: SubprocessEnvironment) => Promise<T>): Promise<T> {
    const entry = this.entries.get(id);
    if (!entry) throw new Error(`EnvSessions.use: no session ${id}; check get(id) first`);
    clearTimeout(entry.idle);
    try {
      return await f(entry.env);
    } finally {
      this.arm(id);
    }
  }

  /** Closes session `id` (false when there is none): its group killed, its directory deleted. */
  async end(id: string): Promise<boolean> {
    const entry = this.entries.get(id);
    if (!entry) return false;
    clearTimeout(entry.idle);
    this.entries.delete(id);
    await entry.env.close();
    return true;
  }

  /** Closes every session and refuses new ones. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.entries.keys()].map((id) => this.end(id)));
  }

  private arm(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    clearTimeout(entry.idle);
    entry.idle = setTimeout(() => {
      this.end(id).catch((e: Error) =>
        console.error(`environment session ${id}: closing it after ${this.o.idleSeconds} s idle failed: ${e.message}`),
      );
    }, this.o.idleSeconds * 1000);
    entry.idle.unref();
  }
}
