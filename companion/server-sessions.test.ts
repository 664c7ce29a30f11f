/**
 * The environment-session routes (`/v1/sessions`) through the real HTTP server and real
 * processes: the round trip, the security checks applying to them, bad bodies, the bound on open
 * sessions (503 + Retry-After), one request at a time (409), the idle timeout, a client that goes
 * away, and the companion's close. The protocol's failure modes are subprocess-env.test.ts's.
 */
import { chmod, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProcessRunner } from './process-runner';
import type { RunningCompanion, SessionOptions } from './server';
import { startCompanion } from './server';

const TOKEN = 'test-token-sessions';
const ORIGIN = 'http://localhost:5173';

/** An environment that answers reset with [1, n] and each step with its ids doubled; `sleep` steps hang. */
const ENV = `
import json, os, sys, time
for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "close":
        break
    if req["op"] == "reset":
        reply = {"context": [1, req["task"]["data"]["n"]], "detail": str(os.getpid())}
    elif req["action"]["text"] == "sleep":
        time.sleep(60)
    else:
        ids = req["action"]["ids"]
        reply = {"observation": ids + ids, "status": "done" if len(ids) > 2 else "running"}
    print(json.dumps(reply), flush=True)
`;
const OPEN = JSON.stringify({
  files: { 'env.py': ENV },
  argv: ['python3', '-I', '-S', 'env.py'],
  limits: { wallSeconds: 10 },
});
const RESET = JSON.stringify({
  task: { id: 't', prompt: '', answer: '', data: { n: 7 } },
  tokenizer: { type: 'char', vocab: ['<pad>', '<bos>', '<eos>', 'x'], specials: { pad: 0, bos: 1, eos: 2 } },
});
const step = (ids: number[], text = 'x') => JSON.stringify({ action: { ids, text, terminated: true } });

async function alive(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'latin1');
    return !['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]);
  } catch (e) {
    if (['ENOENT', 'ESRCH'].includes((e as NodeJS.ErrnoException).code ?? '')) return false; // gone, or going
    throw e;
  }
}

async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const t0 = Date.now();
  while (!(await check())) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface Companion {
  server: RunningCompanion;
  root: string;
  /** POST (or GET without a body) with the good headers, overridden by `headers` ('' removes one). */
  call(
    method: string,
    path: string,
    body?: string,
    headers?: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }>;
}

async function companion(sessions: Partial<SessionOptions>): Promise<Companion> {
  const root = await mkdtemp(join(tmpdir(), 'dewpoint-sessions-test-'));
  // Programs may run as a uid of their own (the runner's jail, as root): they must pass through.
  await chmod(root, 0o711);
  const inner = new ProcessRunner();
  const server = await startCompanion(
    {
      runner: { name: 'process', run: inner.run.bind(inner) },
      token: TOKEN,
      origins: [ORIGIN],
      workers: 1,
      queueLimit: 1,
      maxBodyBytes: 64 * 1024,
      networkIsolation: false,
      sessions: { launcher: new ProcessRunner({ tmpRoot: root }), ...sessions },
    },
    0,
  );
  return {
    server,
    root,
    async call(method, path, body, headers = {}, signal) {
      const h = Object.fromEntries(
        Object.entries({
          origin: ORIGIN,
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          ...headers,
        }).filter(([, v]) => v !== ''),
      );
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: h,
        ...(body !== undefined ? { body } : {}),
        ...(signal ? { signal } : {}),
      });
      const text = await res.text();
      return {
        status: res.status,
        headers: res.headers,
        body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
      };
    },
  };
}

describe('environment sessions over HTTP (real server, real processes)', () => {
  let c: Companion;
  beforeAll(async () => {
    c = await companion({ max: 2, idleSeconds: 60 });
  });
  afterAll(async () => {
    await c.server.close();
    await rm(c.root, { recursive: true, force: true });
  });
  const openCount = async () => ((await c.call('GET', '/v1/health')).body.sessions as { open: number }).open;

  it('open, reset, step, close: the program runs in its job directory and is gone after close', async () => {
    const opened = await c.call('POST', '/v1/sessions', OPEN);
    expect(opened.status).toBe(200);
    expect(opened.body).toMatchObject({ id: expect.any(String), limits: { wallSeconds: 10, cpuSeconds: 10 } });
    const id = opened.body.id as string;
    expect((await c.call('GET', '/v1/health')).body.sessions).toEqual({ open: 1, max: 2, idleSeconds: 60 });
    expect(await readdir(c.root)).toHaveLength(1);

    const reset = await c.call('POST', `/v1/sessions/${id}/reset`, RESET);
    expect(reset.status).toBe(200);
    expect(reset.body).toMatchObject({ status: 'running', context: [1, 7] });
    const pid = Number(reset.body.detail);
    expect(await alive(pid)).toBe(true);
    expect((await c.call('POST', `/v1/sessions/${id}/step`, step([3]))).body).toEqual({
      observation: [3, 3],
      status: 'running',
    });
    expect((await c.call('POST', `/v1/sessions/${id}/step`, step([3, 3, 3]))).body).toEqual({
      observation: [3, 3, 3, 3, 3, 3],
      status: 'done',
    });

    const closed = await c.call('POST', `/v1/sessions/${id}/close`);
    expect([closed.status, closed.body]).toEqual([200, { closed: true }]);
    expect(await alive(pid)).toBe(false);
    expect(await readdir(c.root)).toEqual([]);
    expect(await openCount()).toBe(0);
    const after = await c.call('POST', `/v1/sessions/${id}/step`, step([3]));
    expect(after.status).toBe(404);
    expect(String(after.body.error)).toMatch(
      new RegExp(`no environment session '${id}' \\(it was closed, idle for more than 60 s, or never opened\\)`),
    );
  });

  it("optional state: replies carry the program's state; set_state restores one, or answers its error; a bad body is a 400", async () => {
    const env = `
import json, sys
count = 0
for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "close":
        break
    if req["op"] == "reset":
        reply = {"context": [1], "state": str(count)}
    elif req["op"] == "set_state":
        if req["state"].isdigit():
            count = int(req["state"])
            reply = {"status": "running"}
        else:
            reply = {"status": "error", "detail": "not a count: " + req["state"]}
    else:
        count += 1
        reply = {"observation": [3], "status": "running", "state": str(count)}
    print(json.dumps(reply), flush=True)
`;
    const open = JSON.stringify({ files: { 'env.py': env }, argv: ['python3', '-I', '-S', 'env.py'] });
    const id = (await c.call('POST', '/v1/sessions', open)).body.id as string;
    try {
      expect((await c.call('POST', `/v1/sessions/${id}/reset`, RESET)).body).toEqual({
        status: 'running',
        context: [1],
        state: '0',
      });
      expect((await c.call('POST', `/v1/sessions/${id}/step`, step([3]))).body).toMatchObject({ state: '1' });
      const restored = await c.call('POST', `/v1/sessions/${id}/set_state`, JSON.stringify({ state: '41' }));
      expect([restored.status, restored.body]).toEqual([200, { status: 'running' }]);
      expect((await c.call('POST', `/v1/sessions/${id}/step`, step([3]))).body).toMatchObject({ state: '42' });
      const badBody = await c.call('POST', `/v1/sessions/${id}/set_state`, JSON.stringify({ snapshot: '1' }));
      expect(badBody.status).toBe(400);
      expect(String(badBody.body.error)).toMatch(/state/);
      const refused = await c.call('POST', `/v1/sessions/${id}/set_state`, JSON.stringify({ state: 'x' }));
      expect(refused.body).toEqual({ status: 'error', detail: 'not a count: x', error: 'environment' });
    } finally {
      await c.call('POST', `/v1/sessions/${id}/close`);
    }
  });

  it.each([
    ['a wrong token', { authorization: `Bearer ${TOKEN}x` }, 401, /wrong token/],
    ['a foreign Origin', { origin: 'http://evil.example' }, 403, /is not allowed/],
    ['no Origin', { origin: '' }, 403, /Origin '\(none\)' is not allowed/],
  ] as [string, Record<string, string>, number, RegExp][])(
    'refuses %s on every session route, and starts nothing',
    async (_what, headers, status, message) => {
      for (const path of [
        '/v1/sessions',
        '/v1/sessions/some-id/reset',
        '/v1/sessions/some-id/step',
        '/v1/sessions/some-id/close',
      ]) {
        const r = await c.call('POST', path, OPEN, headers);
        expect(r.status, path).toBe(status);
        expect(String(r.body.error)).toMatch(message);
      }
      expect(await openCount()).toBe(0);
      expect(await readdir(c.root)).toEqual([]);
    },
  );

  it('a bad body is a 400 naming the field, and starts nothing', async () => {
    const cases: [string, string, RegExp][] = [
      [
        '/v1/sessions',
        JSON.stringify({ files: { '../x.py': '' } }),
        /files\["\.\.\/x\.py"\]: a file name must not contain a \.\. segment/,
      ],
      ['/v1/sessions', JSON.stringify({ files: {}, argv: [] }), /argv: must name a program/],
      [
        '/v1/sessions',
        JSON.stringify({ files: {}, limits: { wallSeconds: 0 } }),
        /limits\.wallSeconds: must be a number in \(0, 3600\]/,
      ],
      ['/v1/sessions', JSON.stringify({ files: {}, stdin: 'x' }), /stdin: unknown field/],
      ['/v1/sessions', '{"files":', /not JSON/],
      ['/v1/sessions/some-id/reset', JSON.stringify({ task: { id: 't' }, tokenizer: {} }), /task\.prompt/],
      [
        '/v1/sessions/some-id/step',
        JSON.stringify({ action: { ids: [-1], text: '', terminated: true } }),
        /action\.ids\[0\]: must be a non-negative integer id/,
      ],
    ];
    for (const [path, body, message] of cases) {
      const r = await c.call('POST', path, body);
      expect(r.status, body).toBe(400);
      expect(String(r.body.error)).toMatch(message);
    }
    expect(await openCount()).toBe(0);
  });

  it('a program that cannot start is a 503 infrastructure error, not a session', async () => {
    const r = await c.call('POST', '/v1/sessions', JSON.stringify({ files: {}, argv: ['no-such-program-here'] }));
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({
      infrastructure: true,
      error: expect.stringMatching(/RunnerUnavailable: the program, no-such-program-here, is not an executable file/),
    });
    expect(await readdir(c.root)).toEqual([]);
  });

  it('sessions are bounded: one more is refused with 503 and Retry-After; closing one makes room', async () => {
    const a = await c.call('POST', '/v1/sessions', OPEN);
    const b = await c.call('POST', '/v1/sessions', OPEN);
    expect([a.status, b.status]).toEqual([200, 200]);
    const full = await c.call('POST', '/v1/sessions', OPEN);
    expect(full.status).toBe(503);
    expect(full.headers.get('retry-after')).toBe('1');
    expect(String(full.body.error)).toMatch(/all 2 environment sessions are open/);
    expect(await readdir(c.root)).toHaveLength(2);
    await c.call('POST', `/v1/sessions/${a.body.id}/close`);
    const again = await c.call('POST', '/v1/sessions', OPEN);
    expect(again.status).toBe(200);
    await c.call('POST', `/v1/sessions/${b.body.id}/close`);
    await c.call('POST', `/v1/sessions/${again.body.id}/close`);
    expect(await openCount()).toBe(0);
  });

  it('one request at a time (409); a client that goes away during a step ends its session and kills the program', async () => {
    const id = (await c.call('POST', '/v1/sessions', OPEN)).body.id as string;
    const pid = Number((await c.call('POST', `/v1/sessions/${id}/reset`, RESET)).body.detail);
    const ac = new AbortController();
    const hanging = c.call('POST', `/v1/sessions/${id}/step`, step([3], 'sleep'), {}, ac.signal).catch((e: Error) => e);
    await new Promise((r) => setTimeout(r, 300));
    const busy = await c.call('POST', `/v1/sessions/${id}/step`, step([3]));
    expect(busy.status).toBe(409);
    expect(String(busy.body.error)).toMatch(/still answering an earlier request/);
    ac.abort();
    expect(await hanging).toBeInstanceOf(Error);
    await until(async () => !(await alive(pid)), 10_000, `the program ${pid} to be killed after its client left`);
    const after = await c.call('POST', `/v1/sessions/${id}/step`, step([3]));
    expect(after.body).toMatchObject({
      status: 'error',
      detail: expect.stringMatching(/step was cancelled \(its client went away\)/),
    });
    await c.call('POST', `/v1/sessions/${id}/close`);
    expect(await readdir(c.root)).toEqual([]);
  });
});

describe('environment sessions: idle timeout and shutdown', () => {
  it('a session idle past idleSeconds is closed: its program killed, its directory deleted, its id gone', async () => {
    const c = await companion({ idleSeconds: 0.5 });
    try {
      const id = (await c.call('POST', '/v1/sessions', OPEN)).body.id as string;
      const pid = Number((await c.call('POST', `/v1/sessions/${id}/reset`, RESET)).body.detail);
      await until(async () => !(await alive(pid)), 10_000, 'the idle session to be closed');
      await until(async () => (await readdir(c.root)).length === 0, 5_000, 'its job directory to be deleted');
      expect((await c.call('POST', `/v1/sessions/${id}/step`, step([3]))).status).toBe(404);
    } finally {
      await c.server.close();
      await rm(c.root, { recursive: true, force: true });
    }
  });

  it("the companion's close closes every session", async () => {
    const c = await companion({});
    const pids: number[] = [];
    for (let k = 0; k < 2; k++) {
      const id = (await c.call('POST', '/v1/sessions', OPEN)).body.id as string;
      pids.push(Number((await c.call('POST', `/v1/sessions/${id}/reset`, RESET)).body.detail));
    }
    for (const pid of pids) expect(await alive(pid)).toBe(true);
    await c.server.close();
    for (const pid of pids) expect(await alive(pid)).toBe(false);
    expect(await readdir(c.root)).toEqual([]);
    await rm(c.root, { recursive: true, force: true });
  });
});
