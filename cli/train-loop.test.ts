/**
 * `dewpoint train` has no training loop of its own: it drives worker/runs/loop.ts's `runLoop`, as
 * the app's run manager does, and prints from its events. The test wraps `runLoop` and marks each
 * step event it emits: every printed step line carries the mark, one line per step event, and
 * each evaluation line is an eval event's. A CLI that stepped its trainer itself would print no
 * mark. The step's records reach the health flags through the loop's store (the infrastructure
 * flag names the step's commonest failure), and a run that fails (a failed status) ends the
 * command with its error's name and message.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RunEvent } from '../worker/protocol';
import type { Session } from '../worker/rl/types';
import type { TrainerStep } from '../worker/presets/trainers';
import type { LoopServices } from '../worker/runs/loop';
import { main } from './main';
import { capture } from './testing/capture';

const wrap = vi.hoisted(() => ({
  events: [] as RunEvent[],
  services: null as LoopServices | null,
  /** When set, the run fails at once with this status instead of running. */
  fail: null as { errorName: string; message: string } | null,
  /** When set, the trainer's steps are this one (through runLoop still). */
  step: null as TrainerStep | null,
}));

vi.mock('../worker/runs/loop', async (importOriginal) => {
  const loop = await importOriginal<typeof import('../worker/runs/loop')>();
  const runLoop: typeof loop.runLoop = async (services, run, o, emit, from, writer) => {
    wrap.services = services;
    const tell = (e: RunEvent) => {
      const marked = e.type === 'step' ? { ...e, metrics: { ...e.metrics, 'reward/marker': 10 * e.step } } : e;
      wrap.events.push(marked);
      emit(marked);
    };
    const step = wrap.step;
    // The CLI's own trainer, its steps replaced (its other methods kept: close, evaluate).
    const trainer: LoopServices['trainer'] = async (...a) => {
      const t = await services.trainer(...a);
      if (step) t.next = async () => step;
      return t;
    };
    if (!wrap.fail) return loop.runLoop({ ...services, trainer }, run, o, tell, from, writer);
    tell({ type: 'status', runId: run.id, status: 'failed', ...wrap.fail });
  };
  return { ...loop, runLoop: vi.fn(runLoop) };
});

afterEach(() => {
  vi.restoreAllMocks();
  wrap.events = [];
  wrap.services = null;
  wrap.fail = null;
  wrap.step = null;
});

const ARGV = ['train', '--preset', 'grpo-arith', '--steps', '2', '--prompts', '2', '--backend', 'cpu'];

describe('dewpoint train drives runLoop and prints from its events', () => {
  it("prints each of runLoop's step and eval events, in their order, and writes no checkpoint", async () => {
    const { out, err } = capture();
    expect(await main([...ARGV, '--eval-every', '2', '--eval-n', '4', '--json']), err.join('')).toBe(0);
    const lines = out
      .join('')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, number>);
    const steps = wrap.events.flatMap((e) => (e.type === 'step' ? [e] : []));
    const evals = wrap.events.flatMap((e) => (e.type === 'eval' ? [e] : []));
    expect(steps.map((e) => e.step)).toEqual([1, 2]);
    expect(evals.map((e) => e.step)).toEqual([0, 2]);
    // Step lines: the event's metrics (the mark too) and the health fields; each evaluation after its step's line.
    expect(
      lines.map((l) => ('eval/accuracy' in l ? `eval ${l.step}` : `step ${l.step} ${l['reward/marker']}`)),
    ).toEqual(['eval 0', 'step 1 10', 'step 2 20', 'eval 2']);
    for (const e of steps) {
      const line = lines.find((l) => l.step === e.step && !('eval/accuracy' in l))!;
      const health = Object.keys(line).filter((k) => k.startsWith('health/'));
      expect(health.length).toBeGreaterThan(0);
      expect(Object.fromEntries(Object.entries(line).filter(([k]) => !health.includes(k)))).toEqual({
        step: e.step,
        ...e.metrics,
      });
    }
    for (const e of evals)
      expect(lines.find((l) => l.step === e.step && 'eval/accuracy' in l)).toEqual({
        step: e.step,
        'eval/accuracy': e.accuracy,
        'eval/mean_length': e.meanLength,
        'eval/n': e.n,
        ...e.metrics,
      });
    const [first, last] = evals.map((e) => (e.accuracy * 100).toFixed(1));
    expect(err.join('')).toContain(`train grpo-arith: held-out accuracy ${first}% -> ${last}% (4 tasks)\n`);
    expect(wrap.events.some((e) => e.type === 'checkpoint')).toBe(false);
    expect(await wrap.services!.store.latestCheckpoint(wrap.events[0].runId)).toBeNull();
  }, 120_000);

  it('prints the plain-text step line from the step event, the mark among its reward family', async () => {
    const { out, err } = capture();
    expect(await main([...ARGV, '--eval-every', '0']), err.join('')).toBe(0);
    const lines = out.join('').trim().split('\n');
    expect(lines).toHaveLength(2);
    for (const [i, line] of lines.entries()) {
      expect(line).toMatch(new RegExp(`^step=${i + 1} `));
      expect(line).toContain(` reward/marker=${10 * (i + 1)}`);
      // The detail families stay in --json.
      expect(line).not.toMatch(/ (batch|sessions|mismatch)\//);
    }
  }, 120_000);

  it("names the step's commonest failure in the infrastructure flag, from the step's sessions", async () => {
    const { err } = capture();
    const failed = (task: string, detail: string) => ({ task, status: 'failed', detail }) as unknown as Session;
    wrap.step = {
      metrics: { 'reward/mean': 0, 'episodes/error_frac': 0.75 },
      sessions: [
        failed('calc/1', 'the environment exited on task calc/1'),
        failed('calc/2', 'the environment exited on task calc/2'),
        failed('calc/3', 'a reply that is not JSON'),
      ],
    };
    expect(await main([...ARGV, '--eval-every', '0']), err.join('')).toBe(0);
    const flags = err.join('').match(/^train grpo-arith: health: infrastructure from step 1: .*$/gm);
    expect(flags).toHaveLength(1); // on the step it first fires, not again
    expect(flags![0]).toMatch(/75% of step 1's episodes .* The commonest \(2×\): the environment exited on a task$/);
  }, 120_000);

  it("a failed run ends the command with the failure's error name and message", async () => {
    capture();
    wrap.fail = { errorName: 'EnvironmentBroken', message: 'the environment failed on all 8 episodes' };
    await expect(main([...ARGV, '--eval-every', '0'])).rejects.toMatchObject({
      name: 'EnvironmentBroken',
      message: 'the environment failed on all 8 episodes',
    });
  });
});
