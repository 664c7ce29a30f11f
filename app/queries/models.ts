/** A person's own model (worker/hf/models.ts does the reading): inspect a folder, use it, and whether the worker still holds it. */
import { queryOptions } from '@tanstack/react-query';
import type { InspectModelResult, PlanStep, UseModelResult } from '../../worker/protocol';
import { workbench } from '../worker-client';
import { keys } from './keys';

/** A model folder's files as the browser gives them (experiments/model-files.ts reads them from an input or a drop). */
export interface PickedFolder {
  /** The folder's name, when the browser says it. */
  name?: string;
  files: File[];
}

/** Hands the Files themselves to the worker (cloned as references, not read here): inspecting reads only their headers. */
const filesOf = (folder: PickedFolder) => folder.files.map((f) => ({ name: f.name, bytes: f }));

/** `step`: the run options' GRPO/PPO batch, whose memory plan on wasm the summary then carries. */
export const inspectModelFolder = (
  folder: PickedFolder,
  rows: number,
  step: PlanStep | null,
): Promise<InspectModelResult> =>
  workbench.inspectModel(filesOf(folder), {
    ...(folder.name ? { name: folder.name } : {}),
    rows,
    ...(step ? { step } : {}),
  });

export const loadModelFolder = (folder: PickedFolder): Promise<UseModelResult> =>
  workbench.useModel(filesOf(folder), folder.name ? { name: folder.name } : {});

/** The picked model `id` when this tab's worker holds it, else null (after a reload). */
export const pickedModelQuery = (id: string) =>
  queryOptions({ queryKey: keys.pickedModel(id), queryFn: () => workbench.pickedModel(id) });
