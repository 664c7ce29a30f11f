/**
 * ContainerRunner: run one program in a fresh, network-less container of an image through a
 * docker-compatible CLI (docker or podman), and report how it ended (an Outcome with a Verdict,
 * judged as ProcessRunner judges, by ./job.ts).
 *
 * - A private directory (mkdtemp, 0700) holds the cidfile and the job directory `work/`. The files
 *   are written there and opened for reading (0755 directories, 0644 files: the container's user,
 *   65534, is not us); `work/` is mounted read-only at /work, the working directory. The root
 *   filesystem is read-only and /tmp a small tmpfs. Everything is deleted afterwards.
 * - Limits (see `command`): no network; memory capped at memoryBytes with no swap; CPU time by
 *   RLIMIT_CPU, soft cpuSeconds and hard one second later (dew's SIGXCPU, then SIGKILL); the
 *   processor share and the process count by cgroups; no capabilities, no new privileges. The
 *   memory cap is a cgroup limit, not RLIMIT_AS: past it the kernel's OOM killer sends SIGKILL,
 *   where ProcessRunner's program gets a MemoryError.
 * - At the wall deadline, past the output budget and on cancellation the client process is killed,
 *   and then the container is force-removed by name: a killed `docker run` leaves its container
 *   running. A create still in flight may make the container appear only later, so removal retries
 *   with backoff while the runtime reports no such container and the cidfile has not appeared.
 * - Exit statuses follow `docker run` (podman's are the same): 125 is the runtime's own failure (no
 *   daemon, no image, a bad flag) and raises RunnerUnavailable, never a verdict; 126 and 127 are
 *   "could not run" / "not found" for the command in the container, indistinguishable from a
 *   program's own exit 126/127, so they are FAILED (`probe` catches a broken image or engine
 *   up front); 128 + n is signal n.
 * - The program sees the image's environment only (no `-e`); the client runs with ours, which may
 *   name the daemon (DOCKER_HOST, XDG_RUNTIME_DIR).
 *
 * Not a defence against the engine or the image themselves, and no measure of CPU time used
 * (`cpuSeconds` is null). Reference: dew's ContainerRunner and ContainerRunner.command
 * (dew ContainerRunner); docs/rl-core.md "Sandboxes".
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, chmod, mkdir, mkdtemp, readdir, realpath } from 'node:fs/promises';
import { availableParallelism, constants as osConstants, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Runner } from './fleet';
import { collectOutput, judge } from './job';
import { isCode, killGroup, removeJobDir, RunCancelled, RunnerUnavailable, writeFiles } from './process-runner';
import {
  parseWith,
  programSchema,
  sandboxLimitsSchema,
  type Outcome,
  type Program,
  type SandboxLimits,
  type Verdict,
} from './protocol';

export interface ContainerRunnerOptions {
  /** The image to run, already present: it is never pulled (`--pull never`). */
  image: string;
  /** The docker-compatible CLI: `docker`, `podman`, or a path to one. Default `docker`. */
  runtime?: string;
  /** Flags before every subcommand, e.g. `['--runtime', 'runc']` for podman. Default none. */
  runtimeArgs?: readonly string[];
  /**
   * The CLI's dialect: podman's `rm --force` first waits 10 s for SIGTERM unless given `--time 0`,
   * which docker's rm does not accept. Default: podman when the runtime's file name starts with
   * `podman`, else docker.
   */
  engine?: 'docker' | 'podman';
  /** The processor share, in CPUs (`--cpus`). Default 1. */
  cpus?: number;
  /** The most processes and threads in the container (`--pids-limit`). Default 64. */
  pids?: number;
  /** `uid:gid` the program runs as. Default `65534:65534` (nobody). */
  user?: string;
  /** The image's own interpreter; the default argv is this plus `main.py`. Default `python -I -S`. */
  python?: readonly string[];
  /** Size of the writable tmpfs at /tmp, bytes; it counts against the memory cap. Default 64 MiB. */
  tmpfsBytes?: number;
  /** The PATH the runtime is looked up on (and the client runs with). Default ours. */
  path?: string;
  /** Where the private job directories are made. Default os.tmpdir(). */
  tmpRoot?: string;
  /** Called once the client has started: its pid (= its process group), the job directory, the container's name. */
  onStart?: (job: { pid: number; dir: string; name: string }) => void;
}

const DEFAULT_PYTHON = ['python', '-I', '-S'] as const;
const MiB = 1024 ** 2;
/**
 * RLIMIT_NOFILE and RLIMIT_NPROC (soft = hard), given explicitly so that no engine's default
 * applies: rootful podman asks for values above our own hard limits, which fails (exit 126) without
 * CAP_SYS_RESOURCE. NPROC counts every process of the uid on the host, not of one container, so it
 * is generous; `--pids-limit` is the container's own bound.
 */
const OPEN_FILES = 1024;
const PROCESSES = 4096;
/** After the client is dead, how long a pipe still held open elsewhere may delay us. */
const PIPE_GRACE_MS = 500;
/** How long one `rm`, `version` or `image inspect` may take before it is killed. */
const CALL_TIMEOUT_MS = 10_000;
const CALL_OUTPUT_BYTES = 64 * 1024;
/**
 * While the container is not there (yet), removal is tried again for this long after the first
 * try, with waits of 50, 100, ... 800 ms: a window of time, not a count of tries, so a slow engine
 * (or a loaded machine, where each `rm` itself takes a while to start) keeps the same window.
 */
const REMOVE_WINDOW_MS = 5000;
const REMOVE_BACKOFF_MS = 50;
const REMOVE_BACKOFF_MAX_MS = 800;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

interface CallResult extends Exit {
  stdout: string;
  stderr: string;
}

export class ContainerRunner implements Runner {
  readonly name = 'container';
  readonly image: string;
  readonly runtime: string;
  readonly runtimeArgs: readonly string[];
  readonly engine: 'docker' | 'podman';
  readonly cpus: number;
  readonly pids: number;
  readonly user: string;
  readonly python: readonly string[];
  readonly tmpfsBytes: number;
  readonly path: string;
  readonly tmpRoot: string;
  private readonly onStart?: ContainerRunnerOptions['onStart'];

  constructor(options: ContainerRunnerOptions) {
    this.image = options.image;
    this.runtime = options.runtime ?? 'docker';
    this.runtimeArgs = [...(options.runtimeArgs ?? [])];
    this.engine = options.engine ?? (basename(this.runtime).startsWith('podman') ? 'podman' : 'docker');
    this.cpus = options.cpus ?? 1;
    this.pids = options.pids ?? 64;
    this.user = options.user ?? '65534:65534';
    this.python = [...(options.python ?? DEFAULT_PYTHON)];
    this.tmpfsBytes = options.tmpfsBytes ?? 64 * MiB;
    this.path = options.path ?? process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin';
    this.tmpRoot = options.tmpRoot ?? tmpdir();
    this.onStart = options.onStart;
    const problems = [
      /^[^\s-]\S*$/.test(this.image)
        ? null
        : `image must be an image reference (no spaces, not starting with -), got ${JSON.stringify(this.image)}`,
      this.runtime !== '' ? null : 'runtime must name a CLI (docker, podman or a path), got ""',
      Number.isFinite(this.cpus) && this.cpus > 0 ? null : `cpus must be a number > 0, got ${this.cpus}`,
      Number.isInteger(this.pids) && this.pids >= 1 ? null : `pids must be an integer ≥ 1, got ${this.pids}`,
      /^[^\s:]+(:[^\s:]+)?$/.test(this.user)
        ? null
        : `user must be uid[:gid] or name[:group], got ${JSON.stringify(this.user)}`,
      this.python.length > 0 ? null : 'python must name the image interpreter (at least one element), got []',
      Number.isInteger(this.tmpfsBytes) && this.tmpfsBytes >= MiB
        ? null
        : `tmpfsBytes must be an integer ≥ ${MiB}, got ${this.tmpfsBytes}`,
    ].filter((p) => p !== null);
    if (problems.length > 0) throw new Error(`ContainerRunner: ${problems.join('; ')}`);
  }

  /**
   * The runtime argv (after `runtimeArgs`) that runs `program` from `directory` in a container
   * called `name`; the runtime writes the container's id to `cidfile` once it has created it.
   */
  command(program: Program, limits: SandboxLimits, directory: string, name: string, cidfile: string): string[] {
    // -v splits on ':'; a path with one cannot be mounted this way.
    if (directory.includes(':'))
      throw new Error(
        `ContainerRunner.command: the job directory ${directory} contains ':', which -v cannot mount (choose a tmpRoot without one)`,
      );
    const argv = program.argv ?? [...this.python, 'main.py'];
    return [
      'run',
      '--rm',
      '--name',
      name,
      '--cidfile',
      cidfile,
      '--network',
      'none',
      '--read-only',
      '-v',
      `${directory}:/work:ro`,
      '-w',
      '/work',
      '--tmpfs',
      `/tmp:rw,noexec,nosuid,nodev,size=${this.tmpfsBytes},mode=1777`,
      // --memory-swap equal to --memory: no swap at all (docker run reference, "--memory-swap").
      '--memory',
      String(limits.memoryBytes),
      '--memory-swap',
      String(limits.memoryBytes),
      '--pids-limit',
      String(this.pids),
      '--cpus',
      String(this.cpus),
      '--ulimit',
      `cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
      '--ulimit',
      `nofile=${OPEN_FILES}:${OPEN_FILES}`,
      '--ulimit',
      `nproc=${PROCESSES}:${PROCESSES}`,
      '--user',
      this.user,
      '--cap-drop',
      'ALL',
      '--security-opt',
      'no-new-privileges',
      '--pull',
      'never',
      '-i',
      this.image,
      ...argv,
    ];
  }

  /**
   * Run `program` to its end under `limits`. Throws RunnerUnavailable when the runtime cannot run
   * it, and RunCancelled when `signal` aborts first (the container is killed and removed, the
   * directory deleted).
   */
  async run(program: Program, limits: SandboxLimits, signal?: AbortSignal): Promise<Outcome> {
    const p = parseWith(programSchema, program, 'program');
    const l = parseWith(sandboxLimitsSchema, limits, 'limits');
    if (!p.ok || !l.ok)
      throw new Error(
        `ContainerRunner.run: invalid input (validate requests at the boundary): ${[...(p.ok ? [] : p.problems), ...(l.ok ? [] : l.problems)].join('; ')}`,
      );
    if (signal?.aborted) throw new RunCancelled('cancelled before it started');

    const box = await mkdtemp(join(await realpath(this.tmpRoot), 'dewpoint-job-'));
    try {
      const dir = join(box, 'work');
      await mkdir(dir, { mode: 0o700 });
      await writeFiles(dir, p.value.files);
      await openForReading(dir);
      const name = `dewpoint-${randomBytes(8).toString('hex')}`;
      const cidfile = join(box, 'cid');
      const args = [...this.runtimeArgs, ...this.command(p.value, l.value, dir, name, cidfile)];
      return await this.execute(args, { dir, name, cidfile }, p.value.stdin ?? '', l.value, signal);
    } finally {
      await removeJobDir(box);
    }
  }

  /**
   * Check that this runner can run programs: the runtime answers `version`, the image is present,
   * and a trial program prints `ok` under the real flags. Throws RunnerUnavailable saying why not.
   */
  async probe(): Promise<{ networkIsolation: true; notes: string[] }> {
    const version = await this.call(['version']);
    if (version.code !== 0)
      throw new RunnerUnavailable(
        `${this.runtime} version failed (${status(version)}): ${tail(version.stderr || version.stdout)}`,
      );
    const versions = [...version.stdout.matchAll(/^\s*Version:\s*(\S+)/gm)].map((m) => m[1]);
    const image = await this.call(['image', 'inspect', '--format', '{{.Id}}', this.image]);
    if (image.code !== 0)
      throw new RunnerUnavailable(
        `the image ${this.image} is not available to ${this.runtime}, and it is never pulled (build, load or ` +
          `import it first): ${tail(image.stderr || image.stdout)}`,
      );
    const trial = await this.run(
      { files: { 'main.py': 'print("ok")\n' } },
      sandboxLimitsSchema.parse({ wallSeconds: 120 }),
    );
    if (trial.verdict !== 'COMPLETED' || trial.stdout.trim() !== 'ok') {
      throw new RunnerUnavailable(
        `a trial program (${[...this.python, 'main.py'].join(' ')} in ${this.image}) did not print ok: ` +
          `${trial.verdict}, ${trial.detail}; stderr: ${tail(trial.stderr)}`,
      );
    }
    return {
      networkIsolation: true,
      notes: [
        `${this.engine} CLI ${[this.runtime, ...this.runtimeArgs].join(' ')}, version ${versions.join(' / ') || 'unknown'}`,
        `image ${this.image} (${image.stdout.trim()})`,
        `trial run: ${trial.seconds.toFixed(2)} s`,
        `--network none, read-only /work and root, ${this.tmpfsBytes}-byte /tmp, user ${this.user}, ${this.cpus} CPUs, ${this.pids} pids`,
      ],
    };
  }

  private async execute(
    args: string[],
    job: { dir: string; name: string; cidfile: string },
    stdin: string,
    limits: SandboxLimits,
    signal?: AbortSignal,
  ): Promise<Outcome> {
    const started = performance.now();
    // detached: the client leads its own process group, so a wrapper script dies with it.
    const client = spawn(this.runtime, args, { env: this.env(), detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    let killedBy: 'wall' | 'output' | 'cancel' | null = null;
    let running = true;
    const kill = (why: 'wall' | 'output' | 'cancel') => {
      killedBy ??= why;
      if (running) killGroup(client.pid!);
    };
    const output = collectOutput(client.stdout, client.stderr, limits.messageBytes, () => kill('output'));
    const exited = new Promise<Exit>((res) =>
      client.once('exit', (code, sig) => {
        running = false;
        res({ code, signal: sig });
      }),
    );
    await new Promise<void>((res, rej) => {
      client.once('spawn', res);
      client.once('error', (e) => rej(this.unavailable(e)));
    });

    const wall = setTimeout(() => kill('wall'), limits.wallSeconds * 1000);
    const cancel = () => kill('cancel');
    signal?.addEventListener('abort', cancel, { once: true });
    if (signal?.aborted) cancel();
    let stdinError: Error | undefined;
    client.stdin.on('error', (e: NodeJS.ErrnoException) => {
      // The program exited or closed stdin before reading all of it: its business, not an error.
      if (!isCode(e, 'EPIPE', 'ECONNRESET')) stdinError ??= e;
    });
    let exit: Exit;
    try {
      this.onStart?.({ pid: client.pid!, dir: job.dir, name: job.name });
      client.stdin.end(stdin);
      exit = await exited;
    } finally {
      clearTimeout(wall);
      signal?.removeEventListener('abort', cancel);
    }
    const seconds = (performance.now() - started) / 1000;

    // A dead client leaves its container running; one that exited 125 after the create (a failed
    // start) may leave it created. Remove it by name either way.
    let removal = '';
    try {
      if (killedBy !== null || exit.signal !== null) await this.remove(job.name, job.cidfile);
      else if (exit.code === 125 && (await exists(job.cidfile))) {
        await this.remove(job.name, job.cidfile).catch(
          (e: Error) => (removal = `; removing its container failed too: ${e.message}`),
        );
      }
    } finally {
      await output.drain(PIPE_GRACE_MS);
    }
    if (killedBy === 'cancel')
      throw new RunCancelled(`cancelled after ${seconds.toFixed(2)} s; the container was killed and removed`);
    if (exit.signal !== null && killedBy === null)
      throw new RunnerUnavailable(
        `the ${this.runtime} client died of ${exit.signal}, which the runner did not send; its container ${job.name} was removed`,
      );
    const { stdout, stderr } = output.text();
    if (killedBy === null && exit.code === 125)
      throw new RunnerUnavailable(
        `${this.runtime} could not run the container (exit status 125): ${tail(stderr)}${removal}`,
      );
    const ioError = stdinError ?? output.error;
    if (ioError)
      throw new Error(`the ${this.runtime} client's stdin, stdout or stderr failed: ${ioError.message}`, {
        cause: ioError,
      });
    return {
      ...containerVerdict(exit.code, killedBy, seconds, limits, this.cpus),
      stdout,
      stderr,
      seconds,
      cpuSeconds: null,
      truncated: output.truncated,
    };
  }

  /**
   * Force-remove container `name`, which may not exist yet: a create in flight when its client was
   * killed can still make it appear. Done when the runtime removed it (it prints the name), or says
   * there is none after the cidfile appeared (it had been created, and `--rm` removed it). While
   * neither, retry with backoff; then give up quietly if it never appeared (with its client dead
   * nobody starts it: docker's client does the start, podman's client is the whole engine), and
   * raise RunnerUnavailable if the runtime kept failing.
   */
  private async remove(name: string, cidfile: string): Promise<void> {
    let failure = '';
    const t0 = performance.now();
    let tries = 0;
    for (let attempt = 0; ; attempt++) {
      const r = await this.call(removeCommand(this.engine, name));
      tries++;
      // docker rm --force prints "No such container" and exits 0 (older ones exit 1); podman's is silent.
      const missing = r.stdout.trim() === '' && (r.code === 0 || /no such container/i.test(r.stderr));
      if (r.code === 0 && !missing) return;
      if (missing && (await exists(cidfile))) return;
      failure = missing ? '' : `${status(r)}: ${tail(r.stderr || r.stdout)}`;
      if (performance.now() - t0 >= REMOVE_WINDOW_MS) break;
      await delay(Math.min(REMOVE_BACKOFF_MS * 2 ** attempt, REMOVE_BACKOFF_MAX_MS));
    }
    if (failure)
      throw new RunnerUnavailable(
        `could not remove container ${name} with ${this.runtime} ${removeCommand(this.engine, name).join(' ')} ` +
          `(${tries} tries over ${REMOVE_WINDOW_MS / 1000} s): ${failure}`,
      );
  }

  /** Run one short runtime command (`runtimeArgs` first) to its end, or kill it after CALL_TIMEOUT_MS. */
  private call(args: string[]): Promise<CallResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.runtime, [...this.runtimeArgs, ...args], {
        env: this.env(),
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const output = collectOutput(child.stdout, child.stderr, CALL_OUTPUT_BYTES, () => {});
      const timer = setTimeout(() => killGroup(child.pid!), CALL_TIMEOUT_MS);
      child.once('error', (e) => {
        clearTimeout(timer);
        reject(this.unavailable(e));
      });
      child.once('close', (code, sig) => {
        clearTimeout(timer);
        resolve({ code, signal: sig, ...output.text() });
      });
    });
  }

  private env(): NodeJS.ProcessEnv {
    return { ...process.env, PATH: this.path };
  }

  private unavailable(e: Error): Error {
    if (!isCode(e, 'ENOENT', 'EACCES', 'ENOTDIR')) return e;
    return new RunnerUnavailable(
      `the container runtime ${this.runtime} could not be started (${e.message}); is docker or podman installed and on this runner's PATH (${this.path})?`,
      { cause: e },
    );
  }
}

/** The runtime argv that force-removes container `name` at once (SIGKILL, no stop timeout). */
export function removeCommand(engine: 'docker' | 'podman', name: string): string[] {
  return engine === 'podman' ? ['rm', '--force', '--time', '0', name] : ['rm', '--force', name];
}

/**
 * The verdict from the client's exit status `code` (null: the runner killed the client), by
 * `docker run`'s conventions, with ProcessRunner's words (./job.ts `judge`). 125 and a client
 * killed by someone else are the runtime's failures: the runner raises, never judges them.
 */
export function containerVerdict(
  code: number | null,
  killedBy: 'wall' | 'output' | 'cancel' | null,
  seconds: number,
  limits: SandboxLimits,
  cpus: number,
): { verdict: Verdict; detail: string; exitCode: number | null; signal: NodeJS.Signals | null } {
  if (killedBy !== null) {
    const signal = code === null ? 'SIGKILL' : null;
    return { ...judge(code, signal, killedBy, seconds, limits), exitCode: code, signal };
  }
  if (code === null || code === 125)
    throw new Error(
      `containerVerdict: exit status ${code} is the runtime's failure, not the program's (the runner raises RunnerUnavailable for it)`,
    );
  const signal = code > 128 ? signalName(code - 128) : null;
  if (signal === 'SIGKILL') {
    // A container's PID 1 never sees the soft limit's SIGXCPU (the kernel drops default-action
    // signals to a namespace's init), so the CPU limit ends it with SIGKILL at the hard limit. The
    // OOM killer's SIGKILL looks the same; one that came before the program could have spent that
    // much CPU time at its processor share is not the CPU limit.
    const hard = limits.cpuSeconds + 1;
    if (seconds * Math.min(cpus, availableParallelism()) >= 0.95 * hard) {
      return {
        verdict: 'TIMEOUT',
        detail: `CPU limit (SIGKILL at the ${hard} s hard RLIMIT_CPU limit; not sent by the runner)`,
        exitCode: null,
        signal,
      };
    }
    return {
      verdict: 'CRASHED',
      detail: `killed by signal SIGKILL (exit status 137; not sent by the runner): most likely the OOM killer at the ${limits.memoryBytes}-byte memory cap`,
      exitCode: null,
      signal,
    };
  }
  if (signal !== null) return { ...judge(null, signal, null, seconds, limits), exitCode: null, signal };
  if (code === 126 || code === 127) {
    const what = code === 127 ? 'was not found' : 'could not be run';
    return {
      verdict: 'FAILED',
      detail: `exit code ${code}: the command ${what} in the container, or the program exited ${code} itself (docker run's convention)`,
      exitCode: code,
      signal: null,
    };
  }
  return { ...judge(code, null, null, seconds, limits), exitCode: code, signal: null };
}

/** The name of signal `n` on this machine (SIGKILL for 9), or null if there is none. */
function signalName(n: number): NodeJS.Signals | null {
  const found = Object.entries(osConstants.signals).find(([, v]) => v === n);
  return found ? (found[0] as NodeJS.Signals) : null;
}

/** Make the job directory readable by the container's user: 0755 directories, 0644 files. */
async function openForReading(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await openForReading(path);
    else await chmod(path, 0o644);
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch (e) {
    if (isCode(e, 'ENOENT')) return false;
    throw e;
  }
}

function status(r: Exit): string {
  return r.code !== null ? `exit status ${r.code}` : `killed by ${r.signal}`;
}

/** The end of a runtime's message, short enough to quote. */
function tail(text: string): string {
  const t = text.trim();
  return t.length > 2000 ? `…${t.slice(-2000)}` : t || '(no output)';
}
