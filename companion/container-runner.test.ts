/**
 * ContainerRunner, one property per test. Most run against a FAKE runtime
 * (./testing/fake-docker.mjs): it speaks docker's CLI, exit statuses and messages, runs the
 * program on this machine, and, like docker, leaves the "container" running when its client is
 * killed, until `rm -f NAME`. So a runner that forgot to remove a container leaves a live process
 * behind, and these tests see it. They check the runtime argv, each verdict, removal by name after
 * every kill (with retries while a slow create is in flight), cancellation, the runtime's own
 * failures (RunnerUnavailable), and that the job directory is gone after every run.
 *
 * The last block runs a real engine when DEWPOINT_CONTAINER_RUNTIME names one (docker, podman),
 * with DEWPOINT_CONTAINER_IMAGE (an image with `python`) and optionally
 * DEWPOINT_CONTAINER_RUNTIME_ARGS (global flags, e.g. `--runtime runc`); it is skipped otherwise.
 */
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ContainerRunner, containerVerdict, removeCommand, type ContainerRunnerOptions } from './container-runner';
import { RunCancelled, RunnerUnavailable } from './process-runner';
import { sandboxLimitsSchema, type Program, type SandboxLimitsInput } from './protocol';

const FAKE = fileURLToPath(new URL('./testing/fake-docker.mjs', import.meta.url));
const MiB = 1024 ** 2;
const limits = (l: SandboxLimitsInput = {}) => sandboxLimitsSchema.parse(l);
const py = (source: string): Program => ({ files: { 'main.py': source } });

describe('ContainerRunner.command', () => {
  it('builds the runtime argv: no network, read-only /work, small /tmp, every limit, no privileges, no env', () => {
    const runner = new ContainerRunner({ image: 'python:3.12-slim' });
    const argv = runner.command(
      py('print(1)'),
      limits({ wallSeconds: 5, cpuSeconds: 3, memoryBytes: 128 * MiB }),
      '/tmp/dewpoint-job-x/work',
      'dewpoint-abc',
      '/tmp/dewpoint-job-x/cid',
    );
    expect(argv).toEqual([
      'run',
      '--rm',
      '--name',
      'dewpoint-abc',
      '--cidfile',
      '/tmp/dewpoint-job-x/cid',
      '--network',
      'none',
      '--read-only',
      '-v',
      '/tmp/dewpoint-job-x/work:/work:ro',
      '-w',
      '/work',
      '--tmpfs',
      `/tmp:rw,noexec,nosuid,nodev,size=${64 * MiB},mode=1777`,
      '--memory',
      String(128 * MiB),
      '--memory-swap',
      String(128 * MiB),
      '--pids-limit',
      '64',
      '--cpus',
      '1',
      '--ulimit',
      'cpu=3:4',
      '--ulimit',
      'nofile=1024:1024',
      '--ulimit',
      'nproc=4096:4096',
      '--user',
      '65534:65534',
      '--cap-drop',
      'ALL',
      '--security-opt',
      'no-new-privileges',
      '--pull',
      'never',
      '-i',
      'python:3.12-slim',
      'python',
      '-I',
      '-S',
      'main.py',
    ]);
    expect(argv.filter((a) => a === '-e' || a.startsWith('--env'))).toEqual([]);
  });

  it('takes the options and a program argv as given', () => {
    const runner = new ContainerRunner({
      image: 'img',
      cpus: 0.5,
      pids: 16,
      user: '1000:1000',
      python: ['python3'],
      tmpfsBytes: 8 * MiB,
    });
    const argv = runner.command(
      { files: {}, argv: ['sh', '-c', 'echo hi'] },
      limits({ cpuSeconds: 1 }),
      '/j/work',
      'n',
      '/j/cid',
    );
    const value = (flag: string) => argv.filter((_, i) => argv[i - 1] === flag);
    expect(value('--cpus')).toEqual(['0.5']);
    expect(value('--pids-limit')).toEqual(['16']);
    expect(value('--user')).toEqual(['1000:1000']);
    expect(value('--tmpfs')).toEqual([`/tmp:rw,noexec,nosuid,nodev,size=${8 * MiB},mode=1777`]);
    expect(value('--ulimit')).toContain('cpu=1:2');
    expect(argv.slice(argv.indexOf('img'))).toEqual(['img', 'sh', '-c', 'echo hi']);
    expect(runner.command(py(''), limits(), '/j/work', 'n', '/j/cid').slice(-2)).toEqual(['python3', 'main.py']);
  });

  it('refuses a job directory that -v cannot mount, and bad options by name', () => {
    expect(() => new ContainerRunner({ image: 'img' }).command(py(''), limits(), '/tmp/a:b/work', 'n', '/c')).toThrow(
      /contains ':'/,
    );
    expect(() => new ContainerRunner({ image: '--privileged' })).toThrow(/image must be/);
    expect(() => new ContainerRunner({ image: 'img', cpus: 0, pids: 1.5 })).toThrow(
      /cpus must be a number > 0, got 0; pids must be an integer ≥ 1, got 1.5/,
    );
  });

  it("removes with SIGKILL at once in each CLI's dialect (podman's rm -f waits 10 s without --time 0)", () => {
    expect(removeCommand('docker', 'dewpoint-a')).toEqual(['rm', '--force', 'dewpoint-a']);
    expect(removeCommand('podman', 'dewpoint-a')).toEqual(['rm', '--force', '--time', '0', 'dewpoint-a']);
    expect(new ContainerRunner({ image: 'i', runtime: '/usr/bin/podman' }).engine).toBe('podman');
    expect(new ContainerRunner({ image: 'i' }).engine).toBe('docker');
  });
});

describe('containerVerdict (docker run exit statuses)', () => {
  const l = limits({ wallSeconds: 5, cpuSeconds: 2, memoryBytes: 64 * MiB, messageBytes: 100 });
  const v = (code: number | null, seconds = 0.5, killedBy: 'wall' | 'output' | null = null) =>
    containerVerdict(code, killedBy, seconds, l, 1);

  it('judges exit statuses as ProcessRunner does, and 128 + n as signal n', () => {
    expect(v(0)).toEqual({ verdict: 'COMPLETED', detail: 'exit code 0', exitCode: 0, signal: null });
    expect(v(3)).toEqual({ verdict: 'FAILED', detail: 'exit code 3', exitCode: 3, signal: null });
    expect(v(139)).toEqual({
      verdict: 'CRASHED',
      detail: 'killed by signal SIGSEGV (not sent by the runner)',
      exitCode: null,
      signal: 'SIGSEGV',
    });
    expect(v(152)).toMatchObject({
      verdict: 'TIMEOUT',
      detail: 'CPU limit (SIGXCPU at 2 s of CPU time)',
      signal: 'SIGXCPU',
    });
  });

  it("tells the CPU limit's SIGKILL from an early one (most likely the OOM killer)", () => {
    expect(v(137, 0.5)).toMatchObject({ verdict: 'CRASHED', signal: 'SIGKILL', exitCode: null });
    expect(v(137, 0.5).detail).toMatch(/OOM killer at the 67108864-byte memory cap/);
    // The hard limit is cpuSeconds + 1 = 3 s; at 1 CPU it cannot come before 3 s of wall time.
    expect(v(137, 3.1)).toMatchObject({
      verdict: 'TIMEOUT',
      detail: 'CPU limit (SIGKILL at the 3 s hard RLIMIT_CPU limit; not sent by the runner)',
    });
  });

  it("reports 126 and 127 as FAILED, naming docker's meaning", () => {
    expect(v(127)).toMatchObject({ verdict: 'FAILED', exitCode: 127 });
    expect(v(127).detail).toMatch(/^exit code 127: the command was not found in the container/);
    expect(v(126).detail).toMatch(/^exit code 126: the command could not be run/);
  });

  it("puts the runner's own kills first, and refuses to judge the runtime's failures", () => {
    expect(v(null, 5, 'wall')).toEqual({
      verdict: 'TIMEOUT',
      detail: 'killed by the runner at the 5 s wall deadline',
      exitCode: null,
      signal: 'SIGKILL',
    });
    expect(v(null, 1, 'output')).toMatchObject({
      verdict: 'OUTPUT_LIMIT',
      detail: 'killed by the runner: stdout and stderr passed the 100-byte message limit',
    });
    expect(() => v(125)).toThrow(/runtime's failure/);
    expect(() => v(null)).toThrow(/runtime's failure/);
  });
});

interface LogEntry {
  argv?: string[];
  event?: 'start' | 'exit';
  name?: string;
  pid?: number;
}

describe('ContainerRunner against a fake docker', () => {
  let root: string;
  let jobs: string;
  let state: string;
  let logFile: string;
  let started: { pid: number; dir: string; name: string }[];

  beforeAll(async () => {
    await chmod(FAKE, 0o755); // a checkout may have lost the executable bit
  });
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'dewpoint-container-test-'));
    jobs = join(root, 'jobs');
    state = join(root, 'state');
    logFile = join(root, 'log.jsonl');
    await mkdir(jobs);
    await mkdir(state);
    started = [];
    vi.stubEnv('FAKE_DOCKER_LOG', logFile);
    vi.stubEnv('FAKE_DOCKER_STATE', state);
  });
  afterEach(async () => {
    vi.unstubAllEnvs();
    await rm(root, { recursive: true, force: true });
  });

  const runner = (options: Partial<ContainerRunnerOptions> = {}) =>
    new ContainerRunner({
      image: 'dewpoint-test:1',
      runtime: FAKE,
      python: ['python3', '-I', '-S'],
      tmpRoot: jobs,
      onStart: (job) => started.push(job),
      ...options,
    });

  async function log(): Promise<LogEntry[]> {
    const text = await readFile(logFile, 'utf8').catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return '';
      throw e;
    });
    return text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as LogEntry);
  }
  const invocations = async (command: string) =>
    (await log()).filter((e) => e.argv?.includes(command)).map((e) => e.argv!);

  async function alive(pid: number): Promise<boolean> {
    try {
      const stat = await readFile(`/proc/${pid}/stat`, 'latin1');
      const s = stat.slice(stat.lastIndexOf(')') + 2)[0];
      return s !== 'Z' && s !== 'X';
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw e;
    }
  }

  /** No job directory, no live "container", no live program left. */
  async function expectNothingLeft(): Promise<void> {
    expect(await readdir(jobs), 'job directories left behind').toEqual([]);
    expect(await readdir(state), 'containers left behind').toEqual([]);
    const pids = (await log()).filter((e) => e.event === 'start').map((e) => e.pid!);
    for (const pid of pids) expect(await alive(pid), `program ${pid} still alive`).toBe(false);
  }

  /** The single `rm` that followed a kill removed the container that `run` named. */
  async function expectRemovedByName(prefix: string[] = []): Promise<string> {
    const [run] = await invocations('run');
    const name = run[run.indexOf('--name') + 1];
    expect(name).toMatch(/^dewpoint-[0-9a-f]{16}$/);
    expect(started.map((s) => s.name)).toEqual([name]);
    const rms = await invocations('rm');
    expect(rms.length).toBeGreaterThanOrEqual(1);
    for (const r of rms) expect(r).toEqual([...prefix, 'rm', '--force', name]);
    return name;
  }

  it('runs main.py with stdin, reports COMPLETED with UTF-8 output, and leaves removal to --rm', async () => {
    const program: Program = {
      files: {
        'main.py': 'import sys\nprint(sys.stdin.read().upper(), "é✓", end="")\nprint("warn", file=sys.stderr)\n',
        'lib/x.txt': 'x',
      },
      stdin: 'héllo',
    };
    const l = limits({ wallSeconds: 20 });
    const r = runner();
    const outcome = await r.run(program, l);
    expect(outcome).toMatchObject({
      verdict: 'COMPLETED',
      exitCode: 0,
      signal: null,
      stdout: 'HÉLLO é✓',
      stderr: 'warn\n',
      detail: 'exit code 0',
      truncated: false,
      cpuSeconds: null,
    });
    const [{ dir, name }] = started;
    // Exactly the argv `command` builds, for this job's directory, name and cidfile.
    expect(await invocations('run')).toEqual([r.command(program, l, dir, name, join(dirname(dir), 'cid'))]);
    expect(await invocations('rm')).toEqual([]);
    await expectNothingLeft();
  });

  it('FAILED on a nonzero exit, CRASHED on a signal, FAILED with 127 when the command is not in the image', async () => {
    const r = runner();
    expect(await r.run(py('raise SystemExit(3)'), limits())).toMatchObject({
      verdict: 'FAILED',
      exitCode: 3,
      detail: 'exit code 3',
    });
    expect(await r.run(py('import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)'), limits())).toMatchObject({
      verdict: 'CRASHED',
      signal: 'SIGSEGV',
      exitCode: null,
    });
    const missing = await r.run({ files: {}, argv: ['dewpoint-no-such-program'] }, limits());
    expect(missing).toMatchObject({ verdict: 'FAILED', exitCode: 127 });
    expect(missing.detail).toMatch(/not found in the container/);
    expect(missing.stderr).toMatch(/executable file not found/);
    await expectNothingLeft();
  });

  it('TIMEOUT at the CPU limit (--ulimit cpu=S:S+1, SIGXCPU at S)', async () => {
    const outcome = await runner().run(py('while True: pass'), limits({ cpuSeconds: 1, wallSeconds: 30 }));
    expect(outcome).toMatchObject({
      verdict: 'TIMEOUT',
      signal: 'SIGXCPU',
      detail: 'CPU limit (SIGXCPU at 1 s of CPU time)',
    });
    await expectNothingLeft();
  });

  it('at the wall deadline kills the client, then removes the container by name (global flags first)', async () => {
    const outcome = await runner({ runtimeArgs: ['--fake-global', 'x'] }).run(
      py('import time\ntime.sleep(60)'),
      limits({ wallSeconds: 1 }),
    );
    expect(outcome).toMatchObject({
      verdict: 'TIMEOUT',
      detail: 'killed by the runner at the 1 s wall deadline',
      exitCode: null,
      signal: 'SIGKILL',
    });
    expect(outcome.seconds).toBeLessThan(20);
    expect((await invocations('run'))[0].slice(0, 3)).toEqual(['--fake-global', 'x', 'run']);
    await expectRemovedByName(['--fake-global', 'x']);
    await expectNothingLeft();
  });

  it('keeps trying to remove a container whose create was still in flight when the client was killed', async () => {
    // The container appears 2.5 s after run started, 1.5 s after the kill at the 1 s wall: after the
    // first rm however slowly it starts here, and well inside the 5 s window of removal retries.
    vi.stubEnv('FAKE_DOCKER_CREATE_DELAY_MS', '2500');
    const outcome = await runner().run(py('import time\ntime.sleep(60)'), limits({ wallSeconds: 1 }));
    expect(outcome.verdict).toBe('TIMEOUT');
    const entries = await log();
    const firstRm = entries.findIndex((e) => e.argv?.[0] === 'rm');
    const start = entries.findIndex((e) => e.event === 'start');
    expect(firstRm, 'an rm after the kill').toBeGreaterThanOrEqual(0);
    expect(start, 'the container appeared only after the first rm').toBeGreaterThan(firstRm);
    expect((await invocations('rm')).length).toBeGreaterThanOrEqual(2);
    await expectRemovedByName();
    await expectNothingLeft();
  });

  it('OUTPUT_LIMIT past messageBytes over stdout and stderr together, then removes the container', async () => {
    // stderr first (and surely read first), then a flood on stdout: the budget counts both.
    const program = py(
      'import sys, time\nsys.stderr.write("e" * 10); sys.stderr.flush(); time.sleep(0.3)\nwhile True:\n    sys.stdout.write("x" * 100); sys.stdout.flush()',
    );
    const outcome = await runner().run(program, limits({ messageBytes: 1000, wallSeconds: 30 }));
    expect(outcome).toMatchObject({ verdict: 'OUTPUT_LIMIT', truncated: true, stderr: 'e'.repeat(10) });
    expect(outcome.stdout).toBe('x'.repeat(990));
    await expectRemovedByName();
    await expectNothingLeft();
  });

  it('cancellation kills and removes the container and throws RunCancelled (podman dialect)', async () => {
    const controller = new AbortController();
    const run = runner({ engine: 'podman' }).run(
      py('import time\ntime.sleep(60)'),
      limits({ wallSeconds: 30 }),
      controller.signal,
    );
    setTimeout(() => controller.abort(), 700);
    await expect(run).rejects.toBeInstanceOf(RunCancelled);
    const [runArgv] = await invocations('run');
    const name = runArgv[runArgv.indexOf('--name') + 1];
    expect(await invocations('rm')).toContainEqual(['rm', '--force', '--time', '0', name]);
    await expectNothingLeft();
  });

  it('an already aborted signal never starts the runtime', async () => {
    await expect(runner().run(py(''), limits(), AbortSignal.abort())).rejects.toBeInstanceOf(RunCancelled);
    expect(await log()).toEqual([]);
    await expectNothingLeft();
  });

  it("exit status 125 (no daemon) is RunnerUnavailable with the runtime's message, never a verdict", async () => {
    vi.stubEnv('FAKE_DOCKER_MODE', 'no-daemon');
    const run = runner().run(py('print(1)'), limits());
    await expect(run).rejects.toBeInstanceOf(RunnerUnavailable);
    await expect(run).rejects.toThrow(/exit status 125.*Cannot connect to the Docker daemon/s);
    expect(await invocations('rm'), 'no cidfile: nothing was created, nothing to remove').toEqual([]);
    await expectNothingLeft();
  });

  it('a runtime that is not there is RunnerUnavailable', async () => {
    for (const runtime of ['dewpoint-no-such-docker', join(root, 'nowhere', 'docker')]) {
      const run = runner({ runtime }).run(py('print(1)'), limits());
      await expect(run).rejects.toBeInstanceOf(RunnerUnavailable);
      await expect(run).rejects.toThrow(/could not be started/);
    }
    await expectNothingLeft();
  });

  it('a client killed by someone else is RunnerUnavailable, and its container is removed', async () => {
    const run = runner().run(py('import time\ntime.sleep(60)'), limits({ wallSeconds: 30 }));
    while ((await readdir(state)).length === 0) await delay(20); // the container exists
    process.kill(started[0].pid, 'SIGKILL');
    await expect(run).rejects.toThrow(RunnerUnavailable);
    await expect(run).rejects.toThrow(/died of SIGKILL, which the runner did not send/);
    await expectRemovedByName();
    await expectNothingLeft();
  });

  it('probe: version, image and a trial run, or RunnerUnavailable saying which failed', async () => {
    const report = await runner().probe();
    expect(report.networkIsolation).toBe(true);
    expect(report.notes.join('\n')).toMatch(/version 0\.0\.0-fake/);
    expect(await invocations('version')).toHaveLength(1);
    expect(await invocations('run')).toHaveLength(1);
    vi.stubEnv('FAKE_DOCKER_MODE', 'no-image');
    await expect(runner().probe()).rejects.toThrow(/image dewpoint-test:1 is not available.*No such image/s);
    vi.stubEnv('FAKE_DOCKER_MODE', 'no-daemon');
    await expect(runner().probe()).rejects.toThrow(/version failed \(exit status 1\): Cannot connect/);
    await expect(runner({ python: ['python3', '-c', 'raise SystemExit(1)'] }).probe()).rejects.toThrow(
      RunnerUnavailable,
    );
    await expectNothingLeft();
  });
});

const REAL = process.env.DEWPOINT_CONTAINER_RUNTIME;

describe.skipIf(!REAL)(`ContainerRunner on a real engine (${REAL ?? 'DEWPOINT_CONTAINER_RUNTIME unset'})`, () => {
  const image = process.env.DEWPOINT_CONTAINER_IMAGE ?? '';
  const runtimeArgs = (process.env.DEWPOINT_CONTAINER_RUNTIME_ARGS ?? '').split(/\s+/).filter(Boolean);
  let names: string[] = [];
  const runner = (o: Partial<ContainerRunnerOptions> = {}) =>
    new ContainerRunner({ image, runtime: REAL, runtimeArgs, onStart: (job) => names.push(job.name), ...o });
  /** Names of every container the engine knows, running or not (a synchronous call: bounded, as no test timeout can end it). */
  const containers = () => {
    const r = spawnSync(REAL!, [...runtimeArgs, 'ps', '-a', '--format', '{{.Names}}'], {
      encoding: 'utf8',
      timeout: 60_000,
      killSignal: 'SIGKILL',
    });
    if (r.error || r.status !== 0)
      throw new Error(`${REAL} ps -a: ${r.error?.message ?? `exit ${r.status ?? r.signal}`} ${r.stderr ?? ''}`);
    return r.stdout.split('\n').filter(Boolean);
  };

  beforeEach(() => {
    if (!image)
      throw new Error('DEWPOINT_CONTAINER_IMAGE must name an image with python when DEWPOINT_CONTAINER_RUNTIME is set');
    names = [];
  });
  afterEach(() => {
    const left = containers();
    expect(
      names.filter((n) => left.includes(n)),
      'containers left behind',
    ).toEqual([]);
  });

  it('probe passes', async () => {
    expect((await runner().probe()).networkIsolation).toBe(true);
  });

  it('runs as 65534 with no network, read-only /work and root, writable /tmp', async () => {
    // No json: a minimal image (Debian's python3-minimal) has only the core of the standard library.
    const source = [
      'import os, socket, sys',
      'def attempt(f):',
      '    try: f(); return "ok"',
      '    except OSError as e: return "errno " + str(e.errno)',
      'def connect(): socket.create_connection(("1.1.1.1", 80), timeout=2)',
      'seen = {"uid": os.getuid(), "stdin": sys.stdin.read(), "net": attempt(connect), "cwd": os.getcwd(),',
      '  "work": attempt(lambda: open("/work/x", "w")), "root": attempt(lambda: open("/x", "w")),',
      '  "tmp": attempt(lambda: open("/tmp/x", "w").write("x"))}',
      'for k, v in seen.items(): print(f"{k}={v}")',
    ].join('\n');
    const outcome = await runner().run({ files: { 'main.py': source }, stdin: 'hi' }, limits({ wallSeconds: 60 }));
    expect(outcome.verdict, outcome.stderr).toBe('COMPLETED');
    const seen = Object.fromEntries(
      outcome.stdout
        .trim()
        .split('\n')
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    expect(seen).toEqual({
      uid: '65534',
      stdin: 'hi',
      cwd: '/work',
      work: 'errno 30',
      root: 'errno 30',
      tmp: 'ok',
      net: expect.stringMatching(/^errno \d+$/),
    });
  });

  it('TIMEOUT at the wall deadline, and the container is gone', async () => {
    const outcome = await runner().run(py('import time\ntime.sleep(60)'), limits({ wallSeconds: 2 }));
    expect(outcome).toMatchObject({ verdict: 'TIMEOUT', detail: 'killed by the runner at the 2 s wall deadline' });
  });

  it('TIMEOUT at the CPU limit: SIGKILL at the hard limit (PID 1 ignores SIGXCPU)', async () => {
    const outcome = await runner().run(py('while True: pass'), limits({ cpuSeconds: 1, wallSeconds: 60 }));
    expect(outcome).toMatchObject({
      verdict: 'TIMEOUT',
      detail: 'CPU limit (SIGKILL at the 2 s hard RLIMIT_CPU limit; not sent by the runner)',
    });
  });

  it('CRASHED by the OOM killer at the memory cap', async () => {
    const outcome = await runner().run(
      py('x = []\nwhile True: x.append(bytearray(1 << 20))'),
      limits({ memoryBytes: 64 * MiB, wallSeconds: 60 }),
    );
    expect(outcome.verdict).toBe('CRASHED');
    expect(outcome.detail).toMatch(/OOM killer/);
  });

  it('the pids limit stops a fork bomb', async () => {
    const source =
      'import os, time\nn = 0\ntry:\n    while n < 500:\n        if os.fork() == 0:\n            ' +
      'time.sleep(30); os._exit(0)\n        n += 1\nexcept OSError:\n    pass\nprint(n)';
    const outcome = await runner({ pids: 16 }).run(py(source), limits({ wallSeconds: 60 }));
    expect(outcome.verdict, outcome.stderr).toBe('COMPLETED');
    expect(Number(outcome.stdout)).toBeLessThan(16);
  });

  it('OUTPUT_LIMIT, and the container is gone', async () => {
    const outcome = await runner().run(
      py('while True: print("x" * 1000)'),
      limits({ messageBytes: 10_000, wallSeconds: 60 }),
    );
    expect(outcome).toMatchObject({ verdict: 'OUTPUT_LIMIT', truncated: true });
    expect(outcome.stdout.length + outcome.stderr.length).toBeLessThanOrEqual(10_000);
  });
});
