import { readFileSync } from 'node:fs';
import { expose, proxy, wrap } from 'comlink';
import { describe, expect, it } from 'vitest';
import { createWorkbench } from './api';
import type { CheckpointFiles } from './model/checkpoint';
import { charTokenizer, importCheckpoint } from './model/checkpoint';
import { BASE_CHECKPOINT_DIR, readCheckpointDir } from './model/node-checkpoint-dir';
import type { GrpoRunOptions, RunEvent, WorkbenchApi } from './protocol';
import { findPreset } from './presets/table';

const GRPO = findPreset('grpo-arith')!.defaults as GrpoRunOptions;
const FILE = 'examples/arith-dataset.jsonl';
const truth = new Map(
  readFileSync(FILE, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { prompt: string; ground_truth: string })
    .map((l) => [l.prompt, l.ground_truth]),
);

/** The API as the app sees it, through comlink, on the shipped arithmetic base. */
function connect(): WorkbenchApi {
  const { port1, port2 } = new MessageChannel();
  expose(
    createWorkbench(
      () => undefined,
      async (name) => readCheckpointDir(`public/checkpoints/${name}`),
    ),
    port1,
  );
  return wrap<WorkbenchApi>(port2) as unknown as WorkbenchApi;
}

describe('a run on a prompt dataset through the worker API (CPU)', () => {
  it('loadDataset reads a file against the base vocabulary: the dataset, or the first bad line', async () => {
    const api = connect();
    const r = await api.loadDataset(
      { name: 'arith-dataset.jsonl', bytes: readFileSync(FILE) },
      { reward: { kind: 'math' } },
    );
    expect(r).toMatchObject({
      ok: true,
      dataset: { name: 'arith-dataset.jsonl', format: 'jsonl', heldOut: 2, reward: { kind: 'math' } },
    });
    const bad = await api.loadDataset(
      {
        name: 't.jsonl',
        bytes: new TextEncoder().encode('{"prompt": "1+1=", "answer": "2"}\n{"prompt": "what?", "answer": "2"}'),
      },
      { reward: { kind: 'exact' }, heldOut: 1 },
    );
    expect(bad).toMatchObject({
      ok: false,
      problem: { file: 't.jsonl', line: 2, unit: 'line', field: 'prompt' },
      message: expect.stringMatching(/^t\.jsonl line 2: 'prompt' cannot be encoded: encode: character "w"/),
    });
  });

  it("a stopped run continues with its stored dataset; its groups hold the file's prompts and ground truths; checkpoints do not copy the records", async () => {
    const api = connect();
    await api.init('cpu');
    const loaded = await api.loadDataset(
      { name: 'arith-dataset.jsonl', bytes: readFileSync(FILE) },
      { reward: { kind: 'regex', pattern: '\\\\boxed\\{(\\d+)\\}' }, heldOut: 4 },
    );
    if (!loaded.ok) throw new Error(loaded.message);
    // 20 steps, stopped at step 1: the stop (a message from the step event's callback) lands between
    // steps well before the last (at 3 steps it could arrive after the run had finished).
    const options: GrpoRunOptions = {
      ...GRPO,
      steps: 20,
      prompts: 2,
      group: 2,
      evalEvery: 20,
      evalN: 4,
      checkpointEvery: 1,
      dataset: loaded.dataset,
    };
    expect(await api.checkRunOptions(options)).toEqual([]);
    let stopped!: () => void;
    const ended = new Promise<void>((r) => (stopped = r));
    const id = await api.startRun(
      options,
      proxy((e: RunEvent) => {
        if (e.type === 'step' && e.step === 1) void api.stopRun(e.runId);
        if (e.type === 'status' && e.status !== 'running') stopped();
      }),
    );
    await ended;
    const run = (await api.listRuns()).find((r) => r.runId === id)!;
    expect(run.status).toBe('stopped');
    expect(run.options).toEqual(options); // the dataset is stored with the run

    const events: RunEvent[] = [];
    let finished!: () => void;
    const done = new Promise<void>((r) => (finished = r));
    expect(
      await api.continueRun(
        id,
        proxy((e: RunEvent) => (events.push(e), e.type === 'status' && e.status !== 'running' && finished())),
      ),
    ).toMatchObject({ ok: true });
    await done;
    expect(events.at(-1)).toMatchObject({ type: 'status', status: 'finished' });
    const evals = events.filter((e) => e.type === 'eval');
    expect(evals).toEqual([expect.objectContaining({ step: 20, n: 4 })]);
    for (const step of [1, 2, 3]) {
      const groups = (await api.groupsAt(id, step))!;
      expect(groups).toHaveLength(2);
      for (const g of groups) expect(truth.get(g.prompt)).toBe(g.answer);
    }
    const ck = importCheckpoint((await api.latestCheckpoint(id))!.files as CheckpointFiles);
    expect(ck.info).toMatchObject({
      step: 20,
      grpo: { dataset: { name: 'arith-dataset.jsonl', records: 20, heldOut: 4 } },
    });
    expect(charTokenizer(ck.tokenizer, 'test').describe()).toEqual(
      charTokenizer(importCheckpoint(readCheckpointDir(BASE_CHECKPOINT_DIR)).tokenizer, 'test').describe(),
    );
  });
});
