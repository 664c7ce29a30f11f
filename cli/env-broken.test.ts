/**
 * A broken environment program says why, at once: five ways to get one wrong (examples/broken/: a
 * reply that is not JSON, no reply at all, a flood on stdout, an exit after reset, an error on every
 * step with a detached child left behind), each run as `dewpoint train --preset grpo-env` for one step in a
 * real process, with a real companion of its own: the run exits non-zero within 60 s, its stderr
 * names the failure's kind and the program's own words, and nothing of the program is left
 * running. `dewpoint env check` reports the same failures first; the example program passes it.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from './main';
import { capture } from './testing/capture';

afterEach(() => vi.restoreAllMocks());

const TASKS = 'examples/calc-tasks.jsonl';

/** The five, in examples/broken/, each with the words its failure is named by. */
const BROKEN: { name: string; cause: RegExp }[] = [
  {
    name: 'not_json.py',
    cause: /bad-reply: a stray line on the environment's stdout in reply to reset, not JSON: "hello, this is not JSON"/,
  },
  { name: 'silent.py', cause: /deadline: the environment did not answer reset within the 10 s deadline/ },
  {
    name: 'flood.py',
    cause: /message-limit: a line on the environment's stdout passed the 1048576-byte message limit/,
  },
  { name: 'exit_after_reset.py', cause: /exited: the environment exited \(exit code 3\)[^]*giving up after reset/ },
  {
    name: 'always_error.py',
    cause: /environment: this environment always fails\nthe program's stderr:\n {2}step refused on purpose/,
  },
];
const program = (name: string) => join('examples/broken', name);

/** Processes whose command line names `what` (this test's programs and their children), from /proc. */
function processesNaming(what: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes(what) && !cmd.includes('vitest')) found.push(`${pid}: ${cmd}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** `dewpoint ARGS` as a person runs it: its exit code, stderr and how long it took. */
function dewpoint(args: string[]): Promise<{ code: number | null; stderr: string; seconds: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/dewpoint.mjs', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stderr, seconds: (performance.now() - t0) / 1000 }));
  });
}

describe('a broken environment program', () => {
  it.each(BROKEN)(
    'train grpo-env with $name exits non-zero within 60 s naming the cause, leaving nothing running',
    async ({ name, cause }) => {
      const r = await dewpoint([
        'train',
        '--preset',
        'grpo-env',
        '--env-program',
        program(name),
        '--tasks',
        TASKS,
        '--steps',
        '1',
        '--backend',
        'cpu',
      ]);
      expect(r.code, r.stderr).toBe(1);
      expect(r.seconds, r.stderr).toBeLessThan(60);
      expect(r.stderr).toMatch(/dewpoint: EnvironmentBroken: the environment failed on all \d+ episodes of /);
      expect(r.stderr).toMatch(cause);
      // The program and what it started (always_error.py's detached child names the file too).
      expect(processesNaming(name)).toEqual([]);
    },
    90_000,
  );

  it('a failure in a training step names the step (no evaluation first)', async () => {
    const r = await dewpoint([
      'train',
      '--preset',
      'grpo-env',
      '--env-program',
      program('always_error.py'),
      '--tasks',
      TASKS,
      '--steps',
      '1',
      '--eval-every',
      '0',
      '--backend',
      'cpu',
    ]);
    expect(r.code, r.stderr).toBe(1);
    // An action that runs out of ids before EOS is never sent: those few episodes end truncated, not failed.
    expect(r.stderr).toMatch(/the environment failed on \d+ of 64 episodes of step 1 \(at least 50% of a batch stops /);
    expect(r.stderr).toMatch(/The first, episode 0 \(task calc\//);
    expect(r.stderr).toMatch(BROKEN[4].cause);
  }, 90_000);

  it.each(BROKEN)(
    'env check reports $name in the same words, exit 1',
    async ({ name, cause }) => {
      const { out, err } = capture();
      const code = await main(['env', 'check', '--env-program', program(name), '--tasks', TASKS]);
      expect(code, err.join('')).toBe(1);
      expect(err.join('')).toMatch(/the program failed; a run would stop with the same words/);
      expect(err.join('')).toMatch(cause);
      expect(out.join('')).toBe('');
    },
    60_000,
  );
});

describe('dewpoint env check', () => {
  it("runs the example program's first reset and one step of the base's greedy action", async () => {
    const { out, err } = capture();
    const code = await main(['env', 'check', '--env-program', 'examples/calc_env.py', '--tasks', TASKS]);
    expect(code, err.join('')).toBe(0);
    const text = out.join('');
    expect(text).toContain('task calc/67/61/55 (67+61+55=)');
    expect(text).toContain('reset: the model starts from 10 ids: <bos>67+61+55=');
    expect(text).toMatch(
      /step: the base's greedy first action "calc\(67\+61\)": the program answered running, appending "=128"/,
    );
  }, 60_000);

  it('names a missing flag', async () => {
    const { err } = capture();
    expect(await main(['env', 'check', '--tasks', TASKS])).toBe(2);
    expect(err.join('')).toMatch(
      /dewpoint env check: an environment program needs --env-program FILE and --tasks FILE/,
    );
  });
});
