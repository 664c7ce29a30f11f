/**
 * Imports verl rollout dumps as one Dewpoint run. What verl writes (verl-project/verl @ 1dda039,
 * verl/trainer/ppo/ray_trainer.py `_log_rollout_data` → `_dump_generations` →
 * `_write_generations`, the same in verl/trainer/ppo/v1/trainer_base.py): with
 * `trainer.rollout_data_dir` set, after each step's update one file `{global_steps}.jsonl`, one
 * JSON object per line, a line per sample of the batch:
 *
 *   input   the decoded prompt (`tokenizer.batch_decode(batch.batch["prompts"], skip_special_tokens=True)`)
 *   output  the decoded response
 *   gts     `reward_model.ground_truth` of the sample's row (any JSON value, often a string; null when absent)
 *   score   `token_level_scores.sum(-1)` (the v1 trainer: `rm_scores.sum(dim=1)`)
 *   step    `global_steps`, the same on every line (verl counts from 1)
 *   …       every key of `reward_extra_infos_dict` holding one value per sample (e.g. `acc`);
 *           the legacy trainer adds `request_id` when the batch has one; the v1 trainer writes
 *           only `uid`, its TransferQueue key `{uid}_{session_id}_{index}` (agent_loop_tq.py), sorted by it.
 *
 * Nothing else: no token ids, log-probs or advantages, unless a dump was extended (or written by
 * Dewpoint's own export, worker/interop/rollouts.ts). A parquet file with the same columns (one row
 * a sample, read with hyparquet) imports the same way. The optional columns and what each one
 * lets a view draw are `VERL_COLUMNS`; `missing` lists, for a dump, the absent ones and what each
 * view cannot draw without them.
 *
 * Validation reads every file before anything is stored and reports the first bad line (file,
 * line or row, field, what was expected); `importVerlRun` then writes the run, and deletes it again
 * if a write fails, so nothing is ever half-imported. The records themselves are verl-records.ts.
 */
import { parquetReadObjects } from 'hyparquet';
import { jsonlRows, utf8Text } from '../data/jsonl';
import type { FileProblem } from '../contract/models';
import type { RunOptions } from '../contract/options';
import type { ImportMissing, ImportedRunOptions, VerlImportResult } from '../contract/records';
import type { RunRecord, RunStore } from '../store/run-store';
import { MAX_BATCH_IDS, stepRecords, type VerlRow } from './verl-records';

/** Where the format was read. */
const VERL_FORMAT =
  'verl-project/verl @ 1dda039: verl/trainer/ppo/ray_trainer.py _log_rollout_data / _dump_generations (rollout_data_dir/{step}.jsonl)';

/** The columns verl always writes. */
const REQUIRED_COLUMNS = ['input', 'output', 'score', 'step'] as const;

/**
 * The optional columns: what each enables, and what each view cannot draw without it. verl writes
 * `gts` always, `uid` in its v1 trainer; the rest only when a dump is extended with the batch's
 * tensors (DataProto `prompts`/`responses` ids, `response_mask`, `rollout_log_probs`,
 * `old_log_probs`, `advantages`, `token_level_scores`) or written by Dewpoint's export.
 *
 * | field              | enables |
 * |--------------------|---------|
 * | gts                | the ground truth beside each group |
 * | uid                | groups exactly as verl's estimator grouped them (else: identical `input` within a step) |
 * | advantages         | each sample's advantage as verl computed it (else: recomputed, marked so) |
 * | response_ids       | lengths, the session inspector's ids, the Batch view (verl's rows), Replay's action ids |
 * | prompt_ids         | the prompt's ids in the session inspector and the Batch rows |
 * | response_mask      | which response ids the loss read (multi-turn: environment tokens are 0) |
 * | rollout_log_probs  | behavior log-probs per sampled id (the sampler's, vLLM/SGLang) |
 * | old_log_probs      | raw log-probs (the trainer's recomputation) and, with rollout_log_probs, the mismatch layer |
 * | finish_reason      | completed or truncated (`stop` / `length`) |
 * | token_level_scores | a check: its sum must equal `score` |
 * | param_version_start| the policy version that served the sample (verl's fully async trainer; Dewpoint's export), else step − 1 |
 */
const VERL_COLUMNS: Record<string, { enables: string; missing: Omit<ImportMissing, 'field'>[] }> = {
  gts: {
    enables: 'the ground truth beside each group',
    missing: [
      { view: 'Groups', cannot: 'no ground truth beside the groups (verl writes gts from reward_model.ground_truth)' },
    ],
  },
  uid: {
    enables: "groups exactly as verl's estimator grouped them",
    missing: [
      {
        view: 'Groups',
        cannot:
          "groups are identical inputs within a step, not verl's uid groups (verl's v1 trainer writes uid; the legacy trainer does not)",
      },
    ],
  },
  advantages: {
    enables: "each sample's advantage as verl computed it",
    missing: [
      {
        view: 'Groups',
        cannot:
          "verl's own advantages: the ones shown are recomputed by Dewpoint's GRPO estimator with verl's defaults (verl dumps no advantages)",
      },
    ],
  },
  response_ids: {
    enables: "lengths, the session inspector's ids, the Batch view, Replay's action ids",
    missing: [
      {
        view: 'Groups',
        cannot: 'no completion lengths and no session inspector (verl dumps decoded text only, no response_ids)',
      },
      {
        view: 'Batch',
        cannot:
          'no batch: this dump has no token ids (verl writes only decoded text unless the dump is extended with the responses tensor)',
      },
      { view: 'Replay', cannot: 'no action ids: each one-turn episode shows its decoded text' },
    ],
  },
  prompt_ids: {
    enables: "the prompt's ids in the session inspector and the Batch rows",
    missing: [{ view: 'Batch', cannot: 'rows hold the responses only: the dump has no prompt_ids' }],
  },
  response_mask: {
    enables: 'which response ids the loss read',
    missing: [
      {
        view: 'Batch',
        cannot:
          'the response mask is taken as 1 on every response id (no response_mask: a multi-turn response cannot tell tool tokens apart)',
      },
    ],
  },
  rollout_log_probs: {
    enables: 'behavior log-probs per sampled id',
    missing: [
      {
        view: 'Batch',
        cannot:
          'no old − behavior mismatch layer: the dump has no rollout_log_probs (verl keeps them only with rollout.calculate_log_probs)',
      },
      { view: 'Groups', cannot: 'the session inspector has no behavior log-probs (no rollout_log_probs)' },
    ],
  },
  old_log_probs: {
    enables: "raw log-probs (the trainer's) and the mismatch layer",
    missing: [
      {
        view: 'Batch',
        cannot: "no old − behavior mismatch layer: the dump has no old_log_probs (the actor's recomputed log-probs)",
      },
    ],
  },
  finish_reason: {
    enables: 'completed or truncated',
    missing: [
      {
        view: 'Groups',
        cannot: 'no status: whether a completion stopped or was truncated is not recorded (no finish_reason)',
      },
    ],
  },
  token_level_scores: { enables: 'a check of score', missing: [] },
};

/** What no verl dump holds, whatever its columns. */
const NEVER: ImportMissing[] = [
  { field: 'dlogp', view: 'Batch', cannot: 'no dlogp layer: the per-token gradient is never in a verl dump' },
  {
    field: 'environment',
    view: 'Replay',
    cannot:
      'no replay: a verl rollout keeps no environment to re-execute against; episodes are one turn, read from the dump',
  },
];

/** Keys that are never reward components. */
const NOT_COMPONENTS = new Set([
  ...REQUIRED_COLUMNS,
  ...Object.keys(VERL_COLUMNS),
  'request_id',
  'sample',
  'index',
  'data_source',
  'status',
  'param_version_start',
  'param_version_end',
]);

/** Present on every row or on none (gts may be null on a row: no ground truth; old_log_probs too: a session not trained on). */
const ALL_OR_NONE = [
  'uid',
  'advantages',
  'response_ids',
  'prompt_ids',
  'response_mask',
  'rollout_log_probs',
  'finish_reason',
  'token_level_scores',
] as const;

type Outcome<T> = { ok: true; value: T } | { ok: false; problem: FileProblem };

class Bad extends Error {
  constructor(
    readonly field: string | null,
    readonly expected: string,
    readonly got?: unknown,
  ) {
    super(expected);
  }
}

const shown = (v: unknown): string => {
  if (v === undefined) return 'nothing';
  const s =
    typeof v === 'string'
      ? JSON.stringify(v)
      : (JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? Number(x) : x)) ?? String(v));
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
};

/** The message of a problem: `2.jsonl line 3, field score: expected a finite number, got "abc"`. */
export function problemText(p: FileProblem): string {
  const where = [p.file, p.line !== null ? `${p.unit} ${p.line}` : null, p.field !== null ? `field ${p.field}` : null]
    .filter(Boolean)
    .join(', ')
    .replace(/, (line|row) /, ` $1 `);
  return `${where}: expected ${p.expected}${p.got !== undefined ? `, got ${p.got}` : ''}`;
}

/** Parquet INT64 arrives as bigint: numbers throughout, recursively. */
function plain(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(plain);
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return Array.from(v as unknown as ArrayLike<number>, plain);
  if (v && typeof v === 'object' && !(v instanceof Date))
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const absent = (v: unknown) => v === undefined || v === null;

function numbers(v: unknown, field: string, what: 'ids' | 'mask' | 'finite'): number[] {
  const expected = {
    ids: 'a list of token ids (integers in 0 … 2³¹ − 1)',
    mask: 'a list of 0 and 1',
    finite: 'a list of finite numbers',
  }[what];
  if (!Array.isArray(v)) throw new Bad(field, expected, shown(v));
  return v.map((x, i) => {
    const ok =
      typeof x === 'number' &&
      (what === 'ids'
        ? Number.isInteger(x) && x >= 0 && x < 2 ** 31
        : what === 'mask'
          ? x === 0 || x === 1
          : Number.isFinite(x));
    if (!ok) throw new Bad(`${field}[${i}]`, expected.replace(/^a list of /, 'one of '), shown(x));
    return x as number;
  });
}

/** One line's values checked against verl's columns; `stepOfName` is the step a `{step}.jsonl` name gives. */
function checkRow(raw: unknown, stepOfName: number | null): Omit<VerlRow, 'file' | 'line' | 'unit'> {
  if (!isObject(raw))
    throw new Bad(null, "a JSON object with verl's columns (input, output, gts, score, step)", shown(raw));
  const r = plain(raw) as Record<string, unknown>;
  for (const k of ['input', 'output'] as const)
    if (typeof r[k] !== 'string') throw new Bad(k, 'a string (verl writes the decoded text)', shown(r[k]));
  if (typeof r.score !== 'number' || !Number.isFinite(r.score))
    throw new Bad('score', 'a finite number (verl writes token_level_scores.sum(-1))', shown(r.score));
  let step = r.step;
  if (absent(step) && stepOfName !== null) step = stepOfName;
  if (typeof step !== 'number' || !Number.isInteger(step) || step < 0)
    throw new Bad(
      'step',
      'an integer ≥ 0 (verl writes global_steps on every line; or name the file {step}.jsonl)',
      shown(r.step),
    );
  const row: Omit<VerlRow, 'file' | 'line' | 'unit'> = {
    step,
    input: r.input as string,
    output: r.output as string,
    score: r.score,
    components: {},
    has: new Set(),
  };
  for (const k of [...ALL_OR_NONE, 'gts', 'old_log_probs', 'param_version_start']) if (!absent(r[k])) row.has.add(k);
  if (!absent(r.gts)) row.answer = typeof r.gts === 'string' ? r.gts : JSON.stringify(r.gts);
  if (!absent(r.uid)) {
    if ((typeof r.uid !== 'string' || r.uid === '') && typeof r.uid !== 'number')
      throw new Bad('uid', "a non-empty string (the group key verl's estimator read)", shown(r.uid));
    row.uid = String(r.uid);
  }
  if (!absent(r.response_ids)) row.responseIds = numbers(r.response_ids, 'response_ids', 'ids');
  if (!absent(r.prompt_ids)) row.promptIds = numbers(r.prompt_ids, 'prompt_ids', 'ids');
  const perResponseId = (field: string, what: 'mask' | 'finite'): number[] | undefined => {
    if (absent(r[field])) return undefined;
    if (!row.responseIds)
      throw new Bad(field, `to come with response_ids (${field} has one value per response id)`, 'no response_ids');
    const xs = numbers(r[field], field, what);
    if (xs.length !== row.responseIds.length)
      throw new Bad(field, `${row.responseIds.length} values, one per response id`, `${xs.length}`);
    return xs;
  };
  if (!absent(r.param_version_start)) {
    const v = r.param_version_start;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0)
      throw new Bad('param_version_start', 'an integer ≥ 0 (the policy version that served the sample)', shown(v));
    row.paramVersion = v;
  }
  row.responseMask = perResponseId('response_mask', 'mask');
  row.rolloutLogProbs = perResponseId('rollout_log_probs', 'finite');
  row.oldLogProbs = perResponseId('old_log_probs', 'finite');
  if (!absent(r.advantages)) {
    const a = r.advantages;
    if (typeof a === 'number' && Number.isFinite(a)) row.advantage = a;
    else {
      const xs = numbers(a, 'advantages', 'finite');
      if (!xs.length) throw new Bad('advantages', 'a finite number, or one per response id', '[]');
      if (row.responseIds && xs.length !== row.responseIds.length)
        throw new Bad(
          'advantages',
          `${row.responseIds.length} values, one per response id (or one number)`,
          `${xs.length}`,
        );
      // An outcome estimator's advantage is the same on every response id (verl broadcasts it over the mask): the first id's.
      row.advantage = xs[0];
      row.tokenAdvantages = xs;
    }
  }
  if (!absent(r.finish_reason)) {
    if (r.finish_reason !== 'stop' && r.finish_reason !== 'length')
      throw new Bad('finish_reason', '"stop" or "length"', shown(r.finish_reason));
    row.finishReason = r.finish_reason;
  }
  if (!absent(r.token_level_scores)) {
    const sum = numbers(r.token_level_scores, 'token_level_scores', 'finite').reduce((a, b) => a + b, 0);
    if (Math.abs(sum - row.score) > 1e-3 * Math.max(1, Math.abs(row.score)))
      throw new Bad(
        'token_level_scores',
        `values summing to score ${row.score} (verl: score = token_level_scores.sum(-1))`,
        `a sum of ${sum}`,
      );
  }
  for (const [k, v] of Object.entries(r)) {
    if (NOT_COMPONENTS.has(k)) continue;
    if (typeof v === 'number' && Number.isFinite(v)) row.components[k] = v;
    else if (typeof v === 'boolean') row.components[k] = v ? 1 : 0;
  }
  return row;
}

const baseName = (name: string) => name.split(/[\\/]/).pop() ?? name;

/** The step a verl file name gives (`12.jsonl` → 12), or null. */
export function stepOfFileName(name: string): number | null {
  const m = /^(\d+)\.(jsonl|ndjson|json|parquet)$/i.exec(baseName(name));
  return m ? Number(m[1]) : null;
}

/** The rows of one file, each with its 1-based line (JSONL; blank lines skipped) or row (parquet). */
async function readRows(file: {
  name: string;
  bytes: Uint8Array;
}): Promise<Outcome<{ unit: 'line' | 'row'; rows: { at: number; raw: unknown }[] }>> {
  const { name, bytes } = file;
  const whole = (expected: string, got?: string): Outcome<never> => ({
    ok: false,
    problem: { file: name, line: null, unit: 'line', field: null, expected, ...(got !== undefined ? { got } : {}) },
  });
  const parquet = bytes.length >= 4 && String.fromCharCode(...bytes.subarray(0, 4)) === 'PAR1';
  if (parquet) {
    let objects: Record<string, unknown>[];
    try {
      const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
      objects = await parquetReadObjects({ file: buf });
    } catch (e) {
      return whole('a parquet file hyparquet can read (uncompressed or snappy)', (e as Error).message);
    }
    return { ok: true, value: { unit: 'row', rows: objects.map((raw, i) => ({ at: i + 1, raw })) } };
  }
  if (/\.parquet$/i.test(name)) return whole('a parquet file (it starts with PAR1)', 'other bytes');
  if (!/\.(jsonl|ndjson|json)$/i.test(name))
    return whole('a .jsonl file (verl writes {step}.jsonl) or a .parquet file');
  const text = utf8Text(bytes);
  if (text === null)
    return whole('UTF-8 text (verl writes JSON lines with ensure_ascii=False)', 'bytes that are not UTF-8');
  const rows: { at: number; raw: unknown }[] = [];
  for (const row of jsonlRows(text)) {
    if ('notJson' in row)
      return {
        ok: false,
        problem: {
          file: name,
          line: row.at,
          unit: 'line',
          field: null,
          expected: 'one JSON object (verl writes json.dumps of each sample)',
          got: `text that is not JSON (${row.notJson})`,
        },
      };
    rows.push(row);
  }
  return { ok: true, value: { unit: 'line', rows } };
}

/** Every file's rows, checked: the rows in file order, or the first problem. */
export async function parseVerlFiles(
  files: readonly { name: string; bytes: Uint8Array }[],
): Promise<Outcome<{ rows: VerlRow[]; files: { name: string; rows: number }[] }>> {
  if (!files.length)
    return {
      ok: false,
      problem: {
        file: '(none)',
        line: null,
        unit: 'line',
        field: null,
        expected: 'at least one verl rollout file ({step}.jsonl or .parquet)',
      },
    };
  const rows: VerlRow[] = [];
  const counts: { name: string; rows: number }[] = [];
  const stepFile = new Map<number, string>();
  let first: VerlRow | null = null;
  for (const file of files) {
    const read = await readRows(file);
    if (!read.ok) return read;
    const { unit } = read.value;
    if (!read.value.rows.length)
      return {
        ok: false,
        problem: {
          file: file.name,
          line: null,
          unit,
          field: null,
          expected: 'at least one sample (verl writes one line per sample)',
          got: 'an empty file',
        },
      };
    const mine = new Set<number>();
    for (const { at, raw } of read.value.rows) {
      const where = { file: file.name, line: at, unit };
      try {
        const row: VerlRow = { ...checkRow(raw, stepOfFileName(file.name)), ...where };
        if (first) {
          for (const k of ALL_OR_NONE) {
            if (row.has.has(k) !== first.has.has(k))
              throw new Bad(
                k,
                `${first.has.has(k) ? 'a value' : 'no value'}, as ${first.file} ${first.unit} ${first.line} has (a column is in every sample or in none)`,
                row.has.has(k) ? 'a value' : 'nothing',
              );
          }
        } else first = row;
        const other = stepFile.get(row.step);
        if (other !== undefined && other !== file.name)
          throw new Bad('step', `a step no other file holds (step ${row.step} is in ${other})`, String(row.step));
        mine.add(row.step);
        rows.push(row);
      } catch (e) {
        if (!(e instanceof Bad)) throw e;
        return {
          ok: false,
          problem: {
            ...where,
            field: e.field,
            expected: e.expected,
            ...(e.got !== undefined ? { got: String(e.got) } : {}),
          },
        };
      }
    }
    for (const s of mine) stepFile.set(s, file.name);
    counts.push({ name: file.name, rows: read.value.rows.length });
  }
  return { ok: true, value: { rows, files: counts } };
}

/** The absent optional columns and what each view cannot draw without them, then what no dump has. */
export function missingOf(has: ReadonlySet<string>): ImportMissing[] {
  const out: ImportMissing[] = [];
  for (const [field, c] of Object.entries(VERL_COLUMNS)) {
    // Without response ids the per-id columns cannot be there either: one note (response_ids') says it.
    if (
      has.has(field) ||
      (!has.has('response_ids') &&
        ['prompt_ids', 'response_mask', 'rollout_log_probs', 'old_log_probs'].includes(field))
    )
      continue;
    for (const m of c.missing) out.push({ field, ...m });
  }
  if (has.has('response_ids') && !has.has('param_version_start'))
    out.push({
      field: 'policy version',
      view: 'Batch',
      cannot:
        'the version layer is step − 1 (synchronous verl samples step s with the weights after s − 1 updates): the dump does not record it',
    });
  return [...out, ...NEVER];
}

const runIdNow = () =>
  `verl-${Date.now().toString(36)}-${Array.from(crypto.getRandomValues(new Uint8Array(3)), (b) => b.toString(16).padStart(2, '0')).join('')}`;

/**
 * Reads, checks and stores verl rollout files as one run (status `imported`, preset `verl-import`).
 * The first bad line refuses the whole import and stores nothing; a failed write deletes what was written.
 */
export async function importVerlRun(
  store: RunStore,
  files: readonly { name: string; bytes: Uint8Array }[],
  now = Date.now(),
): Promise<VerlImportResult> {
  const parsed = await parseVerlFiles(files);
  if (!parsed.ok) return { ok: false, problem: parsed.problem, message: problemText(parsed.problem) };
  const { rows } = parsed.value;
  const has = new Set(rows.flatMap((r) => [...r.has]));
  const steps = stepRecords(rows, has.has('uid') ? 'uid' : 'input');
  const large = steps.filter((s) => s.tooLarge).map((s) => s.step);
  const missing = [
    ...missingOf(has),
    ...(large.length
      ? [
          {
            field: 'batch size',
            view: 'Batch' as const,
            cannot: `no batch for step ${large.join(', ')}: more than ${MAX_BATCH_IDS} ids (rows × width) to draw`,
          },
        ]
      : []),
  ];
  const options: ImportedRunOptions = {
    preset: 'verl-import',
    steps: steps.at(-1)!.step,
    stepNumbers: steps.map((s) => s.step),
    files: parsed.value.files,
    grouping: has.has('uid') ? 'uid' : 'input',
    advantages: has.has('advantages') ? 'dump' : 'recomputed',
    present: [...has].sort(),
    missing,
    format: VERL_FORMAT,
  };
  const runId = runIdNow();
  // The store's record type holds trainable options; an imported run's record is told apart by its status and preset (RunSummary.options).
  const run: RunRecord = {
    runId,
    options: options as unknown as RunOptions,
    createdAt: now,
    status: 'imported',
    lastStep: 0,
  };
  await store.putRun(run);
  try {
    for (const s of steps) await store.commitStep(runId, s.commit);
  } catch (e) {
    // All or nothing: the steps already written go with the run (the error, e.g. StorageFull, says why).
    await store.deleteRun(runId);
    throw e;
  }
  const groups = steps.reduce((n, s) => n + (s.commit.groups?.length ?? 0), 0);
  return { ok: true, runId, steps: steps.length, groups, samples: rows.length, missing };
}

/** The import record of a stored run, or null when the run was not imported. */
export function importedOptions(run: { options: unknown; status: string } | undefined): ImportedRunOptions | null {
  const o = run?.options as { preset?: unknown } | undefined;
  return run && o?.preset === 'verl-import' ? (run.options as ImportedRunOptions) : null;
}
