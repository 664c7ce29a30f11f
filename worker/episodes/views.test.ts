import { describe, expect, it } from 'vitest';
import { toolTokenizer } from '../data/tokenizer';
import type { GenerateOptions, Generated } from '../rollout/generate';
import { CALC } from './calc';
import type { EnvTask, EnvironmentKind } from './environment';
import { MemoryJournal } from './journal';
import { failingAfter } from './testing/failing-journal';
import { collectEpisodes, readJournal } from './rollout';
import type { EpisodeContext } from './views';
import { episodeDetail, episodeSummaries, episodesJsonl, replayEpisode } from './views';

const tok = toolTokenizer();

/**
 * A fake policy for unit tests: plays the calc demonstration of the prompt in its context (turn k:
 * the k-th demonstrated action), except that rows whose seed is odd answer 1 too high.
 */
async function demonstrator(prompts: readonly ArrayLike<number>[], o: GenerateOptions): Promise<Generated[]> {
  return prompts.map((p, r) => {
    const text = tok.decode(p);
    const [a, b, c] = text.split('=')[0].split('+').map(Number);
    const turn = text.split('calc(').length;
    const sum = a + b + c + (o.rowSeeds![r] % 2);
    const action = [`calc(${a}+${b})`, `calc(${a + b}+${c})`, `\\boxed{${sum}}`][turn - 1] ?? 'x';
    const ids = [...tok.encode(action), tok.eos];
    return {
      promptIds: Int32Array.from(p),
      sampledIds: Int32Array.from(ids),
      behaviorLogProbs: new Float64Array(ids.length).fill(-0.5),
      rawLogProbs: new Float64Array(ids.length).fill(-0.25),
      finishReason: 'stop',
    };
  });
}

const tasks: EnvTask[] = CALC.heldOut(2);
const context: EpisodeContext = { kind: CALC, tok, group: 2, truncation: 'mask', maskZeroAdvantage: true };

/** `on` × 2 episodes of `kind` journaled as run r's step 3, with the progress reports (finished, episodes) they made. */
async function journaled(kind: EnvironmentKind = CALC, on: readonly EnvTask[] = tasks) {
  const journal = new MemoryJournal();
  const progress: [number, number][] = [];
  const eps = await collectEpisodes(demonstrator, on, 2, {
    kind,
    tok,
    maxContext: 96,
    sampling: { temperature: 1 },
    seed: 5,
    policyVersion: 2,
    journal: { journal, cohort: { runId: 'r', step: 3, policyVersion: 2, samplerSeed: 5 } },
    writer: 'w',
    onProgress: (_round, finished, episodes) => progress.push([finished, episodes]),
  });
  return { eps, records: await journal.load('r', 3), progress };
}

describe('episode views from the journal', () => {
  it('reads back what was collected: statuses, rewards, turns, traces', async () => {
    const { eps, records } = await journaled();
    const read = await readJournal(records, CALC, tok, 2);
    expect(read.map((e) => e.episode)).toEqual(eps.map((e) => e.episode));
    expect(read.map((e) => e.transcript)).toEqual(eps.map((e) => e.transcript));
    expect(eps[0].transcript).toMatch(/^calc\(\d+\+\d+\)=\d+\ncalc\(\d+\+\d+\)=\d+\n\\boxed\{\d+\}$/);
  });

  it('summaries say status, reward, turns, policy version and what trained; a detail rebuilds every prompt from its delta chain', async () => {
    const { eps, records } = await journaled();
    const list = await episodeSummaries(records, 3, context);
    expect(list.map((s) => [s.index, s.status, s.termination, s.turns, s.policyVersion, s.resumedTurns])).toEqual(
      eps.map((e) => [e.index, 'completed', 'env_done', 3, 2, 0]),
    );
    expect(list.map((s) => s.reward)).toEqual(eps.map((e) => e.episode.reward));
    // A group whose two rewards differ trains; one with equal rewards is masked (maskZeroAdvantage).
    for (const s of list) {
      const group = list.filter((x) => x.group === s.group).map((x) => x.reward);
      expect(s.trained).toBe(group[0] !== group[1]);
    }
    const d = (await episodeDetail(records, 3, 1, context))!;
    expect(d.turnViews.map((t) => Array.from(t.promptIds!))).toEqual(
      eps[1].episode.transitions.map((t) => Array.from(t.action.context)),
    );
    expect(d.turnViews.map((t) => t.inherited)).toEqual([
      0,
      eps[1].episode.transitions[0].action.context.length + eps[1].episode.transitions[0].action.tokens.length,
      expect.any(Number),
    ]);
    expect(d.turnViews[1].observation.text).toMatch(/^=\d+$/);
    expect(d.turnViews.every((t) => t.checksumOk && !t.resumed)).toBe(true);
    expect(d.vocab[tok.eos]).toBe('<eos>');
  });

  it("with the step's trained groups (dynamic sampling journals every batch it drew), a group left out did not train", async () => {
    const { records } = await journaled();
    const all = await episodeSummaries(records, 3, context);
    const varying = all.find((s) => s.trained)!;
    // Only the other task's group trained at this step: the varying group was drawn but not kept.
    const other = all.find((s) => s.group !== varying.group)!.group;
    const kept = await episodeSummaries(records, 3, { ...context, trainedGroups: new Set([other]) });
    expect(kept.filter((s) => s.group === varying.group).every((s) => !s.trained)).toBe(true);
    expect(kept.filter((s) => s.group === other).map((s) => s.trained)).toEqual(
      all.filter((s) => s.group === other).map((s) => s.trained),
    );
    const lines = (await episodesJsonl('r', [{ step: 3, records, trainedGroups: new Set([other]) }], context))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { group: string; trained: boolean });
    expect(lines.filter((l) => l.group === varying.group).every((l) => !l.trained)).toBe(true);
  });

  it('an episode resumed after a restart says how its environment came back: its journaled state, or a replay', async () => {
    const stateless: EnvironmentKind = {
      ...CALC,
      create: (task) => {
        const env = CALC.create(task);
        return { reset: () => env.reset(), step: (a) => env.step(a) };
      },
    };
    for (const [kind, how] of [
      [CALC, 'state'],
      [stateless, 'replay'],
    ] as const) {
      const journal = new MemoryJournal();
      const options = (writer: string, j: MemoryJournal | ReturnType<typeof failingAfter>) => ({
        kind,
        tok,
        maxContext: 96,
        sampling: { temperature: 1 },
        seed: 5,
        policyVersion: 2,
        journal: { journal: j, cohort: { runId: 'r', step: 3, policyVersion: 2, samplerSeed: 5 } },
        writer,
      });
      // Two rounds committed (the starts, then turn 1), then the tab closed; a second writer goes on.
      await expect(collectEpisodes(demonstrator, tasks, 2, options('w1', failingAfter(journal, 2)))).rejects.toThrow();
      await collectEpisodes(demonstrator, tasks, 2, options('w2', journal));
      const records = await journal.load('r', 3);
      const list = await episodeSummaries(records, 3, { ...context, kind });
      expect(
        list.map((s) => [s.resumedTurns, s.resumedBy]),
        how,
      ).toEqual(list.map(() => [1, how]));
      expect((await episodeDetail(records, 3, 0, { ...context, kind }))!.resumedBy).toBe(how);
    }
    // One that ran through was not resumed.
    const { records } = await journaled();
    expect((await episodeSummaries(records, 3, context)).every((s) => s.resumedBy === undefined)).toBe(true);
  });

  it('a kind that may open only so many environments collects in waves of whole groups: the same episodes and journal', async () => {
    let open = 0;
    let most = 0;
    const counted = (maxOpen?: number): EnvironmentKind => ({
      ...CALC,
      ...(maxOpen ? { maxOpen } : {}),
      create: (task) => {
        const env = CALC.create(task);
        open++;
        most = Math.max(most, open);
        return { reset: () => env.reset(), step: (a) => env.step(a), close: () => void open-- };
      },
    });
    const many = CALC.heldOut(5);
    const collect = (kind: EnvironmentKind) => journaled(kind, many);
    const whole = await collect(counted());
    expect(most).toBe(10);
    most = 0;
    const waves = await collect(counted(4)); // 2 groups of 2 a wave: 3 waves
    expect(most).toBe(4);
    expect(waves.eps.map((e) => [e.index, e.group, e.episode])).toEqual(
      whole.eps.map((e) => [e.index, e.group, e.episode]),
    );
    // The same records but for their timings (and so their checksums).
    const content = (records: typeof whole.records) =>
      records
        .map((r) => {
          const { ms: _ms, sampleMs: _s, envMs: _e, checksum: _c, ...rest } = r as typeof r & Record<string, unknown>;
          return rest;
        })
        .sort((a, b) => a.episode - b.episode || a.turn - b.turn);
    expect(content(waves.records)).toEqual(content(whole.records));
    expect(waves.progress.at(-1)).toEqual([10, 10]);
  });

  it('replay re-executes the actions against a fresh environment: identical, or where an environment that answers otherwise diverges', async () => {
    const { records } = await journaled();
    expect(await replayEpisode(records, 0, context)).toMatchObject({ identical: true, summary: 'identical' });
    const liar: EnvironmentKind = {
      ...CALC,
      create: (task) => {
        const env = CALC.create(task);
        let turn = 0;
        return {
          ...env,
          reset: () => env.reset(),
          step: async (a) => (++turn === 2 ? { observation: tok.encode('=0'), status: 'running' } : env.step(a)),
        };
      },
    };
    const r = await replayEpisode(records, 0, { ...context, kind: liar });
    expect(r.identical).toBe(false);
    expect(r.summary).toBe('diverged at turn 2');
    expect(r.turns[1]).toMatchObject({ turn: 2, identical: false, firstDivergentToken: 1 });
  });

  it('exports one JSONL line per episode with ids, both log-probs, observations and who executed each turn', async () => {
    const { eps, records } = await journaled();
    const lines = (await episodesJsonl('r', [{ step: 3, records }], context))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(4);
    const [first] = lines;
    expect(first).toMatchObject({
      run: 'r',
      step: 3,
      episode: 0,
      environment: 'calc',
      status: 'completed',
      policy_version: 2,
    });
    expect(first.turns[0].completion_ids).toEqual(Array.from(eps[0].episode.transitions[0].action.tokens));
    expect(first.turns[0].behavior_logprobs).toEqual([
      -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5,
    ]);
    expect(first.turns[0].raw_logprobs[0]).toBe(-0.25);
    expect(tok.decode(first.turns[0].observation_ids)).toMatch(/^=\d+$/);
    expect(first.turns.map((t: { executed_by: string }) => t.executed_by)).toEqual(['w', 'w', 'w']);
  });
});
