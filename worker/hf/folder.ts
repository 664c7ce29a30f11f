/**
 * A Hugging Face Llama-family model folder: `config.json`, `model.safetensors` or shards with
 * `model.safetensors.index.json`, `tokenizer.json`, optional `tokenizer_config.json` (with an
 * optional `chat_template`, or a `chat_template.jinja` file), optional `generation_config.json`.
 *
 * `inspectHfFolder` reads config.json and the safetensors headers only (not the tensor data) and
 * says what loading would give and cost: parameter count, dtypes, the ModelConfig, and the f32
 * training memory (memory.ts says what it counts). `loadHfFolder` checks everything (config,
 * headers, tensors against paramSpecs(config), tokenizer, chat template) before reading any
 * tensor data and returns all or nothing, like worker/model/checkpoint.ts `importCheckpoint`.
 * Every refusal is one HfFolderError listing each problem with its file and field.
 *
 * Tensors the model does not use are refused and listed, except what transformers also ignores:
 * `rotary_emb.inv_freq` buffers (derived from rope_theta) and, with tie_word_embeddings, an
 * `lm_head.weight` equal to the embedding. Not a downloader, and not the app's folder picker.
 */
import type { ModelConfig } from '../model/config';
import { headSize } from '../model/config';
import type { HfProblem } from '../model/hf-errors';
import { HfFolderError, asFolderError } from '../model/hf-errors';
import type { HfTokenizer } from '../model/hf-tokenizer';
import { hfTokenizer } from '../model/hf-tokenizer';
import { numel, paramSpecs } from '../model/params';
import type { SafetensorsDtype } from '../model/safetensors';
import { decodeTensor, readSafetensorsHeader } from '../model/safetensors';
import { parseChatTemplate, selectChatTemplate } from './chat-template';
import type { HfArchitecture } from './config';
import { mapHfConfig } from './config';
import type { FolderReader, HfFiles } from './files';
import { folderReader, readJsonFile } from './files';
import type { TrainingMemoryEstimate } from './memory';
import { trainingMemoryEstimate } from './memory';
import type { WeightHeaders } from './weights';
import { readWeightHeaders } from './weights';

interface HfWeightFile {
  file: string;
  /** Bytes of the file (header and data). */
  bytes: number;
  tensors: number;
}

export interface HfFolderInspection {
  config: ModelConfig;
  architecture: HfArchitecture;
  /** config.json as read. */
  hfConfig: Record<string, unknown>;
  /** The safetensors files read, in order, and the index when sharded. */
  weightFiles: HfWeightFile[];
  index: string | null;
  /** Sum of the sizes of the tensors the model uses (equals paramSpecs' count for the config). */
  parameterCount: number;
  /** Dtypes of those tensors as stored (converted to F32 on load). */
  dtypes: SafetensorsDtype[];
  /** Tensors in the files that the model ignores, as transformers does (see the module comment). */
  ignoredTensors: string[];
  /** What was assumed for absent config fields. */
  notes: string[];
  training: TrainingMemoryEstimate;
}

interface HfFolderOptions {
  /** The training batch the memory estimate counts: rows × seq ids. Default 1 × max_position_embeddings. */
  rows?: number;
  seq?: number;
}

interface LoadedHfFolder {
  config: ModelConfig;
  /** Every paramSpecs(config) tensor by Hugging Face name, as F32. */
  weights: Map<string, Float32Array>;
  tokenizer: HfTokenizer;
  /** The tokenizer's chat template, when it has one (render with chat-template.ts `applyChatTemplate`). */
  chatTemplate?: string;
  info: HfFolderInspection & {
    tokenizerConfig?: Record<string, unknown>;
    generationConfig?: Record<string, unknown>;
  };
}

const CONFIG = 'config.json';
const INV_FREQ = /^model\.layers\.\d+\.self_attn\.rotary_emb\.inv_freq$/;

export async function inspectHfFolder(files: HfFiles, options: HfFolderOptions = {}): Promise<HfFolderInspection> {
  return (await inspect(folderReader(files), options)).inspection;
}

async function inspect(
  reader: FolderReader,
  options: HfFolderOptions,
): Promise<{ inspection: HfFolderInspection; weights: WeightHeaders }> {
  const hfConfig = await readJsonFile(reader, CONFIG);
  if (hfConfig === undefined)
    throw new HfFolderError({
      file: CONFIG,
      field: '(file)',
      detail: 'absent; expected the model configuration (LlamaForCausalLM)',
    });
  const { config, architecture, notes } = mapHfConfig(hfConfig, CONFIG);
  const weights = await readWeightHeaders(reader);
  const problems: HfProblem[] = [];
  const missingFile = weights.index ?? weights.files[0];
  const specs = paramSpecs(config);
  const wanted = new Set(specs.map((s) => s.name));
  const dtypes = new Set<SafetensorsDtype>();
  let parameterCount = 0;
  for (const s of specs) {
    const found = weights.tensors.get(s.name);
    if (!found) {
      problems.push({
        file: missingFile,
        field: `tensor '${s.name}'`,
        detail: `missing; ${CONFIG} implies shape [${s.shape}] (${impliedBy(s.name, config)})${s.name === 'lm_head.weight' ? ' because tie_word_embeddings is false' : ''}`,
      });
    } else if (found.entry.shape.join(',') !== s.shape.join(',')) {
      problems.push({
        file: found.file,
        field: `tensor '${s.name}'`,
        detail: `shape [${found.entry.shape}], but ${CONFIG} implies [${s.shape}] (${impliedBy(s.name, config)})`,
      });
    } else {
      dtypes.add(found.entry.dtype);
      parameterCount += numel(s.shape);
    }
  }
  const ignoredTensors: string[] = [];
  const extra = new Map<string, string[]>();
  const embed = weights.tensors.get('model.embed_tokens.weight');
  for (const [name, found] of weights.tensors) {
    if (wanted.has(name)) continue;
    const tiedCopy =
      name === 'lm_head.weight' &&
      config.tiedEmbeddings &&
      embed !== undefined &&
      found.entry.shape.join(',') === embed.entry.shape.join(',');
    if (INV_FREQ.test(name) || tiedCopy) ignoredTensors.push(name);
    else extra.set(found.file, [...(extra.get(found.file) ?? []), name]);
  }
  for (const [file, names] of extra) {
    const listed =
      names
        .slice(0, 40)
        .map((n) => `'${n}'`)
        .join(', ') + (names.length > 40 ? `, and ${names.length - 40} more` : '');
    const tied = names.includes('lm_head.weight')
      ? " (lm_head.weight with tie_word_embeddings true must have the embedding's shape)"
      : '';
    problems.push({
      file,
      field: 'tensors',
      detail:
        `${names.length} unexpected tensor${names.length === 1 ? '' : 's'}: ${listed}; expected only the ` +
        `${architecture} tensors ${CONFIG} implies${tied}`,
    });
  }
  if (problems.length) throw new HfFolderError(problems);
  const rows = options.rows ?? 1;
  const seq = options.seq ?? config.maxSeq;
  const inspection: HfFolderInspection = {
    config,
    architecture,
    hfConfig,
    weightFiles: weights.files.map((file) => {
      const h = weights.headers.get(file)!;
      return { file, bytes: h.dataStart + h.dataBytes, tensors: h.tensors.length };
    }),
    index: weights.index,
    parameterCount,
    dtypes: [...dtypes].sort(),
    ignoredTensors,
    notes,
    training: trainingMemoryEstimate(config, rows, seq),
  };
  return { inspection, weights };
}

export async function loadHfFolder(files: HfFiles, options: HfFolderOptions = {}): Promise<LoadedHfFolder> {
  const reader = folderReader(files);
  const { inspection, weights } = await inspect(reader, options);
  const { config } = inspection;

  const tokenizerJson = await readJsonFile(reader, 'tokenizer.json');
  if (tokenizerJson === undefined)
    throw new HfFolderError({
      file: 'tokenizer.json',
      field: '(file)',
      detail: 'absent; expected the Hugging Face tokenizer (tokenizers library format)',
    });
  const tokenizerConfig = await readJsonFile(reader, 'tokenizer_config.json');
  const generationConfig = await readJsonFile(reader, 'generation_config.json');
  const chatTemplate = await readChatTemplate(reader, tokenizerConfig);
  // A chat_template.jinja file's template rides in the tokenizer's config, as transformers reads it, so checkpoints keep it.
  const tokenizer = hfTokenizer({
    tokenizerJson,
    tokenizerConfig:
      chatTemplate !== undefined && tokenizerConfig?.chat_template === undefined
        ? { ...tokenizerConfig, chat_template: chatTemplate }
        : tokenizerConfig,
    config: inspection.hfConfig,
    generationConfig,
    vocabSize: config.vocab,
  });

  // Everything is checked; now the data, one file at a time (its bytes are dropped after).
  const out = new Map<string, Float32Array>();
  let tiedHead: { file: string; values: Float32Array } | null = null;
  for (const file of weights.files) {
    const bytes = await reader.file(file);
    if (bytes === undefined)
      throw new HfFolderError({ file, field: '(file)', detail: 'disappeared between reading its header and its data' });
    const header = await asFolderError(async () => readSafetensorsHeader(bytes, file));
    const before = weights.headers.get(file)!;
    if (header.dataBytes !== before.dataBytes || header.tensors.length !== before.tensors.length) {
      throw new HfFolderError({
        file,
        field: 'header',
        detail: 'changed between inspecting and loading the folder; expected the same file',
      });
    }
    for (const entry of header.tensors) {
      if (entry.name === 'lm_head.weight' && config.tiedEmbeddings)
        tiedHead = { file, values: decodeTensor(bytes, header, entry) };
      else if (!INV_FREQ.test(entry.name)) out.set(entry.name, decodeTensor(bytes, header, entry));
    }
    reader.release(file);
  }
  if (tiedHead) checkTiedCopy(tiedHead, out.get('model.embed_tokens.weight')!);
  const ordered = new Map(paramSpecs(config).map((s) => [s.name, out.get(s.name)!]));
  return {
    config,
    weights: ordered,
    tokenizer,
    ...(chatTemplate === undefined ? {} : { chatTemplate }),
    info: { ...inspection, ...(tokenizerConfig && { tokenizerConfig }), ...(generationConfig && { generationConfig }) },
  };
}

/** With tie_word_embeddings, a stored lm_head.weight must equal the embedding (else the config contradicts the weights). */
function checkTiedCopy(head: { file: string; values: Float32Array }, embed: Float32Array): void {
  const first = head.values.findIndex((v, i) => !Object.is(v, embed[i]));
  if (first < 0) return;
  throw new HfFolderError({
    file: CONFIG,
    field: 'tie_word_embeddings',
    detail:
      `true, but ${head.file} holds an lm_head.weight that differs from model.embed_tokens.weight (first ` +
      `at index ${first}: ${head.values[first]} vs ${embed[first]}); expected tie_word_embeddings false, ` +
      `or no lm_head.weight`,
  });
}

async function readChatTemplate(
  reader: FolderReader,
  tokenizerConfig: Record<string, unknown> | undefined,
): Promise<string | undefined> {
  const selected = selectChatTemplate(tokenizerConfig?.chat_template);
  if (!selected.ok)
    throw new HfFolderError({ file: 'tokenizer_config.json', field: 'chat_template', detail: selected.reason });
  let template = selected.template;
  let source = { file: 'tokenizer_config.json', field: 'chat_template' };
  if (template === undefined) {
    const bytes = await reader.file('chat_template.jinja');
    if (bytes === undefined) return undefined;
    template = new TextDecoder().decode(bytes);
    source = { file: 'chat_template.jinja', field: '(file)' };
  }
  try {
    parseChatTemplate(template);
  } catch (e) {
    throw new HfFolderError(
      { ...source, detail: `not a template @huggingface/jinja can parse: ${(e as Error).message}` },
      { cause: e },
    );
  }
  return template;
}

/** The config.json fields that give a parameter's shape, with their values. */
function impliedBy(name: string, c: ModelConfig): string {
  const hs = headSize(c);
  const dims: [RegExp, string][] = [
    [/embed_tokens|lm_head/, `vocab_size ${c.vocab} × hidden_size ${c.dModel}`],
    [/q_proj/, `num_attention_heads ${c.heads} · head_dim ${hs} × hidden_size ${c.dModel}`],
    [/[kv]_proj/, `num_key_value_heads ${c.kvHeads} · head_dim ${hs} × hidden_size ${c.dModel}`],
    [/o_proj/, `hidden_size ${c.dModel} × num_attention_heads ${c.heads} · head_dim ${hs}`],
    [/gate_proj|up_proj/, `intermediate_size ${c.ffn} × hidden_size ${c.dModel}`],
    [/down_proj/, `hidden_size ${c.dModel} × intermediate_size ${c.ffn}`],
    [/norm/, `hidden_size ${c.dModel}`],
  ];
  return dims.find(([re]) => re.test(name))?.[1] ?? 'paramSpecs';
}
