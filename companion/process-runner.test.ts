/**
 * ProcessRunner against hostile programs, on real processes, one property per test. Each checks
 * the verdict, that the run ended within a generous bound (deadlines are the property under test
 * here, not speed: CI has 2 slow cores), that the job directory is gone and that no process of the
 * program is left (its process group and session, anything with HOME = its job directory or with
 * its own uid, and any pid the program printed). Then `probe()` and its fallbacks.
 *
 * The fork bomb, a network connect, writes outside the job directory and the rest of the hostile
 * programs run through the HTTP server in hostile.test.ts.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { chmod, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProcessRunner, RunnerUnavailable, type ProcessRunnerOptions } from './process-runner';
import { sandboxLimitsSchema, type Outcome, type Program, type SandboxLimitsInput } from './protocol';
import { alive, processesOf, py, type StartedJob } from './testing/processes';

let root: string;
let jobs: StartedJob[];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'dewpoint-runner-test-'));
  // A program dropped to a uid of its own must pass through here to reach its job directory by path.
  await chmod(root, 0o711);
  jobs = [];
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const runner = (options: ProcessRunnerOptions = {}) =>
  new ProcessRunner({ tmpRoot: root, onStart: (job) => jobs.push(job), ...options });

async function expectNothingLeft(printedPids: number[] = []): Promise<void> {
  expect(await readdir(root), 'job directories left behind').toEqual([]);
  for (const job of jobs) expect(await processesOf(job), `processes of job ${job.pid} left`).toEqual([]);
  for (const pid of printedPids) expect(await alive(pid), `pid ${pid} printed by the program is alive`).toBe(false);
}

/** Run main.py (or `program`'s argv); return the outcome and the wall time the call took. */
async function run(
  source: string,
  limits: SandboxLimitsInput = {},
  program: Partial<Program> = {},
): Promise<{ o: Outcome; took: number }> {
  const started = performance.now();
  const o = await runner().run(
    { ...program, files: { 'main.py': py(source), ...program.files } },
    sandboxLimitsSchema.parse(limits),
  );
  const took = (performance.now() - started) / 1000;
  expect(jobs).toHaveLength(1);
  return { o, took };
}

const pids = (text: string) => text.split(/\s+/).filter(Boolean).map(Number);

describe('ProcessRunner: exits', () => {
  it('hello world is COMPLETED with its stdout', async () => {
    const { o, took } = await run(`print("hello, world")`);
    expect(o).toMatchObject({
      verdict: 'COMPLETED',
      exitCode: 0,
      signal: null,
      stdout: 'hello, world\n',
      stderr: '',
      detail: 'exit code 0',
      truncated: false,
      cpuSeconds: null,
    });
    expect(o.seconds).toBeGreaterThan(0);
    expect(took).toBeLessThan(10);
    await expectNothingLeft();
  });

  it('sys.exit(3) is FAILED with exit code 3', async () => {
    const { o, took } = await run(`import sys; sys.exit(3)`);
    expect(o).toMatchObject({ verdict: 'FAILED', exitCode: 3, signal: null, detail: 'exit code 3' });
    expect(took).toBeLessThan(10);
    await expectNothingLeft();
  });

  it('an uncaught exception is FAILED with the traceback on stderr', async () => {
    const { o, took } = await run(`raise ValueError("boom")`);
    expect(o).toMatchObject({ verdict: 'FAILED', exitCode: 1 });
    expect(o.stderr).toContain('Traceback (most recent call last)');
    expect(o.stderr).toContain('ValueError: boom');
    expect(took).toBeLessThan(10);
    await expectNothingLeft();
  });

  it('closing stdout (os.close(1)) and exiting 0 is COMPLETED', async () => {
    const { o, took } = await run(`
      import os, sys
      sys.stderr.write("closing\\n"); sys.stderr.flush()
      os.close(1)
    `);
    expect(o).toMatchObject({ verdict: 'COMPLETED', exitCode: 0, stdout: '', stderr: 'closing\n' });
    expect(took).toBeLessThan(10);
    await expectNothingLeft();
  });
});

describe('ProcessRunner: limits', () => {
  it('an infinite loop is TIMEOUT at cpuSeconds 1 (RLIMIT_CPU, SIGKILL from the kernel)', async () => {
    const { o, took } = await run(`while True: pass`, { cpuSeconds: 1, wallSeconds: 20 });
    expect(o).toMatchObject({ verdict: 'TIMEOUT', exitCode: null, signal: 'SIGKILL' });
    expect(o.detail).toMatch(/^CPU limit/);
    expect(o.seconds).toBeGreaterThanOrEqual(0.9);
    expect(took).toBeLessThan(15);
    await expectNothingLeft();
  });

  it('a SIGXCPU handler that ignores the signal is still TIMEOUT (soft = hard: SIGKILL)', async () => {
    const { o, took } = await run(
      `
      import signal
      signal.signal(signal.SIGXCPU, lambda *_: None)
      while True: pass
    `,
      { cpuSeconds: 1, wallSeconds: 20 },
    );
    expect(o).toMatchObject({ verdict: 'TIMEOUT', signal: 'SIGKILL' });
    expect(o.detail).toMatch(/^CPU limit/);
    expect(took).toBeLessThan(15);
    await expectNothingLeft();
  });

  it('sleeping forever is TIMEOUT at wallSeconds 1, killed by the runner', async () => {
    const { o, took } = await run(`import time; time.sleep(10_000)`, { wallSeconds: 1 });
    expect(o).toMatchObject({
      verdict: 'TIMEOUT',
      exitCode: null,
      signal: 'SIGKILL',
      detail: 'killed by the runner at the 1 s wall deadline',
    });
    expect(o.seconds).toBeGreaterThanOrEqual(0.99);
    expect(took).toBeLessThan(10);
    await expectNothingLeft();
  });

  it('a memory hog under memoryBytes 64 MiB is FAILED with MemoryError (RLIMIT_AS)', async () => {
    const { o, took } = await run(
      `
      chunks = []
      while True: chunks.append(bytearray(8 * 1024 * 1024))
    `,
      { memoryBytes: 64 * 1024 ** 2 },
    );
    expect(o).toMatchObject({ verdict: 'FAILED', exitCode: 1 });
    expect(o.stderr).toContain('MemoryError');
    expect(took).toBeLessThan(10);
    await expectNothingLeft();
  });

  it('a SIGKILL the program sends itself is CRASHED, not mistaken for the CPU limit', async () => {
    const { o } = await run(`import os, signal; os.kill(os.getpid(), signal.SIGKILL)`);
    expect(o).toMatchObject({ verdict: 'CRASHED', signal: 'SIGKILL' });
    await expectNothingLeft();
  });

  it('SIGSEGV is CRASHED, naming the signal', async () => {
    const { o, took } = await run(`import os, signal; os.kill(os.getpid(), signal.SIGSEGV)`);
    expect(o).toMatchObject({
      verdict: 'CRASHED',
      exitCode: null,
      signal: 'SIGSEGV',
      detail: 'killed by signal SIGSEGV (not sent by the runner)',
    });
    expect(took).toBeLessThan(10);
    await expectNothingLeft();
  });
});

describe('ProcessRunner: output', () => {
  const MiB = 1024 ** 2;
  const bytes = (o: Outcome) => Buffer.byteLength(o.stdout) + Buffer.byteLength(o.stderr);
  const flood = (fds: string) => `
    import os
    while True:
        for fd in (${fds}): os.write(fd, b"x" * 65536)
  `;

  it.each([
    ['stdout', '1,'],
    ['stderr', '2,'],
    ['both', '1, 2'],
  ])('a flood on %s is OUTPUT_LIMIT, truncated to messageBytes', async (_stream, fds) => {
    const { o, took } = await run(flood(fds));
    expect(o).toMatchObject({
      verdict: 'OUTPUT_LIMIT',
      truncated: true,
      detail: 'killed by the runner: stdout and stderr passed the 1048576-byte message limit',
    });
    expect(bytes(o)).toBe(MiB);
    if (fds.includes('1')) expect(o.stdout.length).toBeGreaterThan(0);
    if (fds.includes('2')) expect(o.stderr.length).toBeGreaterThan(0);
    expect(took).toBeLessThan(10);
    await expectNothingLeft();
  });

  it('output exactly at messageBytes (stdout + stderr) is COMPLETED and whole', async () => {
    const { o } = await run(`import os; os.write(1, b"a" * 600); os.write(2, b"b" * 400)`, { messageBytes: 1000 });
    expect(o).toMatchObject({
      verdict: 'COMPLETED',
      truncated: false,
      stdout: 'a'.repeat(600),
      stderr: 'b'.repeat(400),
    });
    await expectNothingLeft();
  });

  it('one byte over messageBytes is OUTPUT_LIMIT, cut to the limit', async () => {
    const { o } = await run(`import os; os.write(1, b"a" * 601); os.write(2, b"b" * 400)`, { messageBytes: 1000 });
    expect(o).toMatchObject({ verdict: 'OUTPUT_LIMIT', truncated: true });
    expect(bytes(o)).toBe(1000);
    await expectNothingLeft();
  });

  it('a cut in the middle of a UTF-8 character drops the partial character', async () => {
    const { o } = await run(`import os; os.write(1, "€".encode() * 5)`, { messageBytes: 10 });
    expect(o).toMatchObject({ verdict: 'OUTPUT_LIMIT', stdout: '€€€' });
    await expectNothingLeft();
  });

  it('invalid UTF-8 becomes U+FFFD; a character split across writes is decoded whole', async () => {
    const { o } = await run(`
      import os, time
      os.write(1, b"ok \\xff end ")
      os.write(1, b"\\xe2\\x82"); time.sleep(0.2); os.write(1, b"\\xac ")
      os.write(1, b"\\xe2\\x82")
    `);
    expect(o).toMatchObject({ verdict: 'COMPLETED', stdout: 'ok \uFFFD end € \uFFFD' });
    await expectNothingLeft();
  });
});

describe('ProcessRunner: children', () => {
  it('a double-forked child in the group that outlives the program is killed', async () => {
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
    expect(pids(o.stdout)).toHaveLength(1);
    expect(took).toBeLessThan(10);
    await expectNothingLeft(pids(o.stdout));
  });

  it('a setsid child (its own session and group) that outlives the program is killed', async () => {
    const { o, took } = await run(`
      import os, time
      r, w = os.pipe()  # the program exits only once the grandchild has printed its pid
      if os.fork() == 0:
          os.setsid()
          if os.fork() == 0:
              print(os.getpid(), os.getpgrp(), flush=True)
              os.write(w, b"x")
              time.sleep(10_000)
          os._exit(0)
      os.wait()
      os.read(r, 1)
    `);
    expect(o.verdict).toBe('COMPLETED');
    const [pid, pgrp] = pids(o.stdout);
    expect(pgrp).not.toBe(jobs[0].pid);
    expect(took).toBeLessThan(10);
    await expectNothingLeft([pid]);
  });

  it('a setsid child that also drops its environment is found by its cwd and killed', async () => {
    const { o, took } = await run(`
      import os, sys
      r, w = os.pipe()  # the program exits only once the child has left the session and printed
      if os.fork() == 0:
          os.setsid()
          print(os.getpid(), flush=True)
          os.write(w, b"x")
          os.execve("/bin/sleep", ["sleep", "10000"], {})
      os.read(r, 1)
      sys.stdout.flush()
    `);
    const [pid] = pids(o.stdout);
    expect(pid).toBeGreaterThan(0);
    expect(took).toBeLessThan(10);
    await expectNothingLeft([pid]);
  });
});

describe('ProcessRunner: a child that escapes on purpose', () => {
  it('one that leaves the session, the environment and the job directory is killed with a uid of its own, else survives', async () => {
    const { dedicatedUser } = await runner().probe();
    const { o, took } = await run(`
      import os
      r, w = os.pipe()  # the program exits only once the child has escaped and printed
      if os.fork() == 0:
          os.setsid(); os.chdir("/")
          print(os.getpid(), flush=True)
          os.write(w, b"x")
          os.execve("/bin/sleep", ["sleep", "10000"], {})
      os.read(r, 1)
    `);
    const [pid] = pids(o.stdout);
    try {
      // Without its own uid it still holds our stdout pipe: the runner gives up on it after a short grace.
      expect(o.verdict).toBe('COMPLETED');
      expect(took).toBeLessThan(10);
      expect(await alive(pid)).toBe(!dedicatedUser);
      expect(await readdir(root)).toEqual([]);
    } finally {
      if (await alive(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});

describe('ProcessRunner: environment, files and stdin', () => {
  it('HOME and the cwd are the job directory', async () => {
    const { o } = await run(`import os; print(os.getcwd()); print(os.environ["HOME"])`);
    expect(o.stdout).toBe(`${jobs[0].dir}\n${jobs[0].dir}\n`);
    expect(jobs[0].dir.startsWith(root)).toBe(true);
    await expectNothingLeft();
  });

  it('the environment is only PATH, LANG, HOME, TMPDIR and PYTHONDONTWRITEBYTECODE', async () => {
    const { o } = await run('', {}, { argv: ['env'] });
    const env = Object.fromEntries(
      o.stdout
        .trim()
        .split('\n')
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    expect(env).toEqual({
      PATH: process.env.PATH,
      LANG: 'C.UTF-8',
      HOME: jobs[0].dir,
      TMPDIR: jobs[0].dir,
      PYTHONDONTWRITEBYTECODE: '1',
    });
    await expectNothingLeft();
  });

  // The default argv's -I leaves the script's directory off sys.path, so this one drops it to import lib/.
  it('files are written owner-only, nested directories included; no bytecode is written', async () => {
    const { o } = await run(
      `
      import os
      from lib import util
      print(util.X, oct(os.stat("main.py").st_mode & 0o777), oct(os.stat("lib/util.py").st_mode & 0o777))
      print(os.path.exists("lib/__pycache__"))
    `,
      {},
      { files: { 'lib/util.py': 'X = 42\n' }, argv: ['python3', '-S', 'main.py'] },
    );
    expect(o.stdout).toBe('42 0o600 0o600\nFalse\n');
    await expectNothingLeft();
  });

  it('8 MiB of stdin is read fully while output is drained', async () => {
    const stdin = 'abcdefgh\n'.repeat((8 * 1024 ** 2) / 9);
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

  it('a program that exits without reading 8 MiB of stdin is COMPLETED (EPIPE is not an error)', async () => {
    const { o } = await run(`print("bye")`, {}, { stdin: 'x'.repeat(8 * 1024 ** 2) });
    expect(o).toMatchObject({ verdict: 'COMPLETED', stdout: 'bye\n' });
    await expectNothingLeft();
  });

  it('a job directory the program made unreadable is deleted all the same', async () => {
    const { o } = await run(`
      import os
      os.makedirs("d/e"); open("d/e/f", "w").write("x")
      os.chmod("d/e", 0); os.chmod("d", 0)
    `);
    expect(o.verdict).toBe('COMPLETED');
    await expectNothingLeft();
  });
});

describe('ProcessRunner: infrastructure errors', () => {
  const limits = sandboxLimitsSchema.parse({});
  const program = { files: { 'main.py': 'print(1)\n' } };

  it('a missing launcher is RunnerUnavailable, not a verdict', async () => {
    await expect(runner({ launcher: 'dewpoint-no-such-prlimit' }).run(program, limits)).rejects.toThrow(
      RunnerUnavailable,
    );
    await expect(runner({ launcher: 'dewpoint-no-such-prlimit' }).run(program, limits)).rejects.toThrow(
      /limits launcher/,
    );
    await expectNothingLeft();
  });

  it('a program not on PATH is RunnerUnavailable', async () => {
    await expect(runner().run({ ...program, argv: ['dewpoint-no-such-python'] }, limits)).rejects.toThrow(
      RunnerUnavailable,
    );
    await expectNothingLeft();
  });

  it('a launcher that cannot be executed is RunnerUnavailable, and its job directory is gone', async () => {
    const bin = await mkdtemp(join(tmpdir(), 'dewpoint-fake-launcher-'));
    try {
      const launcher = join(bin, 'broken-prlimit');
      await writeFile(launcher, '#!/dewpoint/no/such/interpreter\n');
      await chmod(launcher, 0o755);
      await expect(runner({ launcher }).run(program, limits)).rejects.toThrow(/could not start/);
      await expectNothingLeft();
    } finally {
      await rm(bin, { recursive: true, force: true });
    }
  });

  it('an absolute argv[0] other users cannot reach is RunnerUnavailable when programs run as a uid of their own, else it runs', async () => {
    const r = runner();
    const { dedicatedUser } = await r.probe();
    const python = (await r.run({ files: { 'main.py': 'import sys; print(sys.executable)' } }, limits)).stdout.trim();
    const hidden = await mkdtemp(join(tmpdir(), 'dewpoint-hidden-')); // 0700: only its owner passes
    try {
      await symlink(python, join(hidden, 'python3'));
      const outcome = r.run({ ...program, argv: [join(hidden, 'python3'), '-I', '-S', 'main.py'] }, limits);
      if (dedicatedUser) await expect(outcome).rejects.toThrow(/cannot be executed by other users/);
      else expect((await outcome).stdout).toBe('1\n');
      await expectNothingLeft();
    } finally {
      await rm(hidden, { recursive: true, force: true });
    }
  });

  it('an invalid program given straight to run is a plain Error naming the field', async () => {
    const bad = { files: { '../escape.py': '' } };
    await expect(runner().run(bad, limits)).rejects.toThrow(/program\.files\["\.\.\/escape\.py"\]/);
    await expect(runner().run(bad, limits)).rejects.not.toThrow(RunnerUnavailable);
    await expectNothingLeft();
  });
});

/** A TCP listener on 127.0.0.1 that counts the connections it accepts. */
async function listener(): Promise<{ server: Server; port: number; accepted: () => number }> {
  let n = 0;
  const server = createServer((socket) => {
    n++;
    socket.destroy();
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  return { server, port: (server.address() as { port: number }).port, accepted: () => n };
}

const connect = (port: number) => `
  import socket
  try:
      socket.create_connection(("127.0.0.1", ${port}), timeout=2).close()
      print("connected")
  except OSError as e:
      print("refused", e.errno)
`;

describe('ProcessRunner.probe: what it reports is what a program meets', () => {
  it('network isolation and the user, as reported, against a connect and getuid in a real run', async () => {
    const r = runner();
    const c = await r.probe();
    const l = await listener();
    try {
      const o = await r.run(
        { files: { 'main.py': `${py(connect(l.port))}import os; print(os.getuid(), os.stat(".").st_uid)\n` } },
        sandboxLimitsSchema.parse({}),
      );
      const [net, ids] = o.stdout.trim().split('\n');
      expect(net.startsWith('connected')).toBe(!c.networkIsolation);
      expect(l.accepted()).toBe(c.networkIsolation ? 0 : 1);
      const [uid, owner] = ids.split(' ').map(Number);
      expect(jobs[0].uid !== null).toBe(c.dedicatedUser);
      expect(uid === process.geteuid!()).toBe(!c.dedicatedUser);
      // With a uid of its own it owns its job directory (else the companion's user does).
      expect(owner).toBe(uid);
      if (c.dedicatedUser) expect([uid, c.maxProcesses]).toEqual([jobs[0].uid, 64]);
    } finally {
      l.server.close();
    }
    await expectNothingLeft();
  });

  it('two runs at once get two different uids when each has one of its own', async () => {
    const r = runner();
    const { dedicatedUser } = await r.probe();
    const limits = sandboxLimitsSchema.parse({});
    // Each sleeps a while, so the two overlap.
    const program = { files: { 'main.py': 'import os, time\nprint(os.getuid())\ntime.sleep(0.3)\n' } };
    const [a, b] = await Promise.all([r.run(program, limits), r.run(program, limits)]);
    expect(a.stdout === b.stdout).toBe(!dedicatedUser);
    await expectNothingLeft();
  });

  it('without unshare it reports the network as NOT isolated, and a program does reach 127.0.0.1', async () => {
    const r = runner({ unshare: 'dewpoint-no-such-unshare' });
    const c = await r.probe();
    expect(c.networkIsolation).toBe(false);
    expect(c.notes[0]).toMatch(/^network: NOT isolated \(unshare \(util-linux\) is missing\)/);
    const l = await listener();
    try {
      const o = await r.run({ files: { 'main.py': py(connect(l.port)) } }, sandboxLimitsSchema.parse({}));
      expect(o.stdout).toBe('connected\n');
      expect(l.accepted()).toBe(1);
    } finally {
      l.server.close();
    }
    await expectNothingLeft();
  });

  it('a tool that is there but fails is found out by running it: a failing unshare and setpriv contain nothing', async () => {
    const c = await runner({ unshare: '/bin/false', setpriv: '/bin/false' }).probe();
    expect(c).toMatchObject({ networkIsolation: false, dedicatedUser: false });
    expect(c.notes[0]).toMatch(/^network: NOT isolated \(.*unshare --user --net: exit code 1\)/);
    expect(c.notes).toContainEqual(expect.stringMatching(/failed \(setpriv: exit code 1\)/));
    const o = await runner({ unshare: '/bin/false', setpriv: '/bin/false' }).run(
      { files: { 'main.py': 'print("ran")' } },
      sandboxLimitsSchema.parse({}),
    );
    expect(o.stdout).toBe('ran\n');
    await expectNothingLeft();
  });

  it("without setpriv it reports the companion's own user, and the program runs as it, unbounded in processes if root", async () => {
    const r = runner({ setpriv: 'dewpoint-no-such-setpriv' });
    const c = await r.probe();
    expect(c).toMatchObject({ dedicatedUser: false, user: expect.stringMatching(/^the companion's own user/) });
    if (process.geteuid!() === 0) expect(c.maxProcesses).toBeNull();
    expect(c.notes).toContainEqual(expect.stringMatching(/^user: setpriv \(util-linux\) is missing/));
    const o = await r.run({ files: { 'main.py': 'import os; print(os.getuid())' } }, sandboxLimitsSchema.parse({}));
    expect(Number(o.stdout)).toBe(process.geteuid!());
    expect(jobs[0].uid).toBeNull();
    await expectNothingLeft();
  });
});
