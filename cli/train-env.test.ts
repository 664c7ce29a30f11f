/**
 * `dewpoint train --preset grpo-env`: a person's environment program trained on through a
 * companion this process starts (cli/env-program.ts): the example program's episodes run in real
 * sessions, graded by the program; a run's recorded program refuses a changed file naming both
 * hashes; the flags are refused where they do not belong, naming them.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sha256Hex } from '../worker/data/sha256';
import { UsageError } from './args';
import { cliRunOptions } from './commands/train';
import { main } from './main';
import { capture } from './testing/capture';

afterEach(() => vi.restoreAllMocks());

const PROGRAM = 'examples/calc_env.py';
const TASKS = 'examples/calc-tasks.jsonl';
const dir = () => mkdtempSync(join(tmpdir(), 'dewpoint-train-env-'));

describe('dewpoint train --preset grpo-env', () => {
  it('trains on the example program in sessions of its own companion, every episode graded by the program', async () => {
    const { out, err } = capture();
    const code = await main([
      'train',
      '--preset',
      'grpo-env',
      '--env-program',
      PROGRAM,
      '--tasks',
      TASKS,
      '--steps',
      '1',
      '--prompts',
      '2',
      '--eval-every',
      '1',
      '--eval-n',
      '4',
      '--backend',
      'cpu',
      '--json',
    ]);
    expect(code, err.join('')).toBe(0);
    const sha = sha256Hex(readFileSync(PROGRAM, 'utf8'));
    expect(err.join('')).toContain(
      `environment calc_env.py (sha256 ${sha}, python3 -I calc_env.py) on calc-tasks.jsonl (2000 tasks, 200 held out), ` +
        'sessions in a companion of this process at http://127.0.0.1:',
    );
    const lines = out
      .join('')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, number>);
    const step = lines.find((l) => l.step === 1 && 'episodes/count' in l)!;
    // Every episode ended in the program (done) or ran out of turns: none failed in the companion.
    expect(step['episodes/error']).toBe(0);
    expect(step['episodes/count'] % 8).toBe(0);
    expect(step['episodes/completed'] + step['episodes/truncated']).toBe(step['episodes/count']);
    expect(step['episodes/turns_mean']).toBeGreaterThan(1); // the model called the calculator and read its answer
    const evals = lines.filter((l) => 'eval/accuracy' in l);
    expect(evals.map((l) => [l.step, l['eval/n'], l['eval/errors']])).toEqual([
      [0, 4, 0],
      [1, 4, 0],
    ]);
  }, 120_000);

  it('ppo-env trains the critic on the same program', async () => {
    const { out, err } = capture();
    const code = await main(
      [
        'train',
        '--preset',
        'ppo-env',
        '--steps',
        '1',
        '--prompts',
        '2',
        '--eval-every',
        '0',
        '--backend',
        'cpu',
      ].concat('--json'),
    );
    expect(code, err.join('')).toBe(0);
    expect(err.join('')).toContain('environment calc_env.py');
    const step = JSON.parse(out.join('').trim().split('\n').at(-1)!) as Record<string, number>;
    expect(step['episodes/error']).toBe(0);
    expect(step['critic/vf_loss']).toBeGreaterThan(0); // the value head trained on the program's episodes
  }, 120_000);

  it("refuses a recorded run's program when the file given has changed, naming both hashes", () => {
    const d = dir();
    const text = readFileSync(PROGRAM, 'utf8');
    const config = join(d, 'run.json');
    const recorded = cliRunOptions({ preset: 'grpo-env', 'env-program': PROGRAM, tasks: TASKS }) as {
      environment: unknown;
    };
    writeFileSync(config, JSON.stringify({ preset: 'grpo-env', environment: recorded.environment }));
    const changed = join(d, 'calc_env.py');
    writeFileSync(changed, `${text}\n# changed\n`);
    // The same file continues; a changed one is refused.
    expect(() => cliRunOptions({ config, 'env-program': PROGRAM })).not.toThrow();
    // A config that names no program records none: the files given are the run's.
    const partial = join(d, 'partial.json');
    writeFileSync(partial, JSON.stringify({ preset: 'grpo-env', steps: 3 }));
    const mine = cliRunOptions({ config: partial, 'env-program': changed, tasks: TASKS }) as {
      environment: { program: { sha256: string } };
    };
    expect(mine.environment.program.sha256).toBe(sha256Hex(`${text}\n# changed\n`));
    expect(() => cliRunOptions({ config, 'env-program': changed })).toThrow(
      new RegExp(`the run recorded ${sha256Hex(text)}, the program given has ${sha256Hex(`${text}\n# changed\n`)}`),
    );
  });

  it('names the flags that do not belong', () => {
    expect(() => cliRunOptions({ preset: 'grpo-calc', tasks: TASKS })).toThrow(
      /--tasks is for the environment-program presets \(grpo-env, ppo-env\), not grpo-calc/,
    );
    expect(() => cliRunOptions({ preset: 'grpo-env', 'env-program': PROGRAM })).toThrow(UsageError);
    expect(() => cliRunOptions({ preset: 'grpo-env', 'env-program': PROGRAM })).toThrow(
      /--env-program FILE and --tasks FILE/,
    );
    expect(() => cliRunOptions({ preset: 'grpo-env', 'env-program': 'examples/nope.py', tasks: TASKS })).toThrow(
      /cannot read --env-program examples\/nope.py/,
    );
  });

  it('runs the example when no program is given', () => {
    const o = cliRunOptions({ preset: 'grpo-env' }) as { environment: { program: { name: string } } };
    expect(o.environment.program.name).toBe('calc_env.py');
  });
});
