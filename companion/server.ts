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
 *
 * Routes (every body and answer is JSON; shapes in protocol.ts):
 * - GET  /v1/health: version, runner, workers, queue, limits, network isolation, sessions.
 * - POST /v1/run `{files, argv?, stdin?, limits?}` → the Outcome; 503 + Retry-After when the queue is full.
 * - POST /v1/run-batch `{programs: [...]}` → `{outcomes}` in order, all queued or none (503).
 * - POST /v1/reward/code `{completion, groundTruth, allOrNothing?, limits?}` → CodeRewardResult.
 * - Environment sessions (SubprocessEnvironment, protocol.ts "Environment sessions"):
 *   - POST /v1/sessions `{files, argv?, limits?}` → `{id, limits}`: the program is started; 503 +
 *     Retry-After when `sessions.max` are open; 503 (infrastructure) when it cannot start here.
 *   - POST /v1/sessions/:id/reset `{task, tokenizer}` → EnvResetReply.
 *   - POST /v1/sessions/:id/step `{action}` → EnvStepReply.
 *   - POST /v1/sessions/:id/set_state `{state}` → EnvSetStateReply: restores a state the program sent (optional).
 *     Each answers 200 `{status: 'error', detail}` when the environment failed (its own error, the
 *     `limits.wallSeconds` deadline per request, its exit, a stray stdout line): that ends the
 *     session, its process group killed and its directory deleted. 404: no such session (closed,
 *     idle past `sessions.idleSeconds`, or never opened); 409: a request of it is still waiting.
 *   - POST /v1/sessions/:id/close (no body) → `{closed: true}`: kills its group, deletes its directory.
 *   A client that goes away during reset or step ends its session; so does the companion's close.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { z } from 'zod';
import type { Job, Runner } from './fleet';
import { QueueFull, SandboxFleet } from './fleet';
import { ProcessRunner, RunCancelled, RunnerUnavailable } from './process-runner';
import { EnvSessions, SessionsFull } from './env-sessions';
import type { Containment } from './containment';
import { BadGroundTruth, codeReward } from './code-reward';
import type { EnvSessionOpened } from './protocol';
import {
  codeRewardRequestSchema,
  envResetRequestSchema,
  envSessionRequestSchema,
  envSetStateRequestSchema,
  envStepRequestSchema,
  parseWith,
  programSchema,
  sandboxLimitsSchema,
} from './protocol';

export type { Runner } from './fleet';

export const COMPANION_VERSION = '0.1.0';

interface CompanionOptions {
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
  /** What the runner contains and what it does not, from its probe (reported by health). */
  containment?: Containment;
  /** Environment sessions (SubprocessEnvironment). Default: DEFAULT_SESSIONS with a default ProcessRunner. */
  sessions?: Partial<SessionOptions>;
}

export interface SessionOptions {
  /** Starts session programs: always a process (the `runner` above runs one-shot programs only). */
  launcher: ProcessRunner;
  /** Sessions open at once at most; one more is refused with 503 + Retry-After. */
  max: number;
  /** A session without a request for this long is closed, seconds. */
  idleSeconds: number;
}

export const DEFAULT_SESSIONS = { max: 64, idleSeconds: 300 } as const;

/** The session table `o` asks for (the server's, shared by the apps made for one server). */
function sessionsOf(o: CompanionOptions): EnvSessions {
  return new EnvSessions({
    launcher: o.sessions?.launcher ?? new ProcessRunner(),
    max: o.sessions?.max ?? DEFAULT_SESSIONS.max,
    idleSeconds: o.sessions?.idleSeconds ?? DEFAULT_SESSIONS.idleSeconds,
  });
}

/** A program to run: the program's fields and optional limits (defaults: docs/rl-core.md "Sandboxes"). */
const runRequestSchema = z.strictObject({ ...programSchema.shape, limits: sandboxLimitsSchema.optional() });
/** Programs per batch at most. */
const MAX_BATCH = 256;
const batchRequestSchema = z.strictObject({
  programs: z
    .array(runRequestSchema)
    .min(1, 'must list at least one program')
    .max(MAX_BATCH, `must list at most ${MAX_BATCH} programs`),
});

/** A validated request as the fleet's job (limits defaulted). */
function jobOf({ limits, ...program }: z.output<typeof runRequestSchema>): Job {
  return { program, limits: limits ?? sandboxLimitsSchema.parse({}) };
}

/** Constant-time comparison of two secrets of any length (both hashed to 32 bytes first). */
export function sameSecret(a: string, b: string): boolean {
  const h = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(h(a), h(b));
}

function refuse(
  c: Context,
  status: 400 | 401 | 403 | 404 | 409 | 413 | 421 | 500 | 503,
  error: string,
  extra: Record<string, unknown> = {},
) {
  return c.json({ error, ...extra }, status);
}

/** The Hono app for `port` (the Host check needs it). */
export function companionApp(
  o: CompanionOptions,
  port: number,
  fleet: SandboxFleet,
  sessions: EnvSessions = sessionsOf(o),
): Hono {
  const app = new Hono();
  const hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  const origins = new Set(o.origins);

  app.use('*', async (c, next) => {
    const host = c.req.header('host') ?? '';
    if (!hosts.has(host))
      return refuse(c, 421, `Host '${host}' is not this companion (allowed: ${[...hosts].join(', ')})`);
    const origin = c.req.header('origin');
    if (!origin || !origins.has(origin))
      return refuse(
        c,
        403,
        `Origin '${origin ?? '(none)'}' is not allowed (allowed: ${[...origins].join(', ')}; start the companion with --origin to add one)`,
      );
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
    if (!given)
      return refuse(c, 401, 'missing Authorization: Bearer <token> (the token the companion printed at start)');
    if (!sameSecret(given, o.token)) return refuse(c, 401, 'wrong token');
    await next();
  });
  app.use(
    '*',
    bodyLimit({ maxSize: o.maxBodyBytes, onError: (c) => refuse(c, 413, `request body over ${o.maxBodyBytes} bytes`) }),
  );

  app.get('/v1/health', (c) =>
    c.json({
      version: COMPANION_VERSION,
      runner: o.runner.name,
      workers: o.workers,
      running: fleet.running,
      queue: fleet.queued,
      queueLimit: o.queueLimit,
      networkIsolation: o.networkIsolation,
      ...(o.containment ? { containment: o.containment } : {}),
      limits: sandboxLimitsSchema.parse({}),
      sessions: { open: sessions.open, max: sessions.o.max, idleSeconds: sessions.o.idleSeconds },
    }),
  );

  /** The body as JSON checked against `schema`, or the 400 that names what is wrong. */
  const bodyOf = async <S extends z.ZodType>(c: Context, schema: S) => {
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      return { error: refuse(c, 400, 'the body is not JSON') } as const;
    }
    const parsed = parseWith(schema, body);
    if (!parsed.ok)
      return { error: refuse(c, 400, parsed.problems.join('; '), { problems: parsed.problems }) } as const;
    return { value: parsed.value } as const;
  };
  /** The fleet's refusals and the runner's failures: infrastructure errors, never verdicts. */
  const failure = (c: Context, e: unknown) => {
    if (e instanceof QueueFull || e instanceof SessionsFull) {
      c.header('Retry-After', '1');
      return refuse(c, 503, e.message);
    }
    if (e instanceof RunCancelled) return refuse(c, 503, `cancelled: ${e.message}`, { cancelled: true });
    const status = e instanceof RunnerUnavailable ? 503 : 500;
    return refuse(c, status, `${(e as Error).name}: ${(e as Error).message}`, { infrastructure: true });
  };

  // A client that goes away cancels its programs (the request's signal aborts).
  app.post('/v1/run', async (c) => {
    const req = await bodyOf(c, runRequestSchema);
    if ('error' in req) return req.error;
    try {
      return c.json(await fleet.submit(jobOf(req.value), c.req.raw.signal));
    } catch (e) {
      return failure(c, e);
    }
  });

  app.post('/v1/run-batch', async (c) => {
    const req = await bodyOf(c, batchRequestSchema);
    if ('error' in req) return req.error;
    try {
      return c.json({ outcomes: await fleet.run(req.value.programs.map(jobOf), c.req.raw.signal) });
    } catch (e) {
      return failure(c, e);
    }
  });

  app.post('/v1/reward/code', async (c) => {
    const req = await bodyOf(c, codeRewardRequestSchema);
    if ('error' in req) return req.error;
    const { limits, ...rest } = req.value;
    try {
      return c.json(
        await codeReward(fleet, { ...rest, limits: limits ?? sandboxLimitsSchema.parse({}) }, c.req.raw.signal),
      );
    } catch (e) {
      if (e instanceof BadGroundTruth) return refuse(c, 400, e.message);
      return failure(c, e);
    }
  });

  app.post('/v1/sessions', async (c) => {
    const req = await bodyOf(c, envSessionRequestSchema);
    if ('error' in req) return req.error;
    const { limits, ...program } = req.value;
    const l = limits ?? sandboxLimitsSchema.parse({});
    try {
      return c.json({ id: await sessions.start(program, l), limits: l } satisfies EnvSessionOpened);
    } catch (e) {
      return failure(c, e);
    }
  });

  /** The session the path names, or the 404/409 that says why not (checked after the body is read, right before use). */
  const sessionOf = (c: Context) => {
    const id = c.req.param('id')!;
    const env = sessions.get(id);
    if (!env)
      return {
        error: refuse(
          c,
          404,
          `no environment session '${id}' (it was closed, idle for more than ${sessions.o.idleSeconds} s, or never opened)`,
        ),
      } as const;
    if (env.busy)
      return {
        error: refuse(c, 409, `environment session '${id}' is still answering an earlier request: send one at a time`),
      } as const;
    return { id } as const;
  };
  // A client that goes away during reset or step ends its session (the request's signal aborts).
  app.post('/v1/sessions/:id/reset', async (c) => {
    const req = await bodyOf(c, envResetRequestSchema);
    if ('error' in req) return req.error;
    const s = sessionOf(c);
    if ('error' in s) return s.error;
    try {
      return c.json(await sessions.use(s.id, (env) => env.reset(req.value, c.req.raw.signal)));
    } catch (e) {
      return failure(c, e);
    }
  });

  app.post('/v1/sessions/:id/step', async (c) => {
    const req = await bodyOf(c, envStepRequestSchema);
    if ('error' in req) return req.error;
    const s = sessionOf(c);
    if ('error' in s) return s.error;
    try {
      return c.json(await sessions.use(s.id, (env) => env.step(req.value, c.req.raw.signal)));
    } catch (e) {
      return failure(c, e);
    }
  });

  app.post('/v1/sessions/:id/set_state', async (c) => {
    const req = await bodyOf(c, envSetStateRequestSchema);
    if ('error' in req) return req.error;
    const s = sessionOf(c);
    if ('error' in s) return s.error;
    try {
      return c.json(await sessions.use(s.id, (env) => env.setState(req.value, c.req.raw.signal)));
    } catch (e) {
      return failure(c, e);
    }
  });

  app.post('/v1/sessions/:id/close', async (c) => {
    const id = c.req.param('id');
    try {
      if (!(await sessions.end(id)))
        return refuse(
          c,
          404,
          `no environment session '${id}' (it was closed, idle for more than ${sessions.o.idleSeconds} s, or never opened)`,
        );
    } catch (e) {
      return failure(c, e);
    }
    return c.json({ closed: true });
  });

  app.notFound((c) =>
    refuse(
      c,
      404,
      `no route ${c.req.method} ${new URL(c.req.url).pathname} (routes: GET /v1/health, POST /v1/run, POST ` +
        `/v1/run-batch, POST /v1/reward/code, POST /v1/sessions, POST /v1/sessions/:id/reset, POST ` +
        `/v1/sessions/:id/step, POST /v1/sessions/:id/set_state, POST /v1/sessions/:id/close)`,
    ),
  );
  return app;
}

export interface RunningCompanion {
  port: number;
  url: string;
  close(): Promise<void>;
}

/**
 * Serves the companion on 127.0.0.1:`port` (0: any free port). `close` cancels every program and
 * closes every environment session, then stops listening.
 */
export async function startCompanion(o: CompanionOptions, port: number): Promise<RunningCompanion> {
  const fleet = new SandboxFleet(o.runner, o.workers, o.queueLimit);
  const sessions = sessionsOf(o);
  return new Promise((resolve, reject) => {
    // The app needs the port for its Host check; with port 0 it is known once listening.
    let app = companionApp(o, port, fleet, sessions);
    const server = serve({ fetch: (req: Request) => app.fetch(req), hostname: '127.0.0.1', port }, (info) => {
      if (port === 0) app = companionApp(o, info.port, fleet, sessions);
      resolve({
        port: info.port,
        url: `http://127.0.0.1:${info.port}`,
        close: async () => {
          await Promise.all([fleet.close(), sessions.close()]);
          await new Promise<void>((done, fail) => {
            server.close((err) => (err ? fail(err) : done()));
            // close() waits for every open connection: an idle keep-alive one would hold it for
            // IDLE_SOCKET_MS, and a cancelled program's response gets a second to flush.
            const http = server as unknown as { closeIdleConnections(): void; closeAllConnections(): void };
            http.closeIdleConnections();
            setTimeout(() => http.closeAllConnections(), 1000).unref();
          });
        },
      });
    });
    // A client in this process (the CLI's own companion) cannot read its socket while a training step
    // holds the event loop; with Node's 5 s default, a step over 5 s let this server close the idle
    // socket just as the next request went out on it (ECONNRESET, "no companion answers").
    Object.assign(server, { keepAliveTimeout: IDLE_SOCKET_MS });
    server.once('error', reject);
  });
}

/** How long the companion keeps an idle keep-alive connection (Node's default is 5 s). */
export const IDLE_SOCKET_MS = 120_000;
