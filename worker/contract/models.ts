/**
 * A person's files as the worker reads them: a Hugging Face model folder (inspected, then kept
 * as a picked model) and a prompt dataset, with the problems a bad file is refused with. Types
 * only; part of the contract protocol.ts re-exports.
 */
import type { DatasetRunOptions, EnvProgramRunOptions } from './options';

/** One file of a model folder as the app hands it over: its plain name and its bytes, or the File itself (read by ranges). */
export interface ModelFolderFile {
  name: string;
  bytes: Uint8Array | FileBlob;
}

/** What the worker reads of a File or Blob (this file compiles without the DOM lib; a File is one). */
export interface FileBlob {
  readonly size: number;
  slice(start?: number, end?: number): { arrayBuffer(): Promise<ArrayBuffer> };
}

/** What is wrong with a model folder: the file, the field (a config.json key, `tensor 'name'`, `header`, `(file)`) and what was expected. */
export interface ModelFolderProblem {
  file: string;
  field: string;
  detail: string;
}

/** A model folder as inspected (worker/hf/folder.ts `HfFolderInspection`, for the app). */
export interface ModelSummary {
  /** The folder's name. */
  name: string;
  architecture: string;
  parameters: number;
  /** Dtypes of the tensors as stored (loading converts them to F32). */
  dtypes: string[];
  config: {
    layers: number;
    dModel: number;
    heads: number;
    kvHeads: number;
    ffn: number;
    vocab: number;
    maxPositions: number;
    tiedEmbeddings: boolean;
    ropeTheta: number;
    normEps: number;
  };
  /** The longest sequence a run trains on here (max_position_embeddings capped at 256). */
  trainedWidth: number;
  weightFiles: { file: string; bytes: number; tensors: number }[];
  index: string | null;
  /** Tensors the files hold that the model ignores, as transformers does. */
  ignoredTensors: string[];
  /** What was assumed for absent config fields. */
  notes: string[];
  /** f32 training memory for a rows × seq batch, in bytes, and what it counts (worker/hf/memory.ts). */
  training: {
    rows: number;
    seq: number;
    parameters: number;
    weights: number;
    grads: number;
    adamMoments: number;
    activations: number;
    total: number;
    counts: string;
  };
  /**
   * The memory plan of one step of the run options `inspectModel` was given (GRPO/PPO) on wasm
   * (worker/hf/memory.ts `wasmStepPlan`), prompts counted at their longest (the trained width less
   * the new ids): each part, the total, the wasm memory, and why it does not fit (null when it does).
   */
  plan?: MemoryPlanSummary;
}

/** A step's memory plan on wasm, as inspectModel reports it. */
export interface MemoryPlanSummary {
  parts: { part: string; bytes: number }[];
  total: number;
  /** The idsPerPass one training pass's activations are counted for, and the ids such a pass holds. */
  idsPerPass: number;
  passIds: number;
  limit: number;
  problem: string | null;
  /**
   * The step's largest single tensor, its allocation label and bytes: on WebGPU every tensor is a GPU
   * buffer of its own (not in the wasm heap), which the adapter bounds by maxStorageBufferBindingSize.
   */
  largestBuffer: { label: string; bytes: number };
}

export type InspectModelResult =
  { ok: true; summary: ModelSummary } | { ok: false; problems: ModelFolderProblem[]; message: string };

/** A model `useModel` keeps in the worker: what the run options' `base` names, and what the app shows of it. */
export interface PickedModel {
  id: string;
  name: string;
  architecture: string;
  parameters: number;
  dtypes: string[];
  trainedWidth: number;
  vocab: number;
  /** The tokenizer's special tokens and whether it has a chat template. */
  tokenizer: { bos: string; eos: string; pad: string; chatTemplate: boolean };
  /** Bytes of the F32 checkpoint the worker holds. */
  bytes: number;
}

export type UseModelResult =
  { ok: true; model: PickedModel } | { ok: false; problems: ModelFolderProblem[]; message: string };

/**
 * Where a file a person gave is bad (a dataset, a verl dump): the file, its line (JSONL) or row
 * (parquet), the field and what was expected.
 */
export interface FileProblem {
  file: string;
  /** 1-based; null for a problem with the whole file. */
  line: number | null;
  unit: 'line' | 'row';
  /** null for a line that is not a JSON object, or a file that cannot be read. */
  field: string | null;
  expected: string;
  got?: string;
}

/** What `loadDataset` read: the dataset for the run options, or the first problem (and nothing loaded). */
export type DatasetLoadResult =
  { ok: true; dataset: DatasetRunOptions } | { ok: false; problem: FileProblem; message: string };

/**
 * What `loadEnvironment` read: the program and its tasks for the run options (`environment`), or
 * the first problem with either file (and nothing loaded).
 */
export type EnvironmentLoadResult =
  { ok: true; environment: EnvProgramRunOptions } | { ok: false; problem: FileProblem; message: string };

/**
 * `previewEnvironment`: the first task's reset and one step, run in a companion session before a run
 * starts (the app's Preview, `dewpoint env check`): the first model context as ids and as text, the
 * base's greedy first action, and the program's reply to it (its status, the ids it appended, its
 * detail), with what it wrote to stderr; or why it failed, in the words a run would use (no
 * companion, the program's failure and the end of its stderr).
 */
export type EnvironmentPreview =
  | {
      ok: true;
      task: { id: string; prompt: string };
      context: number[];
      text: string;
      /** The base's greedy first action, as the program received it (EOS excluded). */
      action: string;
      /**
       * The program's reply to it: its status (`not sent`: the action ran out of ids before EOS, so no
       * step was sent), the text it appended (or the new context), its detail, and the episode's reward.
       */
      reply: {
        status: 'running' | 'done' | 'not sent';
        text: string;
        detail: string;
        reward: number | null;
        /** All of it in one sentence ("the program answered running, appending \"=82\" (…)"), as the app and the CLI show it. */
        said: string;
      };
      stderr: string;
      ms: number;
    }
  | { ok: false; message: string; stderr?: string };
