import { expose, proxy, wrap } from 'comlink';
import { describe, expect, it } from 'vitest';
import { GPU_ERROR_NAMES } from '../kernels/common/errors';
import { nodeGpu } from '../kernels/common/node-gpu';
import { createWorkbench } from './api';
import type { WasmOps } from '../kernels/backends/wasm';
import { nodeWasmOps } from '../kernels/wasm/node-wasm';
import type { CheckpointFiles } from './model/checkpoint';
import { exportCheckpoint, importCheckpoint } from './model/checkpoint';
import { createCpuOps } from '../kernels/backends/cpu';
import { SFT_ARITH, SftRun } from './train/sft';
import type { GrpoRunOptions, RunEvent, RunOptions, WorkbenchApi } from './protocol';
import { ERROR_NAMES } from './contract/errors';
import { findPreset } from './presets/table';

const GRPO = findPreset('grpo-arith')!.defaults as GrpoRunOptions;

/** The API as the app sees it: through comlink over a real MessageChannel. */
/** A base checkpoint for GRPO runs: a tiny model after a few SFT steps. */
async function tinyBaseFiles(): Promise<CheckpointFiles> {
  const sft = new SftRun(createCpuOps(), {
    ...SFT_ARITH,
    model: 'tiny',
    steps: 2,
    examples: 8,
    rows: 4,
    evalEvery: 0,
    evalN: 1,
  });
  await sft.next();
  return exportCheckpoint(sft.model, sft.tok, { note: 'test base' });
}

function connect(
  loadBase: () => Promise<CheckpointFiles> = tinyBaseFiles,
  wasm?: () => Promise<WasmOps>,
): WorkbenchApi {
  const { port1, port2 } = new MessageChannel();
  expose(
    createWorkbench(() => nodeGpu(), loadBase, undefined, undefined, wasm),
    port1,
  );
  return wrap<WorkbenchApi>(port2) as unknown as WorkbenchApi;
}

describe('worker API over comlink', () => {
  it('lists every GPU error name in the protocol', () => {
    for (const name of GPU_ERROR_NAMES) expect(ERROR_NAMES).toContain(name);
  });

  it('refuses selfTest before init with a named error', async () => {
    const api = connect();
    await expect(api.selfTest()).rejects.toMatchObject({ name: 'NotInitialized' });
  });

  it('runs on the CPU backend when asked, saying why', async () => {
    const api = connect();
    const info = await api.init('cpu');
    expect(info).toMatchObject({ backend: 'cpu', adapter: null });
    expect(info.fallbackReason).toMatch(/requested/);
    const result = await api.selfTest();
    expect(result.backend).toBe('cpu');
    expect(result.passed).toBe(true);
    expect(result.gflops).toBeGreaterThan(0);
  });

  it('selects WebGPU on auto when an adapter exists, and its self-test passes', async () => {
    const api = connect();
    const info = await api.init('auto');
    if (info.backend !== 'webgpu') {
      if (process.env.CI) throw new Error(`CI is set but the worker fell back to the CPU: ${info.fallbackReason}`);
      console.warn(`[gpu] skipping: ${info.fallbackReason}`);
      return;
    }
    expect(info.adapter?.limits.maxStorageBufferBindingSize).toBeGreaterThan(0);
    expect(info.adapter?.limits.minStorageBufferOffsetAlignment).toBeGreaterThan(0);
    const result = await api.selfTest();
    expect(result.backend).toBe('webgpu');
    expect(result.cases.map((c) => c.name)).toContain('matmul_tiled nt 65x17x130');
    expect(result.cases.every((c) => c.passed)).toBe(true);
    expect(result.passed).toBe(true);
  });
});

describe('backend choice with the wasm backend available', () => {
  it('auto takes wasm over a software adapter (or without one), says why, and a run records the choice', async () => {
    const api = connect(tinyBaseFiles, () => nodeWasmOps(1));
    const info = await api.init('auto');
    expect(info.backend).toBe('wasm');
    expect(info.reason).toMatch(/software one \(google\/swiftshader\)|no WebGPU/);
    expect(info.threads).toBe(1);
    const events: RunEvent[] = [];
    let finished!: () => void;
    const done = new Promise<void>((r) => (finished = r));
    const id = await api.startRun(
      { preset: 'sft-arith', steps: 1, lr: 1e-3, seed: 3, evalEvery: 0, evalN: 10, checkpointEvery: 0 },
      proxy((e: RunEvent) => {
        events.push(e);
        if (e.type === 'status' && e.status === 'finished') finished();
      }),
    );
    await done;
    const run = (await api.listRuns()).find((r) => r.runId === id)!;
    expect(run.backend).toBe('wasm');
    expect(run.backendChoice).toEqual({ reason: info.reason, threads: 1, probe: null });
  });

  it('a forced choice is taken or refused, never replaced', async () => {
    const api = connect(tinyBaseFiles, () => nodeWasmOps(1));
    expect(await api.init('wasm')).toMatchObject({ backend: 'wasm', reason: 'the wasm backend was requested' });
    const noWasm = connect();
    await expect(noWasm.init('wasm')).rejects.toMatchObject({
      message: expect.stringMatching(/no wasm backend was supplied/),
    });
  });
});

describe('runs over comlink', () => {
  async function collect(api: WorkbenchApi, steps: number, options?: RunOptions) {
    const events: RunEvent[] = [];
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    const id = await api.startRun(
      options ?? { preset: 'sft-arith', steps, lr: 1e-3, seed: 3, evalEvery: 0, evalN: 10, checkpointEvery: 0 },
      proxy((e: RunEvent) => {
        events.push(e);
        if (e.type === 'status' && e.status !== 'running' && e.status !== 'paused') resolveDone();
      }),
    );
    return { id, events, done };
  }

  it('starts an SFT run that reports each step and finishes, without holding the call open', async () => {
    const api = connect();
    await api.init('cpu');
    const { id, events, done } = await collect(api, 2);
    expect(id).toMatch(/^sft-/);
    await done;
    const steps = events.filter((e) => e.type === 'step');
    expect(steps.map((e) => e.type === 'step' && e.step)).toEqual([1, 2]);
    expect(steps.every((e) => e.type === 'step' && Number.isFinite(e.metrics['loss/sft']))).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'status', status: 'finished' });
    expect(events.filter((e) => e.type === 'checkpoint')).toEqual([expect.objectContaining({ step: 2 })]);
    const ck = await api.latestCheckpoint();
    expect(ck).toMatchObject({ runId: id, step: 2 });
    const loaded = importCheckpoint(ck!.files as CheckpointFiles);
    expect(loaded.info).toMatchObject({ runId: id, step: 2 });
    expect(loaded.weights.get('model.embed_tokens.weight')!.length).toBe(loaded.config.vocab * loaded.config.dModel);

    // The run's own tokenizer: ids name their symbols, specials by name.
    expect(await api.tokenTexts(id, Int32Array.of(1, 3, 13, 2))).toEqual(['<bos>', '0', '+', '<eos>']);
  });

  it('stops between steps when asked', async () => {
    const api = connect();
    await api.init('cpu');
    const { id, events, done } = await collect(api, 50);
    await new Promise((r) => setTimeout(r, 50));
    await api.stopRun(id);
    await done;
    expect(events.at(-1)).toMatchObject({ type: 'status', status: 'stopped' });
    expect(events.filter((e) => e.type === 'step').length).toBeLessThan(50);
  });

  it('refuses invalid options, naming the field and the allowed range', async () => {
    const api = connect();
    await api.init('cpu');
    await expect(
      api.startRun(
        { preset: 'sft-arith', steps: 0, lr: 1, seed: 1, evalEvery: 0, evalN: 10, checkpointEvery: 0 },
        proxy(() => {}),
      ),
    ).rejects.toMatchObject({
      name: 'InvalidConfig',
      message: expect.stringMatching(
        /Steps \(steps\) must be an integer in 1\.\.5000, got 0; Learning rate \(lr\) must be a number in \(0, 0\.1\], got 1/,
      ),
    });
    await expect(api.stopRun('nope')).rejects.toMatchObject({ name: 'UnknownRun' });
    const bad: GrpoRunOptions = {
      ...GRPO,
      steps: 1,
      group: 1,
      temperature: 0,
      policyLoss: { name: 'ppo', clipHigh: -1 },
    };
    await expect(
      api.startRun(
        bad,
        proxy(() => {}),
      ),
    ).rejects.toMatchObject({
      message: expect.stringMatching(
        /Group size \(group\) must be an integer in 2\.\.64, got 1; Temperature \(temperature\) must be a number in \(0, 10\], got 0; Clip ε high \(policyLoss\.clipHigh\) must be a number in \[0, 10\], got -1/,
      ),
    });
    // The same check, as the form asks for it before a start.
    expect(await api.checkRunOptions(bad)).toEqual([
      { path: 'group', message: 'Group size (group) must be an integer in 2..64, got 1' },
      { path: 'temperature', message: 'Temperature (temperature) must be a number in (0, 10], got 0' },
      { path: 'policyLoss.clipHigh', message: 'Clip ε high (policyLoss.clipHigh) must be a number in [0, 10], got -1' },
    ]);
    expect(await api.checkRunOptions(GRPO)).toEqual([]);
    expect((await api.presets()).find((p) => p.name === 'grpo-arith')!.fields.map((f) => f.path)).toContain(
      'policyLoss.clipHigh',
    );
  });

  it("completes a partial config JSON from its preset's defaults, as the form's import asks (issue 27)", async () => {
    const api = connect();
    const read = await api.completeRunOptions({ preset: 'grpo-arith', steps: 'ten', policyLoss: { name: 'gspo' } });
    expect(read).toEqual({
      ok: true,
      options: { ...GRPO, steps: 'ten', policyLoss: { name: 'gspo' } },
      problems: [{ path: 'steps', message: "Steps (steps) must be an integer in 1..5000, got 'ten'" }],
    });
    expect(await api.completeRunOptions({ preset: 'sac-arith' })).toMatchObject({
      ok: false,
      problems: [{ path: 'preset', message: expect.stringMatching(/^preset must be one of .*, got 'sac-arith'$/) }],
    });
  });

  it('runs GRPO from the base checkpoint and reports reward metrics', async () => {
    const api = connect();
    await api.init('cpu');
    const { id, events, done } = await collect(api, 2, {
      ...GRPO,
      steps: 2,
      lr: 1e-3,
      seed: 1,
      prompts: 2,
      group: 3,
      temperature: 1,
      evalEvery: 2,
      evalN: 3,
      checkpointEvery: 0,
    });
    await done;
    expect(await api.groupSteps(id)).toEqual([1, 2]);
    const groups = (await api.groupsAt(id, 2))!;
    expect(groups).toHaveLength(2);
    for (const g of groups) {
      expect(g.samples).toHaveLength(3);
      expect(g.zeroStd).toBe(g.samples.every((x) => x.reward === g.samples[0].reward));
      // GRPO advantages are group-normalised: they sum to 0 within a group (all 0 when zero-std).
      expect(Math.abs(g.samples.reduce((a, x) => a + x.advantage, 0))).toBeLessThan(1e-9);
      expect(g.samples.every((x) => x.length > 0 && typeof x.completion === 'string')).toBe(true);
    }
    expect(await api.groupsAt(id, 99)).toBeNull();
    const last = events.at(-1);
    expect(last, last?.type === 'status' ? last.message : '').toMatchObject({ type: 'status', status: 'finished' });
    const steps = events.filter((e) => e.type === 'step');
    expect(steps).toHaveLength(2);
    for (const e of steps) if (e.type === 'step') expect(e.metrics['reward/mean']).toBeGreaterThanOrEqual(0);
    expect(events.some((e) => e.type === 'eval' && e.n === 3)).toBe(true);
  });

  it('fails a GRPO run with a clear message when the base checkpoint cannot be loaded', async () => {
    const api = connect(async () => {
      throw new Error('GET /checkpoints/arith-base/model.safetensors: HTTP 404');
    });
    await api.init('cpu');
    const { events, done } = await collect(api, 1, {
      ...GRPO,
      steps: 1,
      lr: 1e-4,
      seed: 1,
      prompts: 2,
      group: 2,
      temperature: 1,
      evalEvery: 0,
      evalN: 1,
      checkpointEvery: 0,
    });
    await done;
    expect(events.at(-1)).toMatchObject({
      type: 'status',
      status: 'failed',
      message: expect.stringMatching(/base checkpoint .*HTTP 404/),
    });
  });

  it('continues a stopped GRPO run under its id and serves its sessions, typed arrays intact', async () => {
    const api = connect();
    await api.init('cpu');
    const options: GrpoRunOptions = {
      ...GRPO,
      steps: 5,
      prompts: 2,
      group: 2,
      evalEvery: 0,
      evalN: 1,
      checkpointEvery: 1,
    };
    let stopped!: () => void;
    const ended = new Promise<void>((r) => (stopped = r));
    const id = await api.startRun(
      options,
      proxy((e: RunEvent) => {
        if (e.type === 'step' && e.step === 1) void api.stopRun(e.runId);
        if (e.type === 'status' && e.status === 'stopped') stopped();
      }),
    );
    await ended;
    const run = (await api.listRuns()).find((r) => r.runId === id)!;
    expect(run).toMatchObject({ status: 'stopped', checkpointStep: run.lastStep });
    expect(run.lastStep).toBeLessThan(5);

    const events: RunEvent[] = [];
    let finished!: () => void;
    const done = new Promise<void>((r) => (finished = r));
    const r = await api.continueRun(
      id,
      proxy((e: RunEvent) => (events.push(e), e.type === 'status' && e.status !== 'running' && finished())),
    );
    expect(r).toEqual({ ok: true, fromStep: run.lastStep });
    await done;
    expect(events.at(-1)).toMatchObject({ type: 'status', runId: id, status: 'finished' });
    expect(events.find((e) => e.type === 'step')).toMatchObject({ step: run.lastStep + 1 });
    expect((await api.runHistory(id)).steps.map((s) => s.step)).toEqual([1, 2, 3, 4, 5]);
    const sessions = (await api.sessionsAt(id, 5))!;
    expect(sessions).toHaveLength(4);
    expect(sessions[0].calls[0].sampledIds).toBeInstanceOf(Int32Array);
    expect(sessions[0].calls[0].behaviorLogProbs).toBeInstanceOf(Float64Array);
    expect(sessions.every((s) => s.calls[0].version === 4)).toBe(true);
    // Token texts under the run's tokenizer (the base checkpoint's), for the session inspector.
    const { promptIds, sampledIds } = sessions[0].calls[0];
    const base = importCheckpoint(await tinyBaseFiles()).tokenizer;
    expect(await api.tokenTexts(id, sampledIds)).toEqual(
      Array.from(sampledIds, (t) => base.decode([t], { specials: true })),
    );
    expect((await api.tokenTexts(id, promptIds))![0]).toBe('<bos>');
    expect(await api.tokenTexts('grpo-unknown', sampledIds)).toBeNull();
    expect(
      await api.continueRun(
        id,
        proxy(() => {}),
      ),
    ).toMatchObject({ ok: false, reason: expect.stringMatching(/finished/) });
  });
});
