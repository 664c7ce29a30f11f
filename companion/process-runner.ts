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
 *   that left the group on purpose (setsid, setpgid) is then found by a sweep of /proc: with a
 *   uid of its own, any process of that uid; else same session, or HOME = the job directory in
 *   its initial environment, or a cwd inside the job directory, and a child that changed all
 *   three escapes (that needs a uid of its own, or the container runner).
 * - The environment is scrubbed to PATH, LANG=C.UTF-8, HOME=TMPDIR=the job directory and
 *   PYTHONDONTWRITEBYTECODE=1.
 * - What else the machine allows is found once by `probe()` (containment.ts) and applied per run
 *   by a `Jail`: a network namespace of its own; as root, a uid of its own per run owning the job
 *   directory; RLIMIT_NPROC where it bounds this run alone. What it cannot contain it reports.
 * - If the companion dies mid-run, its reaper (reaper.ts) kills the group and its strays.
 *
 * Not a mount, pid or cgroup sandbox: ContainerRunner's job (docs/rl-core.md "Sandboxes").
 * Reference: dew's ProcessRunner and SandboxLimits (docs/rl-core.md "Sandboxes").
 */
import { spawn } from 'node:child_process';
import { existsSync, constants as fsConstants, readFileSync, readdirSync } from 'node:fs';
import {
  access,
  chmod,
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  readlink,
  realpath,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { handOver, probeSandboxing, type Containment, type Jail, type Sandboxing } from './containment';
import { collectOutput, judge } from './job';
import { watch } from './reaper';
import {
  parseWith,
  programSchema,
  sandboxLimitsSchema,
  type Outcome,
  type Program,
  type SandboxLimits,
} from './protocol';

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
  /** The namespace launcher and the user launcher (util-linux), names on PATH or paths. Default `unshare`, `setpriv`. */
  unshare?: string;
  setpriv?: string;
  /** Where job directories are made. Default os.tmpdir(). */
  tmpRoot?: string;
  /**
   * Called once the program has started: its pid (= its process group and session id), job
   * directory, and the uid it runs as when that is its own for this run (else null).
   */
  onStart?: (job: { pid: number; dir: string; uid: number | null }) => void;
}

/** How a Python file runs: this machine's python3, isolated from the environment and site-packages. */
export const DEFAULT_ARGV = ['python3', '-I', '-S', 'main.py'];
/** After the program and its group are dead, how long a pipe still held open elsewhere may delay us. */
const PIPE_GRACE_MS = 500;
const SWEEP_ROUNDS = 20;

export class ProcessRunner {
  readonly path: string;
  readonly launcher: string;
  readonly unshare: string;
  readonly setpriv: string;
  readonly tmpRoot: string;
  private readonly onStart?: ProcessRunnerOptions['onStart'];
  private sandboxing?: Promise<Sandboxing>;

  constructor(options: ProcessRunnerOptions = {}) {
    this.path = options.path ?? process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin';
    this.launcher = options.launcher ?? 'prlimit';
    this.unshare = options.unshare ?? 'unshare';
    this.setpriv = options.setpriv ?? 'setpriv';
    this.tmpRoot = options.tmpRoot ?? tmpdir();
    this.onStart = options.onStart;
  }

  /**
   * What this runner contains here (network, user, fork bomb) and what it cannot, found once by
   * running the real launcher chains; every run applies it. Never throws for a missing tool.
   */
  async probe(): Promise<Containment> {
    const { containment, runsAsOthers } = await this.sandbox();
    const notes = [...containment.notes];
    if (runsAsOthers) {
      const [python] = DEFAULT_ARGV;
      const ours = await this.find(python);
      const theirs = await this.find(python, true);
      if (theirs !== ours)
        notes.push(
          `python: programs run ${theirs ?? `no ${python}: none on PATH that other users can reach`}${ours ? ` (the companion's own, ${ours}, is out of their reach)` : ''}`,
        );
      if (!(await othersMayEnter(this.tmpRoot)))
        notes.push(
          `files: other users cannot enter ${this.tmpRoot}, so absolute paths into a job directory fail for programs (chmod o+x it, or pick another tmpRoot)`,
        );
    }
    return { ...containment, notes };
  }

  /** A fresh Jail for one program: start it with `launchCommand(..., jail)` and `close()` it after. */
  async jail(): Promise<Jail> {
    return (await this.sandbox()).jail();
  }

  private sandbox(): Promise<Sandboxing> {
    this.sandboxing ??= (async () => {
      if (process.platform !== 'linux')
        return probeSandboxing({ prlimit: null, unshare: null, setpriv: null, true: null });
      return probeSandboxing({
        prlimit: await this.find(this.launcher),
        unshare: await this.find(this.unshare),
        setpriv: await this.find(this.setpriv),
        true: await this.find('true'),
        // iproute2 lives in /usr/sbin, often off a non-root PATH.
        ip: (await this.find('ip')) ?? (await this.find('/usr/sbin/ip')) ?? (await this.find('/sbin/ip')),
        sh: (await this.find('sh')) ?? (await this.find('/bin/sh')),
      });
    })();
    return this.sandboxing;
  }

  /** `which`, or null where there is no such executable. */
  private find(name: string, forOthers = false): Promise<string | null> {
    return this.which(name, name, forOthers).catch((e: unknown) => {
      if (e instanceof RunnerUnavailable) return null;
      throw e;
    });
  }

  /**
   * Run `program` to its end under `limits`. Throws RunnerUnavailable when it cannot start it, and
   * RunCancelled when `signal` aborts first (the program's group is killed and its directory deleted).
   */
  async run(program: Program, limits: SandboxLimits, signal?: AbortSignal): Promise<Outcome> {
    const p = parseWith(programSchema, program, 'program');
    const l = parseWith(sandboxLimitsSchema, limits, 'limits');
    if (!p.ok || !l.ok)
      throw new Error(
        `ProcessRunner.run: invalid input (validate requests at the boundary): ${[...(p.ok ? [] : p.problems), ...(l.ok ? [] : l.problems)].join('; ')}`,
      );
    const { launcher, argv } = await this.prepare(p.value.argv ?? DEFAULT_ARGV, l.value);
    if (signal?.aborted) throw new RunCancelled('cancelled before it started');

    const dir = await makeJobDir(this.tmpRoot);
    const jail = await this.jail();
    try {
      await writeFiles(dir, p.value.files);
      if (jail.uid !== null) await handOver(dir, jail.uid);
      return await this.execute(dir, launcher, argv, p.value.stdin ?? '', l.value, jail, signal);
    } finally {
      await removeJobDir(dir);
      await jail.close();
    }
  }

  /**
   * The launcher and the program's argv (argv[0] resolved on PATH) that `argv` starts with under
   * `limits`, or RunnerUnavailable saying why it cannot start here. Shared with SubprocessEnvironment.
   */
  async prepare(argv: readonly string[], limits: SandboxLimits): Promise<{ launcher: string; argv: string[] }> {
    if (process.platform !== 'linux')
      throw new RunnerUnavailable(
        `ProcessRunner needs Linux (process groups, /proc, prlimit); this is ${process.platform}`,
      );
    const launcher = await this.which(
      this.launcher,
      'the limits launcher (util-linux prlimit; apt-get install util-linux)',
    );
    // A program dropped to a uid of its own must be able to reach it (not root's pyenv shim).
    const { runsAsOthers } = await this.sandbox();
    const command = argv[0].includes('/') ? argv[0] : await this.which(argv[0], 'the program', runsAsOthers);
    // A missing one fails at exec like any program; one that exists but is out of reach is this runner's problem.
    if (runsAsOthers && isAbsolute(argv[0]) && existsSync(command) && !(await othersMayExecute(command))) {
      throw new RunnerUnavailable(
        `the program, ${command}, cannot be executed by other users, and programs run as a uid of their own`,
      );
    }
    await checkHardLimits(limits);
    return { launcher, argv: [command, ...argv.slice(1)] };
  }

  private async execute(
    dir: string,
    launcher: string,
    argv: string[],
    stdin: string,
    limits: SandboxLimits,
    jail: Jail,
    signal?: AbortSignal,
  ): Promise<Outcome> {
    const { args, env } = launchCommand(argv, dir, limits, this.path, jail);
    const started = performance.now();
    // detached: the child calls setsid(), so it leads a new session and process group (pgid = pid).
    const child = spawn(launcher, args, { cwd: dir, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });

    // One budget for stdout and stderr together; past it the group is killed and the rest dropped.
    let killedBy: 'wall' | 'output' | 'cancel' | null = null;
    const kill = (why: 'wall' | 'output' | 'cancel') => {
      killedBy ??= why;
      if (child.pid !== undefined) killGroup(child.pid);
    };
    const output = collectOutput(child.stdout, child.stderr, limits.messageBytes, () => kill('output'));
    const ioError: { error?: Error } = {};
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
      child.once('exit', (code, signal) => res({ code, signal })),
    );

    await new Promise<void>((res, rej) => {
      child.once('spawn', res);
      child.once('error', (e) => rej(new RunnerUnavailable(`could not start ${launcher}: ${e.message}`, { cause: e })));
    });
    const pid = child.pid!;
    // Killed by the reaper if the companion dies before the run ends.
    const unwatch = watch({ pgid: pid, uid: jail.uid, dir });
    const wall = setTimeout(() => kill('wall'), limits.wallSeconds * 1000);
    const cancel = () => kill('cancel');
    signal?.addEventListener('abort', cancel, { once: true });
    if (signal?.aborted) cancel();
    let swept = false;
    const cleanUp = async () => {
      clearTimeout(wall);
      signal?.removeEventListener('abort', cancel);
      killGroup(pid);
      await sweepStrays(pid, dir, jail.uid);
      jail.swept();
      unwatch();
      swept = true;
    };
    try {
      this.onStart?.({ pid, dir, uid: jail.uid });
      child.stdin.on('error', (e: NodeJS.ErrnoException) => {
        // The program exited or closed stdin before reading all of it: its business, not an error.
        if (e.code !== 'EPIPE' && e.code !== 'ECONNRESET') ioError.error ??= e;
      });
      child.stdin.end(stdin);

      const { code, signal } = await exited;
      const seconds = (performance.now() - started) / 1000;
      await cleanUp();
      // Everything that could write is dead; a pipe still open is held by a process we cannot find.
      await output.drain(PIPE_GRACE_MS);
      if (killedBy === 'cancel')
        throw new RunCancelled(`cancelled after ${seconds.toFixed(2)} s; the program was killed`);
      const ioFailure = ioError.error ?? output.error;
      if (ioFailure)
        throw new Error(`the program's stdin, stdout or stderr failed: ${ioFailure.message}`, { cause: ioFailure });

      const { stdout, stderr } = output.text();
      return {
        ...judge(code, signal, killedBy, seconds, limits),
        exitCode: code,
        signal,
        stdout,
        stderr,
        seconds,
        cpuSeconds: null,
        truncated: output.truncated,
      };
    } finally {
      if (!swept) await cleanUp();
    }
  }

  /**
   * The absolute path of `name` on this runner's PATH, or RunnerUnavailable naming what it is.
   * `forOthers`: one that a user other than its owner may execute (every directory on the way too).
   */
  private async which(name: string, what: string, forOthers = false): Promise<string> {
    const candidates = name.includes('/')
      ? [resolve(name)]
      : this.path
          .split(delimiter)
          .filter(isAbsolute)
          .map((d) => join(d, name));
    for (const c of candidates) {
      try {
        await access(c, fsConstants.X_OK);
        if ((await stat(c)).isFile() && (!forOthers || (await othersMayExecute(c)))) return c;
      } catch (e) {
        if (!isCode(e, 'ENOENT', 'EACCES', 'ENOTDIR')) throw e;
      }
    }
    throw new RunnerUnavailable(
      `${what}, ${name}, is not an executable file on this runner's PATH (${this.path})${forOthers ? ' that other users may execute (programs run as a uid of their own)' : ''}`,
    );
  }
}

/**
 * The launcher's arguments around a prepared `argv` (the limits, then the jail's stages) and the
 * scrubbed environment it runs with in `dir`: `spawn(launcher, args, { cwd: dir, env, detached:
 * true })`. Shared with SubprocessEnvironment, so both start programs the same way. Without a
 * jail the program runs unconfined beyond its rlimits.
 */
export function launchCommand(
  argv: readonly string[],
  dir: string,
  limits: SandboxLimits,
  path: string,
  jail?: Jail,
): { args: string[]; env: Record<string, string> } {
  // PYTHONDONTWRITEBYTECODE matters for a user argv without -I (-I ignores every PYTHON* variable).
  // TMPDIR: temporary files go where they are deleted with the job, not into the shared /tmp.
  const env = { PATH: path, LANG: 'C.UTF-8', HOME: dir, TMPDIR: dir, PYTHONDONTWRITEBYTECODE: '1' };
  // --core=0:0: a SIGSEGV or SIGABRT would otherwise write a core file into the job directory.
  const args = [
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds}`,
    `--as=${limits.memoryBytes}:${limits.memoryBytes}`,
    '--core=0:0',
    ...(jail?.launcherArgs ?? []),
    '--',
    ...(jail?.stages ?? []),
    ...argv,
  ];
  return { args, env };
}

/** A fresh job directory under `tmpRoot`, by its real path: the /proc sweep compares it with each process's cwd. */
export async function makeJobDir(tmpRoot: string): Promise<string> {
  return mkdtemp(join(await realpath(tmpRoot), 'dewpoint-job-'));
}

export function isCode(e: unknown, ...codes: string[]): boolean {
  return codes.includes((e as NodeJS.ErrnoException)?.code ?? '');
}

/** SIGKILL to a process (pid > 0) or a process group (pid < 0); gone already is fine. */
function killQuietly(pid: number): void {
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
 * (pgid = sid = its pid, reserved by the kernel while any member lives), and, with `uid` (the
 * run's own), every process of that uid; else one that set HOME to the job directory at exec
 * (what a setsid'd child inherits), or one whose cwd is in it.
 */
export async function sweepStrays(pgid: number, dir: string, uid: number | null = null): Promise<void> {
  const home = Buffer.from(`HOME=${dir}\0`);
  let left: number[] = [];
  for (let round = 0; round < SWEEP_ROUNDS; round++) {
    left = [];
    for (const name of uid === null ? await readdir('/proc') : readdirSync('/proc')) {
      const pid = Number(name);
      if (!Number.isInteger(pid) || pid === process.pid) continue;
      if (uid === null ? await isOfJob(pid, pgid, dir, home) : hasUidOrGroup(pid, pgid, uid)) left.push(pid);
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

/**
 * Whether a live process runs as `uid` (real, effective, saved or filesystem: it cannot change
 * them) or is in session or group `pgid`. One read of /proc/<pid>/status, readable for every pid.
 * Synchronous: procfs reads never wait on a disk, and a whole scan so takes ~4 ms, not ~20.
 */
function hasUidOrGroup(pid: number, pgid: number, uid: number): boolean {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'latin1');
    const field = (name: string) =>
      status
        .match(new RegExp(`^${name}:\\s*(.*)$`, 'm'))?.[1]
        .trim()
        .split(/\s+/) ?? [];
    if (['Z', 'X'].includes(field('State')[0])) return false;
    // NSpgid, NSsid: the ids as seen from our pid namespace first.
    return (
      field('Uid').some((u) => Number(u) === uid) ||
      Number(field('NSpgid')[0]) === pgid ||
      Number(field('NSsid')[0]) === pgid
    );
  } catch (e) {
    if (isCode(e, 'ENOENT', 'ESRCH')) return false;
    throw e;
  }
}

/** Whether users other than the owner may execute `file`: its mode, and every directory above it and above its real path. */
async function othersMayExecute(file: string): Promise<boolean> {
  for (const path of new Set([file, await realpath(file)])) {
    if (!((await stat(path)).mode & 0o001) || !(await othersMayEnter(dirname(path)))) return false;
  }
  return true;
}

/** Whether users other than the owner may pass through `dir` and every directory above it. */
async function othersMayEnter(dir: string): Promise<boolean> {
  for (let d = resolve(dir); ; d = dirname(d)) {
    if (!((await stat(d)).mode & 0o001)) return false;
    if (d === dirname(d)) return true;
  }
}

/** Write each file under `dir` (names already validated by the protocol), owner-only. */
export async function writeFiles(dir: string, files: Record<string, string>): Promise<void> {
  for (const [name, content] of Object.entries(files)) {
    const target = resolve(dir, name);
    if (!target.startsWith(dir + sep))
      throw new Error(`file ${JSON.stringify(name)} resolves outside the job directory ${dir}`);
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
      throw new Error(
        `could not delete the job directory ${dir}: ${e.message} (first try: ${(first as Error).message})`,
        { cause: e },
      );
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
async function checkHardLimits(limits: SandboxLimits): Promise<void> {
  const table = await readFile('/proc/self/limits', 'utf8');
  const hard = (label: string): number => {
    const line = table.split('\n').find((l) => l.startsWith(label));
    const value = line?.slice(label.length).trim().split(/\s+/)[1];
    if (value === undefined) throw new RunnerUnavailable(`/proc/self/limits has no "${label}" line`);
    return value === 'unlimited' ? Infinity : Number(value);
  };
  const cpu = hard('Max cpu time');
  const as = hard('Max address space');
  if (limits.cpuSeconds > cpu)
    throw new RunnerUnavailable(
      `limits.cpuSeconds ${limits.cpuSeconds} is above the companion's own hard RLIMIT_CPU (${cpu} s), which prlimit cannot raise`,
    );
  if (limits.memoryBytes > as)
    throw new RunnerUnavailable(
      `limits.memoryBytes ${limits.memoryBytes} is above the companion's own hard RLIMIT_AS (${as} bytes), which prlimit cannot raise`,
    );
}
