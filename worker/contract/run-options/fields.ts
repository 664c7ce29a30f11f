/**
 * The building blocks of the run options' schemas (zod), shared by the families' schemas beside
 * this file: the field helpers with their form metadata (label, section, help), the options every
 * preset has, the optimizer, memory and LoRA options, sampling, and a person's dataset and model.
 * A field's range, label and help are declared here once; its type is the schema's
 * (`z.output`), the form's field is derived from it (worker/presets/fields.ts).
 */
import { z } from 'zod';

/** The form's sections, in the order it shows them. */
export const FIELD_SECTIONS = [
  'Objective',
  'Advantage',
  'KL',
  'Corrections',
  'Mismatch lab',
  'Sampling',
  'Optimizer',
  'Run',
] as const;

export type FieldSection = (typeof FIELD_SECTIONS)[number];

/** The projections LoRA adapts, as the form offers them (PEFT target_modules; all-linear: all seven). */
export const LORA_TARGET_CHOICES = [
  'all-linear',
  'q_proj,v_proj',
  'q_proj,k_proj,v_proj,o_proj',
  'gate_proj,up_proj,down_proj',
] as const;
export type LoraTargetsChoice = (typeof LORA_TARGET_CHOICES)[number];

/** How a model's weights are held (model.ts `storage`): f32, or the layer matrices as bf16. */
export const WEIGHT_STORAGES = ['f32', 'bf16'] as const;
export type WeightStorage = (typeof WEIGHT_STORAGES)[number];

/**
 * Form metadata on a schema: label, section, help; `initial` is filled in when a variant's required
 * option appears; `common` puts the field in the form's always-open first section (the options a
 * person changes on most runs), before the sections.
 */
export interface FieldMeta {
  title: string;
  section: FieldSection;
  description: string;
  initial?: number | string | boolean;
  common?: boolean;
}

/**
 * A number in an interval written as problems state it: `'(0, 0.1]'`, `'[0, 1)'`. Finite only
 * (zod refuses NaN and ±Infinity), so an option meaning "no bound" is left out instead.
 */
export function num(interval: string, meta: FieldMeta) {
  const m = /^([[(])\s*(-?[\d.e+-]+),\s*(-?[\d.e+-]+)\s*([\])])$/.exec(interval);
  if (!m) throw new Error(`num: interval '${interval}' is not like '(0, 1]'`);
  const [lo, hi] = [Number(m[2]), Number(m[3])];
  let s = z.number();
  s = m[1] === '(' ? s.gt(lo) : s.gte(lo);
  s = m[4] === ')' ? s.lt(hi) : s.lte(hi);
  return s.meta({ ...meta });
}

/** An integer in `lo..hi` (both included). */
export function int(lo: number, hi: number, meta: FieldMeta) {
  return z
    .int()
    .min(lo)
    .max(hi)
    .meta({ ...meta });
}

export const COMPAT = ['verl', 'trl', 'rllm'] as const;

/**
 * A run's preset by name. A schema here is an options shape several presets may share; the preset
 * table (worker/presets/table.ts) pins each preset's schema to its name, so a new preset of an
 * existing shape is one table entry and the names are listed there alone.
 */
export const presetName = z.string();

// Run: the options every preset has.
export const run = {
  steps: int(1, 5000, {
    title: 'Steps',
    section: 'Run',
    description: 'Optimizer steps (for GRPO: sampled batches).',
    common: true,
  }),
  seed: int(0, 2 ** 31 - 1, {
    title: 'Seed',
    section: 'Run',
    description: 'Seed of the weight init or the samplers, and of the task order.',
    common: true,
  }),
  evalEvery: int(0, 5000, {
    title: 'Evaluate every',
    section: 'Run',
    description: 'Steps between held-out evaluations; 0 = never.',
  }),
  evalN: int(1, 1000, {
    title: 'Held-out tasks',
    section: 'Run',
    description: 'Greedy exact match on this many held-out tasks.',
  }),
  checkpointEvery: int(0, 5000, {
    title: 'Checkpoint every',
    section: 'Run',
    description: 'Steps between checkpoints; 0 = at the end only. The latest is kept for download.',
  }),
};

export const lr = num('(0, 0.1]', {
  title: 'Learning rate',
  section: 'Optimizer',
  description: 'AdamW learning rate (SFT: the peak, after warmup).',
  common: true,
});

export const optimizer = {
  beta1: num('[0, 1)', { title: 'Adam β1', section: 'Optimizer', description: 'First-moment decay.' }),
  beta2: num('[0, 1)', { title: 'Adam β2', section: 'Optimizer', description: 'Second-moment decay.' }),
  eps: num('(0, 0.001]', {
    title: 'Adam ε',
    section: 'Optimizer',
    description: 'Added to the root of the second moment.',
  }),
  weightDecay: num('[0, 1]', {
    title: 'Weight decay',
    section: 'Optimizer',
    description: 'Decoupled (AdamW), on matrices only.',
  }),
  maxGradNorm: num('(0, 1000000]', {
    title: 'Max grad norm',
    section: 'Optimizer',
    description: 'Global gradient-norm clip (a large value: none).',
  }),
};

/** Micro-batches, shared by GRPO, PPO and DPO. */
export const idsPerPass = int(1, 1_000_000, {
  title: 'Ids per pass (micro-batch)',
  section: 'Objective',
  description:
    'Ids one forward/backward pass holds activations for (verl ppo_max_token_len_per_gpu): a batch of more ' +
    "trains in passes, each pass's forward run again for its backward, the gradients summed; the activations " +
    'then scale with this, not with the batch. Empty: what fits a 1 GiB budget (the whole batch of a small model).',
}).optional();

/** Per-layer activation recomputation, shared by GRPO, PPO and DPO. */
export const recomputeLayers = z
  .boolean()
  .optional()
  .meta({
    title: 'Recompute layers',
    section: 'Objective',
    description:
      "Keep each layer's input alone and run the layer's forward again just before its backward (gradient " +
      'checkpointing): about one layer of activations instead of all, for one more forward; the same numbers. ' +
      'Empty: on for models of 100M parameters or more.',
  });

/** bf16 storage of the weights no step changes, shared by GRPO, PPO and DPO. */
export const frozenWeights = z
  .enum(WEIGHT_STORAGES)
  .optional()
  .meta({
    title: 'Frozen weights',
    section: 'Objective',
    description:
      "How the weights no step changes are held: the reference policy's (full fine-tuning, KL β > 0) or, under " +
      "LoRA, the base's. bf16: the layers' matrices in half the memory, rounded to bf16 (a LoRA run then trains " +
      'on the rounded base) and widened layer by layer for each use. Empty: f32.',
  });

/** LoRA instead of full fine-tuning (worker/model/lora.ts), shared by GRPO, PPO and DPO. */
export const lora = {
  loraRank: int(1, 256, {
    title: 'LoRA rank',
    section: 'Optimizer',
    description:
      'Train LoRA adapters of this rank (PEFT r) on the frozen base instead of every weight: AdamW state for the ' +
      'adapters alone, and the base itself is the reference (scored with the adapters off). Empty: full fine-tuning.',
  }).optional(),
  loraAlpha: num('(0, 4096]', {
    title: 'LoRA alpha',
    section: 'Optimizer',
    description:
      "The adapters' scaling is alpha / rank (PEFT lora_alpha). Read only with a rank. Empty: the rank (scaling 1).",
  }).optional(),
  loraTargets: z
    .enum(LORA_TARGET_CHOICES)
    .optional()
    .meta({
      title: 'LoRA targets',
      section: 'Optimizer',
      description:
        'The projections adapted, by their Hugging Face names (PEFT target_modules; all-linear: q, k, v, o, gate, ' +
        'up and down). Read only with a rank. Empty: all-linear.',
    }),
  loraDropout: num('[0, 1)', {
    title: 'LoRA dropout',
    section: 'Optimizer',
    description:
      "Dropout on each adapter's input in the updates' forwards (PEFT lora_dropout), a seeded mask per layer and " +
      'projection; scoring, old log-probs and sampling run without it. Read only with a rank. Empty: 0.',
  }).optional(),
};

// Sampling shared by GRPO and DPO; the base model has 64 positions and prompts take ~7.
export const temperature = num('(0, 10]', {
  title: 'Temperature',
  section: 'Sampling',
  description: 'Sampling temperature of the behavior policy.',
});
/** The most new ids on the shipped base (64 positions; a prompt takes about 7); a person's model allows up to 1024. */
export const SHIPPED_MAX_NEW = 48;
export const maxNew = int(1, 1024, {
  title: 'Max new tokens',
  section: 'Sampling',
  description:
    `Completion length limit: at most ${SHIPPED_MAX_NEW} on the shipped base (64 positions; a prompt takes about 7); ` +
    'up to 1024 on a model of your own, the prompt and the completion within its positions (trained here on up to 1024).',
});

/** maxNew past what the shipped base holds, without a model of one's own. */
export function maxNewRefine(o: { maxNew: number; base?: unknown }, ctx: z.RefinementCtx): void {
  if (o.base === undefined && o.maxNew > SHIPPED_MAX_NEW)
    ctx.addIssue({
      code: 'custom',
      path: ['maxNew'],
      message: `must be at most ${SHIPPED_MAX_NEW} on the shipped base (64 positions), got ${o.maxNew}; up to 1024 with a model of your own`,
    });
}

/**
 * A person's prompt dataset and its reward (protocol.ts `DatasetRunOptions`): set from a file
 * (`loadDataset`, worker/data/dataset.ts checks it line by line), never a form input (`file`
 * keeps it out of the form fields). Its checks across fields are `datasetRefine`.
 */
export const dataset = z
  .strictObject(
    {
      name: z.string({ error: 'must be the file name' }).min(1, { error: 'must be the file name' }),
      format: z.enum(['jsonl', 'parquet']),
      records: z
        .array(
          z.strictObject({
            prompt: z.string({ error: 'must be the prompt text' }).min(1, { error: 'must be the prompt text' }),
            answer: z
              .string({ error: 'must be the ground truth as text' })
              .min(1, { error: 'must be the ground truth as text' }),
            messages: z
              .array(z.strictObject({ role: z.string(), content: z.string() }), {
                error: 'must be the chat turns as given, a list of {role, content}',
              })
              .optional(),
            metadata: z.record(z.string(), z.unknown()).optional(),
          }),
          { error: 'must be a list of {prompt, answer, metadata?} records' },
        )
        .min(1, { error: 'must hold at least one record' })
        .max(100_000, { error: 'must hold at most 100000 records' }),
      heldOut: z
        .int({ error: 'must be an integer count of held-out records' })
        .min(0, { error: 'must be an integer count of held-out records' }),
      reward: z.strictObject(
        {
          kind: z.enum(['math', 'exact', 'regex', 'code']),
          pattern: z.string({ error: 'must be a regular expression' }).optional(),
        },
        { error: 'must be {kind, pattern?}' },
      ),
    },
    { error: 'must be a dataset {name, format, records, heldOut, reward} (loadDataset reads one from a file)' },
  )
  .optional()
  .meta({
    title: 'Dataset',
    description: 'A prompt dataset file (JSONL or parquet) and its reward, instead of the arithmetic generator.',
    file: true,
  });

/**
 * A person's own model as the run's base (protocol.ts `BaseModelRunOptions`): set by the app's
 * model picker (`useModel` keeps the folder in the worker), never a form input (`file`).
 */
export const base = z
  .strictObject(
    {
      kind: z.literal('hf'),
      id: z
        .string({ error: "must be useModel's model id" })
        .regex(/^hf-[0-9a-f]{16}$/, { error: "must be useModel's model id (hf- and 16 hex digits)" }),
      name: z
        .string({ error: "must be the model folder's name" })
        .min(1, { error: "must be the model folder's name" })
        .max(200, { error: "must be the model folder's name (at most 200 characters)" }),
      parameters: z
        .int({ error: 'must be the parameter count, a positive integer' })
        .min(1, { error: 'must be the parameter count, a positive integer' }),
    },
    {
      error:
        "must be a picked model {kind: 'hf', id, name, parameters} (useModel gives one), or absent for the shipped base",
    },
  )
  .optional()
  .meta({
    title: 'Base model',
    description: "A person's Hugging Face Llama-family model instead of the shipped arithmetic base.",
    file: true,
  });

/** A person's dataset carried in the run options (so a stored run continues after a reload): `loadDataset` makes it from a file. */
export type DatasetRunOptions = NonNullable<z.output<typeof dataset>>;
/** How a dataset's completions are scored (worker/rewards/dataset-reward.ts). */
export type DatasetRewardOptions = DatasetRunOptions['reward'];
/** One prompt of a dataset, as loaded. */
export type DatasetRecord = DatasetRunOptions['records'][number];
/** A run's base when it is not the shipped one: a Hugging Face folder picked in the app (`useModel`). */
export type BaseModelRunOptions = NonNullable<z.output<typeof base>>;
