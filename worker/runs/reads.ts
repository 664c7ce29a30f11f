/**
 * What the views read of a stored run beyond its records (those the store answers directly):
 * token texts, journaled episodes and their replay, the episodes as JSONL, a flow run's reward
 * field, and whether it can continue. A run trained here and a run imported from verl's rollout
 * dumps answer the same `RunReader` interface, so worker/api.ts only delegates: an imported run
 * has no tokenizer, environment or trainer, and its reader says so in each answer.
 */
import { episodeDetail, episodeSummaries, episodesJsonl, replayEpisode } from '../episodes/views';
import type { EpisodeContext } from '../episodes/views';
import type { KindServices } from '../episodes/kinds';
import { FLOW_VIEW_BOX, rewardGrid } from '../flow/index';
import { importedEpisodeDetail, importedEpisodeSummaries, importedReplay } from '../interop/verl-episodes';
import { importedOptions } from '../interop/verl-import';
import { charTokenizer } from '../model/checkpoint';
import type { RunOptions } from '../contract/options';
import type {
  EpisodeDetail,
  EpisodeSummary,
  FlowField,
  HealthFlag,
  HealthOptions,
  ReplayResult,
  RewardAudit,
  RunHistory,
  StepDistribution,
} from '../contract/records';
import { episodeRunConfigOf, flowRunConfigOf } from '../presets/table';
import type { RunStore } from '../store/run-store';
import { configuredKind, episodePacking } from '../train/grpo-episodes';
import type { Bases } from './bases';
import { auditStep, rewardAudit, type AuditStep } from './audit';
import { runHealth, withCommonestFailure } from './health';
import { commonestFailure } from '../episodes/infrastructure';

/** One stored run as the views read it. */
interface RunReader {
  /** The text of each id (specials by name), or null when the run has no tokens (Flow-GRPO) or is unknown. */
  tokenTexts(ids: Int32Array): Promise<string[] | null>;
  /** Steps with episodes to list, ascending. */
  episodeSteps(): Promise<number[]>;
  episodesAt(step: number): Promise<EpisodeSummary[] | null>;
  episodeAt(step: number, index: number): Promise<EpisodeDetail | null>;
  replayEpisode(step: number, index: number): Promise<ReplayResult>;
  /** One JSON line per episode; '' for a run without journaled episodes. */
  exportEpisodes(): Promise<string>;
  /** A Flow-GRPO run's reward over its view box on a size × size grid, or null for another run. */
  flowField(size: number): Promise<FlowField | null>;
  /** Why the run cannot continue here whatever its state (an imported run), or null. */
  neverContinues(): string | null;
  /** The run-health flags its stored metrics raise (runs/health.ts). */
  health(options: Partial<HealthOptions>): Promise<HealthFlag[]>;
}

export class RunReads {
  constructor(
    private readonly store: RunStore,
    private readonly bases: Bases,
    private readonly services: () => KindServices,
  ) {}

  /** The reader of run `runId`: an imported run's, else a trained (or unknown) run's. */
  async of(runId: string): Promise<RunReader> {
    const stored = (await this.store.listRuns()).find((r) => r.runId === runId);
    if (importedOptions(stored) !== null) return this.imported(runId);
    return this.trained(runId, stored ? stored.options : null);
  }

  private imported(runId: string): RunReader {
    const store = this.store;
    return {
      tokenTexts: async () => {
        throw new Error(
          `run '${runId}' was imported from verl rollouts: its dump has token ids but no tokenizer, so they have no text here`,
        );
      },
      episodeSteps: () => store.groupSteps(runId),
      episodesAt: async (step) => {
        const groups = await store.groupsAt(runId, step);
        return groups ? importedEpisodeSummaries(groups, step) : null;
      },
      episodeAt: async (step, index) => {
        const [groups, sessions] = await Promise.all([store.groupsAt(runId, step), store.sessionsAt(runId, step)]);
        return groups ? importedEpisodeDetail(groups, sessions, step, index) : null;
      },
      replayEpisode: async () => importedReplay(),
      exportEpisodes: async () => '',
      flowField: async () => null,
      neverContinues: () =>
        `run '${runId}' was imported from verl rollouts: it was trained by verl and has nothing to continue here`,
      health: async (options) => runHealth(await store.stepMetrics(runId), options),
    };
  }

  /** `o`: the stored run's options; null for a run that is not stored. */
  private trained(runId: string, o: RunOptions | null): RunReader {
    const store = this.store;
    // A step's context: the run's, with the groups the step trained on (its stored advantage groups).
    const context = async (step?: number) => {
      const c = o ? await this.episodeContext(runId, o) : null;
      const groups = c && step !== undefined ? await store.groupsAt(runId, step) : null;
      return c && groups ? { ...c, trainedGroups: new Set(groups.map((g) => g.group)) } : c;
    };
    return {
      tokenTexts: async (ids) => {
        const tok = o ? await this.bases.tokenizerOf(runId, o) : null;
        return tok ? Array.from(ids, (id) => tok.decode([id], { specials: true })) : null;
      },
      episodeSteps: () => store.journal.steps(runId),
      episodesAt: async (step) => {
        const [c, records] = await Promise.all([context(step), store.journal.load(runId, step)]);
        return c && records.length ? episodeSummaries(records, step, c) : null;
      },
      episodeAt: async (step, index) => {
        const [c, records] = await Promise.all([context(step), store.journal.load(runId, step)]);
        return c && records.length ? episodeDetail(records, step, index, c) : null;
      },
      replayEpisode: async (step, index) => {
        const [c, records] = await Promise.all([context(), store.journal.load(runId, step)]);
        if (!c) return { identical: false, summary: `run '${runId}' has no multi-turn episodes`, turns: [] };
        return replayEpisode(records, index, c);
      },
      exportEpisodes: async () => {
        const c = await context();
        if (!c) return '';
        const steps = await store.journal.steps(runId);
        return episodesJsonl(
          runId,
          await Promise.all(
            steps.map(async (step) => {
              const groups = await store.groupsAt(runId, step);
              return {
                step,
                records: await store.journal.load(runId, step),
                ...(groups ? { trainedGroups: new Set(groups.map((g) => g.group)) } : {}),
              };
            }),
          ),
          c,
        );
      },
      flowField: async (size) => {
        if (!Number.isInteger(size) || size < 2 || size > 512)
          throw new Error(`flowField: size = ${size}; expected an integer in 2..512`);
        const flow = o ? flowRunConfigOf(o) : null;
        return flow ? rewardGrid(flow.reward, FLOW_VIEW_BOX, size) : null;
      },
      neverContinues: () => null,
      health: async (options) => {
        const flags = runHealth(
          await store.stepMetrics(runId),
          options,
          o && episodeRunConfigOf(o) ? 'Episodes' : 'Groups',
        );
        // The infrastructure flag names the commonest failure of its step, from that step's stored sessions.
        const infra = flags.find((f) => f.id === 'infrastructure');
        if (!infra) return flags;
        const sessions = (await store.sessionsAt(runId, infra.step)) ?? [];
        return withCommonestFailure(flags, commonestFailure(sessions.filter((s) => s.status === 'failed')));
      },
    };
  }

  /**
   * What reading a stored run's episodes needs (its environment, tokenizer, group size and what
   * trains), or null when the run journals no episodes.
   */
  private async episodeContext(runId: string, o: RunOptions): Promise<EpisodeContext | null> {
    const config = episodeRunConfigOf(o);
    if (!config) return null;
    const tok = await this.bases.tokenizerOf(runId, o);
    return {
      kind: configuredKind(config, this.services()),
      tok: charTokenizer(tok!, `${o.preset} episodes`),
      group: config.options.group,
      truncation: config.options.truncation,
      maskZeroAdvantage: episodePacking(config.options).maskZeroAdvantage,
    };
  }
}

/**
 * A stored run's per-step metrics with when each step was committed, and its evaluations. An
 * imported run's commit times are those of the import, not of its training: they are left out.
 */
export async function runHistory(store: RunStore, runId: string): Promise<RunHistory> {
  const [steps, times, evaluations, runs] = await Promise.all([
    store.stepMetrics(runId),
    store.stepTimes(runId),
    store.evaluations(runId),
    store.listRuns(),
  ]);
  const imported = importedOptions(runs.find((r) => r.runId === runId)) !== null;
  const at = new Map(imported ? [] : times.map((s) => [s.step, s]));
  return {
    steps: steps.map((s) => {
      const time = at.get(s.step);
      return time ? { ...s, t: time.t, ...(time.activeMs !== undefined ? { activeMs: time.activeMs } : {}) } : s;
    }),
    evaluations,
  };
}

/**
 * Per kept step, its samples' rewards and lengths from the step's advantage groups (a trained and
 * an imported run alike; DPO pairs are not samples of one policy's rollout and are left out).
 */
export async function stepDistributions(store: RunStore, runId: string): Promise<StepDistribution[]> {
  const out: StepDistribution[] = [];
  for (const step of await store.groupSteps(runId)) {
    const samples = ((await store.groupsAt(runId, step)) ?? [])
      .filter((g) => (g.kind ?? 'advantage') === 'advantage')
      .flatMap((g) => g.samples);
    if (samples.length === 0) continue;
    out.push({
      step,
      rewards: samples.map((x) => x.reward).filter(Number.isFinite),
      lengths: samples.map((x) => x.length).filter(Number.isFinite),
    });
  }
  return out;
}

/** The reward-hacking audit (runs/audit.ts) of a stored run: its metrics and kept advantage groups, step by step. */
export async function storedRunAudit(store: RunStore, runId: string): Promise<RewardAudit> {
  const [metrics, kept] = await Promise.all([store.stepMetrics(runId), store.groupSteps(runId)]);
  const withGroups = new Set(kept);
  const steps: AuditStep[] = [];
  for (const s of metrics)
    steps.push(auditStep(s.step, s.metrics, withGroups.has(s.step) ? await store.groupsAt(runId, s.step) : null));
  return { steps: steps.filter((s) => s.step > 0).length, findings: rewardAudit(steps) };
}
