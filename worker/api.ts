/**
 * The worker API behind comlink: each method delegates to one owner, with no math and no branch
 * on a kind of run here: the backend selection and the self-test (kernels/), the companion
 * connection (companion-client/connection.ts), a person's models (hf/models.ts), the presets and their
 * options (presets/table.ts), the run lifecycle (runs/run-manager.ts), the store's records, and
 * what the views read of a stored run, trained or imported (runs/reads.ts). `getGpu` supplies
 * `navigator.gpu` (or the `webgpu` package's GPU in Node). Errors are the named classes of
 * contract/errors.ts; expected outcomes are results.
 */
import { transfer } from 'comlink';
import type { Ops } from '../kernels/ops';
import type { WasmOps } from '../kernels/backends/wasm';
import type { BackendName } from '../kernels/backends/info';
import { selectBackend } from '../kernels/backends/select';
import { GpuError } from '../kernels/common/errors';
import { CompanionConnection } from './companion-client/connection';
import { NotInitializedError } from './contract/errors';
import type { CheckpointFiles } from './model/checkpoint';
import { importCheckpoint } from './model/checkpoint';
import type { ModelConfig } from './model/config';
import type { RemoteSampler } from './rollout/remote-sampler';
import { PickedModels } from './hf/models';
import { exportStoredRun } from './interop/files';
import { exportStoredBundle } from './interop/stored-bundle';
import { importVerlRun } from './interop/verl-import';
import type {
  BackendInfo,
  BackendPreference,
  DatasetLoadResult,
  DatasetRewardOptions,
  GrpoRunOptions,
  ModelFolderFile,
  RunBackendChoice,
  RunOptions,
  SelfTestResult,
  WorkbenchApi,
} from './protocol';
import { completeRunOptions } from './presets/config-import';
import { ENV_PROGRAM_BASE, PRESET_INFOS, checkRunOptions, findPreset, type BaseName } from './presets/table';
import { labCells, labCorrectionOf, labHeader, labPlan, labRow } from './presets/mismatch-lab';
import { loadDatasetFor } from './runs/dataset-load';
import { loadEnvironmentBytes, previewEnvironment } from './episodes/program';
import { RunReads, runHistory, stepDistributions, storedRunAudit } from './runs/reads';
import { RunManager } from './runs/run-manager';
import type { RunLocks } from './runs/run-locks';
import { memoryRunLocks } from './runs/run-locks';
import type { RunStore } from './store/run-store';
import { MemoryRunStore } from './store/run-store';
import { runSelfTest } from './selftest';

/**
 * `getGpu`: `navigator.gpu` (or the webgpu package's GPU in Node). `loadBase`: the files of the
 * shipped base checkpoint (fetched from the page's origin in the browser). `wasm`: makes the wasm
 * backend (without it, there is none). `remoteSampler`: starts a sampler slot elsewhere for the
 * `samplerWorker` option (a Web Worker in the browser; without it, the option is refused).
 */
export function createWorkbench(
  getGpu: () => GPU | undefined | Promise<GPU | undefined>,
  loadBase: (name: BaseName) => Promise<CheckpointFiles>,
  store: RunStore = new MemoryRunStore(),
  locks: RunLocks = memoryRunLocks(),
  wasm?: () => Promise<WasmOps>,
  remoteSampler?: (config: ModelConfig, trainerBackend: BackendName) => RemoteSampler,
): WorkbenchApi {
  let ops: Ops | null = null;
  let choice: RunBackendChoice | null = null;
  const requireOps = (what: string): Ops => {
    if (!ops) throw new NotInitializedError(`${what} before init(): call init() first`);
    return ops;
  };
  const companion = new CompanionConnection();
  // A person's own models (useModel), kept in this worker's memory until it ends.
  const models = new PickedModels();
  const runs = new RunManager({
    getOps: () => requireOps('a run'),
    loadBase,
    store,
    locks,
    getBackendChoice: () => choice,
    getServices: () => ({
      ...companion.services(),
      ...(remoteSampler
        ? { remoteSampler: (config: ModelConfig) => remoteSampler(config, requireOps('a run').backend) }
        : {}),
    }),
    pickedModel: (id) => models.files(id),
  });
  const reads = new RunReads(store, runs.bases, () => companion.services());

  return {
    connectCompanion: (url, token) => companion.connect(url, token),
    companionStatus: () => companion.status(),
    async init(preference: BackendPreference = 'auto'): Promise<BackendInfo> {
      const selected = await selectBackend({ gpu: await getGpu(), wasm }, preference);
      if (!selected.ok) throw new GpuError('GpuUnavailable', selected.reason);
      ops = selected.ops;
      choice = { reason: selected.info.reason, threads: selected.info.threads, probe: selected.info.probe };
      return selected.info;
    },
    async selfTest(): Promise<SelfTestResult> {
      return runSelfTest(requireOps('selfTest()'));
    },
    async presets() {
      return PRESET_INFOS;
    },
    async checkRunOptions(options: RunOptions) {
      return checkRunOptions(options);
    },
    async completeRunOptions(config: unknown) {
      return completeRunOptions(config);
    },
    async loadEnvironment(files, choice) {
      return loadEnvironmentBytes(files, choice);
    },
    async previewEnvironment(environment, stepSeconds, maxNew) {
      const base = importCheckpoint(await loadBase(ENV_PROGRAM_BASE));
      return previewEnvironment(companion.services().companion, { ...environment, stepSeconds }, base, maxNew);
    },
    async loadDataset(
      file: { name: string; bytes: Uint8Array },
      choice: { reward: DatasetRewardOptions; heldOut?: number; modelId?: string },
    ): Promise<DatasetLoadResult> {
      return loadDatasetFor(file, choice, models, loadBase);
    },
    async inspectModel(files: ModelFolderFile[], options?: { name?: string; rows?: number; plan?: RunOptions }) {
      return models.inspect(files, options);
    },
    async useModel(files: ModelFolderFile[], options?: { name?: string }) {
      return models.use(files, options);
    },
    async pickedModel(id: string) {
      return models.model(id);
    },
    async modelPlan(id: string, options: RunOptions) {
      return models.plan(id, options);
    },
    async startRun(options, onEvent) {
      requireOps('startRun()');
      return runs.start(options, onEvent);
    },
    async pauseRun(id: string) {
      runs.pause(id);
    },
    async resumeRun(id: string) {
      runs.resume(id);
    },
    async stopRun(id: string) {
      runs.stop(id);
    },
    async continueRun(runId, onEvent) {
      const never = (await reads.of(runId)).neverContinues();
      if (never) return { ok: false as const, reason: never };
      requireOps('continueRun()');
      return runs.continue(runId, onEvent);
    },
    async updateRun(runId: string, meta: { name?: string; notes?: string }) {
      return runs.updateMeta(runId, meta);
    },
    async deleteRun(runId: string) {
      return runs.deleteRun(runId);
    },
    async storage() {
      await store.listRuns(); // a deferred store knows its kind once open
      return store.kind;
    },
    async listRuns() {
      return runs.listRuns();
    },
    async runHistory(runId: string) {
      return runHistory(store, runId);
    },
    async stepDistributions(runId: string) {
      return stepDistributions(store, runId);
    },
    async exportRunFiles(runId: string, to: 'verl' | 'trl') {
      return exportStoredRun(store, runId, to);
    },
    async exportRunBundle(runId: string, to: 'verl' | 'skyrl') {
      return exportStoredBundle(store, runId, to);
    },
    async groupSteps(runId: string) {
      return store.groupSteps(runId);
    },
    async groupsAt(runId: string, step: number) {
      return store.groupsAt(runId, step);
    },
    async batchAt(runId: string, step: number) {
      return store.batchAt(runId, step);
    },
    async flowAt(runId: string, step: number) {
      return store.flowAt(runId, step);
    },
    async flowField(runId: string, size = 64) {
      return (await reads.of(runId)).flowField(size);
    },
    async sessionsAt(runId: string, step: number) {
      return store.sessionsAt(runId, step);
    },
    async tokenTexts(runId: string, ids: Int32Array) {
      return (await reads.of(runId)).tokenTexts(ids);
    },
    async episodeSteps(runId: string) {
      return (await reads.of(runId)).episodeSteps();
    },
    async episodesAt(runId: string, step: number) {
      return (await reads.of(runId)).episodesAt(step);
    },
    async episodeAt(runId: string, step: number, index: number) {
      return (await reads.of(runId)).episodeAt(step, index);
    },
    async replayEpisode(runId: string, step: number, index: number) {
      return (await reads.of(runId)).replayEpisode(step, index);
    },
    async runHealth(runId, options = {}) {
      return (await reads.of(runId)).health(options);
    },
    async rewardAudit(runId) {
      return storedRunAudit(store, runId);
    },
    async mismatchLabPlan({ inject, corrections, steps, seed }) {
      const base = findPreset('grpo-arith')!.defaults as GrpoRunOptions;
      const planned = labPlan({ ...base, steps, seed, evalEvery: steps }, inject, corrections);
      // Steps and seed as a person typed them: the first problem, naming the field, before any run starts.
      const problem = planned.ok ? checkRunOptions(planned.plan.runs[0].options)[0] : undefined;
      return problem ? { ok: false as const, message: problem.message } : planned;
    },
    async mismatchLabRows(runs) {
      const rows = await Promise.all(
        runs.map(async ({ runId, correction }) => {
          const c = labCorrectionOf(correction);
          if (!c) throw new Error(`mismatchLabRows: no correction '${correction}'`);
          const h = await runHistory(store, runId);
          return labRow(
            c,
            h.steps.map((s) => s.metrics),
            h.evaluations.at(-1)?.accuracy ?? NaN,
          );
        }),
      );
      return { rows, header: labHeader(), cells: rows.map(labCells) };
    },
    async exportEpisodes(runId: string) {
      return (await reads.of(runId)).exportEpisodes();
    },
    async importVerlRun(files: { name: string; bytes: Uint8Array }[]) {
      return importVerlRun(store, files);
    },
    async latestCheckpoint(which?: string) {
      const runId = which ?? runs.lastRunId;
      const c = runId ? await store.latestCheckpoint(runId) : null;
      if (!runId || !c) return null;
      const files = Object.fromEntries(Object.entries(c.files).map(([k, f]) => [k, f.slice()])) as CheckpointFiles;
      return transfer(
        { runId, step: c.step, files },
        Object.values(files).map((f) => f.buffer),
      );
    },
  };
}
