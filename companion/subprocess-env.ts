/**
 * SubprocessEnvironment: a multi-turn environment that lives in a program of any language,
 * speaking JSON lines (one request per line on its stdin, one reply per line on its stdout; the
 * protocol is documented once, in protocol.ts "Environment sessions").
 *
 * The program starts as ProcessRunner starts programs (`prepare`, `jail` and `launchCommand`: the
 * prlimit launcher, RLIMIT_CPU and RLIMIT_AS over its whole life, the runner's jail (a network
 * namespace, a uid of its own, where the machine allows), a scrubbed environment, its own session
 * and process group) in a fresh job directory holding the files given. Each request has a
 * deadline (`limits.wallSeconds`). The session ends, its process group is killed (then the /proc
 * sweep for children that left it) and its directory deleted, on `close`, and on the first
 * failure: the deadline, cancellation (a request's signal aborts), the program's exit, a stray
 * stdout line (not JSON, not a valid reply, or no request waiting; quoted, truncated), a line past
 * `limits.messageBytes`. A failure answers the request waiting as `{ status: 'error', detail, error }`
 * (`error`: its kind by name, protocol.ts ENV_ERROR_KINDS)
 * (once the program is dead and its directory deleted) and every later one the same: an expected
 * outcome, not an exception. Every reply carries what the program wrote to stderr since the
 * previous one (`stderr`, its last STDERR_REPLY_BYTES bytes), so a failure's traceback reaches the
 * person beside the companion's words for it.
 *
 * Not a filesystem or network sandbox (ProcessRunner's limits, no more), not the HTTP routes
 * (server.ts, env-sessions.ts). Reference: dew `SubprocessEnvironment` (docs/rl-core.md "Sandboxes").
 * Deviation: dew's worker gets SIGKILL when its parent dies (PR_SET_PDEATHSIG); here the
 * companion's reaper (reaper.ts) kills the program's whole group, and what left it, when the
 * companion dies, however it dies.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { spawn } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import type { z } from 'zod';
import type { Jail } from './containment';
import { handOver } from './containment';
import { watch } from './reaper';
import type { ProcessRunner } from './process-runner';
import {
  DEFAULT_ARGV,
  RunnerUnavailable,
  killGroup,
  launchCommand,
  makeJobDir,
  removeJobDir,
  sweepStrays,
  writeFiles,
} from './process-runner';
import type {
  EnvErrorKind,
  EnvRequestLine,
  EnvResetReply,
  EnvResetRequest,
  EnvSetStateReply,
  EnvSetStateRequest,
  EnvStepReply,
  EnvStepRequest,
  SandboxLimits,
} from './protocol';
import {
  STDERR_REPLY_BYTES,
  envResetLineSchema,
  envSetStateLineSchema,
  envStepLineSchema,
  parseWith,
} from './protocol';

/** How much of a stray line a detail quotes, characters. */
const QUOTE_CHARS = 300;
/** After `close` is sent, how long the program may take to exit by itself before its group is killed. */
const CLOSE_GRACE_MS = 200;
/** After the program exits, how long its last output may take to arrive. */
const PIPE_GRACE_MS = 500;

/** `s` as JSON, cut to `max` characters (`…` and the length when cut). */
function quote(s: string, max = QUOTE_CHARS): string {
  return s.length <= max ? JSON.stringify(s) : `${JSON.stringify(s.slice(0, max))}… (${s.length} characters)`;
}

type Answer = { ok: true; value: unknown } | { ok: false; detail: string; kind: EnvErrorKind };
interface Pending {
  op: 'reset' | 'step' | 'set_state';
  schema: z.ZodType;
  done: (a: Answer) => void;
}

export interface SubprocessProgram {
  files: Record<string, string>;
  /** Default: Python on `main.py` (DEFAULT_ARGV). */
  argv?: readonly string[];
}

export class SubprocessEnvironment {
  /** Why the session ended (null while it runs): every request after it answers this. */
  private endedBy: string | null = null;
  private endedKind: EnvErrorKind = 'closed';
  private pending: Pending | null = null;
  /** The last request answered (for an exit between requests: "after answering reset"). */
  private answered: Pending['op'] | null = null;
  private line: Buffer[] = [];
  private lineBytes = 0;
  /** What the program wrote to stderr since the last reply (its end, STDERR_REPLY_BYTES at most). */
  private stderrNew = Buffer.alloc(0);
  private readonly exited: Promise<void>;
  private readonly streamsClosed: Promise<void>;
  private cleaning: Promise<void> | null = null;
  /** Takes the program off the reaper's list (once its group is dead and its directory deleted). */
  private readonly unwatch: () => void;

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    /** The process's id: its process group and session id. */
    readonly pid: number,
    /** The job directory (deleted when the session ends). */
    readonly dir: string,
    readonly limits: SandboxLimits,
    private readonly jail: Jail,
  ) {
    this.unwatch = watch({ pgid: pid, uid: jail.uid, dir });
    child.stdout.on('data', (chunk: Buffer) => this.onStdout(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      const all = Buffer.concat([this.stderrNew, chunk]);
      this.stderrNew = all.subarray(Math.max(0, all.length - STDERR_REPLY_BYTES));
    });
    for (const s of [child.stdout, child.stderr])
      s.on('error', (e) => this.fail('io', `reading the environment's output failed: ${e.message}`));
    child.stdin.on('error', (e: NodeJS.ErrnoException) => {
      // EPIPE: the program is gone or closed stdin; its exit is reported below.
      if (e.code !== 'EPIPE' && e.code !== 'ECONNRESET')
        this.fail('io', `writing to the environment's stdin failed: ${e.message}`);
    });
    this.streamsClosed = Promise.all(
      [child.stdout, child.stderr].map((s) => new Promise<void>((res) => s.once('close', () => res()))),
    ).then(() => undefined);
    this.exited = new Promise<void>((res) =>
      child.once('exit', (code, signal) => {
        res();
        // Its last reply may still be in the pipe: read what there is before judging.
        void Promise.race([this.streamsClosed, delay(PIPE_GRACE_MS)]).then(() => {
          const how =
            signal === null
              ? `exit code ${code}`
              : `killed by signal ${signal}${signal === 'SIGKILL' || signal === 'SIGXCPU' ? ` (not by the companion; RLIMIT_CPU sends it at limits.cpuSeconds = ${limits.cpuSeconds})` : ''}`;
          this.fail(
            'exited',
            `the environment exited (${how}) ${
              this.pending
                ? `before answering ${this.pending.op}`
                : this.answered
                  ? `after answering ${this.answered}`
                  : 'before any request'
            }`,
          );
        });
      }),
    );
  }

  /**
   * Starts `program` under `limits` with `runner`'s launcher, PATH and job-directory root. Throws
   * RunnerUnavailable when it cannot start here (no prlimit, argv[0] not found, not Linux).
   */
  static async start(
    runner: ProcessRunner,
    program: SubprocessProgram,
    limits: SandboxLimits,
  ): Promise<SubprocessEnvironment> {
    const { launcher, argv } = await runner.prepare(program.argv ?? DEFAULT_ARGV, limits);
    const dir = await makeJobDir(runner.tmpRoot);
    const jail = await runner.jail();
    let child: ChildProcessWithoutNullStreams;
    try {
      await writeFiles(dir, program.files);
      if (jail.uid !== null) await handOver(dir, jail.uid);
      const { args, env } = launchCommand(argv, dir, limits, runner.path, jail);
      // detached: the child calls setsid(), so it leads a new session and process group (pgid = pid).
      child = spawn(launcher, args, { cwd: dir, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
      await new Promise<void>((res, rej) => {
        child.once('spawn', res);
        child.once('error', (e) =>
          rej(new RunnerUnavailable(`could not start ${launcher}: ${e.message}`, { cause: e })),
        );
      });
    } catch (e) {
      await removeJobDir(dir);
      await jail.close();
      throw e;
    }
    return new SubprocessEnvironment(child, child.pid!, dir, limits, jail);
  }

  /** The uid the program runs as when that is its own for this run (every process of it is the session's), else null. */
  get uid(): number | null {
    return this.jail.uid;
  }

  /** Why the session ended, or null while it runs. */
  get ended(): string | null {
    return this.endedBy;
  }

  /** Whether a request is waiting for its reply (one at a time). */
  get busy(): boolean {
    return this.pending !== null;
  }

  async reset(request: EnvResetRequest, signal?: AbortSignal): Promise<EnvResetReply> {
    const a = await this.request('reset', { op: 'reset', ...request }, envResetLineSchema, signal);
    const stderr = this.takeStderr();
    if (!a.ok) return { status: 'error', context: [], detail: a.detail, error: a.kind, ...stderr };
    const r = a.value as z.output<typeof envResetLineSchema>;
    if (r.status === 'error')
      return {
        status: 'error',
        context: [],
        detail: r.detail || 'the environment reported an error without a detail',
        error: 'environment',
        ...stderr,
      };
    return {
      status: 'running',
      context: r.context!,
      ...(r.detail ? { detail: r.detail } : {}),
      ...(r.state !== undefined ? { state: r.state } : {}),
      ...stderr,
    };
  }

  async step(request: EnvStepRequest, signal?: AbortSignal): Promise<EnvStepReply> {
    const a = await this.request('step', { op: 'step', ...request }, envStepLineSchema, signal);
    const stderr = this.takeStderr();
    if (!a.ok) return { observation: [], status: 'error', detail: a.detail, error: a.kind, ...stderr };
    const r = a.value as z.output<typeof envStepLineSchema>;
    return {
      observation: r.observation ?? [],
      ...(r.context !== undefined ? { context: r.context } : {}),
      status: r.status,
      ...(r.reward !== undefined ? { reward: r.reward } : {}),
      ...(r.detail !== undefined ? { detail: r.detail } : {}),
      ...(r.state !== undefined ? { state: r.state } : {}),
      ...(r.status === 'error' ? { error: 'environment' as const } : {}),
      ...stderr,
    };
  }

  /** Restores a state the program sent in an earlier session's reply (after this session's reset). */
  async setState(request: EnvSetStateRequest, signal?: AbortSignal): Promise<EnvSetStateReply> {
    const a = await this.request('set_state', { op: 'set_state', ...request }, envSetStateLineSchema, signal);
    const stderr = this.takeStderr();
    if (!a.ok) return { status: 'error', detail: a.detail, error: a.kind, ...stderr };
    const r = a.value as z.output<typeof envSetStateLineSchema>;
    if (r.status === 'error')
      return {
        status: 'error',
        detail: r.detail || 'the environment reported an error without a detail',
        error: 'environment',
        ...stderr,
      };
    return { status: 'running', ...stderr };
  }

  /** What the program wrote to stderr since the last reply, for this reply (nothing when it wrote nothing). */
  private takeStderr(): { stderr?: string } {
    if (this.stderrNew.length === 0) return {};
    const stderr = this.stderrNew.toString('utf8');
    this.stderrNew = Buffer.alloc(0);
    return { stderr };
  }

  /**
   * Ends the session: sends `close`, gives the program CLOSE_GRACE_MS to exit, kills its group,
   * sweeps for strays and deletes the job directory. Idempotent; a request waiting answers error.
   */
  async close(): Promise<void> {
    if (this.endedBy === null) {
      this.endedBy = 'the session was closed';
      this.pending?.done({ ok: false, detail: `the session was closed during ${this.pending.op}`, kind: 'closed' });
      this.pending = null;
      this.child.stdin.end(`${JSON.stringify({ op: 'close' } satisfies EnvRequestLine)}\n`);
      await Promise.race([this.exited, delay(CLOSE_GRACE_MS)]);
    }
    await this.cleanUp();
  }

  private request(op: Pending['op'], line: EnvRequestLine, schema: z.ZodType, signal?: AbortSignal): Promise<Answer> {
    if (this.pending)
      throw new Error(
        `SubprocessEnvironment: ${op} while ${this.pending.op} is still waiting for its reply; send one request at a time`,
      );
    if (this.endedBy !== null) {
      // Answered, as the first failure is, once the program is dead and its directory deleted.
      const ended: Answer = { ok: false, detail: this.endedBy, kind: this.endedKind };
      return (this.cleaning ?? Promise.resolve()).then(
        () => ended,
        () => ended,
      );
    }
    return new Promise<Answer>((resolve) => {
      const { wallSeconds } = this.limits;
      const timer = setTimeout(
        () =>
          this.fail(
            'deadline',
            `the environment did not answer ${op} within the ${wallSeconds} s deadline (limits.wallSeconds) and was killed`,
          ),
        wallSeconds * 1000,
      );
      const cancel = () =>
        this.fail('cancelled', `${op} was cancelled (its client went away); the environment was killed`);
      this.pending = {
        op,
        schema,
        done: (a) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', cancel);
          resolve(a);
        },
      };
      signal?.addEventListener('abort', cancel, { once: true });
      if (signal?.aborted) cancel();
      else this.child.stdin.write(`${JSON.stringify(line)}\n`);
    });
  }

  private onStdout(chunk: Buffer): void {
    let start = 0;
    while (this.endedBy === null) {
      const nl = chunk.indexOf(0x0a, start);
      const piece = chunk.subarray(start, nl < 0 ? chunk.length : nl);
      this.line.push(piece);
      this.lineBytes += piece.length;
      if (this.lineBytes > this.limits.messageBytes) {
        this.fail(
          'message-limit',
          `a line on the environment's stdout passed the ${this.limits.messageBytes}-byte message limit ` +
            `(limits.messageBytes): ${quote(Buffer.concat(this.line).toString('utf8'))}`,
        );
        return;
      }
      if (nl < 0) return;
      const text = Buffer.concat(this.line).toString('utf8').replace(/\r$/, '');
      this.line = [];
      this.lineBytes = 0;
      this.onLine(text);
      start = nl + 1;
    }
  }

  private onLine(text: string): void {
    const p = this.pending;
    if (!p)
      return this.fail(
        'bad-reply',
        `a stray line on the environment's stdout, with no request waiting: ${quote(text)} (stdout is for replies only; write anything else to stderr)`,
      );
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return this.fail(
        'bad-reply',
        `a stray line on the environment's stdout in reply to ${p.op}, not JSON: ${quote(text)} (stdout is for replies only; write anything else to stderr)`,
      );
    }
    const parsed = parseWith(p.schema, value, 'reply');
    if (!parsed.ok)
      return this.fail(
        'bad-reply',
        `an invalid reply to ${p.op} on the environment's stdout (${parsed.problems.join('; ')}): ${quote(text)}`,
      );
    this.pending = null;
    this.answered = p.op;
    p.done({ ok: true, value: parsed.value });
  }

  /** Ends the session with `why` (the first reason wins): kills the group, answers the request waiting, cleans up. */
  private fail(kind: EnvErrorKind, why: string): void {
    if (this.endedBy !== null) return;
    const detail = why;
    this.endedBy = detail;
    this.endedKind = kind;
    killGroup(this.pid);
    const p = this.pending;
    this.pending = null;
    // The request waiting is answered once the program is dead and its directory gone.
    this.cleanUp().then(
      () => p?.done({ ok: false, detail, kind }),
      (e: Error) => {
        console.error(`environment session in ${this.dir}: cleanup after "${why}" failed: ${e.message}`);
        p?.done({ ok: false, detail: `${detail}; then cleaning up failed: ${e.message}`, kind });
      },
    );
  }

  /** Kills the group and its strays, releases the pipes, deletes the job directory, closes the jail. Runs once. */
  private cleanUp(): Promise<void> {
    this.cleaning ??= (async () => {
      killGroup(this.pid);
      await sweepStrays(this.pid, this.dir, this.jail.uid);
      this.jail.swept();
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([this.streamsClosed, new Promise<void>((res) => (grace = setTimeout(res, PIPE_GRACE_MS)))]);
      clearTimeout(grace);
      this.child.stdout.destroy();
      this.child.stderr.destroy();
      this.child.stdin.destroy();
      try {
        await removeJobDir(this.dir);
      } finally {
        this.unwatch();
        await this.jail.close();
      }
    })();
    return this.cleaning;
  }
}
