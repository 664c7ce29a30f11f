/**
 * A person's prompt dataset: a `.jsonl` file (one JSON object per line, blank lines allowed) or a
 * `.parquet` file (one row a record, read with hyparquet: uncompressed or snappy), one record per
 * prompt, read into `DatasetRecord`s for the run options (worker/contract/options.ts `DatasetRunOptions`).
 *
 * Field names, as verl and TRL datasets spell them:
 * - prompt: `prompt`, a string, or a chat list `[{role, content}]` (verl, TRL conversational).
 *   A chat list's prompt text is its user turns' contents joined by a newline (what a character
 *   model samples from: it has no chat template); the list is kept as the record's `messages`,
 *   which a base with a chat template samples from instead (worker/train/task-source.ts).
 * - ground truth: the first present (not null) of `ground_truth`, verl's nested
 *   `reward_model.ground_truth`, TRL's `solution`, `answer`. A string, a number (kept as its
 *   text), or for `code` a list of test cases (kept as JSON text; worker/rewards/dataset-reward.ts
 *   `parseCases` reads it).
 * - metadata: every other field, as JSON values (parquet's int64 as numbers, or text past 2^53).
 *
 * Validation stops at the first bad line (file, line or parquet row, the field, what was
 * expected), refuses an empty file, and returns nothing half-loaded. With a character tokenizer
 * every character of every prompt must be in its vocabulary; `maxPromptIds` bounds BOS + prompt.
 *
 * The held-out split (`splitDataset`) is a property of the prompts, not of the run's seed, as the
 * arithmetic split is (arith.ts): records are ranked by a fixed 32-bit hash of their prompt text
 * (ties by position) and the first `heldOut` are held out; a training record whose prompt is also
 * held out (a duplicate) is dropped, so no prompt is both trained on and evaluated. The training
 * stream (`datasetStream`) is passes over the training records, each in a fresh order seeded by
 * the run's seed: same records and seed, same prompts.
 *
 * Not a reward (worker/rewards/dataset-reward.ts) and not a trainer (worker/train/task-source.ts).
 */
import { parquetReadObjects } from 'hyparquet';
import { mulberry32 } from '../../kernels/common/random';
import { jsonlRows, utf8Text, type JsonlRow } from './jsonl';
import type { DatasetLoadResult, FileProblem } from '../contract/models';
import type { DatasetRecord, DatasetRewardOptions } from '../contract/options';
import { parseCases } from '../rewards/dataset-reward';
import { fmix32 } from './arith';
import type { TextTokenizer } from './tokenizer';

type DatasetFormat = 'jsonl' | 'parquet';

interface ParseDatasetOptions {
  /** Every prompt must encode with it (a character tokenizer throws naming the character). */
  tokenizer?: TextTokenizer;
  /** The most ids BOS + prompt may take (the model's positions less the completion's). */
  maxPromptIds?: number;
  /** The reward the records are for (default `math`): `code` checks every ground truth is a list of test cases. */
  reward?: DatasetRewardOptions;
  /** Held-out records (default `defaultHeldOut`); refused unless 0..records − 1. */
  heldOut?: number;
}

/** A bad record: the field (null: the record itself), what was expected, and what was there, as a phrase. */
class Bad extends Error {
  constructor(
    readonly field: string | null,
    readonly expected: string,
    readonly got: string,
  ) {
    super(`${field ?? 'record'}: ${got} (expected ${expected})`);
  }
}

/** `train.jsonl line 7: 'prompt' is missing (expected a string or a list of {role, content})`. */
export function problemMessage(p: FileProblem): string {
  const where = p.line === null ? p.file : `${p.file} ${p.unit} ${p.line}`;
  return `${where}: ${p.field ? `'${p.field}' ` : ''}${p.got ?? 'is wrong'} (expected ${p.expected})`;
}

function fail(problem: FileProblem): DatasetLoadResult {
  return { ok: false, problem, message: problemMessage(problem) };
}

/** What a value is, as a problem names it: `a number (5)`, `an array`, `null`. */
function what(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string')
    return v.trim() === '' ? 'empty' : `a string (${JSON.stringify(v.length > 40 ? `${v.slice(0, 37)}...` : v)})`;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return `a ${typeof v} (${String(v)})`;
  return `an ${typeof v}`;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Uint8Array) && !(v instanceof Date);
const absent = (v: unknown) => v === undefined || v === null;

/** A JSON value of a parquet or JSON value: bigint → number (or its text past 2^53), Date → ISO text, bytes → a list of numbers. */
function plain(v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : String(v);
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Uint8Array) return Array.from(v);
  if (Array.isArray(v)) return v.map(plain);
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

const PROMPT_EXPECTED = 'a string or a list of {role, content}';

/** The prompt text of a record's `prompt` (a string, or a chat list's user turns). */
function promptOf(v: unknown): string {
  if (v === undefined) throw new Bad('prompt', PROMPT_EXPECTED, 'is missing');
  if (typeof v === 'string') {
    if (v.trim() === '') throw new Bad('prompt', `${PROMPT_EXPECTED}, not blank`, 'is empty');
    return v;
  }
  if (!Array.isArray(v)) throw new Bad('prompt', PROMPT_EXPECTED, `is ${what(v)}`);
  const user: string[] = [];
  v.forEach((turn: unknown, i) => {
    if (!isObject(turn)) throw new Bad(`prompt[${i}]`, 'a {role, content} object', `is ${what(turn)}`);
    if (typeof turn.role !== 'string')
      throw new Bad(
        `prompt[${i}].role`,
        "a string ('system', 'user' or 'assistant')",
        absent(turn.role) ? 'is missing' : `is ${what(turn.role)}`,
      );
    if (typeof turn.content !== 'string')
      throw new Bad(
        `prompt[${i}].content`,
        'a string',
        absent(turn.content) ? 'is missing' : `is ${what(turn.content)}`,
      );
    if (turn.role === 'user') user.push(turn.content);
  });
  const text = user.join('\n');
  if (user.length === 0)
    throw new Bad(
      'prompt',
      "a chat list with at least one {role: 'user', content} turn (the prompt is its user turns)",
      v.length ? 'has no user turn' : 'is an empty list',
    );
  if (text.trim() === '') throw new Bad('prompt', 'user turns with some text', 'has only blank user turns');
  return text;
}

const TRUTH_EXPECTED =
  "a ground truth: 'ground_truth', 'reward_model.ground_truth', 'solution' or 'answer' (a string, a number, or for code a list of {stdin, stdout})";

/** The ground truth's field and its text. */
function truthOf(r: Record<string, unknown>): { field: string; text: string } {
  const rm = r.reward_model;
  const found: [string, unknown][] = [
    ['ground_truth', r.ground_truth],
    ['reward_model.ground_truth', isObject(rm) ? rm.ground_truth : undefined],
    ['solution', r.solution],
    ['answer', r.answer],
  ];
  const hit = found.find(([, v]) => !absent(v));
  if (!hit) throw new Bad(null, TRUTH_EXPECTED, 'no ground truth');
  const [field, v] = hit;
  const expected = 'a non-empty string, a number, or for code a list of test cases';
  if (typeof v === 'string') {
    if (v.trim() === '') throw new Bad(field, expected, 'is empty');
    return { field, text: v };
  }
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Bad(field, expected, `is ${what(v)}`);
    return { field, text: String(v) };
  }
  if (typeof v === 'bigint') return { field, text: String(v) };
  if (Array.isArray(v) || isObject(v)) return { field, text: JSON.stringify(plain(v)) };
  throw new Bad(field, expected, `is ${what(v)}`);
}

/** A record of one row; throws `Bad`. */
function recordOf(raw: unknown, o: ParseDatasetOptions): DatasetRecord {
  if (!isObject(raw))
    throw new Bad(null, 'one JSON object per record, with a prompt and a ground truth', `is ${what(raw)}`);
  const prompt = promptOf(raw.prompt);
  if (o.tokenizer) {
    let ids: Int32Array;
    try {
      ids = o.tokenizer.encode(prompt);
    } catch (e) {
      throw new Bad(
        'prompt',
        `only characters of the model's vocabulary: ${vocabularyText(o.tokenizer)}`,
        `cannot be encoded: ${(e as Error).message}`,
      );
    }
    if (o.maxPromptIds !== undefined && ids.length + 1 > o.maxPromptIds) {
      throw new Bad(
        'prompt',
        `at most ${o.maxPromptIds - 1} ids (the model's positions less BOS and the completion)`,
        `is ${ids.length} ids long`,
      );
    }
  }
  const truth = truthOf(raw);
  if (o.reward?.kind === 'code') {
    const cases = parseCases(truth.text);
    if (!cases.ok) throw new Bad(truth.field, cases.expected, cases.got);
  }
  const metadata: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (k === 'prompt' || k === truth.field) continue;
    if (k === 'reward_model' && truth.field === 'reward_model.ground_truth' && isObject(v)) {
      const { ground_truth: _gt, ...rest } = v;
      if (Object.keys(rest).length) metadata[k] = plain(rest);
      continue;
    }
    if (v !== undefined) metadata[k] = plain(v);
  }
  const messages = Array.isArray(raw.prompt)
    ? (raw.prompt as { role: string; content: string }[]).map(({ role, content }) => ({ role, content }))
    : null;
  return {
    prompt,
    ...(messages ? { messages } : {}),
    answer: truth.text,
    ...(Object.keys(metadata).length ? { metadata } : {}),
  };
}

/** The vocabulary in a problem: its characters (specials left out), or its size when large. */
function vocabularyText(tok: TextTokenizer): string {
  const symbols = tok.vocab.filter((_, id) => !tok.isSpecial(id));
  return symbols.length <= 100 ? JSON.stringify(symbols.join('')) : `${tok.size} symbols`;
}

/** Held-out records when none are asked for: a tenth, at least one of two or more, none of one. */
export function defaultHeldOut(records: number): number {
  return records < 2 ? 0 : Math.max(1, Math.floor(records / 10));
}

/** The format a file name says (`.jsonl`, `.parquet`), or null. */
function formatOf(name: string): DatasetFormat | null {
  return /\.jsonl$/i.test(name) ? 'jsonl' : /\.parquet$/i.test(name) ? 'parquet' : null;
}

/** A row of a file: its 1-based line (JSONL, blank lines skipped) or row (parquet), and its value or why it is not JSON. */
type Row = JsonlRow;

/** The rows of a file, in order; or the problem with the whole file. */
async function rowsOf(
  name: string,
  format: DatasetFormat,
  bytes: Uint8Array,
): Promise<{ ok: true; rows: Row[] } | { ok: false; problem: FileProblem }> {
  const unit = format === 'jsonl' ? 'line' : 'row';
  const whole = (expected: string, got: string) => ({
    ok: false as const,
    problem: { file: name, line: null, unit, field: null, expected, got } satisfies FileProblem,
  });
  if (format === 'parquet') {
    if (bytes.length < 8 || String.fromCharCode(...bytes.subarray(0, 4)) !== 'PAR1')
      return whole('a parquet file (it starts with PAR1)', 'is not one');
    let objects: Record<string, unknown>[];
    try {
      const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
      objects = await parquetReadObjects({ file: buf });
    } catch (e) {
      return whole(
        'a parquet file hyparquet can read (uncompressed or snappy)',
        `cannot be read (${(e as Error).message})`,
      );
    }
    return { ok: true, rows: objects.map((raw, i) => ({ at: i + 1, raw })) };
  }
  const text = utf8Text(bytes);
  if (text === null) return whole('UTF-8 text, one JSON object per line', 'is not UTF-8');
  // A line that is not JSON is reported in line order with the records' own problems: the first bad line wins.
  return { ok: true, rows: jsonlRows(text) };
}

/**
 * The records of a `.jsonl` or `.parquet` file, checked (see the module comment), as the run
 * options carry them; or the first problem, naming the file, the line or row, the field and what
 * was expected.
 */
export async function parseDataset(
  name: string,
  bytes: Uint8Array,
  o: ParseDatasetOptions = {},
): Promise<DatasetLoadResult> {
  const format = formatOf(name);
  if (!format)
    return fail({
      file: name,
      line: null,
      unit: 'line',
      field: null,
      expected: 'a .jsonl or .parquet file',
      got: 'has another extension',
    });
  const read = await rowsOf(name, format, bytes);
  if (!read.ok) return fail(read.problem);
  const unit = format === 'jsonl' ? 'line' : 'row';
  if (read.rows.length === 0)
    return fail({
      file: name,
      line: null,
      unit,
      field: null,
      expected: 'at least one record with a prompt and a ground truth',
      got: 'has no records',
    });
  const records: DatasetRecord[] = [];
  for (const row of read.rows) {
    if ('notJson' in row)
      return fail({
        file: name,
        line: row.at,
        unit,
        field: null,
        expected: 'one JSON object per line',
        got: `not JSON (${row.notJson})`,
      });
    try {
      records.push(recordOf(row.raw, o));
    } catch (e) {
      if (!(e instanceof Bad)) throw e;
      return fail({ file: name, line: row.at, unit, field: e.field, expected: e.expected, got: e.got });
    }
  }
  const heldOut = o.heldOut ?? defaultHeldOut(records.length);
  if (!Number.isInteger(heldOut) || heldOut < 0 || heldOut >= records.length) {
    return fail({
      file: name,
      line: null,
      unit,
      field: null,
      expected: `a held-out count in 0..${records.length - 1} (at least one record left to train on)`,
      got: `has ${records.length} records for ${heldOut} held out`,
    });
  }
  if (splitDataset(records, heldOut).train.length === 0) {
    return fail({
      file: name,
      line: null,
      unit,
      field: null,
      expected: 'a record to train on whose prompt is not held out',
      got: `has every prompt among the ${heldOut} held out (duplicates)`,
    });
  }
  return { ok: true, dataset: { name, format, records, heldOut, reward: o.reward ?? { kind: 'math' } } };
}

/** FNV-1a over UTF-16 code units, then murmur3's finaliser: the fixed hash the split is defined by. Changing it changes every split: don't. */
export function promptHash(prompt: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < prompt.length; i++) h = Math.imul(h ^ prompt.charCodeAt(i), 0x01000193);
  return fmix32(h >>> 0);
}

/**
 * Record indices (into `records`) of the two splits, each in a fixed order: held out by hash
 * rank, training by position. `train` is empty when every record's prompt is held out (the run
 * options' schema refuses that; `datasetStream` throws on it).
 */
export function splitDataset(
  records: readonly Pick<DatasetRecord, 'prompt'>[],
  heldOut: number,
): { train: number[]; heldOut: number[] } {
  if (!Number.isInteger(heldOut) || heldOut < 0 || heldOut > records.length)
    throw new Error(`splitDataset: heldOut = ${heldOut}; expected an integer in 0..${records.length}`);
  const hashes = records.map((r) => promptHash(r.prompt));
  const ranked = records.map((_, i) => i).sort((a, b) => hashes[a] - hashes[b] || a - b);
  const held = ranked.slice(0, heldOut);
  const heldPrompts = new Set(held.map((i) => records[i].prompt));
  const train = records.map((_, i) => i).filter((i) => !heldPrompts.has(records[i].prompt));
  return { train, heldOut: held };
}

/** A dataset record as a single-turn task: `record` is its index in the dataset's records. */
export interface DatasetTask {
  /** `record/<1-based index>`: unique per record. */
  id: string;
  prompt: string;
  answer: string;
  record: number;
}

export function datasetTask(records: readonly DatasetRecord[], i: number): DatasetTask {
  return { id: `record/${i + 1}`, prompt: records[i].prompt, answer: records[i].answer, record: i };
}

/** A seeded, endless stream of a dataset's training tasks: passes over them, each in a fresh order. */
interface DatasetStream {
  next(): DatasetTask;
  take(n: number): DatasetTask[];
  /** Tasks drawn so far (from creation). */
  readonly position: number;
}

/** Passes over `train` (record indices), each shuffled by a generator seeded with `seed` (arith's `trainProblems` passes). */
export function datasetStream(
  records: readonly DatasetRecord[],
  train: readonly number[],
  seed: number,
): DatasetStream {
  if (train.length === 0)
    throw new Error('datasetStream: no training records (every prompt is held out); hold out fewer records');
  const rand = mulberry32((seed ^ 0x2545f491) >>> 0);
  let order: number[] = [];
  let position = 0;
  const next = (): DatasetTask => {
    if (order.length === 0) {
      order = [...train];
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [order[i], order[j]] = [order[j], order[i]];
      }
      order.reverse(); // popped from the end: the pass runs in the shuffled order
    }
    position++;
    return datasetTask(records, order.pop()!);
  };
  return {
    next,
    take: (n) => Array.from({ length: n }, next),
    get position() {
      return position;
    },
  };
}
