/**
 * The worker API behind comlink: thin delegation to the backend selection and the self-test,
 * no math here. `getGpu` supplies `navigator.gpu` (or the `webgpu` package's GPU in Node).
 */
import { transfer } from 'comlink';
import type { Ops } from '../kernels/ops';
import type { WasmOps } from '../kernels/backends/wasm';
import { selectBackend } from '../kernels/backends/select';
import { GpuError } from '../kernels/common/errors';
import type { CheckpointFiles } from './model/checkpoint';
import { PickedModels } from './hf/models';
import { loadDatasetFor } from './runs/dataset-load';
import type {
  BackendInfo,
  BackendPreference,
  CompanionStatus,
  DatasetLoadResult,
  DatasetRewardOptions,
  ModelFolderFile,
  RunBackendChoice,
  RunEvent,
  RunOptions,
  SelfTestResult,
  WorkbenchApi,
} from './protocol';
import { CompanionClient, companionUrlProblem } from './companion-client';
import { cachedGrader, type CodeGrader } from './rewards/code-grader';
import { checkRunOptions } from './runs/fields';
import { PRESETS } from './runs/presets';
import { RunManager } from './runs/run-manager';
import type { RunLocks } from './runs/run-locks';
import { memoryRunLocks } from './runs/run-locks';
import type { RunStore } from './store/run-store';
import { MemoryRunStore } from './store/run-store';
import { runSelfTest } from './selftest';
import { episodeDetail, episodeSummaries, episodesJsonl, replayEpisode } from './episodes/views';
import { exportStoredRun } from './interop/files';
import type { BaseName } from './runs/run-manager';
import { importVerlRun, importedOptions } from './interop/verl-import';
import { importedEpisodeDetail, importedEpisodeSummaries, importedReplay } from './interop/verl-episodes';

export class NotInitializedError extends Error {
  override readonly name = 'NotInitialized';
}

export class InvalidConfigError extends Error {
  override readonly name = 'InvalidConfig';
}

/**
 * `getGpu`: `navigator.gpu` (or the webgpu package's GPU in Node). `loadBase`: the files of the
 * shipped base checkpoint (fetched from the page's origin in the browser). `wasm`: makes the wasm
 * backend (without it, there is none).
 */
export function createWorkbench(
  getGpu: () => GPU | undefined | Promise<GPU | undefined>,
  loadBase: (name: BaseName) => Promise<CheckpointFiles>,
  store: RunStore = new MemoryRunStore(),
  locks: RunLocks = memoryRunLocks(),
  wasm?: () => Promise<WasmOps>,
): WorkbenchApi {
  let ops: Ops | null = null;
  let choice: RunBackendChoice | null = null;
  const requireOps = (what: string): Ops => {
    if (!ops) throw new NotInitializedError(`${what} before init(): call init() first`);
    return ops;
  };
  let companion: CompanionClient | null = null;
  let companionWorkers = 1;
  // Graded repeats (a group's identical programs, SFT-like repeats) are answered from the cache; a new connection starts a new one.
  let grader: CodeGrader | null = null;
  // A person's own models (useModel), kept in this worker's memory until it ends.
  const models = new PickedModels();
  const runs = new RunManager(
    () => requireOps('a run'),
    loadBase,
    store,
    locks,
    () => choice,
    () => ({ codeGrader: grader }),
    (id) => models.files(id),
  );
  // An imported run (verl rollouts) has no trainer, tokenizer or environment: the calls that need one answer for it here.
  const imported = async (runId: string) =>
    importedOptions((await store.listRuns()).find((r) => r.runId === runId)) !== null;

  return {
    async connectCompanion(url: string, token: string): Promise<CompanionStatus> {
      const problem = companionUrlProblem(url);
      if (problem) throw new InvalidConfigError(problem);
      if (!token.trim())
        throw new InvalidConfigError('the companion token is empty: paste the token the companion printed at start');
      const client = new CompanionClient(url, token.trim());
      companion = client;
      const status = await client.status();
      if (status.connected) companionWorkers = status.health.workers;
      grader = cachedGrader((request) => client.gradeCode(request, companionWorkers));
      return status;
    },
    async companionStatus(): Promise<CompanionStatus | null> {
      return companion ? companion.status() : null;
    },
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
      return PRESETS;
    },
    async checkRunOptions(options: RunOptions) {
      return checkRunOptions(options);
    },
    async loadDataset(
      file: { name: string; bytes: Uint8Array },
      choice: { reward: DatasetRewardOptions; heldOut?: number; modelId?: string },
    ): Promise<DatasetLoadResult> {
      return loadDatasetFor(file, choice, models, loadBase);
    },
    async inspectModel(files: ModelFolderFile[], options?: { name?: string; rows?: number }) {
      return models.inspect(files, options);
    },
    async useModel(files: ModelFolderFile[], options?: { name?: string }) {
      return models.use(files, options);
    },
    async pickedModel(id: string) {
      return models.model(id);
    },
    async startRun(options: RunOptions, onEvent: (event: RunEvent) => void) {
      requireOps('startRun()');
      const problems = checkRunOptions(options);
      if (problems.length) throw new InvalidConfigError(problems.map((p) => p.message).join('; '));
      // A new run's own model must be here (a stored one continues from its checkpoints instead).
      const picked = 'base' in options ? options.base : undefined;
      if (picked && !models.model(picked.id))
        throw new InvalidConfigError(
          `base: the model '${picked.name}' (${picked.id}) is no longer in this tab's worker (a reload drops a picked model): pick the model folder again (Use this model), then start the run`,
        );
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
    async continueRun(runId: string, onEvent: (event: RunEvent) => void) {
      if (await imported(runId))
        return {
          ok: false as const,
          reason: `run '${runId}' was imported from verl rollouts: it was trained by verl and has nothing to continue here`,
        };
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
      const [steps, evaluations] = await Promise.all([store.stepMetrics(runId), store.evaluations(runId)]);
      return { steps, evaluations };
    },
    async exportRunFiles(runId: string, to: 'verl' | 'trl') {
      return exportStoredRun(store, runId, to);
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
    async flowField(runId: string, size?: number) {
      return runs.flowField(runId, size);
    },
    async sessionsAt(runId: string, step: number) {
      return store.sessionsAt(runId, step);
    },
    async tokenTexts(runId: string, ids: Int32Array) {
      if (await imported(runId))
        throw new Error(
          `run '${runId}' was imported from verl rollouts: its dump has token ids but no tokenizer, so they have no text here`,
        );
      const tok = await runs.tokenizerOf(runId);
      return tok ? Array.from(ids, (id) => tok.decode([id], { specials: true })) : null;
    },
    async episodeSteps(runId: string) {
      if (await imported(runId)) return store.groupSteps(runId);
      return store.journal.steps(runId);
    },
    async episodesAt(runId: string, step: number) {
      if (await imported(runId)) {
        const groups = await store.groupsAt(runId, step);
        return groups ? importedEpisodeSummaries(groups, step) : null;
      }
      const [c, records] = await Promise.all([runs.episodeContext(runId), store.journal.load(runId, step)]);
      return c && records.length ? episodeSummaries(records, step, c) : null;
    },
    async episodeAt(runId: string, step: number, index: number) {
      if (await imported(runId)) {
        const [groups, sessions] = await Promise.all([store.groupsAt(runId, step), store.sessionsAt(runId, step)]);
        return groups ? importedEpisodeDetail(groups, sessions, step, index) : null;
      }
      const [c, records] = await Promise.all([runs.episodeContext(runId), store.journal.load(runId, step)]);
      return c && records.length ? episodeDetail(records, step, index, c) : null;
    },
    async replayEpisode(runId: string, step: number, index: number) {
      if (await imported(runId)) return importedReplay();
      const [c, records] = await Promise.all([runs.episodeContext(runId), store.journal.load(runId, step)]);
      if (!c) return { identical: false, summary: `run '${runId}' has no multi-turn episodes`, turns: [] };
      return replayEpisode(records, index, c);
    },
    async exportEpisodes(runId: string) {
      const c = await runs.episodeContext(runId);
      if (!c) return '';
      const steps = await store.journal.steps(runId);
      return episodesJsonl(
        runId,
        await Promise.all(steps.map(async (step) => ({ step, records: await store.journal.load(runId, step) }))),
        c,
      );
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
