import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProcessRunner } from './process-runner';
import type { Outcome, Program, SandboxLimits } from './protocol';
import type { Runner, RunningCompanion } from './server';
import { IDLE_SOCKET_MS, sameSecret, startCompanion } from './server';

const TOKEN = 'test-token-0123456789abcdef';
const ORIGIN = 'http://localhost:5173';

/** This file's job directories: a refused request must not even make one. */
const tmpRoot = mkdtempSync(join(tmpdir(), 'dewpoint-server-test-'));
chmodSync(tmpRoot, 0o711);
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));

/** The real ProcessRunner, counting what it was asked to run (so a refused request can be shown to run nothing). */
class CountingRunner implements Runner {
  readonly name = 'process';
  readonly inner = new ProcessRunner({ tmpRoot, onStart: () => this.started++ });
  runs = 0;
  /** Programs that really started. */
  started = 0;
  run(program: Program, limits: SandboxLimits, signal?: AbortSignal): Promise<Outcome> {
    this.runs++;
    return this.inner.run(program, limits, signal);
  }
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

/** One HTTP request with exactly these headers (node:http, so Host and Origin are ours to set). */
function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: {
          ...(body !== undefined
            ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }
            : {}),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
          });
        });
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

describe('companion HTTP server (real server, real processes)', () => {
  const runner = new CountingRunner();
  let companion: RunningCompanion;
  let good: Record<string, string>;
  beforeAll(async () => {
    companion = await startCompanion(
      {
        runner,
        token: TOKEN,
        origins: [ORIGIN],
        workers: 1,
        queueLimit: 1,
        maxBodyBytes: 64 * 1024,
        networkIsolation: false,
      },
      0,
    );
    good = { host: `127.0.0.1:${companion.port}`, origin: ORIGIN, authorization: `Bearer ${TOKEN}` };
  });
  afterAll(() => companion.close());
  const hello = JSON.stringify({
    files: { 'main.py': 'print(input()[::-1])' },
    stdin: 'abc\n',
    limits: { wallSeconds: 10 },
  });

  it('health: version, runner, workers, queue, limits and network isolation', async () => {
    const r = await send(companion.port, 'GET', '/v1/health', good);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      version: '0.1.0',
      runner: 'process',
      workers: 1,
      queue: 0,
      networkIsolation: false,
      limits: { wallSeconds: 30, cpuSeconds: 10, memoryBytes: 256 * 1024 ** 2, messageBytes: 1024 ** 2 },
    });
    expect(r.headers['access-control-allow-origin']).toBe(ORIGIN);
  });

  it('runs a program through the real runner and returns its outcome', async () => {
    const before = runner.runs;
    const r = await send(companion.port, 'POST', '/v1/run', good, hello);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ verdict: 'COMPLETED', exitCode: 0, stdout: 'cba\n', truncated: false });
    expect(runner.runs).toBe(before + 1);
  });

  it.each([
    ['no token', { authorization: '' }, 401, /missing Authorization/],
    ['a wrong token', { authorization: `Bearer ${TOKEN}x` }, 401, /wrong token/],
    ['a token without the Bearer scheme', { authorization: TOKEN }, 401, /missing Authorization/],
    ['a foreign Origin', { origin: 'http://evil.example' }, 403, /Origin 'http:\/\/evil.example' is not allowed/],
    ['no Origin', { origin: '' }, 403, /Origin '\(none\)' is not allowed/],
    [
      'a foreign Host (DNS rebinding)',
      { host: 'evil.example:80' },
      421,
      /Host 'evil.example:80' is not this companion/,
    ],
    [
      'a Basic scheme',
      { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` },
      401,
      /missing Authorization/,
    ],
    ["the token's prefix", { authorization: `Bearer ${TOKEN.slice(0, -1)}` }, 401, /wrong token/],
    ['Origin null (a sandboxed frame, a file)', { origin: 'null' }, 403, /Origin 'null' is not allowed/],
    [
      'an allowed origin on another port',
      { origin: 'http://localhost:5174' },
      403,
      /Origin 'http:\/\/localhost:5174' is not allowed/,
    ],
    ['the loopback host on another port', { host: '127.0.0.1:1' }, 421, /Host '127.0.0.1:1' is not this companion/],
  ] as [string, Record<string, string>, number, RegExp][])(
    'refuses %s, and runs nothing',
    async (_what, change, status, message) => {
      const headers = Object.fromEntries(Object.entries({ ...good, ...change }).filter(([, v]) => v !== ''));
      const before = { runs: runner.runs, started: runner.started };
      const r = await send(companion.port, 'POST', '/v1/run', headers, hello);
      expect(r.status).toBe(status);
      expect(String(r.body.error)).toMatch(message);
      expect({ runs: runner.runs, started: runner.started }).toEqual(before);
      expect(readdirSync(tmpRoot)).toEqual([]);
      // Refused before the origin was accepted: no CORS grant, so a foreign page cannot even read the refusal.
      if ('origin' in change || 'host' in change) expect(r.headers['access-control-allow-origin']).toBeUndefined();
    },
  );

  it('answers a CORS preflight for the allowed origin only, without a token', async () => {
    const preflight = {
      host: good.host,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type',
    };
    const ok = await send(companion.port, 'OPTIONS', '/v1/run', { ...preflight, origin: ORIGIN });
    expect(ok.status).toBe(204);
    expect(ok.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(String(ok.headers['access-control-allow-headers'])).toMatch(/Authorization/);
    const foreign = await send(companion.port, 'OPTIONS', '/v1/run', { ...preflight, origin: 'http://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
    // A preflight with a body still runs nothing.
    const before = runner.runs;
    const withBody = await send(companion.port, 'OPTIONS', '/v1/run', { ...preflight, origin: ORIGIN }, hello);
    expect(withBody.status).toBe(204);
    expect(runner.runs).toBe(before);
  });

  it.each([
    ['POST', '/v1/run'],
    ['POST', '/v1/run-batch'],
    ['POST', '/v1/reward/code'],
    ['POST', '/v1/sessions'],
    ['GET', '/v1/health'],
    ['GET', '/v2/no-such-route'],
  ])('%s %s without a token is 401 before any routing or parsing, and runs nothing', async (method, path) => {
    const before = { runs: runner.runs, started: runner.started };
    const body = JSON.stringify({
      files: { 'main.py': 'print(1)' },
      programs: [{ files: { 'main.py': 'print(1)' } }],
      completion: '```python\nprint(1)\n```',
      groundTruth: [],
    });
    const r = await send(
      companion.port,
      method,
      path,
      { host: good.host, origin: ORIGIN },
      method === 'POST' ? body : undefined,
    );
    expect(r.status).toBe(401);
    expect({ runs: runner.runs, started: runner.started }).toEqual(before);
    expect(readdirSync(tmpRoot)).toEqual([]);
  });

  it('refuses an oversized chunked body (no Content-Length) with 413, and runs nothing', async () => {
    const before = runner.runs;
    const r = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: companion.port,
          method: 'POST',
          path: '/v1/run',
          headers: { ...good, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.write('{"files": {"main.py": "');
      for (let i = 0; i < 10; i++) req.write('x'.repeat(8 * 1024));
      req.end('"}}');
    });
    expect(r).toBe(413);
    expect(runner.runs).toBe(before);
    expect(readdirSync(tmpRoot)).toEqual([]);
  });

  it('refuses an oversized body with 413, and a bad one with a 400 naming the field; nothing runs', async () => {
    const before = runner.runs;
    const big = await send(
      companion.port,
      'POST',
      '/v1/run',
      good,
      JSON.stringify({ files: { 'main.py': 'x'.repeat(70 * 1024) } }),
    );
    expect(big.status).toBe(413);
    const cases: [unknown, RegExp][] = [
      [
        { files: { '../escape.py': 'print(1)' } },
        /files\["\.\.\/escape\.py"\]: a file name must not contain a \.\. segment/,
      ],
      [{ files: { '/etc/passwd': 'x' } }, /files\["\/etc\/passwd"\]: a file name must be relative/],
      [
        { files: { 'main.py': 'print(1)' }, limits: { cpuSeconds: 0 } },
        /limits\.cpuSeconds: must be an integer in 1\.\.3600, got 0/,
      ],
      [{ files: { 'main.py': 'print(1)' }, limits: { gpus: 1 } }, /limits\.gpus: unknown field/],
      [{ files: { 'main.py': 'print(1)' }, shell: 'rm -rf /' }, /shell: unknown field/],
      [{ argv: ['python3'] }, /files/],
    ];
    for (const [body, message] of cases) {
      const r = await send(companion.port, 'POST', '/v1/run', good, JSON.stringify(body));
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(String(r.body.error)).toMatch(message);
    }
    const notJson = await send(companion.port, 'POST', '/v1/run', good, '{"files":');
    expect(notJson.status).toBe(400);
    expect(runner.runs).toBe(before);
    expect(readdirSync(tmpRoot)).toEqual([]);
  });

  it('a full queue answers 503 with Retry-After while one program runs and one waits', async () => {
    const slow = JSON.stringify({ files: { 'main.py': 'import time; time.sleep(1.5)' }, limits: { wallSeconds: 10 } });
    const first = send(companion.port, 'POST', '/v1/run', good, slow);
    await new Promise((r) => setTimeout(r, 200));
    const second = send(companion.port, 'POST', '/v1/run', good, slow);
    await new Promise((r) => setTimeout(r, 200));
    const third = await send(companion.port, 'POST', '/v1/run', good, slow);
    expect(third.status).toBe(503);
    expect(third.headers['retry-after']).toBe('1');
    expect((await first).body.verdict).toBe('COMPLETED');
    expect((await second).body.verdict).toBe('COMPLETED');
  });

  it('runs a batch in order, and refuses a bad entry naming its index', async () => {
    // This server has one worker and one queue place: a batch of two fits, a third would not.
    const programs = [3, 1].map((n) => ({ files: { 'main.py': `import time; time.sleep(${n / 10}); print(${n})` } }));
    const r = await send(companion.port, 'POST', '/v1/run-batch', good, JSON.stringify({ programs }));
    expect(r.status).toBe(200);
    expect((r.body.outcomes as { stdout: string }[]).map((o) => o.stdout)).toEqual(['3\n', '1\n']);
    const tooMany = await send(
      companion.port,
      'POST',
      '/v1/run-batch',
      good,
      JSON.stringify({ programs: [...programs, programs[0]] }),
    );
    expect(tooMany.status).toBe(503);
    expect(String(tooMany.body.error)).toMatch(/a batch of 3 does not fit/);
    // Refused whole: not even its good first entry runs.
    const before = runner.runs;
    const bad = await send(
      companion.port,
      'POST',
      '/v1/run-batch',
      good,
      JSON.stringify({ programs: [programs[0], { files: { 'a/../b.py': '' } }] }),
    );
    expect(bad.status).toBe(400);
    expect(String(bad.body.error)).toMatch(
      /programs\[1\]\.files\["a\/\.\.\/b\.py"\]: a file name must not contain a \.\. segment/,
    );
    expect(runner.runs).toBe(before);
    expect(readdirSync(tmpRoot)).toEqual([]);
  });

  it('a client that goes away cancels its program: the process is killed', async () => {
    const marker = `/tmp/companion-abort-${process.pid}.pid`;
    const body = JSON.stringify({
      files: {
        'main.py': `import os, time\nopen(${JSON.stringify(marker)}, 'w').write(str(os.getpid()))\ntime.sleep(30)`,
      },
      limits: { wallSeconds: 30 },
    });
    const req = request({
      host: '127.0.0.1',
      port: companion.port,
      method: 'POST',
      path: '/v1/run',
      headers: { ...good, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
    });
    req.on('error', () => undefined);
    req.end(body);
    const t0 = Date.now();
    while (!(existsSync(marker) && readFileSync(marker, 'utf8'))) {
      if (Date.now() - t0 > 10_000) throw new Error('the program did not start');
      await new Promise((r) => setTimeout(r, 20));
    }
    const pid = Number(readFileSync(marker, 'utf8'));
    rmSync(marker);
    req.destroy();
    const t1 = Date.now();
    while (existsSync(`/proc/${pid}`)) {
      if (Date.now() - t1 > 5_000) throw new Error(`program ${pid} still runs after its client left`);
      await new Promise((r) => setTimeout(r, 20));
    }
  });

  it('grades a code completion case by case, and refuses a ground truth that is not a case list', async () => {
    // This server has room for two programs (one worker, one queue place): wait until the last test's are gone.
    while ((await send(companion.port, 'GET', '/v1/health', good)).body.running !== 0)
      await new Promise((r) => setTimeout(r, 20));
    const completion = 'Here:\n```python\nprint(int(input()) * 2)\n```';
    const groundTruth = JSON.stringify([
      { stdin: '2\n', stdout: '4\n' },
      { stdin: '5\n', stdout: '11' },
    ]);
    const r = await send(companion.port, 'POST', '/v1/reward/code', good, JSON.stringify({ completion, groundTruth }));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ reward: 0.5, program: 'print(int(input()) * 2)' });
    expect((r.body.cases as { passed: boolean }[]).map((x) => x.passed)).toEqual([true, false]);
    const bad = await send(
      companion.port,
      'POST',
      '/v1/reward/code',
      good,
      JSON.stringify({ completion, groundTruth: '[{"stdin": 1}]' }),
    );
    expect(bad.status).toBe(400);
    expect(String(bad.body.error)).toMatch(/groundTruth\[0\]\.stdin/);
  });

  it('keeps an idle connection two minutes, so a client busy with a long step finds it open', async () => {
    const r = await send(companion.port, 'GET', '/v1/health', good);
    expect(r.headers['keep-alive']).toBe(`timeout=${IDLE_SOCKET_MS / 1000}`);
  });

  it('names the routes on a 404', async () => {
    const r = await send(companion.port, 'GET', '/v2/run', good);
    expect(r.status).toBe(404);
    expect(String(r.body.error)).toMatch(
      /routes: GET \/v1\/health, POST \/v1\/run, POST \/v1\/run-batch, POST \/v1\/reward\/code/,
    );
  });
});

describe('sameSecret', () => {
  it('compares secrets of any length', () => {
    expect(sameSecret('abc', 'abc')).toBe(true);
    expect(sameSecret('abc', 'abd')).toBe(false);
    expect(sameSecret('abc', 'abcd')).toBe(false);
    expect(sameSecret('', 'x')).toBe(false);
  });
});
