import 'fake-indexeddb/auto';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { describe, expect, it } from 'vitest';
import { createWorkbench } from '../api';
import type { ImportedRunOptions } from '../contract/records';
import { grpoAdvantages } from '../rl/advantages/index';
import { openIdbStore } from '../store/idb-store';
import { MemoryRunStore } from '../store/run-store';
import { importedEpisodeDetail, importedEpisodeSummaries } from './verl-episodes';
import { importVerlRun, missingOf, parseVerlFiles, problemText, stepOfFileName } from './verl-import';
import { RECOMPUTED, groupOfUid } from './verl-records';

const enc = new TextEncoder();
/** A dump line exactly as verl's `_write_generations` writes it: `json.dumps(entry, ensure_ascii=False)` (", " and ": " separators). */
const pyJson = (o: Record<string, unknown>) =>
  JSON.stringify(o).replace(/","/g, '", "').replace(/":/g, '": ').replace(/,"/g, ', "');
const file = (name: string, lines: readonly (Record<string, unknown> | string)[]) => ({
  name,
  bytes: enc.encode(lines.map((l) => (typeof l === 'string' ? l : pyJson(l))).join('\n') + '\n'),
});

/** The legacy trainer's dump of one step: two prompts, two samples each, an extra reward key `acc`. */
const LEGACY = [
  { input: 'What is 2+2?', output: 'The answer is 4.', gts: '4', score: 1.0, step: 3, acc: true },
  { input: 'What is 2+2?', output: 'It is 5.', gts: '4', score: 0.0, step: 3, acc: false },
  { input: 'What is 3*3?', output: '9', gts: '9', score: 1.0, step: 3, acc: true },
  { input: 'What is 3*3?', output: '6', gts: '9', score: 0.5, step: 3, acc: false },
];

/** The v1 trainer's: its TransferQueue keys `{uid}_{session}_{index}` as uid; two uids share an input. */
const V1 = [
  { input: 'Say hi', output: 'hi', gts: null, score: 1.0, step: 1, uid: 'a1b2_0_0' },
  { input: 'Say hi', output: 'hello', gts: null, score: 0.0, step: 1, uid: 'a1b2_1_0' },
  { input: 'Say hi', output: 'hey', gts: null, score: 0.0, step: 1, uid: 'c3d4_0_0' },
  { input: 'Say hi', output: 'hi', gts: null, score: 1.0, step: 1, uid: 'c3d4_1_0' },
];

/** An extended dump (or Dewpoint's export): ids, masks, both log-probs, per-id advantages, finish reasons. */
const RICH = [
  {
    input: 'p',
    output: 'ab',
    gts: 'ab',
    score: 1,
    step: 2,
    uid: 'g0',
    prompt_ids: [5, 6],
    response_ids: [1, 2, 0],
    response_mask: [1, 1, 1],
    rollout_log_probs: [-0.5, -0.25, -0.125],
    old_log_probs: [-0.4, -0.25, -0.1],
    advantages: [0.7, 0.7, 0.7],
    finish_reason: 'stop',
  },
  {
    input: 'p',
    output: 'b',
    gts: 'ab',
    score: 0,
    step: 2,
    uid: 'g0',
    prompt_ids: [5, 6],
    response_ids: [2, 9, 9, 3],
    response_mask: [1, 0, 0, 1],
    rollout_log_probs: [-1, 0, 0, -2],
    old_log_probs: null,
    advantages: [-0.7, -0.7, -0.7, -0.7],
    finish_reason: 'length',
  },
];

describe('verl rollout dumps: parsing and grouping', () => {
  it('reads a legacy dump: groups by identical input within the step, recomputes GRPO advantages with verl defaults and says so', async () => {
    const store = new MemoryRunStore();
    const r = await importVerlRun(store, [file('3.jsonl', LEGACY)]);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r).toMatchObject({ steps: 1, groups: 2, samples: 4 });
    const groups = (await store.groupsAt(r.runId, 3))!;
    expect(groups.map((g) => [g.group, g.prompt, g.answer])).toEqual([
      ['input 1', 'What is 2+2?', '4'],
      ['input 2', 'What is 3*3?', '9'],
    ]);
    const expected = grpoAdvantages([1, 0, 1, 0.5], ['input 1', 'input 1', 'input 2', 'input 2'], {
      compat: 'verl',
    }).advantages;
    const got = groups.flatMap((g) => g.samples.map((s) => s.advantage));
    got.forEach((a, i) => expect(a).toBeCloseTo(expected[i], 12));
    // (1 − 0.5) / (std([1, 0], ddof 1) + 1e-6): verl compute_grpo_outcome_advantage.
    expect(got[0]).toBeCloseTo(0.5 / (Math.SQRT1_2 + 1e-6), 12);
    expect(groups[0].estimate).toMatchObject({
      estimator: 'grpo',
      members: 2,
      baseline: 0.5,
      settings: { source: RECOMPUTED, stdType: 'unbiased', epsilon: 1e-6 },
    });
    expect(groups[0].samples[0]).toMatchObject({
      completion: 'The answer is 4.',
      reward: 1,
      components: { acc: 1 },
      status: 'not recorded',
      truncated: false,
    });
    expect(groups[0].samples[0].length).toBeNaN();
    const run = (await store.listRuns())[0];
    const o = run.options as unknown as ImportedRunOptions;
    expect(run.status).toBe('imported');
    expect(o).toMatchObject({
      preset: 'verl-import',
      steps: 3,
      stepNumbers: [3],
      files: [{ name: '3.jsonl', rows: 4 }],
      grouping: 'input',
      advantages: 'recomputed',
      present: ['gts'],
    });
    expect(o.missing).toContainEqual(
      expect.objectContaining({ field: 'response_ids', view: 'Batch', cannot: expect.stringMatching(/no token ids/) }),
    );
    expect(o.missing).toContainEqual(expect.objectContaining({ field: 'uid', view: 'Groups' }));
    expect(await store.batchAt(r.runId, 3)).toBeNull();
    expect(await store.sessionsAt(r.runId, 3)).toBeNull();
    expect((await store.stepMetrics(r.runId))[0].metrics).toMatchObject({
      'reward/mean': 0.625,
      'reward/groups': 2,
      'reward/zero_std_groups': 0,
    });
  });

  it("groups a v1 dump by the uid part of verl's {uid}_{session}_{index} keys, not by input", async () => {
    expect(groupOfUid('a1b2_0_3')).toBe('a1b2');
    expect(groupOfUid('3:g0')).toBe('3:g0');
    const store = new MemoryRunStore();
    const r = await importVerlRun(store, [file('1.jsonl', V1)]);
    if (!r.ok) throw new Error(r.message);
    const groups = (await store.groupsAt(r.runId, 1))!;
    expect(groups.map((g) => [g.group, g.samples.map((s) => s.completion)])).toEqual([
      ['a1b2', ['hi', 'hello']],
      ['c3d4', ['hey', 'hi']],
    ]);
    expect(groups[0].answer).toBe('');
    const o = (await store.listRuns())[0].options as unknown as ImportedRunOptions;
    expect(o.grouping).toBe('uid');
    expect(o.missing).toContainEqual(expect.objectContaining({ field: 'gts', view: 'Groups' }));
  });

  it("keeps the dump's advantages as they are (a number, or the first id's of a per-id list), with no estimate", async () => {
    const store = new MemoryRunStore();
    const rows = V1.map((l, i) => ({ ...l, advantages: i % 2 ? [-0.25, -0.25] : 0.75 }));
    const r = await importVerlRun(store, [file('1.jsonl', rows)]);
    if (!r.ok) throw new Error(r.message);
    const groups = (await store.groupsAt(r.runId, 1))!;
    expect(groups.flatMap((g) => g.samples.map((s) => s.advantage))).toEqual([0.75, -0.25, 0.75, -0.25]);
    expect(groups.every((g) => g.estimate === undefined && g.samples.every((s) => s.baseline === undefined))).toBe(
      true,
    );
    expect(((await store.listRuns())[0].options as unknown as ImportedRunOptions).advantages).toBe('dump');
  });

  it('reads several step files, and takes the step from a {step}.jsonl name when a line has none', async () => {
    expect(stepOfFileName('dumps/12.jsonl')).toBe(12);
    expect(stepOfFileName('rollouts.jsonl')).toBeNull();
    const store = new MemoryRunStore();
    const two = LEGACY.map(({ step: _s, ...l }) => l);
    const r = await importVerlRun(store, [file('3.jsonl', LEGACY), file('4.jsonl', two)]);
    if (!r.ok) throw new Error(r.message);
    expect(await store.groupSteps(r.runId)).toEqual([3, 4]);
    expect((await store.listRuns())[0]).toMatchObject({ lastStep: 4, options: { steps: 4, stepNumbers: [3, 4] } });
  });

  it('builds sessions and a batch in verl layout from ids, masks and log-probs, and stores them (memory and IndexedDB)', async () => {
    for (const store of [new MemoryRunStore(), await openIdbStore(`verl-import-${Date.now()}`)]) {
      const r = await importVerlRun(store, [file('2.jsonl', RICH)]);
      if (!r.ok) throw new Error(r.message);
      const [g] = (await store.groupsAt(r.runId, 2))!;
      expect(g.samples.map((s) => [s.status, s.length, s.truncated, s.advantage])).toEqual([
        ['completed', 3, false, 0.7],
        ['truncated', 2, true, -0.7],
      ]);
      const sessions = (await store.sessionsAt(r.runId, 2))!;
      expect(sessions[0].calls).toHaveLength(1);
      expect(Array.from(sessions[0].calls[0].promptIds)).toEqual([5, 6]);
      expect(Array.from(sessions[0].calls[0].rawLogProbs!)).toEqual([-0.4, -0.25, -0.1]);
      // Mask 0 (an environment's ids) splits the response into two calls; the tool ids join the second call's prompt.
      expect(
        sessions[1].calls.map((c) => [
          Array.from(c.promptIds),
          Array.from(c.sampledIds),
          Array.from(c.behaviorLogProbs),
          c.finishReason,
          c.version,
        ]),
      ).toEqual([
        [[5, 6], [2], [-1], 'stop', 1],
        [[5, 6, 2, 9, 9], [3], [-2], 'length', 1],
      ]);
      expect(sessions[1].calls[0].rawLogProbs).toBeNull();
      const b = (await store.batchAt(r.runId, 2))!;
      expect([b.rows, b.width]).toEqual([2, 6]);
      expect(b.tokens.slice(0, 6)).toEqual(['#5', '#6', '#1', '#2', '#0', '']);
      expect(Array.from(b.layers.responseMask.slice(6))).toEqual([0, 0, 1, 0, 0, 1]);
      expect(Array.from(b.layers.version.slice(6))).toEqual([-1, -1, 1, -1, -1, 1]);
      expect(Array.from(b.layers.mismatch.slice(2, 5))).toEqual(
        [Math.fround(0.1), 0, Math.fround(0.025)].map((x) => expect.closeTo(x, 6)),
      );
      expect(b.layers.mismatch[8]).toBeNaN(); // the second sample has no old log-probs
      expect(Array.from(b.layers.dlogp).every(Number.isNaN)).toBe(true);
      expect(Array.from(b.sessionIds.slice(0, 6))).toEqual([1, 1, 1, 1, 1, 0]);
      const o = (await store.listRuns()).find((x) => x.runId === r.runId)!.options as unknown as ImportedRunOptions;
      expect(o.missing.map((m) => m.field)).toEqual(expect.arrayContaining(['policy version', 'dlogp', 'environment']));
      expect(o.missing.some((m) => m.field === 'response_ids' || m.field === 'rollout_log_probs')).toBe(false);
    }
  });

  it("takes each sample's policy version from param_version_start (verl's fully async trainer, Dewpoint's export)", async () => {
    const store = new MemoryRunStore();
    const rows = RICH.map((row, i) => ({ ...row, param_version_start: i === 0 ? 0 : 1, param_version_end: 1 }));
    const r = await importVerlRun(store, [file('2.jsonl', rows)]);
    if (!r.ok) throw new Error(r.message);
    const sessions = (await store.sessionsAt(r.runId, 2))!;
    expect(sessions.map((x) => x.calls.map((c) => c.version))).toEqual([[0], [1, 1]]);
    const b = (await store.batchAt(r.runId, 2))!;
    expect(Array.from(b.layers.version.slice(0, 6))).toEqual([-1, -1, 0, 0, 0, -1]);
    const o = (await store.listRuns()).find((x) => x.runId === r.runId)!.options as unknown as ImportedRunOptions;
    expect(o.missing.map((m) => m.field)).not.toContain('policy version');
    // Not a reward component, and refused when it is not a version.
    expect(Object.keys(sessions[0].components ?? {})).not.toContain('param_version_start');
    const bad = await importVerlRun(store, [file('2.jsonl', [{ ...RICH[0], param_version_start: -1 }])]);
    expect(bad.ok ? '' : bad.message).toMatch(/param_version_start.*an integer ≥ 0/);
  });

  it('reads parquet with the same columns (LIST columns, INT64 step) as the JSONL it mirrors', async () => {
    const rows = RICH;
    const list = (name: string, type: 'INT64' | 'DOUBLE') => [
      { name, repetition_type: 'OPTIONAL' as const, converted_type: 'LIST' as const, num_children: 1 },
      { name: 'list', repetition_type: 'REPEATED' as const, num_children: 1 },
      { name: 'element', type, repetition_type: 'OPTIONAL' as const },
    ];
    const str = (name: string) => ({
      name,
      type: 'BYTE_ARRAY' as const,
      converted_type: 'UTF8' as const,
      repetition_type: 'OPTIONAL' as const,
    });
    const bytes = parquetWriteBuffer({
      columnData: [
        { name: 'input', data: rows.map((r) => r.input) },
        { name: 'output', data: rows.map((r) => r.output) },
        { name: 'gts', data: rows.map((r) => r.gts) },
        { name: 'score', data: rows.map((r) => r.score) },
        { name: 'step', data: rows.map((r) => BigInt(r.step)) },
        { name: 'uid', data: rows.map((r) => r.uid) },
        { name: 'prompt_ids', data: rows.map((r) => r.prompt_ids.map(BigInt)) },
        { name: 'response_ids', data: rows.map((r) => r.response_ids.map(BigInt)) },
        { name: 'response_mask', data: rows.map((r) => r.response_mask.map(BigInt)) },
        { name: 'rollout_log_probs', data: rows.map((r) => r.rollout_log_probs) },
        { name: 'old_log_probs', data: rows.map((r) => r.old_log_probs) },
        { name: 'advantages', data: rows.map((r) => r.advantages) },
        { name: 'finish_reason', data: rows.map((r) => r.finish_reason) },
      ],
      schema: [
        { name: 'root', num_children: 13 },
        str('input'),
        str('output'),
        str('gts'),
        { name: 'score', type: 'DOUBLE', repetition_type: 'OPTIONAL' },
        { name: 'step', type: 'INT64', repetition_type: 'OPTIONAL' },
        str('uid'),
        ...list('prompt_ids', 'INT64'),
        ...list('response_ids', 'INT64'),
        ...list('response_mask', 'INT64'),
        ...list('rollout_log_probs', 'DOUBLE'),
        ...list('old_log_probs', 'DOUBLE'),
        ...list('advantages', 'DOUBLE'),
        str('finish_reason'),
      ],
    });
    const [fromParquet, fromJsonl] = [new MemoryRunStore(), new MemoryRunStore()];
    const a = await importVerlRun(fromParquet, [{ name: 'rollouts.parquet', bytes: new Uint8Array(bytes) }]);
    const b = await importVerlRun(fromJsonl, [file('2.jsonl', RICH)]);
    if (!a.ok || !b.ok) throw new Error(a.ok ? (b as { message: string }).message : a.message);
    expect(await fromParquet.groupsAt(a.runId, 2)).toEqual(await fromJsonl.groupsAt(b.runId, 2));
    const without = (xs: { detail?: string }[] | null) => xs!.map(({ detail: _d, ...x }) => x);
    const [pa, pb] = [await fromParquet.sessionsAt(a.runId, 2), await fromJsonl.sessionsAt(b.runId, 2)];
    expect(without(pa)).toEqual(without(pb));
    expect(pa!.map((x) => x.detail)).toEqual(['rollouts.parquet row 1', 'rollouts.parquet row 2']);
    expect((await fromParquet.listRuns())[0].options).toMatchObject({ files: [{ name: 'rollouts.parquet', rows: 2 }] });
  });
});

describe('verl rollout dumps: validation names the first bad line and stores nothing', () => {
  const refused = async (files: { name: string; bytes: Uint8Array }[]) => {
    const store = new MemoryRunStore();
    const r = await importVerlRun(store, files);
    expect(await store.listRuns()).toEqual([]);
    if (r.ok) throw new Error('expected the import to be refused');
    return r;
  };

  it('a line that is not JSON', async () => {
    const r = await refused([file('3.jsonl', [LEGACY[0], '{"input": "x", "output": ', LEGACY[2]])]);
    expect(r.problem).toMatchObject({ file: '3.jsonl', line: 2, unit: 'line', field: null });
    expect(r.message).toMatch(/^3\.jsonl line 2: expected one JSON object/);
  });

  it('a field of the wrong type, on a later file: file, line, field, expected, got', async () => {
    const bad = [LEGACY[0], { ...LEGACY[1], step: 4 }, { ...LEGACY[2], step: 4, score: 'high' }];
    const r = await refused([file('3.jsonl', [LEGACY[0]]), file('4.jsonl', bad.slice(1))]);
    expect(r.problem).toMatchObject({ file: '4.jsonl', line: 2, field: 'score', got: '"high"' });
    expect(r.message).toBe(
      '4.jsonl line 2, field score: expected a finite number (verl writes token_level_scores.sum(-1)), got "high"',
    );
  });

  it('a missing required column, and a step with no number anywhere', async () => {
    const { output: _o, ...noOutput } = LEGACY[1];
    expect((await refused([file('3.jsonl', [LEGACY[0], noOutput])])).problem).toMatchObject({
      line: 2,
      field: 'output',
      got: 'nothing',
    });
    const { step: _s, ...noStep } = LEGACY[0];
    expect((await refused([file('rollouts.jsonl', [noStep])])).message).toMatch(
      /^rollouts\.jsonl line 1, field step: expected an integer ≥ 0/,
    );
  });

  it('a column on some lines only', async () => {
    const r = await refused([file('1.jsonl', [V1[0], { ...V1[1], uid: undefined }])]);
    expect(r.problem).toMatchObject({ line: 2, field: 'uid' });
    expect(r.message).toMatch(/as 1\.jsonl line 1 has/);
  });

  it('per-id columns of the wrong length, or without response ids', async () => {
    expect((await refused([file('2.jsonl', [{ ...RICH[0], response_mask: [1, 1] }])])).problem).toMatchObject({
      field: 'response_mask',
      expected: '3 values, one per response id',
      got: '2',
    });
    expect((await refused([file('2.jsonl', [{ ...RICH[0], response_ids: [1, -2, 0] }])])).problem).toMatchObject({
      field: 'response_ids[1]',
      got: '-2',
    });
    const { response_ids: _r, ...noIds } = RICH[0];
    expect((await refused([file('2.jsonl', [noIds])])).problem).toMatchObject({
      field: 'response_mask',
      got: 'no response_ids',
    });
  });

  it('token_level_scores that do not sum to score', async () => {
    expect(
      (await refused([file('3.jsonl', [{ ...LEGACY[0], token_level_scores: [0, 0, 0.5] }])])).problem,
    ).toMatchObject({ field: 'token_level_scores', got: 'a sum of 0.5' });
  });

  it('one step in two files, an empty file, a file of another kind', async () => {
    expect((await refused([file('a.jsonl', LEGACY), file('b.jsonl', LEGACY)])).problem).toMatchObject({
      file: 'b.jsonl',
      line: 1,
      field: 'step',
      expected: expect.stringMatching(/step 3 is in a\.jsonl/),
    });
    expect((await refused([{ name: '5.jsonl', bytes: enc.encode('\n\n') }])).message).toBe(
      '5.jsonl: expected at least one sample (verl writes one line per sample), got an empty file',
    );
    expect((await refused([{ name: 'notes.txt', bytes: enc.encode('hi') }])).problem).toMatchObject({
      file: 'notes.txt',
      line: null,
    });
    expect((await refused([{ name: 'x.parquet', bytes: enc.encode('not parquet') }])).problem.expected).toMatch(
      /starts with PAR1/,
    );
    expect((await refused([])).problem.expected).toMatch(/at least one verl rollout file/);
  });

  it('problemText reads as one sentence', async () => {
    const p = await parseVerlFiles([file('7.jsonl', [{ ...LEGACY[0], finish_reason: 'abort' }])]);
    expect(p.ok).toBe(false);
    if (!p.ok)
      expect(problemText(p.problem)).toBe(
        '7.jsonl line 1, field finish_reason: expected "stop" or "length", got "abort"',
      );
  });
});

describe('verl rollout dumps: what is missing, and Replay', () => {
  it('names, per view, what a bare dump cannot draw', () => {
    const m = missingOf(new Set());
    expect(new Set(m.map((x) => x.view))).toEqual(new Set(['Groups', 'Batch', 'Replay']));
    expect(m.filter((x) => x.field === 'rollout_log_probs')).toEqual([]); // said once, by response_ids
    expect(missingOf(new Set(['response_ids'])).map((x) => x.field)).toEqual(
      expect.arrayContaining(['prompt_ids', 'response_mask', 'rollout_log_probs', 'old_log_probs', 'policy version']),
    );
  });

  it('shows each sample as a one-turn episode with its text, ids and log-probs, and refuses to replay', async () => {
    const store = new MemoryRunStore();
    const api = createWorkbench(
      () => undefined,
      async () => {
        throw new Error('no base checkpoint in this test');
      },
      store,
    );
    const r = await api.importVerlRun([file('2.jsonl', RICH)]);
    if (!r.ok) throw new Error(r.message);
    expect(await api.episodeSteps(r.runId)).toEqual([2]);
    const list = (await api.episodesAt(r.runId, 2))!;
    expect(list.map((e) => [e.index, e.group, e.sample, e.status, e.reward, e.turns, e.policyVersion])).toEqual([
      [0, 'g0', 0, 'completed', 1, 1, 1],
      [1, 'g0', 1, 'truncated', 0, 1, 1],
    ]);
    const d = (await api.episodeAt(r.runId, 2, 1))!;
    expect(d.vocab).toEqual([]);
    expect(d.turnViews[0].action).toMatchObject({ text: 'b', terminated: false });
    expect(Array.from(d.turnViews[0].action.ids)).toEqual([2, 3]);
    expect(Array.from(d.turnViews[0].action.behaviorLogProbs)).toEqual([-1, -2]);
    expect(await api.replayEpisode(r.runId, 2, 0)).toMatchObject({
      identical: false,
      summary: expect.stringMatching(/^not replayable/),
    });
    expect(await api.continueRun(r.runId, () => {})).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/imported from verl/),
    });
    await expect(api.tokenTexts(r.runId, Int32Array.of(1))).rejects.toThrow(/no tokenizer/);
    expect((await api.listRuns())[0]).toMatchObject({
      status: 'imported',
      name: expect.stringMatching(/^verl-import · /),
    });
    const groups = (await store.groupsAt(r.runId, 2))!;
    expect(importedEpisodeSummaries(groups, 2)).toEqual(list);
    expect(importedEpisodeDetail(groups, null, 2, 5)).toBeNull();
  });
});
