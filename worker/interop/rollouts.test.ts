import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parquetReadObjects } from 'hyparquet';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { tinySftBase } from '../train/testing/tiny-base';
import type { LoadedCheckpoint } from '../model/checkpoint';
import type * as MathRewardModule from '../rewards/math-reward';
import type { GrpoRunOptions } from '../contract/options';
import type { GroupRecord, SessionRecord } from '../contract/records';
import { batchRecord, groupRecords } from '../presets/records';
import { defaultsOf } from './testing/variants';
import { MemoryRunStore } from '../store/run-store';
import { decodeSessions, encodeSessions } from '../store/sessions-codec';
import { GRPO_ARITH, GrpoRun, type GrpoStep } from '../train/grpo';
import { exportFiles, exportStoredRun, rolloutsParquet, verlPromptsParquet } from './files';
import { importVerlRun } from './verl-import';
import { distinctPrompts, preferencePairs, rolloutRows, type RolloutRow } from './rollouts';

// A three-step SFT model never answers right: every group would have zero std and no session
// would be packed. The reward is the completion's length parity instead, so groups split.
vi.mock('../rewards/math-reward', async (importOriginal) => {
  const real = await importOriginal<typeof MathRewardModule>();
  return {
    ...real,
    mathReward: (completion: string) => ({
      score: completion.length % 2,
      components: { boxed: 0, parsed: 0, correct: completion.length % 2 },
      extracted: null,
      detail: 'test reward: length parity',
    }),
  };
});

const CONFIG: GrpoRunOptions = {
  ...GRPO_ARITH,
  prompts: 4,
  group: 4,
  maxNew: 8,
  evalN: 4,
  lr: 1e-2,
  maskZeroAdvantage: true,
};

let base: LoadedCheckpoint;
let step: GrpoStep;
let groups: GroupRecord[];
let sessions: SessionRecord[];
let rows: RolloutRow[];

beforeAll(async () => {
  base = await tinySftBase();
  step = await new GrpoRun(createCpuOps(), CONFIG, base).next();
  groups = groupRecords(step, base.tokenizer);
  sessions = decodeSessions(encodeSessions(step.sessions));
  rows = rolloutRows({ step: 1, groups, sessions, batch: batchRecord(step, base.tokenizer) }, 'lighteval/MATH');
});

describe('rolloutRows', () => {
  it('has one row per session with its ids, behavior log-probs and group', () => {
    expect(rows).toHaveLength(CONFIG.prompts * CONFIG.group);
    rows.forEach((r, i) => {
      const call = step.sessions[i].calls[0];
      expect(r.uid).toBe(`1:${step.sessions[i].group}`);
      expect(r.prompt_ids).toEqual(Array.from(call.promptIds));
      expect(r.response_ids).toEqual(Array.from(call.sampledIds));
      expect(r.response_mask).toEqual(r.response_ids.map(() => 1));
      expect(r.rollout_log_probs).toEqual(Array.from(call.behaviorLogProbs));
      expect(r.finish_reason).toBe(call.finishReason);
      expect([r.param_version_start, r.param_version_end]).toEqual([call.version, call.version]);
      const g = groups.find((x) => x.group === step.sessions[i].group)!;
      expect(r.input).toBe(g.prompt);
      expect(r.gts).toBe(g.answer);
      expect(r.score).toBe(g.samples.find((x) => x.sample === r.sample)!.reward);
    });
  });

  it("gives old log-probs (the sampler's, one update per batch) and the trained advantage for packed sessions, null old for the others", () => {
    const packed = rows.filter((r) => r.old_log_probs !== null);
    const unpacked = rows.filter((r) => r.old_log_probs === null);
    expect(packed.length).toBeGreaterThan(0);
    // Not packed: truncated completions (truncation 'mask' leaves them out of the loss) and the masked zero-advantage groups.
    expect(unpacked.filter((r) => r.finish_reason === 'stop').length).toBe(step.packed.metrics['sessions/not_packed']);
    expect(rows.filter((r) => r.finish_reason === 'length').every((r) => r.old_log_probs === null)).toBe(true);
    for (const r of packed) {
      const i = rows.indexOf(r);
      const call = step.sessions[i].calls[0];
      const raw = call.rawLogProbs ?? call.behaviorLogProbs;
      r.old_log_probs!.forEach((v, k) => expect(Math.abs(v - raw[k])).toBeLessThan(1e-5));
      const adv = groups
        .find((g) => g.group === step.sessions[i].group)!
        .samples.find((x) => x.sample === r.sample)!.advantage;
      expect(adv).not.toBe(0);
      r.advantages.forEach((a) => expect(a).toBeCloseTo(adv, 5));
    }
    for (const r of unpacked) expect(r.advantages.every((a) => a === 0)).toBe(true);
  });
});

describe('parquet files', () => {
  it('reads the rollouts back column for column', async () => {
    const back = await parquetReadObjects({ file: rolloutsParquet(rows).buffer as ArrayBuffer });
    expect(back).toHaveLength(rows.length);
    back.forEach((b, i) => expect(b).toEqual(rows[i]));
  });

  it("writes prompts in verl's RLHFDataset layout", async () => {
    const prompts = distinctPrompts(rows);
    expect(prompts).toHaveLength(new Set(rows.map((r) => r.input)).size);
    const back = await parquetReadObjects({
      file: verlPromptsParquet(prompts, 'lighteval/MATH', 'math').buffer as ArrayBuffer,
    });
    expect(back[1]).toEqual({
      data_source: 'lighteval/MATH',
      prompt: [{ role: 'user', content: prompts[1].prompt }],
      ability: 'math',
      reward_model: { style: 'rule', ground_truth: prompts[1].answer },
      extra_info: { split: 'train', index: 1 },
      env_class: 'dewpoint_reward',
      reward_spec: { method: 'rule', ground_truth: prompts[1].answer },
    });
  });
});

// DuckDB's reader (C++, independent of hyparquet): the column types a pandas/pyarrow reader in verl sees.
describe('parquet files through DuckDB', () => {
  const query = async (bytes: Uint8Array, sql: (file: string) => string) => {
    const file = join(mkdtempSync(join(tmpdir(), 'dewpoint-parquet-')), 'x.parquet');
    writeFileSync(file, bytes);
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    try {
      return (await c.runAndReadAll(sql(`read_parquet('${file}')`))).getRowObjectsJson();
    } finally {
      c.closeSync();
    }
  };

  it('types the rollout columns as lists of integers and doubles', async () => {
    const types = Object.fromEntries(
      (await query(rolloutsParquet(rows), (f) => `DESCRIBE SELECT * FROM ${f}`)).map((r) => [
        r.column_name,
        r.column_type,
      ]),
    );
    expect(types).toMatchObject({
      step: 'INTEGER',
      uid: 'VARCHAR',
      score: 'DOUBLE',
      response_ids: 'INTEGER[]',
      response_mask: 'INTEGER[]',
      rollout_log_probs: 'DOUBLE[]',
      old_log_probs: 'DOUBLE[]',
      advantages: 'DOUBLE[]',
    });
    const back = await query(
      rolloutsParquet(rows),
      (f) => `SELECT uid, len(response_ids) AS n, rollout_log_probs[1] AS first FROM ${f}`,
    );
    back.forEach((b, i) =>
      expect(b).toEqual({
        uid: rows[i].uid,
        n: String(rows[i].response_ids.length),
        first: rows[i].rollout_log_probs[0],
      }),
    );
  });

  it("reads verl's prompt layout: a list of {role, content} structs and the reward_model struct", async () => {
    const prompts = distinctPrompts(rows);
    const back = await query(
      verlPromptsParquet(prompts, 'lighteval/MATH', 'math'),
      (f) =>
        `SELECT prompt[1].role AS role, prompt[1].content AS content, reward_model.ground_truth AS gt, extra_info['index'] AS i FROM ${f}`,
    );
    expect(back).toEqual(prompts.map((p, i) => ({ role: 'user', content: p.prompt, gt: p.answer, i })));
  });
});

describe('export then import', () => {
  it("reads Dewpoint's rollouts.parquet back as verl rows: the same groups, completions, rewards and advantages", async () => {
    const store = new MemoryRunStore();
    const imported = await importVerlRun(store, [{ name: 'rollouts.parquet', bytes: rolloutsParquet(rows) }]);
    if (!imported.ok) throw new Error(imported.message);
    expect(imported.samples).toBe(rows.length);
    // The versions travel: rows served under version 3 (a run sampling ahead) import as version 3, not step − 1.
    const ahead = await importVerlRun(store, [
      { name: 'rollouts.parquet', bytes: rolloutsParquet(rows.map((r) => ({ ...r, param_version_start: 3 }))) },
    ]);
    if (!ahead.ok) throw new Error(ahead.message);
    expect((await store.sessionsAt(ahead.runId, 1))!.every((x) => x.calls.every((c) => c.version === 3))).toBe(true);
    const back = (await store.groupsAt(imported.runId, 1))!;
    expect(back.map((g) => g.prompt).sort()).toEqual(groups.map((g) => g.prompt).sort());
    for (const g of groups) {
      const b = back.find((x) => x.prompt === g.prompt && x.samples.length === g.samples.length)!;
      expect(b.answer).toBe(g.answer);
      expect(b.samples.map((x) => [x.completion, x.reward])).toEqual(g.samples.map((x) => [x.completion, x.reward]));
      b.samples.forEach((x, k) => expect(x.advantage).toBeCloseTo(g.samples[k].advantage, 6));
    }
  });
});

describe('exportFiles', () => {
  const names = (r: ReturnType<typeof exportFiles>) => (r.ok ? r.files.map((f) => f.name) : r.reason);

  it('gives verl rollouts, prompts, held-out tasks and launch, and TRL datasets and config', () => {
    const steps = [{ step: 1, groups, rows }];
    expect(names(exportFiles(defaultsOf('grpo-arith'), steps, 'verl'))).toEqual([
      'rollouts.parquet',
      'train.parquet',
      'val.parquet',
      'launch.sh',
    ]);
    const trl = exportFiles(defaultsOf('grpo-arith'), steps, 'trl');
    expect(names(trl)).toEqual(['grpo.jsonl', 'grpo-eval.jsonl', 'dpo.jsonl', 'config.py']);
    if (!trl.ok) throw new Error(trl.reason);
    const file = (name: string) => new TextDecoder().decode(trl.files.find((f) => f.name === name)!.bytes);
    const grpo = file('grpo.jsonl')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { prompt: string; solution: string });
    expect(grpo).toEqual(distinctPrompts(rows).map((p) => ({ prompt: p.prompt, solution: p.answer })));
    const dpo = file('dpo.jsonl')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, string>);
    expect(dpo.length).toBe(preferencePairs(steps).length);
    expect(dpo.length).toBeGreaterThan(0);
    expect(file('config.py')).toContain('GRPOConfig(');
  });

  it("gives a dataset run's training split as the prompts and its held-out split as val / eval", async () => {
    const records = Array.from({ length: 10 }, (_, i) => ({ prompt: `${i}+1=`, answer: String(i + 1) }));
    const options = {
      ...defaultsOf<GrpoRunOptions>('grpo-arith'),
      dataset: { name: 'd.jsonl', format: 'jsonl', records, heldOut: 3, reward: { kind: 'exact' } },
    } as never;
    const verl = exportFiles(options, [{ step: 1, groups, rows }], 'verl');
    if (!verl.ok) throw new Error(verl.reason);
    expect(verl.files.map((f) => f.name)).toEqual(['rollouts.parquet', 'train.parquet', 'val.parquet', 'launch.sh']);
    const train = await parquetReadObjects({ file: verl.files[1].bytes.buffer as ArrayBuffer });
    const val = await parquetReadObjects({ file: verl.files[2].bytes.buffer as ArrayBuffer });
    expect(train).toHaveLength(7);
    expect(val).toHaveLength(3);
    expect(val.every((v) => v.extra_info.split === 'test')).toBe(true);
    expect(new Set([...train, ...val].map((r) => r.prompt[0].content))).toEqual(new Set(records.map((r) => r.prompt)));
    expect(train[0].data_source).toBe('dewpoint/exact');
    const trl = exportFiles(options, [{ step: 1, groups, rows }], 'trl');
    if (!trl.ok) throw new Error(trl.reason);
    expect(trl.files.map((f) => f.name)).toEqual(['grpo.jsonl', 'grpo-eval.jsonl', 'dpo.jsonl', 'config.py']);
  });

  it('pairs a GRPO group best against worst only when their rewards differ', () => {
    const pairs = preferencePairs([{ step: 1, groups }]);
    const split = groups.filter((g) => new Set(g.samples.map((s) => s.reward)).size > 1);
    expect(pairs).toHaveLength(split.length);
    for (const p of pairs) {
      const g = groups.find((x) => x.prompt === p.prompt)!;
      expect(g.samples.find((s) => s.completion === p.chosen)!.reward).toBeGreaterThan(
        g.samples.find((s) => s.completion === p.rejected)!.reward,
      );
    }
  });

  it('refuses what the target cannot take, with the reason', () => {
    const dpo = exportFiles(defaultsOf('dpo-arith'), [], 'verl');
    expect(dpo.ok).toBe(false);
    expect(names(dpo)).toMatch(/DPO/);
    expect(exportFiles(defaultsOf('sft-arith'), [], 'trl').ok).toBe(false);
  });

  it('exports a stored run from the store', async () => {
    const store = new MemoryRunStore();
    const options = defaultsOf('grpo-arith');
    await store.putRun({ runId: 'r1', options, createdAt: 0, status: 'finished', lastStep: 0 });
    await store.commitStep('r1', {
      step: 1,
      metrics: {},
      groups,
      batch: batchRecord(step, base.tokenizer),
      sessions: step.sessions,
    });
    const out = await exportStoredRun(store, 'r1', 'verl');
    if (!out.ok) throw new Error(out.reason);
    const back = await parquetReadObjects({ file: out.files[0].bytes.buffer as ArrayBuffer });
    expect(back).toEqual(rows);
    expect((await exportStoredRun(store, 'nope', 'verl')).ok).toBe(false);
    await store.putRun({
      runId: 'v1',
      options: { preset: 'verl-import' } as never,
      createdAt: 0,
      status: 'imported' as never,
      lastStep: 0,
    });
    expect(await exportStoredRun(store, 'v1', 'trl')).toEqual({
      ok: false,
      reason: expect.stringMatching(/imported from verl/),
    });
  });
});

describe('the task an export names', () => {
  it("names a person's model and dataset instead of the shipped arithmetic base", () => {
    const base = { kind: 'hf', id: 'hf-0123456789abcdef', name: 'tiny-llama', parameters: 4_196_672 } as const;
    const plain = exportFiles({ ...defaultsOf<GrpoRunOptions>('grpo-arith'), base } as never, [], 'verl');
    if (!plain.ok) throw new Error(plain.reason);
    const launch = new TextDecoder().decode(plain.files.find((f) => f.name === 'launch.sh')!.bytes);
    expect(launch).toMatch(/from the model tiny-llama, .*\(a Hugging Face folder: set MODEL_PATH to it\)/);
    expect(launch).not.toContain('public/checkpoints/arith-base');
  });
});
