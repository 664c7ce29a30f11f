/**
 * The companion's HTTP server: a versioned JSON API on 127.0.0.1 that runs programs for one
 * Dewpoint page. Hono on its Node adapter: a small, actively maintained framework whose handlers
 * take and return web-standard Request/Response (the same objects the app's fetch sees), with a
 * body-limit middleware; the checks below are ours, written out so that each can be tested.
 *
 * Every request passes, in order: the Host check (the loopback host and our port, against DNS
 * rebinding), the Origin check (the allow-list; a request without Origin is refused too), the
 * CORS preflight (answered for allowed origins only, before any token is needed), the bearer
 * token (constant-time compare), the body size limit, then the body's schema (a 400 naming the
 * field). A full queue answers 503 with Retry-After. Programs run as argv arrays, never a shell.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { RunnerUnavailable } from './process-runner';
import type { Outcome, Program, SandboxLimits } from './protocol';
import { parseWith, programSchema, sandboxLimitsSchema } from './protocol';
import { z } from 'zod';

export const COMPANION_VERSION = '0.1.0';

/** What runs one program (ProcessRunner; a container runner later). */
export interface Runner {
  readonly name: string;
  run(program: Program, limits: SandboxLimits): Promise<Outcome>;
}

export interface CompanionOptions {
  runner: Runner;
  /** The random token every request must carry as `Authorization: Bearer <token>`. */
  token: string;
  /** Origins allowed to call (the app's), e.g. `http://localhost:5173`. */
  origins: readonly string[];
  /** Programs run at once, and how many more may wait before requests are refused. */
  workers: number;
  queueLimit: number;
  /** Largest request body, bytes. */
  maxBodyBytes: number;
  /** Whether programs are cut off from the network (reported by health). */
  networkIsolation: boolean;
}

/** A program to run: the program's fields and optional limits (defaults from rl-spec). */
const runRequestSchema = z.strictObject({ ...programSchema.shape, limits: z.unknown().optional() });

/** Constant-time comparison of two secrets of any length (both hashed to 32 bytes first). */
export function sameSecret(a: string, b: string): boolean {
  const h = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(h(a), h(b));
}

/** Runs at most `workers` jobs at once; refuses once `queueLimit` more are waiting. */
class JobQueue {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly workers: number, readonly queueLimit: number) {}

  get depth(): number {
    return this.waiting.length;
  }

  get active(): number {
    return this.running;
  }

  /** Runs `job` when a worker is free, or returns null at once when the queue is full. */
  async submit<T>(job: () => Promise<T>): Promise<{ value: T } | null> {
    if (this.running >= this.workers) {
      if (this.waiting.length >= this.queueLimit) return null;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.running++;
    try {
      return { value: await job() };
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }
}

function refuse(c: Context, status: 400 | 401 | 403 | 404 | 413 | 421 | 500 | 503, error: string, extra: Record<string, unknown> = {}) {
  return c.json({ error, ...extra }, status);
}

/** The Hono app for `port` (the Host check needs it). */
export function companionApp(o: CompanionOptions, port: number): Hono {
  const app = new Hono();
  const hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  const origins = new Set(o.origins);
  const queue = new JobQueue(o.workers, o.queueLimit);

  app.use('*', async (c, next) => {
    const host = c.req.header('host') ?? '';
    if (!hosts.has(host)) return refuse(c, 421, `Host '${host}' is not this companion (allowed: ${[...hosts].join(', ')})`);
    const origin = c.req.header('origin');
    if (!origin || !origins.has(origin)) return refuse(c, 403, `Origin '${origin ?? '(none)'}' is not allowed (allowed: ${[...origins].join(', ')}; start the companion with --origin to add one)`);
    c.header('Access-Control-Allow-Origin', origin);
    c.header('Vary', 'Origin');
    if (c.req.method === 'OPTIONS') {
      c.header('Access-Control-Allow-Methods', 'GET, POST');
      c.header('Access-Control-Allow-Headers', 'Authorization, Content-Type');
      c.header('Access-Control-Max-Age', '600');
      return c.body(null, 204);
    }
    const auth = c.req.header('authorization') ?? '';
    const given = auth.startsWith('Bearer ') ? auth.slice('Bearer '.length) : '';
    if (!given) return refuse(c, 401, 'missing Authorization: Bearer <token> (the token the companion printed at start)');
    if (!sameSecret(given, o.token)) return refuse(c, 401, 'wrong token');
    await next();
  });
  app.use('*', bodyLimit({ maxSize: o.maxBodyBytes, onError: (c) => refuse(c, 413, `request body over ${o.maxBodyBytes} bytes`) }));

  app.get('/v1/health', (c) =>
    c.json({
      version: COMPANION_VERSION,
      runner: o.runner.name,
      workers: o.workers,
      running: queue.active,
      queue: queue.depth,
      queueLimit: o.queueLimit,
      networkIsolation: o.networkIsolation,
      limits: sandboxLimitsSchema.parse({}),
    }),
  );

  app.post('/v1/run', async (c) => {
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      return refuse(c, 400, 'the body is not JSON');
    }
    const req = parseWith(runRequestSchema, body);
    if (!req.ok) return refuse(c, 400, req.problems.join('; '), { problems: req.problems });
    const limits = parseWith(sandboxLimitsSchema, req.value.limits ?? {}, 'limits');
    if (!limits.ok) return refuse(c, 400, limits.problems.join('; '), { problems: limits.problems });
    const { limits: _ignored, ...program } = req.value;
    try {
      const done = await queue.submit(() => o.runner.run(program, limits.value));
      if (!done) {
        c.header('Retry-After', '1');
        return refuse(c, 503, `the queue is full (${o.workers} running, ${o.queueLimit} waiting)`);
      }
      return c.json(done.value);
    } catch (e) {
      // A runner that cannot start a program is an infrastructure error, never a verdict.
      const status = e instanceof RunnerUnavailable ? 503 : 500;
      return refuse(c, status, `${(e as Error).name}: ${(e as Error).message}`, { infrastructure: true });
    }
  });

  app.notFound((c) => refuse(c, 404, `no route ${c.req.method} ${new URL(c.req.url).pathname} (routes: GET /v1/health, POST /v1/run)`));
  return app;
}

export interface RunningCompanion {
  port: number;
  url: string;
  close(): Promise<void>;
}

/** Serves the companion on 127.0.0.1:`port` (0: any free port). */
export async function startCompanion(o: CompanionOptions, port: number): Promise<RunningCompanion> {
  return new Promise((resolve, reject) => {
    let actual = port;
    // The app needs the port for its Host check; with port 0 it is known once listening.
    const handler = { fetch: (req: Request) => app.fetch(req) };
    let app = companionApp(o, port);
    const server = serve({ fetch: handler.fetch, hostname: '127.0.0.1', port }, (info) => {
      actual = info.port;
      if (port === 0) app = companionApp(o, actual);
      resolve({
        port: actual,
        url: `http://127.0.0.1:${actual}`,
        close: () => new Promise<void>((done, fail) => server.close((err) => (err ? fail(err) : done()))),
      });
    });
    server.once('error', reject);
  });
}
