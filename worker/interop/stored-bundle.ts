/**
 * A stored run as the bundle `dewpoint export RUN --to verl|skyrl` writes (bundle.ts), for the
 * app's download: the run's options, its stored steps and its latest checkpoint (a run checkpoints
 * its last step, and a stopped run the last step it committed), the files and the preflight.
 *
 * Not the parity run: the browser has no Python, so the bundle carries parity.jsonl and no
 * parity.json (its README says how to run the check). Not a flow policy's checkpoint: a 2-D
 * policy has no Hugging Face folder to bundle.
 */
import type { RunOptions } from '../contract/options';
import type { RunBundle } from '../contract/records';
import type { CheckpointFiles } from '../model/checkpoint';
import type { RunStore } from '../store/run-store';
import { bundleFiles, type BundleTarget } from './bundle';
import { verlDataSource } from './files';
import type { PreflightResult } from './preflight';
import { storedSteps } from './rollouts';
import type { ExportFailure } from './types';
import { importedOptions } from './verl-import';

export async function exportStoredBundle(
  store: RunStore,
  runId: string,
  to: BundleTarget,
): Promise<RunBundle | ExportFailure> {
  const run = (await store.listRuns()).find((r) => r.runId === runId);
  if (!run) return { ok: false, reason: `no stored run '${runId}'` };
  if (importedOptions(run) !== null)
    return {
      ok: false,
      reason: 'this run was imported from verl rollout dumps: it has no Dewpoint options or weights to bundle',
    };
  const options = run.options as RunOptions;
  const checkpoint = await store.latestCheckpoint(runId);
  if (checkpoint && !('tokenizer.json' in checkpoint.files))
    return {
      ok: false,
      reason: `${options.preset}'s checkpoint is a flow policy's weights, not a language model: there is no Hugging Face folder to bundle`,
    };
  const steps = await storedSteps(store, runId, verlDataSource(options).dataSource);
  const last = steps.at(-1)?.step ?? 0;
  const notes: PreflightResult[] =
    checkpoint && checkpoint.step < last
      ? [
          {
            rule: 'model-step',
            status: 'note',
            detail: `model/ is the run's latest checkpoint, of step ${checkpoint.step}; its rollouts go on to step ${last}`,
          },
        ]
      : [];
  const b = bundleFiles(options, steps, (checkpoint?.files as CheckpointFiles | undefined) ?? null, to, notes);
  return { ok: true, files: b.files, preflight: b.preflight, checkpointStep: checkpoint?.step ?? null };
}
