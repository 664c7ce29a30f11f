/**
 * A person's own models in the worker: a Hugging Face Llama-family folder handed over by the app
 * (each file's bytes, or the File itself), inspected before loading (`inspect`: config.json and
 * the safetensors headers, folder.ts `inspectHfFolder`) and then loaded whole (`use`: folder.ts
 * `loadHfFolder`, checkpoint.ts `checkpointFromHf`) into a Dewpoint checkpoint (checkpoint.ts
 * `checkpointFiles`: F32 model.safetensors, config.json, tokenizer.json, tokenizer_config.json,
 * dewpoint.json) kept in memory under an id, which the run options' `base` names.
 *
 * The id is a hash of the checkpoint less dewpoint.json (weights, config, tokenizer), so picking
 * the same folder again, after a reload, gives the id a stored run names. Nothing is kept from a
 * folder that is refused. Not a downloader, and not persistent: a run keeps its model in its own
 * checkpoints (worker/runs/run-manager.ts).
 */
import type { ModelConfig } from '../model/config';
import type { CheckpointFiles, CheckpointTokenizer } from '../model/checkpoint';
import { HF_MAX_SEQ, checkpointFiles, checkpointFromHf, checkpointTokenizer } from '../model/checkpoint';
import { HfFolderError } from '../model/hf-errors';
import type {
  FileBlob,
  InspectModelResult,
  ModelFolderFile,
  ModelFolderProblem,
  MemoryPlanSummary,
  ModelSummary,
  PickedModel,
  UseModelResult,
} from '../contract/models';
import type { HfFiles } from './files';
import type { HfFolderInspection } from './folder';
import { inspectHfFolder, loadHfFolder } from './folder';
import { trainingMemoryEstimate, wasmDpoPlan, wasmStepPlan } from './memory';
import { loraFromOptions } from '../model/lora';
import type { RunOptions } from '../contract/options';

/** The folder's files as the loader reads them: a Map when every file is bytes, else a reader that slices each File by range. */
function folderFiles(files: readonly ModelFolderFile[]): HfFiles {
  const problems: ModelFolderProblem[] = [];
  const byName = new Map<string, Uint8Array | FileBlob>();
  for (const [i, f] of files.entries()) {
    const name = typeof f?.name === 'string' ? f.name : '';
    if (!name)
      problems.push({
        file: `file ${i + 1}`,
        field: 'name',
        detail: `got ${JSON.stringify(f?.name)}; expected the file's name in the folder`,
      });
    else if (byName.has(name))
      problems.push({ file: name, field: '(file)', detail: 'given twice; expected each file of the folder once' });
    else if (!(f.bytes instanceof Uint8Array) && typeof (f.bytes as FileBlob | undefined)?.slice !== 'function')
      problems.push({ file: name, field: '(file)', detail: "expected the file's bytes or the File itself" });
    else byName.set(name, f.bytes);
  }
  if (problems.length) throw new HfFolderError(problems);
  if ([...byName.values()].every((b) => b instanceof Uint8Array)) return byName as Map<string, Uint8Array>;
  return async (name, range) => {
    const b = byName.get(name);
    if (b === undefined || b instanceof Uint8Array) return b && (range ? b.subarray(range.start, range.end) : b);
    return new Uint8Array(await (range ? b.slice(range.start, range.end) : b.slice()).arrayBuffer());
  };
}

/** The folder's name when the app gives none. */
const DEFAULT_NAME = 'model folder';

function modelSummary(name: string, info: HfFolderInspection): ModelSummary {
  const c = info.config;
  return {
    name,
    architecture: info.architecture,
    parameters: info.parameterCount,
    dtypes: [...info.dtypes],
    config: {
      layers: c.layers,
      dModel: c.dModel,
      heads: c.heads,
      kvHeads: c.kvHeads,
      ffn: c.ffn,
      vocab: c.vocab,
      maxPositions: c.maxSeq,
      tiedEmbeddings: c.tiedEmbeddings,
      ropeTheta: c.ropeTheta,
      normEps: c.normEps,
    },
    trainedWidth: Math.min(c.maxSeq, HF_MAX_SEQ),
    weightFiles: info.weightFiles.map((w) => ({ ...w })),
    index: info.index,
    ignoredTensors: [...info.ignoredTensors],
    notes: [...info.notes],
    training: { ...info.training },
  };
}

/** A refusal as the API answers it: the folder's problems (file and field), or any other error's message. */
function refused(e: unknown): { ok: false; problems: ModelFolderProblem[]; message: string } {
  if (e instanceof HfFolderError) return { ok: false, problems: e.problems.map((p) => ({ ...p })), message: e.message };
  return { ok: false, problems: [], message: (e as Error).message ?? String(e) };
}

/** `hf-` and the first 16 hex digits of SHA-256 over the checkpoint's files but dewpoint.json (which names the folder). */
async function modelId(files: CheckpointFiles): Promise<string> {
  const names = (Object.keys(files) as (keyof CheckpointFiles)[]).filter((n) => n !== 'dewpoint.json').sort();
  const digests = await Promise.all(
    names.map(async (n) => new Uint8Array(await crypto.subtle.digest('SHA-256', files[n] as Uint8Array<ArrayBuffer>))),
  );
  const all = new Uint8Array(digests.length * 32);
  digests.forEach((d, i) => all.set(d, i * 32));
  const hex = Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', all)), (b) =>
    b.toString(16).padStart(2, '0'),
  ).join('');
  return `hf-${hex.slice(0, 16)}`;
}

export class PickedModels {
  private readonly held = new Map<string, { model: PickedModel; files: CheckpointFiles }>();

  /** What the folder holds and what training it costs (`rows` × its trained width, default 1 row); only headers are read. */
  async inspect(
    files: readonly ModelFolderFile[],
    options: { name?: string; rows?: number; plan?: RunOptions } = {},
  ): Promise<InspectModelResult> {
    try {
      const info = await inspectHfFolder(folderFiles(files));
      // At the width a run trains on here: the estimate counts what a run allocates, not the model's own limit.
      const width = Math.min(info.config.maxSeq, HF_MAX_SEQ);
      const training = trainingMemoryEstimate(info.config, options.rows ?? 1, width);
      const summary = modelSummary(options.name || DEFAULT_NAME, { ...info, training });
      const plan = options.plan && planSummary(info.config, options.plan, width);
      return { ok: true, summary: plan ? { ...summary, plan } : summary };
    } catch (e) {
      return refused(e);
    }
  }

  /** Loads the folder whole and keeps it as a checkpoint under its id; a refused folder keeps nothing. */
  async use(files: readonly ModelFolderFile[], options: { name?: string } = {}): Promise<UseModelResult> {
    const name = options.name || DEFAULT_NAME;
    try {
      const loaded = await loadHfFolder(folderFiles(files));
      const base = checkpointFromHf(loaded, name);
      const checkpoint = checkpointFiles(base.config, base.weights, base.tokenizer, base.info);
      const id = await modelId(checkpoint);
      const tok = loaded.tokenizer;
      const model: PickedModel = {
        id,
        name,
        architecture: loaded.info.architecture,
        parameters: loaded.info.parameterCount,
        dtypes: [...loaded.info.dtypes],
        trainedWidth: base.config.maxSeq,
        vocab: base.config.vocab,
        tokenizer: { ...tok.specialTokens, chatTemplate: loaded.chatTemplate !== undefined },
        bytes: Object.values(checkpoint).reduce((n, f) => n + f.byteLength, 0),
      };
      this.held.set(id, { model, files: checkpoint });
      return { ok: true, model };
    } catch (e) {
      return refused(e);
    }
  }

  /** The memory plan of a step of `options` on model `id` (planSummary), or null when not held or without a plan. */
  plan(id: string, options: RunOptions): MemoryPlanSummary | null {
    const files = this.files(id);
    if (!files) return null;
    const { config } = checkpointTokenizer(files);
    return planSummary(config, options, config.maxSeq);
  }

  /** The model `id` when held here, else null. */
  model(id: string): PickedModel | null {
    return this.held.get(id)?.model ?? null;
  }

  /** The checkpoint files of model `id` when held here. */
  files(id: string): CheckpointFiles | undefined {
    return this.held.get(id)?.files;
  }

  /** Model `id`'s tokenizer and trained width (its checkpoint's config; the weights are not decoded), or undefined when not held. */
  tokenizer(id: string): { tokenizer: CheckpointTokenizer; maxSeq: number } | undefined {
    const files = this.files(id);
    if (!files) return undefined;
    const { config, tokenizer } = checkpointTokenizer(files);
    return { tokenizer, maxSeq: config.maxSeq };
  }
}

/**
 * The plan of one step of GRPO/PPO run options (memory.ts `wasmStepPlan`) or DPO's (`wasmDpoPlan`) on
 * wasm, LoRA included, prompts at their longest: the trained width less the new ids; none for other options.
 */
function planSummary(config: ModelConfig, o: RunOptions, width: number): MemoryPlanSummary | null {
  const lora = 'loraRank' in o ? loraFromOptions(o) : undefined;
  const loraPart = lora ? { lora } : {};
  if ('pairs' in o) return wasmDpoPlan(config, { ...o, ...loraPart }, Math.max(1, width - o.maxNew));
  if (!('prompts' in o && 'group' in o && 'maxNew' in o && 'beta' in o)) return null;
  return wasmStepPlan(config, { ...o, ...loraPart }, Math.max(1, width - o.maxNew));
}
