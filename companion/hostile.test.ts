/**
 * Hostile programs through the real companion: `startCompanion` on an ephemeral port behind a
 * token and an origin, the real ProcessRunner, real processes, one property per test. Each checks
 * the verdict, that the request ended within a generous bound (deadlines are the property under
 * test, not speed: CI has 2 slow cores), that no process of the job is left (a /proc sweep: its
 * group, session, HOME or uid, and every pid it printed) and that the job directory is gone (this
 * file's own tmpRoot must be empty).
 *
 * Where this machine cannot contain something (no network namespace, no uid of its own when the
 * companion is not root), the test asserts what `probe()` reports and what the program then
 * really could do, rather than skipping. Skipped only without python3 or prlimit, and never in CI.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { accessSync, constants as fsConstants, existsSync } from 'node:fs';
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { UID_RANGE, type Containment } from './containment';
import { ProcessRunner } from './process-runner';
import type { Outcome, SandboxLimitsInput } from './protocol';
import type { RunningCompanion } from './server';
import { startCompanion } from './server';
import { alive, pidsIn, processesOf, proc, py, type StartedJob } from './testing/processes';

const TOKEN = `hostile-${randomBytes(12).toString('hex')}`;
const ORIGIN = 'http://localhost:5173';
const MiB = 1024 ** 2;
/** In the companion's own environment only: no program may see it. */
const SECRET = `dewpoint-secret-${randomBytes(12).toString('hex')}`;
process.env.DEWPOINT_HOSTILE_SECRET = SECRET;

const onPath = (name: string) =>
  (process.env.PATH ?? '').split(delimiter).some((d) => {
    try {
      accessSync(join(d, name), fsConstants.X_OK);
      return true;
    } catch {
      return false; // not in this directory: try the next
    }
  });
const missing = ['python3', 'prlimit'].filter((t) => !onPath(t));

describe.skipIf(missing.length > 0 && !process.env.CI)(
  `hostile programs through the companion's HTTP server${missing.length ? ` (missing: ${missing.join(', ')})` : ''}`,
  () => {
    let root: string;
    let companion: RunningCompanion;
    let containment: Containment;
    /** This test's jobs, and every job of this file. */
    const jobs: StartedJob[] = [];
    const everyJob: StartedJob[] = [];

    beforeAll(async () => {
      root = await mkdtemp(join(tmpdir(), 'dewpoint-hostile-'));
      // A program with a uid of its own must pass through here to reach its job directory by path.
      await chmod(root, 0o711);
      const runner = new ProcessRunner({ tmpRoot: root, onStart: (job) => jobs.push(job) && everyJob.push(job) });
      containment = await runner.probe();
      companion = await startCompanion(
        {
          runner: { name: 'process', run: runner.run.bind(runner) },
          token: TOKEN,
          origins: [ORIGIN],
          workers: 1,
          queueLimit: 4,
          maxBodyBytes: 32 * MiB,
          networkIsolation: containment.networkIsolation,
        },
        0,
      );
    });
    afterAll(async () => {
      await companion?.close();
      await rm(root, { recursive: true, force: true });
    });
    beforeEach(() => {
      jobs.length = 0;
    });

    /** POST /v1/run with main.py = `source`; the outcome and how long the request took, seconds. */
    async function run(
      source: string,
      limits: SandboxLimitsInput = {},
      extra: { stdin?: string } = {},
    ): Promise<{ o: Outcome; took: number }> {
      const body = JSON.stringify({ files: { 'main.py': py(source) }, limits, ...extra });
      const started = performance.now();
      const r = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const headers = {
          host: `127.0.0.1:${companion.port}`,
          origin: ORIGIN,
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
        };
        const req = request(
          { host: '127.0.0.1', port: companion.port, method: 'POST', path: '/v1/run', headers },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      const took = (performance.now() - started) / 1000;
      expect(r.status, r.text.slice(0, 500)).toBe(200);
      expect(jobs).toHaveLength(1);
      return { o: JSON.parse(r.text) as Outcome, took };
    }

    async function expectNothingLeft(printedPids: number[] = []): Promise<void> {
      expect(await readdir(root), 'job directories left behind').toEqual([]);
      for (const job of jobs) expect(await processesOf(job), `processes of job ${job.pid} left`).toEqual([]);
      for (const pid of printedPids) expect(await alive(pid), `pid ${pid} printed by the program is alive`).toBe(false);
    }

    const bytes = (o: Outcome) => Buffer.byteLength(o.stdout) + Buffer.byteLength(o.stderr);

    describe('time and processes', () => {
      it('an infinite loop is TIMEOUT at cpuSeconds 1 (RLIMIT_CPU)', async () => {
        const { o, took } = await run(`while True: pass`, { cpuSeconds: 1, wallSeconds: 10 });
        expect(o).toMatchObject({ verdict: 'TIMEOUT', signal: 'SIGKILL', detail: expect.stringMatching(/^CPU limit/) });
        expect(took).toBeLessThan(10);
        await expectNothingLeft();
      });

      it('a SIGXCPU handler does not save it: still TIMEOUT at the CPU limit', async () => {
        const { o, took } = await run(
          `
        import signal
        signal.signal(signal.SIGXCPU, lambda *_: None)
        while True: pass
      `,
          { cpuSeconds: 1, wallSeconds: 10 },
        );
        expect(o).toMatchObject({ verdict: 'TIMEOUT', detail: expect.stringMatching(/^CPU limit/) });
        expect(took).toBeLessThan(10);
        await expectNothingLeft();
      });

      it('sleeping forever is TIMEOUT at wallSeconds 1, killed by the runner', async () => {
        const { o, took } = await run(`import time; time.sleep(10_000)`, { wallSeconds: 1 });
        expect(o).toMatchObject({
          verdict: 'TIMEOUT',
          signal: 'SIGKILL',
          detail: 'killed by the runner at the 1 s wall deadline',
        });
        expect(took).toBeLessThan(6);
        await expectNothingLeft();
      });

      it('a fork bomb stops at maxProcesses (RLIMIT_NPROC for this run alone), or the report says it is not bounded', async () => {
        if (containment.maxProcesses === null) {
          // Not run where nothing bounds it: it would take this machine down with it.
          expect(containment.notes).toContainEqual(expect.stringMatching(/^fork bomb: NOT bounded/));
          return;
        }
        let peak = 0;
        let sampling = true;
        const sampler = (async () => {
          while (sampling) {
            if (jobs[0]) peak = Math.max(peak, (await processesOf(jobs[0])).length);
            await new Promise((r) => setTimeout(r, 25));
          }
        })();
        const { o, took } = await run(
          `
        import os, time
        main = os.getpid(); said = False
        while True:
            try:
                os.fork()
            except OSError as e:
                if os.getpid() == main and not said:
                    print("refused:", e, flush=True); said = True
                time.sleep(0.05)
      `,
          { wallSeconds: 2 },
        ).finally(() => (sampling = false));
        await sampler;
        expect(o).toMatchObject({ verdict: 'TIMEOUT', detail: 'killed by the runner at the 2 s wall deadline' });
        expect(o.stdout).toMatch(/^refused: \[Errno 11\]/);
        expect(peak).toBeGreaterThan(1);
        expect(peak).toBeLessThanOrEqual(containment.maxProcesses);
        expect(took).toBeLessThan(10);
        await expectNothingLeft();
      });

      it('a memory hog under memoryBytes 64 MiB is FAILED with MemoryError (RLIMIT_AS)', async () => {
        const { o, took } = await run(
          `
        chunks = []
        while True: chunks.append(bytearray(8 * 1024 * 1024))
      `,
          { memoryBytes: 64 * MiB },
        );
        expect(o).toMatchObject({ verdict: 'FAILED', exitCode: 1, stderr: expect.stringContaining('MemoryError') });
        expect(took).toBeLessThan(10);
        await expectNothingLeft();
      });

      it.each([
        ['sys.exit(0)', 'COMPLETED', 0, ''],
        ['sys.exit(1)', 'FAILED', 1, ''],
        ['sys.exit(3)', 'FAILED', 3, ''],
        ['sys.exit(255)', 'FAILED', 255, ''],
        ['sys.exit("a message")', 'FAILED', 1, 'a message\n'],
      ])('%s is %s with exit code %i', async (call, verdict, exitCode, stderr) => {
        const { o, took } = await run(`import sys; ${call}`);
        expect(o).toMatchObject({ verdict, exitCode, signal: null, stderr, detail: `exit code ${exitCode}` });
        expect(took).toBeLessThan(6);
        await expectNothingLeft();
      });
    });

    describe('output', () => {
      const flood = (fds: string) => `
      import os
      while True:
          for fd in (${fds}): os.write(fd, b"x" * 65536)
    `;
      it.each([
        ['stdout', '1,'],
        ['stderr', '2,'],
        ['both', '1, 2'],
      ])('a flood on %s is OUTPUT_LIMIT, cut to messageBytes', async (_stream, fds) => {
        // The default 1 MiB: well past what a pipe holds, so neither stream of "both" can fill it alone.
        const { o, took } = await run(flood(fds));
        expect(o).toMatchObject({ verdict: 'OUTPUT_LIMIT', truncated: true });
        expect(bytes(o)).toBe(MiB);
        if (fds.includes('1')) expect(o.stdout.length).toBeGreaterThan(0);
        if (fds.includes('2')) expect(o.stderr.length).toBeGreaterThan(0);
        expect(took).toBeLessThan(6);
        await expectNothingLeft();
      });

      it('output exactly at messageBytes (stdout + stderr) is COMPLETED and whole', async () => {
        const { o, took } = await run(`import os; os.write(1, b"a" * 600); os.write(2, b"b" * 400)`, {
          messageBytes: 1000,
        });
        expect(o).toMatchObject({
          verdict: 'COMPLETED',
          truncated: false,
          stdout: 'a'.repeat(600),
          stderr: 'b'.repeat(400),
        });
        expect(took).toBeLessThan(6);
        await expectNothingLeft();
      });

      it('one byte over messageBytes is OUTPUT_LIMIT, cut to the limit', async () => {
        const { o, took } = await run(`import os; os.write(1, b"a" * 600); os.write(2, b"b" * 401)`, {
          messageBytes: 1000,
        });
        expect(o).toMatchObject({ verdict: 'OUTPUT_LIMIT', truncated: true });
        expect(bytes(o)).toBe(1000);
        expect(took).toBeLessThan(6);
        await expectNothingLeft();
      });

      it('invalid UTF-8 arrives as U+FFFD', async () => {
        const { o, took } = await run(`import os; os.write(1, b"ok \\xff\\xfe end \\xc3")`);
        expect(o).toMatchObject({ verdict: 'COMPLETED', stdout: 'ok \uFFFD\uFFFD end \uFFFD' });
        expect(took).toBeLessThan(6);
        await expectNothingLeft();
      });

      it('closing stdout and stderr, then running on, is TIMEOUT at the wall deadline', async () => {
        const { o, took } = await run(
          `
        import os, time
        os.write(1, b"before\\n"); os.close(1); os.close(2)
        time.sleep(10_000)
      `,
          { wallSeconds: 1 },
        );
        expect(o).toMatchObject({
          verdict: 'TIMEOUT',
          stdout: 'before\n',
          stderr: '',
          detail: 'killed by the runner at the 1 s wall deadline',
        });
        expect(took).toBeLessThan(6);
        await expectNothingLeft();
      });

      it('8 MiB of stdin is read whole', async () => {
        const stdin = 'abcdefgh\n'.repeat((8 * MiB) / 9);
        const { o, took } = await run(
          `
        import hashlib, sys
        data = sys.stdin.buffer.read()
        print(len(data), hashlib.sha256(data).hexdigest())
      `,
          {},
          { stdin },
        );
        expect(o).toMatchObject({
          verdict: 'COMPLETED',
          stdout: `${stdin.length} ${createHash('sha256').update(stdin).digest('hex')}\n`,
        });
        expect(took).toBeLessThan(15);
        await expectNothingLeft();
      });
    });

    describe('children', () => {
      it('a detached, double-forked grandchild (reparented, still in the group) is killed', async () => {
        const { o, took } = await run(`
        import os, time
        r, w = os.pipe()  # the program exits only once the grandchild has printed its pid
        if os.fork() == 0:
            if os.fork() == 0:
                print(os.getpid(), flush=True)
                os.write(w, b"x")
                time.sleep(10_000)
            os._exit(0)
        os.wait()
        os.read(r, 1)
      `);
        expect(o.verdict).toBe('COMPLETED');
        expect(pidsIn(o.stdout)).toHaveLength(1);
        expect(took).toBeLessThan(6);
        await expectNothingLeft(pidsIn(o.stdout));
      });

      it('a setsid grandchild (its own session and group) is killed', async () => {
        const { o, took } = await run(`
        import os, time
        r, w = os.pipe()
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                print(os.getpid(), os.getsid(0), flush=True)
                os.write(w, b"x")
                time.sleep(10_000)
            os._exit(0)
        os.wait()
        os.read(r, 1)
      `);
        const [pid, sid] = pidsIn(o.stdout);
        expect(o.verdict).toBe('COMPLETED');
        expect(sid).not.toBe(jobs[0].pid);
        expect(took).toBeLessThan(6);
        await expectNothingLeft([pid]);
      });

      it('a child that leaves its session, environment and directory is killed with a uid of its own, else outlives the run as reported', async () => {
        const { o, took } = await run(`
        import os
        r, w = os.pipe()
        if os.fork() == 0:
            os.setsid(); os.chdir("/")
            print(os.getpid(), flush=True)
            os.write(w, b"x")
            os.execve("/bin/sleep", ["sleep", "10000"], {})
        os.read(r, 1)
      `);
        const [pid] = pidsIn(o.stdout);
        try {
          expect(o.verdict).toBe('COMPLETED');
          expect(took).toBeLessThan(6);
          expect(await alive(pid)).toBe(!containment.dedicatedUser);
          if (!containment.dedicatedUser)
            expect(containment.notes).toContainEqual(
              expect.stringMatching(/a child that leaves its session, environment and job directory outlives the run/),
            );
          expect(await readdir(root)).toEqual([]);
        } finally {
          if (await alive(pid)) process.kill(pid, 'SIGKILL');
        }
      });

      it('kill(-1, SIGKILL) reaches only its own processes with a uid of its own (else the report says it reaches ours)', async () => {
        if (!containment.dedicatedUser) {
          // Not run without a uid of its own: it would kill this test runner and everything else of its user.
          expect(containment.notes).toContainEqual(
            expect.stringMatching(/^processes: can signal and trace every process of .*, the companion included/),
          );
          return;
        }
        const sentinel = spawn('sleep', ['30'], { stdio: 'ignore' });
        try {
          const { o, took } = await run(`
          import os, signal, sys, time
          if os.getuid() in (0, ${process.geteuid!()}): sys.exit(97)  # never as a user that owns anything else
          child = os.fork()
          if child == 0: time.sleep(10_000)
          os.kill(-1, signal.SIGKILL)  # everything this uid may signal, except itself
          print(os.waitpid(child, 0)[1] & 0x7f)
        `);
          expect(o).toMatchObject({ verdict: 'COMPLETED', stdout: '9\n' });
          expect(await alive(sentinel.pid!)).toBe(true);
          expect(took).toBeLessThan(6);
          await expectNothingLeft();
        } finally {
          sentinel.kill('SIGKILL');
        }
      });
    });

    describe('reaching out', () => {
      it('a connect to a listening 127.0.0.1 socket fails with network isolation, and succeeds as reported without', async () => {
        let accepted = 0;
        const server = createServer((s) => {
          accepted++;
          s.destroy();
        });
        await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
        try {
          const { port } = server.address() as { port: number };
          const { o, took } = await run(`
          import socket
          try:
              socket.create_connection(("127.0.0.1", ${port}), timeout=2).close()
              print("connected")
          except OSError as e:
              print("refused", e.errno)
        `);
          expect(o.verdict).toBe('COMPLETED');
          // The namespace's own loopback answers, where it is up: nobody listens there (ECONNREFUSED), else ENETUNREACH.
          expect(o.stdout).toBe(
            containment.networkIsolation ? `refused ${containment.loopback ? 111 : 101}\n` : 'connected\n',
          );
          expect(accepted).toBe(containment.networkIsolation ? 0 : 1);
          expect(took).toBeLessThan(6);
          await expectNothingLeft();
        } finally {
          server.close();
        }
      });

      it('the program talks to itself over its own 127.0.0.1; a closed port there is refused; nothing outside answers', async () => {
        const { o } = await run(`
          import socket
          server = socket.socket()
          server.bind(("127.0.0.1", 0))
          server.listen()
          port = server.getsockname()[1]
          try:
              c = socket.create_connection(("127.0.0.1", port), timeout=2)
              a, _ = server.accept()
              c.sendall(b"ping")
              print("self", a.recv(4).decode())
          except OSError as e:
              print("self failed", e.errno)
          probe = socket.socket()
          probe.bind(("127.0.0.1", 0))
          closed = probe.getsockname()[1]
          probe.close()
          for host, p in (("127.0.0.1", closed), ("192.0.2.1", 9), ("8.8.8.8", 53)):
              try:
                  socket.create_connection((host, p), timeout=1).close()
                  print(host, "connected")
              except OSError as e:
                  print(host, "errno", e.errno)
        `);
        expect(o.verdict, o.stderr).toBe('COMPLETED');
        const lines = o.stdout.trim().split('\n');
        if (containment.networkIsolation && containment.loopback) {
          expect(lines[0]).toBe('self ping');
          expect(lines[1]).toBe('127.0.0.1 errno 111'); // ECONNREFUSED, not ENETUNREACH
          // Outside: ENETUNREACH (no route but loopback), never a connection.
          expect(lines.slice(2)).toEqual(['192.0.2.1 errno 101', '8.8.8.8 errno 101']);
          expect(containment.notes[0]).toMatch(/its own loopback is up/);
        } else if (containment.networkIsolation) {
          expect(lines[0]).toBe('self failed 101');
          expect(containment.notes[0]).toMatch(/its loopback is down \(/);
        } else {
          expect(lines[0]).toBe('self ping');
        }
        await expectNothingLeft();
      });

      it('writes outside the job directory are refused with a uid of its own, but /tmp and /dev/shm, whose leftovers are deleted', async () => {
        // Writable by the companion's user only, like any directory of it.
        const outside = await mkdtemp(join(tmpdir(), 'dewpoint-hostile-outside-'));
        await chmod(outside, 0o755);
        const tag = randomBytes(6).toString('hex');
        const shm: Record<string, string> = existsSync('/dev/shm') ? { shm: `/dev/shm/dewpoint-hostile-${tag}` } : {};
        const targets: Record<string, string> = {
          outside: join(outside, 'x'),
          tmp: `/tmp/dewpoint-hostile-${tag}`,
          ...shm,
          inside: 'inside',
        };
        try {
          const { o, took } = await run(`
          import errno, json
          result = {}
          for name, path in json.loads(${JSON.stringify(JSON.stringify(targets))}).items():
              try:
                  open(path, "w").write("x"); result[name] = "ok"
              except OSError as e:
                  result[name] = errno.errorcode[e.errno]
          print(json.dumps(result, sort_keys=True))
        `);
          expect(o.verdict).toBe('COMPLETED');
          expect(JSON.parse(o.stdout)).toEqual({
            inside: 'ok',
            outside: containment.dedicatedUser ? 'EACCES' : 'ok',
            tmp: 'ok',
            ...(targets.shm ? { shm: 'ok' } : {}),
          });
          // With a uid of its own its leftovers are found and deleted; else they stay, as reported.
          for (const left of [targets.tmp, targets.shm].filter(Boolean))
            expect(existsSync(left), left).toBe(!containment.dedicatedUser);
          if (!containment.dedicatedUser)
            expect(containment.notes).toContainEqual(expect.stringMatching(/^files: NOT confined/));
          expect(took).toBeLessThan(6);
          await expectNothingLeft();
        } finally {
          await rm(outside, { recursive: true, force: true });
          for (const left of [targets.tmp, targets.shm].filter(Boolean)) await rm(left, { force: true });
        }
      });

      it("the companion's secret environment variable is in no environment the program can read", async () => {
        // setenv does not change /proc/<pid>/environ (the environment a process started with): this
        // stands for a companion started with the secret in its environment.
        const holder = spawn('sleep', ['30'], {
          stdio: 'ignore',
          env: { ...process.env, DEWPOINT_HOSTILE_SECRET: SECRET },
        });
        await new Promise((res) => holder.once('spawn', res));
        try {
          const { o, took } = await run(`
          import json, os
          found = []
          for pid in filter(str.isdigit, os.listdir("/proc")):
              try:
                  if ${JSON.stringify(SECRET)}.encode() in open(f"/proc/{pid}/environ", "rb").read(): found.append(int(pid))
              except OSError:
                  pass
          print(json.dumps({"own": ${JSON.stringify(SECRET)} in str(os.environ), "others": found}))
        `);
          const seen = JSON.parse(o.stdout) as { own: boolean; others: number[] };
          expect(o.verdict).toBe('COMPLETED');
          expect(seen.own).toBe(false);
          // Only a program running as the holder's user can read its environ.
          if (containment.dedicatedUser) expect(seen.others).toEqual([]);
          else expect(seen.others).toContain(holder.pid);
          expect(took).toBeLessThan(6);
          await expectNothingLeft();
        } finally {
          holder.kill('SIGKILL');
        }
      });
    });

    it('in the end, no process of any job of this file is left, nor of any uid they ran as', async () => {
      expect(everyJob.length).toBeGreaterThan(20);
      const left: number[] = [];
      for (const name of await readdir('/proc')) {
        const p = Number.isInteger(Number(name)) ? await proc(Number(name)) : null;
        if (!p || p.state === 'Z' || p.state === 'X') continue;
        const ofJob = everyJob.some(
          (j) => j.pid === p.pgrp || j.pid === p.session || (j.uid !== null && p.uids.includes(j.uid)),
        );
        if (ofJob) left.push(p.pid);
      }
      expect(left).toEqual([]);
      if (containment.dedicatedUser)
        expect(
          everyJob.every(
            (j) => j.uid !== null && j.uid >= UID_RANGE.first && j.uid < UID_RANGE.first + UID_RANGE.count,
          ),
        ).toBe(true);
      expect(await readdir(root)).toEqual([]);
    });
  },
);
