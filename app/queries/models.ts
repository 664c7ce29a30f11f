/** A person's own model (worker/hf/models.ts does the reading): inspect a folder, use it, and whether the worker still holds it. */
import { queryOptions } from '@tanstack/react-query';
import type { InspectModelResult, RunOptions, UseModelResult } from '../../worker/protocol';
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

/** `plan`: the run options whose step's memory plan on wasm the summary then carries (GRPO/PPO options). */
export const inspectModelFolder = (folder: PickedFolder, rows: number, plan: RunOptions): Promise<InspectModelResult> =>
  workbench.inspectModel(filesOf(folder), { ...(folder.name ? { name: folder.name } : {}), rows, plan });

export const loadModelFolder = (folder: PickedFolder): Promise<UseModelResult> =>
  workbench.useModel(filesOf(folder), folder.name ? { name: folder.name } : {});

/** The memory plan on wasm of a step of `options` on the picked model `id` (null: not held, or no plan for these options). */
export const modelPlanQuery = (id: string, options: RunOptions) =>
  queryOptions({ queryKey: keys.modelPlan(id, options), queryFn: () => workbench.modelPlan(id, options) });

/** The picked model `id` when this tab's worker holds it, else null (after a reload). */
export const pickedModelQuery = (id: string) =>
  queryOptions({ queryKey: keys.pickedModel(id), queryFn: () => workbench.pickedModel(id) });
