/**
 * The files of a model folder as the loader sees them: a Map of name → bytes (a drop or a zip in
 * the browser, a test), or a reader `(name, range?) => bytes | undefined` (the browser's File
 * objects, `fetch` with a Range header, Node's fs in node-hf-dir.ts). A reader resolves to
 * `undefined` when the folder has no such file. Given a range it may resolve to just those bytes
 * (fewer when the file is shorter, as `Blob.slice`) or to the whole file: both work, but only a
 * ranged reader lets `inspectHfFolder` read the safetensors headers without the tensor data.
 */
import { HfFolderError } from '../model/hf-errors';

interface ByteRange {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, exclusive. */
  end: number;
}

export type HfFileReader = (name: string, range?: ByteRange) => Promise<Uint8Array | undefined>;
export type HfFiles = ReadonlyMap<string, Uint8Array> | HfFileReader;

/** A folder with one reading discipline: `range` returns bytes [start, end) clipped to the file. */
export interface FolderReader {
  /** The whole file, or undefined when absent. */
  file(name: string): Promise<Uint8Array | undefined>;
  /** Bytes [start, end) clipped to the file's end, or undefined when the file is absent. */
  range(name: string, start: number, end: number): Promise<Uint8Array | undefined>;
  /** The file's size when already known without reading it (a Map, or a whole file already read). */
  knownSize(name: string): number | undefined;
  /** Drops a whole file kept from a reader that ignores ranges (after its tensors are decoded). */
  release(name: string): void;
}

export function folderReader(files: HfFiles): FolderReader {
  if (typeof files !== 'function') {
    const map = files as ReadonlyMap<string, Uint8Array>;
    return {
      file: async (name) => map.get(name),
      range: async (name, start, end) => map.get(name)?.subarray(start, end),
      knownSize: (name) => map.get(name)?.length,
      release: () => undefined,
    };
  }
  const read = files as HfFileReader;
  // A reader that ignores ranges answers the first range (the header reader asks for [0, 8) first)
  // with the whole file: keep it for the rest.
  const whole = new Map<string, Uint8Array>();
  return {
    file: async (name) => whole.get(name) ?? read(name),
    async range(name, start, end) {
      const cached = whole.get(name);
      if (cached) return cached.subarray(start, end);
      const bytes = await read(name, { start, end });
      if (bytes === undefined) return undefined;
      if (bytes.length <= end - start) return bytes;
      whole.set(name, bytes);
      return bytes.subarray(start, end);
    },
    knownSize: (name) => whole.get(name)?.length,
    release: (name) => void whole.delete(name),
  };
}

/** A JSON file as an object; undefined when absent. Errors name the file. */
export async function readJsonFile(reader: FolderReader, name: string): Promise<Record<string, unknown> | undefined> {
  const bytes = await reader.file(name);
  if (bytes === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch (e) {
    throw new HfFolderError(
      { file: name, field: '(file)', detail: `not valid JSON (${(e as Error).message})` },
      { cause: e },
    );
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new HfFolderError({
      file: name,
      field: '(file)',
      detail: `expected a JSON object, got ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}`,
    });
  }
  return value as Record<string, unknown>;
}
