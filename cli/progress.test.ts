import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from './main';
import { StepProgress, duration, outputsLine } from './progress';
import { capture } from './testing/capture';

afterEach(() => vi.restoreAllMocks());

/** A stream that records its writes, a terminal or not, and a clock the test moves (ms). */
function fake(isTTY: boolean) {
  const writes: string[] = [];
  const clock = { t: 0 };
  return { writes, clock, stream: { isTTY, write: (s: string) => (writes.push(s), true) }, now: () => clock.t };
}

describe('the CLI progress line (cli/progress.ts)', () => {
  it('durations read as a person reads them', () => {
    expect([0.04, 3.25, 42.4, 245, 3725].map(duration)).toEqual(['0.0 s', '3.3 s', '42 s', '4 min 05 s', '1 h 02 min']);
  });

  it('off a terminal: one line per step, elapsed from the start, ETA from the steps alone', () => {
    const f = fake(false);
    const p = new StepProgress('train x', 4, f.stream, f.now);
    f.clock.t = 20_000; // the evaluation before step 1: elapsed, not in the per-step rate
    p.begin();
    f.clock.t = 22_000;
    p.step(1);
    p.clear();
    f.clock.t = 26_000;
    p.step(2);
    p.end();
    expect(f.writes).toEqual([
      'train x: step 1/4, 22 s elapsed, ETA 6.0 s\n',
      'train x: step 2/4, 26 s elapsed, ETA 6.0 s\n',
    ]);
  });

  it('on a terminal: the line is rewritten in place, cleared before other output, ended at the end', () => {
    const f = fake(true);
    const p = new StepProgress('train x', 2, f.stream, f.now);
    f.clock.t = 1000;
    p.step(1);
    p.clear();
    p.clear(); // nothing shown: nothing written
    f.clock.t = 2000;
    p.step(2);
    p.note('train x: health: flag\n');
    p.step(2);
    p.end();
    p.end();
    expect(f.writes).toEqual([
      '\r\x1b[Ktrain x: step 1/2, 1.0 s elapsed, ETA 1.0 s',
      '\r\x1b[K',
      '\r\x1b[Ktrain x: step 2/2, 2.0 s elapsed, ETA 0.0 s',
      '\r\x1b[K',
      'train x: health: flag\n',
      '\r\x1b[Ktrain x: step 2/2, 2.0 s elapsed, ETA 0.0 s',
      '\n',
    ]);
  });

  it('the outputs line names the run id and every place the run writes', () => {
    expect(outputsLine('train a', { json: false })).toBe('train a: writes metrics to stdout (text) only\n');
    expect(outputsLine('train b', { runId: 'cli-b-1', journal: 'J', save: 'S', json: true })).toBe(
      'train b: run cli-b-1; writes metrics to stdout (JSON lines), the journal to J, the run folder to S\n',
    );
  });

  it('train prints a progress line per step and its outputs on stderr; stdout stays JSON lines', async () => {
    const { out, err } = capture();
    const save = join(mkdtempSync(join(tmpdir(), 'dewpoint-progress-')), 'run');
    const argv = ['train', '--preset', 'grpo-arith', '--steps', '2', '--prompts', '2', '--eval-every', '0'];
    expect(await main([...argv, '--backend', 'wasm', '--json', '--save', save])).toBe(0);
    const lines = out.join('').trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { step: number }).step)).toEqual([1, 2]);
    const stderr = err.join('');
    expect(stderr).toContain(`train grpo-arith: writes metrics to stdout (JSON lines), the run folder to ${save}\n`);
    expect(stderr).toMatch(/^train grpo-arith: step 1\/2, \d+\.\d s elapsed, ETA \d+\.\d s$/m);
    expect(stderr).toMatch(/^train grpo-arith: step 2\/2, \d+\.\d s elapsed, ETA 0\.0 s$/m);
  });
});
