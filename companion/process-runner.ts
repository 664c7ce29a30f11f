/**
 * ProcessRunner: run one program as a resource-limited Linux process in a fresh temporary
 * directory, in its own process group, and report how it ended (an Outcome with a Verdict).
 *
 * - The job directory is made with mkdtemp, the files are written into it (0600), and it is
 *   deleted afterwards whatever happened.
 * - RLIMIT_CPU and RLIMIT_AS (soft = hard) and RLIMIT_CORE = 0 are set by `prlimit` (util-linux)
 *   between us and the program: Node cannot setrlimit on a child. prlimit is a small C program that
 *   sets the limits on itself and then execvp's the argv, so nothing runs between it and the
 *   program, it works for any argv (not only Python), and util-linux is essential on Debian, so it
 *   is always there. A `python3 -c` launcher would cost an interpreter start per run and need
 *   Python for every program.
 * - The program is a session and process-group leader (`detached: true`), and the whole group is
 *   killed with SIGKILL at the wall deadline, on excess output and after a normal exit. A child
 *   that left the group on purpose (setsid, setpgid) is then found by a sweep of /proc: same
 *   session, or HOME = the job directory in its initial environment, or a cwd inside the job
 *   directory. A child that also changed all three escapes: that needs the container runner.
 * - The environment is scrubbed to PATH, LANG=C.UTF-8, HOME=the job directory and
 *   PYTHONDONTWRITEBYTECODE=1.
 *
 * Not a filesystem or network sandbox: the program can read and write whatever the companion's
 * user can, and reach the network. That is ContainerRunner's job (rl-spec, "Sandboxes").
 * Reference: the ported library's ProcessRunner and SandboxLimits (dew-objectives-rl.txt).
 */
import { spawn } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import { access, chmod, mkdir, mkdtemp, readFile, readdir, readlink, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseWith, programSchema, sandboxLimitsSchema, type Outcome, type Program, type SandboxLimits, type Verdict } from './protocol';

/** The runner cannot start programs here (no prlimit, no python3, not Linux): never a verdict. */
export class RunnerUnavailable extends Error {
  override name = 'RunnerUnavailable';
}

/** The run was cancelled (its `signal` aborted) and the program killed: no outcome, never a verdict. */
export class RunCancelled extends Error {
  override name = 'RunCancelled';
}

export interface ProcessRunnerOptions {
  /** The PATH programs see, and where argv[0] and the launcher are looked up. Default: ours. */
  path?: string;
  /** The limits launcher, a name on PATH or a path. Default `prlimit`. */
  launcher?: string;
  /** Where job directories are made. Default os.tmpdir(). */
  tmpRoot?: string;
  /** Called once the program has started: its pid (= its process group and session id) and job directory. */
  onStart?: (job: { pid: number; dir: string }) => void;
}

/** How a Python file runs: this machine's python3, isolated from the environment and site-packages. */
export const DEFAULT_ARGV = ['python3', '-I', '-S', 'main.py'];
/** After the program and its group are dead, how long a pipe still held open elsewhere may delay us. */
const PIPE_GRACE_MS = 500;
const SWEEP_ROUNDS = 20;

export class ProcessRunner {
  readonly path: string;
  readonly launcher: string;
  readonly tmpRoot: string;
  private readonly onStart?: ProcessRunnerOptions['onStart'];

  constructor(options: ProcessRunnerOptions = {}) {
    this.path = options.path ?? process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin';
    this.launcher = options.launcher ?? 'prlimit';
    this.tmpRoot = options.tmpRoot ?? tmpdir();
    this.onStart = options.onStart;
  }

  /**
   * Run `program` to its end under `limits`. Throws RunnerUnavailable when it cannot start it, and
   * RunCancelled when `signal` aborts first (the program's group is killed and its directory deleted).
   */
  async run(program: Program, limits: SandboxLimits, signal?: AbortSignal): Promise<Outcome> {
    const p = parseWith(programSchema, program, 'program');
    const l = parseWith(sandboxLimitsSchema, limits, 'limits');
    if (!p.ok || !l.ok) throw new Error(`ProcessRunner.run: invalid input (validate requests at the boundary): ${[...(p.ok ? [] : p.problems), ...(l.ok ? [] : l.problems)].join('; ')}`);
    const argv = p.value.argv ?? DEFAULT_ARGV;
    if (process.platform !== 'linux') throw new RunnerUnavailable(`ProcessRunner needs Linux (process groups, /proc, prlimit); this is ${process.platform}`);
    const launcher = await this.which(this.launcher, 'the limits launcher (util-linux prlimit; apt-get install util-linux)');
    const command = argv[0].includes('/') ? argv[0] : await this.which(argv[0], 'the program');
    await checkHardLimits(l.value);
    if (signal?.aborted) throw new RunCancelled('cancelled before it started');

    // The real path: the /proc sweep compares it with each process's cwd.
    const dir = await mkdtemp(join(await realpath(this.tmpRoot), 'dewpoint-job-'));
    try {
      await writeFiles(dir, p.value.files);
      return await this.execute(dir, launcher, [command, ...argv.slice(1)], p.value.stdin ?? '', l.value, signal);
    } finally {
      await removeJobDir(dir);
    }
  }

  private async execute(dir: string, launcher: string, argv: string[], stdin: string, limits: SandboxLimits, signal?: AbortSignal): Promise<Outcome> {
    // PYTHONDONTWRITEBYTECODE matters for a user argv without -I (-I ignores every PYTHON* variable).
    const env = { PATH: this.path, LANG: 'C.UTF-8', HOME: dir, PYTHONDONTWRITEBYTECODE: '1' };
    // --core=0:0: a SIGSEGV or SIGABRT would otherwise write a core file into the job directory.
    const args = [`--cpu=${limits.cpuSeconds}:${limits.cpuSeconds}`, `--as=${limits.memoryBytes}:${limits.memoryBytes}`, '--core=0:0', '--', ...argv];
    const started = performance.now();
    // detached: the child calls setsid(), so it leads a new session and process group (pgid = pid).
    const child = spawn(launcher, args, { cwd: dir, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });

    // One budget for stdout and stderr together; past it the group is killed and the rest dropped.
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let total = 0;
    let truncated = false;
    let killedBy: 'wall' | 'output' | 'cancel' | null = null;
    const kill = (why: 'wall' | 'output' | 'cancel') => {
      killedBy ??= why;
      if (child.pid !== undefined) killGroup(child.pid);
    };
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      if (truncated) return;
      const room = limits.messageBytes - total;
      if (chunk.length <= room) {
        into.push(chunk);
        total += chunk.length;
        return;
      }
      into.push(chunk.subarray(0, room));
      total += room;
      truncated = true;
      kill('output');
    };
    child.stdout.on('data', collect(out));
    child.stderr.on('data', collect(err));
    const ioError: { error?: Error } = {};
    const closed = [child.stdout, child.stderr].map((s) => {
      s.on('error', (e) => (ioError.error ??= e));
      return new Promise<void>((res) => s.once('close', () => res()));
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.once('exit', (code, signal) => res({ code, signal })));

    await new Promise<void>((res, rej) => {
      child.once('spawn', res);
      child.once('error', (e) => rej(new RunnerUnavailable(`could not start ${launcher}: ${e.message}`, { cause: e })));
    });
    const pid = child.pid!;
    const wall = setTimeout(() => kill('wall'), limits.wallSeconds * 1000);
    const cancel = () => kill('cancel');
    signal?.addEventListener('abort', cancel, { once: true });
    if (signal?.aborted) cancel();
    let swept = false;
    const cleanUp = async () => {
      clearTimeout(wall);
      signal?.removeEventListener('abort', cancel);
      killGroup(pid);
      await sweepStrays(pid, dir);
      swept = true;
    };
    try {
      this.onStart?.({ pid, dir });
      child.stdin.on('error', (e: NodeJS.ErrnoException) => {
        // The program exited or closed stdin before reading all of it: its business, not an error.
        if (e.code !== 'EPIPE' && e.code !== 'ECONNRESET') ioError.error ??= e;
      });
      child.stdin.end(stdin);

      const { code, signal } = await exited;
      const seconds = (performance.now() - started) / 1000;
      await cleanUp();
      // Everything that could write is dead; a pipe still open is held by a process we cannot find.
      let grace: NodeJS.Timeout | undefined;
      const drained = await Promise.race([Promise.all(closed).then(() => true), new Promise<false>((res) => (grace = setTimeout(res, PIPE_GRACE_MS, false)))]);
      clearTimeout(grace);
      if (!drained) {
        child.stdout.destroy();
        child.stderr.destroy();
        await Promise.all(closed);
      }
      if (killedBy === 'cancel') throw new RunCancelled(`cancelled after ${seconds.toFixed(2)} s; the program was killed`);
      if (ioError.error) throw new Error(`the program's stdin, stdout or stderr failed: ${ioError.error.message}`, { cause: ioError.error });

      const stdout = decode(out, truncated);
      const stderr = decode(err, truncated);
      return { ...judge(code, signal, killedBy, seconds, limits), exitCode: code, signal, stdout, stderr, seconds, cpuSeconds: null, truncated };
    } finally {
      if (!swept) await cleanUp();
    }
  }

  /** The absolute path of `name` on this runner's PATH, or RunnerUnavailable naming what it is. */
  private async which(name: string, what: string): Promise<string> {
    const candidates = name.includes('/') ? [resolve(name)] : this.path.split(delimiter).filter(isAbsolute).map((d) => join(d, name));
    for (const c of candidates) {
      try {
        await access(c, fsConstants.X_OK);
        if ((await stat(c)).isFile()) return c;
      } catch (e) {
        if (!isCode(e, 'ENOENT', 'EACCES', 'ENOTDIR')) throw e;
      }
    }
    throw new RunnerUnavailable(`${what}, ${name}, is not an executable file on this runner's PATH (${this.path})`);
  }
}

/** The verdict and who ended the program. The runner's own kills come first. */
function judge(code: number | null, signal: NodeJS.Signals | null, killedBy: 'wall' | 'output' | 'cancel' | null, seconds: number, limits: SandboxLimits): { verdict: Verdict; detail: string } {
  if (killedBy === 'output') return { verdict: 'OUTPUT_LIMIT', detail: `killed by the runner: stdout and stderr passed the ${limits.messageBytes}-byte message limit` };
  if (killedBy === 'wall') return { verdict: 'TIMEOUT', detail: `killed by the runner at the ${limits.wallSeconds} s wall deadline` };
  if (signal === null) return { verdict: code === 0 ? 'COMPLETED' : 'FAILED', detail: `exit code ${code}` };
  if (signal === 'SIGXCPU') return { verdict: 'TIMEOUT', detail: `CPU limit (SIGXCPU at ${limits.cpuSeconds} s of CPU time)` };
  // With soft = hard the kernel sends SIGKILL at the RLIMIT_CPU limit, without a SIGXCPU first
  // (kernel/time/posix-cpu-timers.c checks the hard limit first). A SIGKILL from anyone else (the
  // OOM killer, the program itself) looks the same; one that came before the program could have
  // spent its CPU time even on every core is not the CPU limit.
  if (signal === 'SIGKILL' && seconds * availableParallelism() >= 0.95 * limits.cpuSeconds) {
    return { verdict: 'TIMEOUT', detail: `CPU limit (SIGKILL at the ${limits.cpuSeconds} s RLIMIT_CPU hard limit; not sent by the runner)` };
  }
  return { verdict: 'CRASHED', detail: `killed by signal ${signal} (not sent by the runner)` };
}

/** Decode a whole stream once; a cut stream first loses a partial UTF-8 character at its end. */
export function decode(chunks: Buffer[], truncated: boolean): string {
  const all = Buffer.concat(chunks);
  return (truncated ? all.subarray(0, completeUtf8Length(all)) : all).toString('utf8');
}

/** The length of `b` without a trailing incomplete (but so far well-formed) UTF-8 sequence. */
function completeUtf8Length(b: Buffer): number {
  let i = b.length - 1;
  while (i >= 0 && i > b.length - 4 && (b[i] & 0xc0) === 0x80) i--;
  if (i < 0) return b.length;
  const lead = b[i];
  const need = lead >= 0xf0 && lead < 0xf8 ? 4 : lead >= 0xe0 && lead < 0xf0 ? 3 : lead >= 0xc0 && lead < 0xe0 ? 2 : 1;
  return b.length - i < need ? i : b.length;
}

export function isCode(e: unknown, ...codes: string[]): boolean {
  return codes.includes((e as NodeJS.ErrnoException)?.code ?? '');
}

/** SIGKILL to a process (pid > 0) or a process group (pid < 0); gone already is fine. */
export function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (e) {
    if (!isCode(e, 'ESRCH')) throw e;
  }
}

export function killGroup(pgid: number): void {
  killQuietly(-pgid);
}

/**
 * Kill every live process of the job until none is left: the program's session or process group
 * (pgid = sid = its pid, reserved by the kernel while any member lives), or one that set HOME to
 * the job directory at exec (what a setsid'd child inherits), or one whose cwd is in it.
 */
async function sweepStrays(pgid: number, dir: string): Promise<void> {
  const home = Buffer.from(`HOME=${dir}\0`);
  let left: number[] = [];
  for (let round = 0; round < SWEEP_ROUNDS; round++) {
    left = [];
    for (const name of await readdir('/proc')) {
      const pid = Number(name);
      if (!Number.isInteger(pid) || pid === process.pid) continue;
      if (await isOfJob(pid, pgid, dir, home)) left.push(pid);
    }
    if (left.length === 0) return;
    for (const pid of left) killQuietly(pid);
    await delay(5 * (round + 1));
  }
  throw new Error(`processes of job ${dir} survived ${SWEEP_ROUNDS} rounds of SIGKILL: ${left.join(', ')}`);
}

async function isOfJob(pid: number, pgid: number, dir: string, home: Buffer): Promise<boolean> {
  try {
    // /proc/<pid>/stat: "pid (comm) state ppid pgrp session ...", comm may hold spaces and parens.
    const stat = await readFile(`/proc/${pid}/stat`, 'latin1');
    const [state, , pgrp, session] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state === 'Z' || state === 'X') return false; // dead, waiting for a parent to reap it
    if (Number(pgrp) === pgid || Number(session) === pgid) return true;
    if ((await readFile(`/proc/${pid}/environ`)).includes(home)) return true;
    const cwd = await readlink(`/proc/${pid}/cwd`);
    return cwd === dir || cwd.startsWith(dir + sep);
  } catch (e) {
    // Gone meanwhile, or not ours to read (another user's: not ours to kill either).
    if (isCode(e, 'ENOENT', 'ESRCH', 'EACCES', 'EPERM')) return false;
    throw e;
  }
}

/** Write each file under `dir` (names already validated by the protocol), owner-only. */
export async function writeFiles(dir: string, files: Record<string, string>): Promise<void> {
  for (const [name, content] of Object.entries(files)) {
    const target = resolve(dir, name);
    if (!target.startsWith(dir + sep)) throw new Error(`file ${JSON.stringify(name)} resolves outside the job directory ${dir}`);
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    // wx: the directory is fresh, so an existing file (or a link) here is a broken invariant.
    await writeFile(target, content, { mode: 0o600, flag: 'wx' });
  }
}

/** Delete the job directory, even one the program made unreadable (chmod 0 on a subdirectory). */
export async function removeJobDir(dir: string): Promise<void> {
  try {
    await rm(dir, { recursive: true, force: true });
  } catch (first) {
    await restoreModes(dir);
    await rm(dir, { recursive: true, force: true }).catch((e: Error) => {
      throw new Error(`could not delete the job directory ${dir}: ${e.message} (first try: ${(first as Error).message})`, { cause: e });
    });
  }
}

async function restoreModes(dir: string): Promise<void> {
  await chmod(dir, 0o700);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) await restoreModes(join(dir, entry.name));
  }
}

/**
 * prlimit can lower but not raise a hard limit (without CAP_SYS_RESOURCE); if it fails it exits 1
 * like a program would. Refuse such a run up front from our own limits, which the child inherits.
 */
export async function checkHardLimits(limits: SandboxLimits): Promise<void> {
  const table = await readFile('/proc/self/limits', 'utf8');
  const hard = (label: string): number => {
    const line = table.split('\n').find((l) => l.startsWith(label));
    const value = line?.slice(label.length).trim().split(/\s+/)[1];
    if (value === undefined) throw new RunnerUnavailable(`/proc/self/limits has no "${label}" line`);
    return value === 'unlimited' ? Infinity : Number(value);
  };
  const cpu = hard('Max cpu time');
  const as = hard('Max address space');
  if (limits.cpuSeconds > cpu) throw new RunnerUnavailable(`limits.cpuSeconds ${limits.cpuSeconds} is above the companion's own hard RLIMIT_CPU (${cpu} s), which prlimit cannot raise`);
  if (limits.memoryBytes > as) throw new RunnerUnavailable(`limits.memoryBytes ${limits.memoryBytes} is above the companion's own hard RLIMIT_AS (${as} bytes), which prlimit cannot raise`);
}
