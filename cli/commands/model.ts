/**
 * `dewpoint model inspect DIR [--rows R] [--seq T] [--prompts P --group G --prompt-ids N --new M
 * --ids-per-pass K --lora-rank R] [--json]`: what a Hugging Face model folder holds before loading it
 * (worker/hf/folder.ts `inspectHfFolder`, which reads config.json and the safetensors headers
 * only): architecture, parameter count, dtypes, the model config, the f32 training memory for a
 * rows × seq batch (default: the SFT batch, 32 × 40) and the memory plan of a GRPO step on wasm
 * (hf/memory.ts `wasmStepPlan`; default 8 prompts × 4, 64 prompt ids, 32 new, the default
 * idsPerPass; with --lora-rank, LoRA on every projection), with whether it fits the wasm memory and, if not, the idsPerPass that would. A
 * folder the loader would refuse ends with exit code 1 and every problem, each naming its file and field.
 */
import { HfFolderError } from '../../worker/model/hf-errors';
import { inspectHfFolder } from '../../worker/hf/folder';
import type { HfFileReader } from '../../worker/hf/files';
import type { HfFolderInspection } from '../../worker/hf/folder';
import { hfDirReader } from '../../worker/hf/node-hf-dir';
import { SFT_ARITH } from '../../worker/train/sft';
import type { MemoryPlan } from '../../worker/hf/memory';
import { gib, wasmStepPlan } from '../../worker/hf/memory';
import { UsageError, bool, num, parseFlags, type CommandSpec } from '../args';

export const MODEL_INSPECT: CommandSpec = {
  name: 'model inspect',
  args: 'DIR',
  summary:
    'a Hugging Face Llama/Mistral folder before loading it (config.json and the safetensors headers only): ' +
    'parameter count, dtypes, config, f32 training memory for a rows × seq batch and the memory plan of a GRPO ' +
    'step on wasm',
  flags: {
    rows: num('R', 'batch rows of the training-memory figure; default the SFT batch'),
    seq: num('T', 'sequence length of the training-memory figure; default the SFT batch'),
    prompts: num('P', 'GRPO step plan: prompts; default 8'),
    group: num('G', 'GRPO step plan: samples per prompt; default 4'),
    'prompt-ids': num('N', 'GRPO step plan: prompt ids; default 64'),
    new: num('M', 'GRPO step plan: new ids per sample; default 32'),
    'ids-per-pass': num('K', "GRPO step plan: ids per forward pass; default the trainer's"),
    'lora-rank': num('R', 'GRPO step plan: LoRA of this rank on every projection'),
    json: bool('print the report as JSON'),
  },
};
const USAGE = 'dewpoint model inspect DIR [flags] (dewpoint model --help lists them)';

export async function modelCommand(argv: string[]): Promise<number> {
  const [sub, dir, ...rest] = argv;
  if (sub !== 'inspect')
    throw new UsageError(
      `dewpoint model: expected the subcommand 'inspect', got ${sub === undefined ? 'nothing' : `'${sub}'`}; usage: ${USAGE}`,
    );
  if (dir === undefined || dir.startsWith('--'))
    throw new UsageError(`dewpoint model inspect: the model folder DIR is required; usage: ${USAGE}`);
  const f = parseFlags(MODEL_INSPECT.name, rest, MODEL_INSPECT.flags);
  const rows = (f.rows as number | undefined) ?? SFT_ARITH.rows;
  const seq = (f.seq as number | undefined) ?? SFT_ARITH.width;
  const step = {
    prompts: (f.prompts as number | undefined) ?? 8,
    group: (f.group as number | undefined) ?? 4,
    promptIds: (f['prompt-ids'] as number | undefined) ?? 64,
    maxNew: (f.new as number | undefined) ?? 32,
  };
  for (const [name, v] of [
    ['rows', rows],
    ['seq', seq],
    ['prompts', step.prompts],
    ['group', step.group],
    ['prompt-ids', step.promptIds],
    ['new', step.maxNew],
    ['ids-per-pass', (f['ids-per-pass'] as number | undefined) ?? 1],
    ['lora-rank', (f['lora-rank'] as number | undefined) ?? 1],
  ] as const) {
    if (!Number.isInteger(v) || v < 1)
      throw new UsageError(`dewpoint model inspect: --${name} must be a positive integer, got ${v}`);
  }
  let reader: HfFileReader;
  try {
    reader = hfDirReader(dir);
  } catch (e) {
    throw new UsageError(`dewpoint model inspect: ${(e as Error).message}`);
  }
  let info: HfFolderInspection;
  try {
    info = await inspectHfFolder(reader, { rows, seq });
  } catch (e) {
    if (!(e instanceof HfFolderError)) throw e;
    if (f.json) process.stdout.write(`${JSON.stringify({ ok: false, dir, problems: e.problems })}\n`);
    process.stderr.write(
      `dewpoint model inspect: cannot load ${dir}:\n${e.problems.map((p) => `  ${p.file}: ${p.field}: ${p.detail}`).join('\n')}\n`,
    );
    return 1;
  }
  const idsPerPass = f['ids-per-pass'] as number | undefined;
  const loraRank = f['lora-rank'] as number | undefined;
  const planned = wasmStepPlan(
    info.config,
    {
      ...step,
      beta: 0,
      ...(idsPerPass ? { idsPerPass } : {}),
      ...(loraRank ? { lora: { rank: loraRank, targetModules: ['all-linear'] } } : {}),
    },
    step.promptIds,
  );
  const { limit: _limit, passIds: _passIds, passLayouts: _layouts, lora: _lora, problem, ...plan } = planned;
  const grpo = {
    ...step,
    ...(loraRank ? { loraRank } : {}),
    ...plan,
    fitsWasm: problem === null,
    ...(problem ? { problem } : {}),
  };
  if (f.json) {
    const { hfConfig: _hf, ...rest } = info;
    process.stdout.write(`${JSON.stringify({ ok: true, dir, ...rest, grpo })}\n`);
  } else process.stdout.write(inspectText(dir, info) + planText(grpo, problem));
  return 0;
}

/** The GRPO step's plan, a line per part, and whether it fits the wasm memory. */
function planText(
  g: { prompts: number; group: number; promptIds: number; maxNew: number; loraRank?: number } & Omit<
    MemoryPlan,
    'passIds' | 'passLayouts' | 'lora'
  >,
  problem: string | null,
): string {
  return [
    `  grpo step   ${gib(g.total)} on wasm for ${g.prompts} prompts × ${g.group}, ${g.promptIds} prompt ids, ${g.maxNew} new, ` +
      `idsPerPass ${g.idsPerPass}${g.loraRank ? `, LoRA rank ${g.loraRank} on every projection` : ''}: ` +
      (problem === null ? 'fits the wasm memory (4 GiB)' : 'does not fit the wasm memory (4 GiB)'),
    ...g.parts.map((p) => `              ${p.part}: ${gib(p.bytes)}`),
    ...(problem ? [`              ${problem}`] : []),
  ]
    .map((l) => `${l}\n`)
    .join('');
}

const MiB = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;

function inspectText(dir: string, info: HfFolderInspection): string {
  const c = info.config;
  const t = info.training;
  const lines = [
    `${dir}: ${info.architecture}`,
    `  parameters  ${info.parameterCount.toLocaleString('en-US')} (${info.dtypes.join(', ')}) in ${info.weightFiles.map((w) => w.file).join(', ')}${info.index ? ` (index ${info.index})` : ''}`,
    `  config      layers ${c.layers}, hidden ${c.dModel}, heads ${c.heads} (kv ${c.kvHeads}), ffn ${c.ffn}, vocab ${c.vocab}, max positions ${c.maxSeq}, tied embeddings ${c.tiedEmbeddings}, rope_theta ${c.ropeTheta}, rms_norm_eps ${c.normEps}`,
    `  training    ${MiB(t.total)} in f32 for a ${t.rows} × ${t.seq} batch: weights ${MiB(t.weights)} + grads ${MiB(t.grads)} + AdamW moments ${MiB(t.adamMoments)} + activations ${MiB(t.activations)}`,
    `              counts ${t.counts}`,
    ...info.ignoredTensors.map((n) => `  ignored     ${n}`),
    ...info.notes.map((n) => `  note        ${n}`),
  ];
  return `${lines.join('\n')}\n`;
}
