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
import { z } from 'zod';
import type { Job, Runner } from './fleet';
import { QueueFull, SandboxFleet } from './fleet';
import { RunCancelled, RunnerUnavailable } from './process-runner';
import { BadGroundTruth, codeReward } from './code-reward';
import { codeRewardRequestSchema, parseWith, programSchema, sandboxLimitsSchema } from './protocol';

export type { Runner } from './fleet';

export const COMPANION_VERSION = '0.1.0';

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
const runRequestSchema = z.strictObject({ ...programSchema.shape, limits: sandboxLimitsSchema.optional() });
/** Programs per batch at most. */
export const MAX_BATCH = 256;
const batchRequestSchema = z.strictObject({ programs: z.array(runRequestSchema).min(1, 'must list at least one program').max(MAX_BATCH, `must list at most ${MAX_BATCH} programs`) });

/** A validated request as the fleet's job (limits defaulted). */
function jobOf({ limits, ...program }: z.output<typeof runRequestSchema>): Job {
  return { program, limits: limits ?? sandboxLimitsSchema.parse({}) };
}

/** Constant-time comparison of two secrets of any length (both hashed to 32 bytes first). */
export function sameSecret(a: string, b: string): boolean {
  const h = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(h(a), h(b));
}

function refuse(c: Context, status: 400 | 401 | 403 | 404 | 413 | 421 | 500 | 503, error: string, extra: Record<string, unknown> = {}) {
  return c.json({ error, ...extra }, status);
}

/** The Hono app for `port` (the Host check needs it). */
export function companionApp(o: CompanionOptions, port: number, fleet: SandboxFleet): Hono {
  const app = new Hono();
  const hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  const origins = new Set(o.origins);

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
      running: fleet.running,
      queue: fleet.queued,
      queueLimit: o.queueLimit,
      networkIsolation: o.networkIsolation,
      limits: sandboxLimitsSchema.parse({}),
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
    if (!parsed.ok) return { error: refuse(c, 400, parsed.problems.join('; '), { problems: parsed.problems }) } as const;
    return { value: parsed.value } as const;
  };
  /** The fleet's refusals and the runner's failures: infrastructure errors, never verdicts. */
  const failure = (c: Context, e: unknown) => {
    if (e instanceof QueueFull) {
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
      return c.json(await codeReward(fleet, { ...rest, limits: limits ?? sandboxLimitsSchema.parse({}) }, c.req.raw.signal));
    } catch (e) {
      if (e instanceof BadGroundTruth) return refuse(c, 400, e.message);
      return failure(c, e);
    }
  });

  app.notFound((c) => refuse(c, 404, `no route ${c.req.method} ${new URL(c.req.url).pathname} (routes: GET /v1/health, POST /v1/run, POST /v1/run-batch, POST /v1/reward/code)`));
  return app;
}

export interface RunningCompanion {
  port: number;
  url: string;
  close(): Promise<void>;
}

/** Serves the companion on 127.0.0.1:`port` (0: any free port). `close` cancels every program, then stops listening. */
export async function startCompanion(o: CompanionOptions, port: number): Promise<RunningCompanion> {
  const fleet = new SandboxFleet(o.runner, o.workers, o.queueLimit);
  return new Promise((resolve, reject) => {
    // The app needs the port for its Host check; with port 0 it is known once listening.
    let app = companionApp(o, port, fleet);
    const server = serve({ fetch: (req: Request) => app.fetch(req), hostname: '127.0.0.1', port }, (info) => {
      if (port === 0) app = companionApp(o, info.port, fleet);
      resolve({
        port: info.port,
        url: `http://127.0.0.1:${info.port}`,
        close: async () => {
          await fleet.close();
          await new Promise<void>((done, fail) => server.close((err) => (err ? fail(err) : done())));
        },
      });
    });
    server.once('error', reject);
  });
}
