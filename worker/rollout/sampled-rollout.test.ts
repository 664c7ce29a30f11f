import { describe, expect, it, vi } from 'vitest';
import type { ArithTask } from '../data/arith';
import { encodeExample } from '../data/arith';
import { mathReward } from '../rewards/math-reward';
import { generate } from './generate';
import type { PromptReward, SampledSession } from './prompt-source';
import { SampledRollout } from './sampled-rollout';
import { model, source, TASKS, tok } from './node-test-source';

const ids = (sessions: SampledSession[]) => sessions.map((s) => [...s.calls[0].sampledIds]);

describe('SampledRollout (CPU, shipped arith base)', () => {
  it('returns G one-call sessions per task, prompt-major, with the ids and log-probs of one generate() batch', async () => {
    const G = 3;
    const sessions = await new SampledRollout(source({ seed: 40 }), { groups: G }).collect(TASKS, 2);
    const prompts = TASKS.flatMap((t) => Array.from({ length: G }, () => encodeExample(tok, t).promptIds));
    // One batch at version 2 of a source seeded 40 draws with generate seed 42.
    const direct = await generate(model, prompts, { maxNew: 16, eos: tok.eos, seed: 42 });
    expect(sessions).toHaveLength(TASKS.length * G);
    sessions.forEach((s, i) => {
      const task = TASKS[Math.floor(i / G)];
      const g = direct[i];
      expect([s.task, s.group, s.sample, s.attempt, s.calls.length]).toEqual([task.id, task.id, i % G, 0, 1]);
      const c = s.calls[0];
      expect(c.version).toBe(2);
      expect([...c.promptIds]).toEqual([...g.promptIds]);
      expect([...c.sampledIds]).toEqual([...g.sampledIds]);
      expect([...c.behaviorLogProbs]).toEqual([...g.behaviorLogProbs]);
      expect([...c.rawLogProbs]).toEqual([...g.rawLogProbs]);
      expect(c.finishReason).toBe(g.finishReason);
      expect(s.status).toBe(g.finishReason === 'stop' ? 'completed' : 'truncated');
      const r = mathReward(tok.decode(g.sampledIds), task.answer);
      expect([s.reward, s.components, s.detail]).toEqual([r.score, { ...r.components }, r.detail]);
    });
  });

  it('the reward sees the decoded completion without its EOS', async () => {
    const seen: string[] = [];
    const spy: PromptReward<ArithTask> = (text) => (seen.push(text), { score: 0 });
    // Decode with specials shown, so an EOS left in would read as "<eos>".
    const sessions = await new SampledRollout(
      source({ reward: spy, decode: (x) => tok.decode(x, { specials: true }) }),
      { groups: 4 },
    ).collect(TASKS, 0);
    const stopped = sessions.filter((s) => s.calls[0].finishReason === 'stop');
    expect(stopped.length).toBeGreaterThan(0);
    expect(seen).toHaveLength(sessions.length);
    expect(seen.filter((t) => t.includes('<eos>'))).toEqual([]);
    for (const s of stopped) expect(s.calls[0].sampledIds.at(-1)).toBe(tok.eos);
    expect(seen).toEqual(sessions.map((s) => tok.decode(s.calls[0].sampledIds)));
  });

  it('a completion that runs out of maxNewTokens is truncated and still scored', async () => {
    const scored = vi.fn(() => ({ score: 0.5, components: { x: 1 }, detail: 'spy' }));
    const sessions = await new SampledRollout(source({ maxNewTokens: 3, reward: scored }), { groups: 2 }).collect(
      TASKS,
      0,
    );
    expect(scored).toHaveBeenCalledTimes(sessions.length);
    for (const s of sessions) {
      expect(s.calls[0].finishReason).toBe('length');
      expect(s.calls[0].sampledIds).toHaveLength(3);
      expect([s.status, s.reward, s.components, s.detail]).toEqual(['truncated', 0.5, { x: 1 }, 'spy']);
    }
  });

  it('pack: truncation defaults to "score" (truncated sessions train) and the options pass through', async () => {
    const rollout = new SampledRollout(
      source({ maxNewTokens: 3, reward: (_t, task) => ({ score: task === TASKS[0] ? 1 : 0 }) }),
      { groups: 2 },
    );
    const sessions = await rollout.collect(TASKS, 0);
    expect(rollout.packOptions).toMatchObject({ estimator: 'grpo', truncation: 'score' });
    const scored = rollout.pack(sessions, 64);
    const masked = new SampledRollout(rollout.source, { groups: 2, pack: { truncation: 'mask' } }).pack(sessions, 64, {
      rows: 5,
    });
    if (!scored.ok || !masked.ok) throw new Error('does not pack');
    expect(scored.metrics['sessions/trained']).toBe(sessions.length);
    expect([masked.metrics['sessions/trained'], masked.rows]).toEqual([0, 5]);
  });

  it('same seed, same sessions; another seed, other ids', async () => {
    const draw = (seed: number) => new SampledRollout(source({ seed }), { groups: 4 }).collect(TASKS, 0);
    const [a, b, c] = [await draw(9), await draw(9), await draw(10)];
    expect(ids(b)).toEqual(ids(a));
    expect(b.map((s) => [...s.calls[0].behaviorLogProbs])).toEqual(a.map((s) => [...s.calls[0].behaviorLogProbs]));
    expect(ids(c)).not.toEqual(ids(a));
  });
});
