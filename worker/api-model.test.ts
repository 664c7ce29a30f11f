import { expose, proxy, wrap } from 'comlink';
import { describe, expect, it } from 'vitest';
import { createWorkbench } from './api';
import { fixtureFolder } from './hf/node-fixture';
import type { CheckpointFiles } from './model/checkpoint';
import { importCheckpoint, isHfTokenizer } from './model/checkpoint';
import { readCheckpointDir } from './model/node-checkpoint-dir';
import { nodeWasmOps } from '../kernels/wasm/node-wasm';
import type {
  DatasetRunOptions,
  DpoRunOptions,
  GrpoRunOptions,
  PpoRunOptions,
  ModelFolderFile,
  RunEvent,
  RunStatus,
  WorkbenchApi,
} from './protocol';
import { PRESETS, findPreset } from './presets/table';
import { MemoryRunStore } from './store/run-store';
import type { RunStore } from './store/run-store';

const GRPO = findPreset('grpo-arith')!.defaults as GrpoRunOptions;
const folder = fixtureFolder({ kvHeads: 2 });
const FILES: ModelFolderFile[] = [...folder.files].map(([name, bytes]) => ({ name, bytes }));
// Letters, which the arithmetic base's vocabulary lacks; a random model writes no EOS, so
// truncation 'score' trains on every completion and the regex reward (the last lowercase letter)
// splits groups often enough (as cli/train-hf.test.ts).
const LETTERS = ['e', 'a', 't', 'o', 'i', 'n'];
const JSONL = new TextEncoder().encode(
  LETTERS.map((l, i) => JSON.stringify({ prompt: `Letter ${i + 1}:`, ground_truth: l })).join('\n'),
);
const REWARD = { kind: 'regex', pattern: '([a-z])[^a-z]*$' } as const;

/** The API as the app sees it, through comlink; a second one on the same store is the page after a reload. */
function connect(store: RunStore): WorkbenchApi {
  const { port1, port2 } = new MessageChannel();
  expose(
    createWorkbench(
      () => undefined,
      async (name) => readCheckpointDir(`public/checkpoints/${name}`),
      store,
      undefined,
      () => nodeWasmOps(1),
    ),
    port1,
  );
  return wrap<WorkbenchApi>(port2) as unknown as WorkbenchApi;
}

/** Resolves with the run's status once it is no longer running. */
function untilEnded(onStep?: (e: RunEvent & { type: 'step' }) => void) {
  let settle!: (s: RunStatus) => void;
  const ended = new Promise<RunStatus>((r) => (settle = r));
  const onEvent = proxy((e: RunEvent) => {
    if (e.type === 'step') onStep?.(e);
    if (e.type === 'status' && e.status !== 'running') settle(e.status);
  });
  return { ended, onEvent };
}

describe("a run on a person's own model through the worker API (wasm)", () => {
  it('inspectModel and useModel answer over comlink; a bad folder names file and field and keeps nothing', async () => {
    const api = connect(new MemoryRunStore());
    const inspected = await api.inspectModel(FILES, { name: 'tiny-llama', rows: 2 });
    expect(inspected).toMatchObject({
      ok: true,
      summary: {
        name: 'tiny-llama',
        architecture: 'LlamaForCausalLM',
        config: { kvHeads: 2 },
        training: { rows: 2, seq: 64 },
      },
    });
    const config = JSON.parse(new TextDecoder().decode(folder.files.get('config.json'))) as Record<string, unknown>;
    const gpt2 = FILES.map((f) =>
      f.name === 'config.json'
        ? {
            name: f.name,
            bytes: new TextEncoder().encode(JSON.stringify({ ...config, architectures: ['GPT2LMHeadModel'] })),
          }
        : f,
    );
    const bad = await api.useModel(gpt2, { name: 'gpt2' });
    expect(bad).toMatchObject({
      ok: false,
      problems: [expect.objectContaining({ file: 'config.json', field: 'architectures' })],
      message: expect.stringContaining('config.json: architectures'),
    });
    const used = await api.useModel(FILES, { name: 'tiny-llama' });
    if (!used.ok) throw new Error(used.message);
    expect(await api.pickedModel(used.model.id)).toEqual(used.model);
    expect(await api.pickedModel('hf-0123456789abcdef')).toBeNull();
  });

  it("checks a dataset against the picked model's tokenizer, and refuses one for a model the worker lacks", async () => {
    const api = connect(new MemoryRunStore());
    const onBase = await api.loadDataset({ name: 'letters.jsonl', bytes: JSONL }, { reward: REWARD, heldOut: 1 });
    expect(onBase).toMatchObject({ ok: false, problem: { line: 1, field: 'prompt' } }); // 'L' is not in the arithmetic vocabulary
    const used = await api.useModel(FILES, { name: 'tiny-llama' });
    if (!used.ok) throw new Error(used.message);
    expect(
      await api.loadDataset(
        { name: 'letters.jsonl', bytes: JSONL },
        { reward: REWARD, heldOut: 1, modelId: used.model.id },
      ),
    ).toMatchObject({ ok: true, dataset: { records: expect.any(Array), heldOut: 1 } });
    const gone = await api.loadDataset(
      { name: 'letters.jsonl', bytes: JSONL },
      { reward: REWARD, modelId: 'hf-0123456789abcdef' },
    );
    expect(gone).toMatchObject({
      ok: false,
      problem: { file: 'letters.jsonl', line: null, field: null },
      message: expect.stringContaining('pick the model folder again'),
    });
  });

  it('GRPO trains on the picked model and the dataset; after a reload the run continues from its checkpoint, tokens in its vocabulary', async () => {
    const store = new MemoryRunStore();
    const api = connect(store);
    await api.init('wasm');
    const used = await api.useModel(FILES, { name: 'tiny-llama' });
    if (!used.ok) throw new Error(used.message);
    const loaded = await api.loadDataset(
      { name: 'letters.jsonl', bytes: JSONL },
      { reward: REWARD, heldOut: 1, modelId: used.model.id },
    );
    if (!loaded.ok) throw new Error(loaded.message);
    const base = { kind: 'hf' as const, id: used.model.id, name: used.model.name, parameters: used.model.parameters };
    const options: GrpoRunOptions = {
      ...GRPO,
      steps: 4,
      prompts: 2,
      group: 2,
      maxNew: 8,
      truncation: 'score',
      evalEvery: 0,
      checkpointEvery: 1,
      dataset: loaded.dataset as DatasetRunOptions,
      base,
    };
    expect(await api.checkRunOptions(options)).toEqual([]);
    const first = untilEnded((e) => e.step === 1 && void api.stopRun(e.runId));
    const id = await api.startRun(options, first.onEvent);
    expect(await first.ended).toBe('stopped');
    // Stopped between steps (the stop arrives while a later step may already be under way): its checkpoint is its last step.
    const stopped = (await api.listRuns()).find((r) => r.runId === id)!;
    expect(stopped).toMatchObject({ options, checkpointStep: stopped.lastStep });
    expect(stopped.lastStep).toBeLessThan(4);
    const ck = (await api.latestCheckpoint(id))!;
    expect(Object.keys(ck.files).sort()).toEqual([
      'config.json',
      'dewpoint.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    expect(isHfTokenizer(importCheckpoint(ck.files as CheckpointFiles).tokenizer)).toBe(true);

    // The page reloads: a new worker on the same store, without the picked model.
    const after = connect(store);
    await after.init('wasm');
    expect(await after.pickedModel(used.model.id)).toBeNull();
    await expect(
      after.startRun(
        options,
        proxy(() => {}),
      ),
    ).rejects.toMatchObject({ name: 'InvalidConfig', message: expect.stringContaining('pick the model folder again') });
    const second = untilEnded();
    expect(await after.continueRun(id, second.onEvent)).toEqual({ ok: true, fromStep: stopped.lastStep });
    expect(await second.ended).toBe('finished');
    const prompts = new Set(LETTERS.map((_, i) => `Letter ${i + 1}:`));
    for (const step of [1, 2, 3, 4]) {
      const groups = (await after.groupsAt(id, step))!;
      expect(groups).toHaveLength(2);
      for (const g of groups) expect(prompts.has(g.prompt), g.prompt).toBe(true);
    }
    expect((await after.latestCheckpoint(id))!.step).toBe(4);
    // The run's tokens read in the model's 32000-piece vocabulary (from the run's checkpoint).
    const tok = importCheckpoint(ck.files as CheckpointFiles).tokenizer;
    const ids = [1, 2, 1000, 28705, 31999];
    const texts = await after.tokenTexts(id, Int32Array.from(ids));
    expect(texts).toEqual(ids.map((i) => tok.decode([i], { specials: true })));
    expect(texts!.slice(0, 3)).toEqual(['<s>', '</s>', expect.stringMatching(/^\S+$/)]);
  }, 300_000);

  it('ppo-arith trains on the picked model; dpo-arith samples its pairs from it (a random model never ends a completion, so it finds none)', async () => {
    const api = connect(new MemoryRunStore());
    await api.init('wasm');
    const used = await api.useModel(FILES, { name: 'tiny-llama' });
    if (!used.ok) throw new Error(used.message);
    const loaded = await api.loadDataset(
      { name: 'letters.jsonl', bytes: JSONL },
      { reward: REWARD, heldOut: 1, modelId: used.model.id },
    );
    if (!loaded.ok) throw new Error(loaded.message);
    const base = { kind: 'hf' as const, id: used.model.id, name: used.model.name, parameters: used.model.parameters };
    const defaults = (name: 'ppo-arith' | 'dpo-arith') => PRESETS.find((p) => p.name === name)!.defaults;
    const run = async (options: PpoRunOptions | DpoRunOptions) => {
      expect(await api.checkRunOptions(options), options.preset).toEqual([]);
      const r = untilEnded();
      const id = await api.startRun(options, r.onEvent);
      const status = await r.ended;
      return {
        id,
        status,
        message: (await api.listRuns()).find((x) => x.runId === id)?.message,
        checkpoint: (await api.latestCheckpoint(id))!,
      };
    };
    const ppo = await run({
      ...(defaults('ppo-arith') as PpoRunOptions),
      steps: 1,
      prompts: 2,
      group: 2,
      epochs: 1,
      miniBatches: 1,
      maxNew: 6,
      truncation: 'score',
      evalEvery: 0,
      checkpointEvery: 0,
      dataset: loaded.dataset,
      base,
    });
    expect(ppo.status, ppo.message).toBe('finished');
    expect(ppo.checkpoint.step).toBe(1);
    expect(ppo.checkpoint.files['tokenizer_config.json']).toBeDefined();
    expect(importCheckpoint(ppo.checkpoint.files as CheckpointFiles).weights.has('value_head.weight')).toBe(true);
    for (const g of (await api.groupsAt(ppo.id, 1))!) expect(g.prompt).toMatch(/^Letter \d:$/);

    // DPO keeps only completions that end (EOS): the pairs are sought from the picked model's samples of the letters.
    const dpo = await run({
      ...(defaults('dpo-arith') as DpoRunOptions),
      steps: 1,
      pairs: 1,
      samplesPerPrompt: 2,
      maxNew: 2,
      evalEvery: 0,
      checkpointEvery: 0,
      dataset: loaded.dataset,
      base,
    });
    expect(dpo.status).toBe('failed');
    expect(dpo.message).toMatch(/^DPO: found only 0 of 1 pairs/);
    // Its step-0 checkpoint was written before sampling, with the model's tokenizer.
    expect(dpo.checkpoint.step).toBe(0);
    expect(dpo.checkpoint.files['tokenizer_config.json']).toBeDefined();
  }, 300_000);

  /**
   * A run on a picked model, stopped after step 1; in a new worker (the model not held) it fails to
   * continue with `refusal`; picked again, it continues to the end.
   */
  async function continuesOnlyWithTheModel(o: Partial<GrpoRunOptions>, refusal: RegExp) {
    const store = new MemoryRunStore();
    const api = connect(store);
    await api.init('wasm');
    const used = await api.useModel(FILES, { name: 'tiny-llama' });
    if (!used.ok) throw new Error(used.message);
    const base = { kind: 'hf' as const, id: used.model.id, name: used.model.name, parameters: used.model.parameters };
    const options: GrpoRunOptions = {
      ...GRPO,
      steps: 3,
      prompts: 1,
      group: 2,
      maxNew: 4,
      truncation: 'score',
      evalEvery: 0,
      checkpointEvery: 1,
      ...o,
      base,
    };
    const first = untilEnded((e) => e.step === 1 && void api.stopRun(e.runId));
    const id = await api.startRun(options, first.onEvent);
    expect(await first.ended).toBe('stopped');
    const after = connect(store);
    await after.init('wasm');
    const second = untilEnded();
    expect(await after.continueRun(id, second.onEvent)).toMatchObject({ ok: true });
    expect(await second.ended).toBe('failed');
    expect((await after.listRuns()).find((r) => r.runId === id)?.message).toMatch(refusal);
    // Picked again (the same folder, the same id), it continues.
    expect(await after.useModel(FILES, { name: 'tiny-llama' })).toMatchObject({
      ok: true,
      model: { id: used.model.id },
    });
    const third = untilEnded();
    expect(await after.continueRun(id, third.onEvent)).toMatchObject({ ok: true });
    expect(await third.ended).toBe('finished');
  }

  it(
    'a run whose reference is the starting model does not continue from a trained checkpoint without it',
    () =>
      continuesOnlyWithTheModel(
        { beta: 0.1 },
        /KL β = 0\.1 holds the run to the starting model, which the run's checkpoint at step \d no longer holds .*pick the model folder again/,
      ),
    300_000,
  );

  it(
    'a LoRA run continues from its adapters on the base picked again, not from its merged checkpoint',
    () =>
      continuesOnlyWithTheModel(
        { beta: 0, loraRank: 2 },
        /LoRA trains adapters on the base, which the run's checkpoint at step \d no longer holds .*pick the model folder again/,
      ),
    300_000,
  );
});
