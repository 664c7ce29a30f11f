/** Query keys for every worker read, from one factory. */
export const keys = {
  backend: () => ['backend'] as const,
  companion: () => ['companion'] as const,
  presets: () => ['presets'] as const,
  /** The worker's problems with a set of run options (the options are the key: JSON, no undefined). */
  optionProblems: (options: unknown) => ['option-problems', options] as const,
  runs: () => ['runs'] as const,
  /** A model picked in this tab (useModel), while the worker holds it. */
  pickedModel: (id: string) => ['picked-model', id] as const,
  /** The memory plan of a step of these options on a picked model (the options are the key, as optionProblems'). */
  modelPlan: (id: string, options: unknown) => ['picked-model', id, 'plan', options] as const,
  storage: () => ['storage'] as const,
  /** Changes with the run's last step, so a live run's history refreshes as it goes. */
  runHistory: (runId: string, lastStep: number) => ['runs', runId, 'history', lastStep] as const,
  /** Per kept step, its samples' rewards and lengths (Compare's histograms); changes with the last step, like `runHistory`. */
  stepDistributions: (runId: string, lastStep: number) => ['runs', runId, 'distributions', lastStep] as const,
  /** Run health's flags; changes with the run's last step, like `runHistory`. */
  runHealth: (runId: string, lastStep: number) => ['runs', runId, 'health', lastStep] as const,
  /** The reward-hacking audit, as asked for at a step (it reads the whole run, on demand). */
  rewardAudit: (runId: string, atStep: number) => ['runs', runId, 'audit', atStep] as const,
  /** The mismatch lab's runs for an injection, steps and seed. */
  mismatchLabPlan: (inject: string, steps: number, seed: number) => ['mismatch-lab-plan', inject, steps, seed] as const,
  /** Changes with the latest step, so the list refreshes as the run goes. */
  groupSteps: (runId: string, latestStep: number) => ['runs', runId, 'group-steps', latestStep] as const,
  groupsAt: (runId: string, step: number) => ['runs', runId, 'groups', step] as const,
  batchAt: (runId: string, step: number) => ['runs', runId, 'batch', step] as const,
  sessionsAt: (runId: string, step: number) => ['runs', runId, 'sessions', step] as const,
  /** A Flow-GRPO step's sample cloud, and the run's reward over its view box on a size × size grid. */
  flowAt: (runId: string, step: number) => ['runs', runId, 'flow', step] as const,
  flowField: (runId: string, size: number) => ['runs', runId, 'flow-field', size] as const,
  /** The ids are the key (a session's are a few dozen). */
  tokenTexts: (runId: string, ids: readonly number[]) => ['runs', runId, 'token-texts', ids] as const,
  /** Steps with journaled episodes; changes with the latest step, like `groupSteps`. */
  episodeSteps: (runId: string, latestStep: number) => ['runs', runId, 'episode-steps', latestStep] as const,
  episodesAt: (runId: string, step: number) => ['runs', runId, 'episodes', step] as const,
  /** Under `episodesAt`, so invalidating a step's episodes refreshes its opened episode too. */
  episodeAt: (runId: string, step: number, index: number) => ['runs', runId, 'episodes', step, index] as const,
};
