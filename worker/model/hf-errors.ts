/**
 * The one error a Hugging Face model folder is refused with: every problem found, each naming the
 * file, the field (a config.json key, a tensor, a tokenizer setting) and what was expected. Its
 * `name` is in ERROR_NAMES (worker/contract/errors.ts), so the app can switch on it across comlink. In
 * model/ with hf-tokenizer.ts, which refuses a tokenizer with it; worker/hf/ builds on model/.
 */
import { SafetensorsError } from './safetensors';

export interface HfProblem {
  /** The folder's file at fault (`config.json`, `model-00001-of-00002.safetensors`, ...). */
  file: string;
  /** The field: a JSON key (`num_key_value_heads`), `tensor 'name'`, or `header`. */
  field: string;
  /** What is wrong and what was expected. */
  detail: string;
}

export class HfFolderError extends Error {
  override readonly name = 'InvalidModelFolder';
  readonly problems: readonly HfProblem[];

  constructor(problems: HfProblem | readonly HfProblem[], options?: { cause?: unknown }) {
    const list = Array.isArray(problems) ? (problems as readonly HfProblem[]) : [problems as HfProblem];
    super(list.map((p) => `${p.file}: ${p.field}: ${p.detail}`).join('\n'), options);
    this.problems = list;
  }

  /** The first problem's file and field. */
  get file(): string {
    return this.problems[0].file;
  }

  get field(): string {
    return this.problems[0].field;
  }
}

/** Runs `f`, turning a SafetensorsError into an HfFolderError (same file, the tensor or `header` as the field). */
export async function asFolderError<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof SafetensorsError)
      throw new HfFolderError(
        { file: e.file, field: e.tensor === null ? 'header' : `tensor '${e.tensor}'`, detail: e.detail },
        { cause: e },
      );
    throw e;
  }
}
