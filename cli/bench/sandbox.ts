/**
 * `bench sandbox`: programs per second and per-program latency (p50, p99) of a trivial Python
 * program (`pass`) through the companion's SandboxFleet over the ProcessRunner, and through its
 * HTTP server (POST /v1/run on 127.0.0.1), at 1 and N (= cores) workers, against a bare spawn of
 * the same interpreter (`python3 -I -S -c pass`, no job directory, limits or jail) measured in the
 * same run. W clients each run programs one after another, so latency is service time, not queue
 * wait. The header names what the runner contains here (probe()), since that is part of the cost.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { availableParallelism } from 'node:os';
import { SandboxFleet } from '../../companion/fleet';
import { ProcessRunner } from '../../companion/process-runner';
import { sandboxLimitsSchema, type Outcome } from '../../companion/protocol';
import { startCompanion } from '../../companion/server';
import type { BenchArgs } from './args';

interface Row {
  path: 'bare spawn' | 'fleet' | 'http';
  workers: number;
  programs: number;
  programsPerS: number;
  p50Ms: number;
  p99Ms: number;
}

const limits = sandboxLimitsSchema.parse({ wallSeconds: 10 });
const program = { files: { 'main.py': 'pass\n' } };

/** The q-quantile of `xs` (nearest rank). */
function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}

/** `total` calls of `once` from `workers` clients, each one after another; throughput and latency. */
async function measure(path: Row['path'], workers: number, total: number, once: () => Promise<void>): Promise<Row> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < total) {
        next++;
        const t0 = performance.now();
        await once();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  process.stderr.write(`sandbox: ${path} × ${workers}: ${total} programs in ${seconds.toFixed(2)} s\n`);
  return {
    path,
    workers,
    programs: total,
    programsPerS: total / seconds,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
  };
}

function bare(python: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, ['-I', '-S', '-c', 'pass'], {
      stdio: 'ignore',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`bench sandbox: bare ${python} exited ${code}`)),
    );
  });
}

function expectCompleted(o: Outcome): void {
  if (o.verdict !== 'COMPLETED')
    throw new Error(`bench sandbox: the trivial program ended ${o.verdict} (${o.detail}): ${o.stderr.slice(0, 300)}`);
}

/** POST /v1/run of the trivial program; throws unless it answers 200 COMPLETED. */
function post(port: number, token: string, origin: string, agent: Agent): Promise<void> {
  const body = JSON.stringify({ ...program, limits });
  return new Promise((resolve, reject) => {
    const headers = {
      host: `127.0.0.1:${port}`,
      origin,
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
    };
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/run', headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200)
          return reject(new Error(`bench sandbox: POST /v1/run answered ${res.statusCode}: ${text.slice(0, 300)}`));
        try {
          expectCompleted(JSON.parse(text) as Outcome);
          resolve();
        } catch (e) {
          reject(e as Error);
        }
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

export async function benchSandbox(args: BenchArgs) {
  const cores = availableParallelism();
  const total = args.runs ?? 48;
  const runner = new ProcessRunner();
  const containment = await runner.probe();
  const named = { name: 'process', run: runner.run.bind(runner) };

  // The interpreter the runner really starts (for a uid of its own, maybe not the companion's), for the bare baseline.
  const first = await runner.run({ files: { 'main.py': 'import sys; print(sys.executable)\n' } }, limits);
  expectCompleted(first);
  const python = first.stdout.trim();

  const rows: Row[] = [];
  for (const workers of [...new Set([1, cores])]) {
    // A few of each first: page cache, the probe, the JIT.
    for (let i = 0; i < workers * 2; i++) await bare(python);
    rows.push(await measure('bare spawn', workers, total, () => bare(python)));

    const fleet = new SandboxFleet(named, workers, workers);
    rows.push(
      await measure('fleet', workers, total, async () => expectCompleted(await fleet.submit({ program, limits }))),
    );
    await fleet.close();

    const token = randomBytes(16).toString('hex');
    const origin = 'http://localhost:5173';
    const companion = await startCompanion(
      {
        runner: named,
        token,
        origins: [origin],
        workers,
        queueLimit: workers,
        maxBodyBytes: 1024 ** 2,
        networkIsolation: containment.networkIsolation,
      },
      0,
    );
    const agent = new Agent({ keepAlive: true, maxSockets: workers });
    try {
      rows.push(await measure('http', workers, total, () => post(companion.port, token, origin, agent)));
    } finally {
      agent.destroy();
      await companion.close();
    }
  }

  const bareOf = (w: number) => rows.find((r) => r.path === 'bare spawn' && r.workers === w)!;
  const json = {
    bench: 'sandbox',
    program: 'main.py = "pass" (python3 -I -S main.py) vs bare python3 -I -S -c pass',
    python,
    cores,
    programsPerCell: total,
    statistic: `throughput over ${total} programs; latency p50 and p99 (nearest rank) per program`,
    containment: {
      networkIsolation: containment.networkIsolation,
      dedicatedUser: containment.dedicatedUser,
      maxProcesses: containment.maxProcesses,
      user: containment.user,
    },
    rows: rows.map((r) => ({ ...r, throughputVsBare: r.programsPerS / bareOf(r.workers).programsPerS })),
  };
  const f = (x: number, d = 1) => x.toFixed(d);
  const table = [
    `sandbox: a trivial Python program, ${total} per cell, ${cores} cores, python ${python}`,
    `containment: network ${containment.networkIsolation ? 'isolated' : 'NOT isolated'}; user: ${containment.user}; fork bomb bound: ${containment.maxProcesses ?? 'none'}`,
    '| path | workers | programs/s | p50 ms | p99 ms | throughput × bare |',
    '|---|---|---|---|---|---|',
    ...json.rows.map(
      (r) =>
        `| ${r.path} | ${r.workers} | ${f(r.programsPerS)} | ${f(r.p50Ms)} | ${f(r.p99Ms)} | ${f(r.throughputVsBare, 2)} |`,
    ),
  ].join('\n');
  return { table: `${table}\n`, json };
}
