/**
 * What every runner does with one job besides starting it: collect the program's stdout and
 * stderr under one byte budget, decode each as UTF-8 over its whole length, and judge how it ended
 * (a Verdict and a detail naming who ended it). Shared by ProcessRunner and ContainerRunner, so
 * both report the same verdicts in the same words.
 *
 * Not how a program is started or killed: each runner owns that.
 * Reference: docs/rl-core.md "Sandboxes"; dew's Verdict and SandboxLimits.
 */
import { availableParallelism } from 'node:os';
import type { Readable } from 'node:stream';
import type { SandboxLimits, Verdict } from './protocol';

/** The verdict and who ended the program. The runner's own kills come first. */
export function judge(
  code: number | null,
  signal: NodeJS.Signals | null,
  killedBy: 'wall' | 'output' | 'cancel' | null,
  seconds: number,
  limits: SandboxLimits,
): { verdict: Verdict; detail: string } {
  if (killedBy === 'output')
    return {
      verdict: 'OUTPUT_LIMIT',
      detail: `killed by the runner: stdout and stderr passed the ${limits.messageBytes}-byte message limit`,
    };
  if (killedBy === 'wall')
    return { verdict: 'TIMEOUT', detail: `killed by the runner at the ${limits.wallSeconds} s wall deadline` };
  if (signal === null) return { verdict: code === 0 ? 'COMPLETED' : 'FAILED', detail: `exit code ${code}` };
  if (signal === 'SIGXCPU')
    return { verdict: 'TIMEOUT', detail: `CPU limit (SIGXCPU at ${limits.cpuSeconds} s of CPU time)` };
  // With soft = hard the kernel sends SIGKILL at the RLIMIT_CPU limit, without a SIGXCPU first
  // (kernel/time/posix-cpu-timers.c checks the hard limit first). A SIGKILL from anyone else (the
  // OOM killer, the program itself) looks the same; one that came before the program could have
  // spent its CPU time even on every core is not the CPU limit.
  if (signal === 'SIGKILL' && seconds * availableParallelism() >= 0.95 * limits.cpuSeconds) {
    return {
      verdict: 'TIMEOUT',
      detail: `CPU limit (SIGKILL at the ${limits.cpuSeconds} s RLIMIT_CPU hard limit; not sent by the runner)`,
    };
  }
  return { verdict: 'CRASHED', detail: `killed by signal ${signal} (not sent by the runner)` };
}

/** A program's stdout and stderr, collected under one budget for both together. */
interface Output {
  /** Whether the budget was passed (the rest was dropped and `onExceeded` called once). */
  readonly truncated: boolean;
  /** The first error of either stream, if any. */
  readonly error: Error | undefined;
  /** Resolves once both streams are closed, or after `graceMs` by destroying them (a pipe held open elsewhere). */
  drain(graceMs: number): Promise<void>;
  /** Both streams, each decoded as UTF-8 over its whole length. */
  text(): { stdout: string; stderr: string };
}

/**
 * Collect `stdout` and `stderr` up to `budget` bytes together. The chunk that passes the budget is
 * cut there, everything after it dropped, and `onExceeded` called (the runner kills the program).
 */
export function collectOutput(stdout: Readable, stderr: Readable, budget: number, onExceeded: () => void): Output {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let total = 0;
  let truncated = false;
  let error: Error | undefined;
  const collect = (into: Buffer[]) => (chunk: Buffer) => {
    if (truncated) return;
    const room = budget - total;
    if (chunk.length <= room) {
      into.push(chunk);
      total += chunk.length;
      return;
    }
    into.push(chunk.subarray(0, room));
    total += room;
    truncated = true;
    onExceeded();
  };
  stdout.on('data', collect(out));
  stderr.on('data', collect(err));
  const closed = [stdout, stderr].map((s) => {
    s.on('error', (e) => (error ??= e));
    return new Promise<void>((res) => s.once('close', () => res()));
  });
  return {
    get truncated() {
      return truncated;
    },
    get error() {
      return error;
    },
    async drain(graceMs: number) {
      let grace: NodeJS.Timeout | undefined;
      const drained = await Promise.race([
        Promise.all(closed).then(() => true),
        new Promise<false>((res) => (grace = setTimeout(res, graceMs, false))),
      ]);
      clearTimeout(grace);
      if (drained) return;
      stdout.destroy();
      stderr.destroy();
      await Promise.all(closed);
    },
    text: () => ({ stdout: decode(out, truncated), stderr: decode(err, truncated) }),
  };
}

/** Decode a whole stream once; a cut stream first loses a partial UTF-8 character at its end. */
function decode(chunks: Buffer[], truncated: boolean): string {
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
