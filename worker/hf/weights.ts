/**
 * Where a model folder's tensors are: `model.safetensors`, or the shards a
 * `model.safetensors.index.json` names in its `weight_map` (transformers prefers the single file
 * when both exist). Reads only the headers (bytes [0, 8 + N) of each file, plus one-byte probes
 * of where the data ends when the file size is unknown), checks them (dtypes, shapes against
 * offsets, contiguity, truncation, index against headers) and says which file holds each tensor.
 */
import type { HfProblem } from '../model/hf-errors';
import { HfFolderError, asFolderError } from '../model/hf-errors';
import type { SafetensorsHeader, TensorEntry } from '../model/safetensors';
import { SafetensorsError, checkDataExtent, parseHeader, readHeaderLength } from '../model/safetensors';
import type { FolderReader } from './files';
import { readJsonFile } from './files';

export const SINGLE_WEIGHTS = 'model.safetensors';
export const WEIGHTS_INDEX = 'model.safetensors.index.json';

interface LocatedTensor {
  file: string;
  entry: TensorEntry;
}

export interface WeightHeaders {
  /** The weight files in order; one, or the shards of the index. */
  files: string[];
  /** The index file when the weights are sharded. */
  index: string | null;
  headers: Map<string, SafetensorsHeader>;
  /** Every tensor by name. */
  tensors: Map<string, LocatedTensor>;
}

/** Plain file names only: an index may not point outside the folder. */
const SHARD_NAME = /^[^/\\]+\.safetensors$/;

export async function readWeightHeaders(reader: FolderReader): Promise<WeightHeaders> {
  let files: string[];
  let index: string | null = null;
  let weightMap: Map<string, string> | null = null;
  if ((await reader.range(SINGLE_WEIGHTS, 0, 8)) !== undefined) files = [SINGLE_WEIGHTS];
  else {
    const json = await readJsonFile(reader, WEIGHTS_INDEX);
    if (json === undefined) {
      throw new HfFolderError({
        file: SINGLE_WEIGHTS,
        field: '(file)',
        detail: `absent, and so is ${WEIGHTS_INDEX}; expected safetensors weights (pytorch_model.bin and other formats are not read)`,
      });
    }
    index = WEIGHTS_INDEX;
    const map = json.weight_map;
    if (map === null || typeof map !== 'object' || Array.isArray(map) || Object.keys(map).length === 0) {
      throw new HfFolderError({
        file: WEIGHTS_INDEX,
        field: 'weight_map',
        detail: `got ${JSON.stringify(map)?.slice(0, 80)}; expected an object of tensor name → shard file name`,
      });
    }
    weightMap = new Map();
    const bad: HfProblem[] = [];
    for (const [name, file] of Object.entries(map as Record<string, unknown>)) {
      if (typeof file !== 'string' || !SHARD_NAME.test(file))
        bad.push({
          file: WEIGHTS_INDEX,
          field: `weight_map['${name}']`,
          detail: `got ${JSON.stringify(file)}; expected a file name in this folder ending in .safetensors`,
        });
      else weightMap.set(name, file);
    }
    if (bad.length) throw new HfFolderError(bad);
    files = [...new Set(weightMap.values())].sort();
  }

  const headers = new Map<string, SafetensorsHeader>();
  for (const file of files) {
    const header = await asFolderError(() => readHeader(reader, file));
    if (header === undefined) {
      throw new HfFolderError({
        file: WEIGHTS_INDEX,
        field: 'weight_map',
        detail: `names '${file}', which the folder does not have; expected every shard it names to be present`,
      });
    }
    headers.set(file, header);
  }

  const problems: HfProblem[] = [];
  const tensors = new Map<string, LocatedTensor>();
  for (const [file, header] of headers) {
    for (const entry of header.tensors) {
      const other = tensors.get(entry.name);
      if (other)
        problems.push({
          file,
          field: `tensor '${entry.name}'`,
          detail: `also in ${other.file}; expected each tensor in one file`,
        });
      else tensors.set(entry.name, { file, entry });
    }
  }
  if (weightMap) {
    for (const [name, file] of weightMap) {
      const found = tensors.get(name);
      if (!found)
        problems.push({
          file: WEIGHTS_INDEX,
          field: `weight_map['${name}']`,
          detail: `names ${file}, whose header has no tensor '${name}'`,
        });
      else if (found.file !== file)
        problems.push({
          file: WEIGHTS_INDEX,
          field: `weight_map['${name}']`,
          detail: `names ${file}, but the tensor is in ${found.file}`,
        });
    }
    for (const [name, found] of tensors) {
      if (!weightMap.has(name))
        problems.push({
          file: WEIGHTS_INDEX,
          field: 'weight_map',
          detail: `lacks tensor '${name}', which ${found.file} holds; expected every tensor listed`,
        });
    }
  }
  if (problems.length) throw new HfFolderError(problems);
  return { files, index, headers, tensors };
}

/** One file's header, checked; undefined when the file is absent. */
async function readHeader(reader: FolderReader, file: string): Promise<SafetensorsHeader | undefined> {
  const first = await reader.range(file, 0, 8);
  if (first === undefined) return undefined;
  const n = readHeaderLength(first, file, reader.knownSize(file));
  const json = (await reader.range(file, 8, 8 + n))!;
  if (json.length < n) {
    throw new SafetensorsError(
      file,
      null,
      `header length ${n} (bytes 8..${8 + n}) runs past the end of the file (${8 + json.length} bytes); the file is truncated or not safetensors`,
    );
  }
  const header = parseHeader(json, file);
  const size = reader.knownSize(file);
  if (size !== undefined) checkDataExtent(header, size);
  else await probeDataExtent(reader, header);
  return header;
}

/** Without the file size: one-byte reads at the end of the data (and just past it) find truncation and trailing bytes. */
async function probeDataExtent(reader: FolderReader, header: SafetensorsHeader): Promise<void> {
  const has = async (offset: number) => ((await reader.range(header.file, offset, offset + 1))?.length ?? 0) === 1;
  const end = header.dataStart + header.dataBytes;
  if (header.dataBytes > 0 && !(await has(end - 1))) {
    // The first tensor cut off: binary search over the (sorted, contiguous) tensor ends.
    const ts = header.tensors.filter((t) => t.end > t.begin);
    let lo = 0,
      hi = ts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (await has(header.dataStart + ts[mid].end - 1)) lo = mid + 1;
      else hi = mid;
    }
    const cut = ts[lo];
    throw new SafetensorsError(
      header.file,
      cut.name,
      `data_offsets [${cut.begin}, ${cut.end}] end at byte ${header.dataStart + cut.end} of the file, which ends before it; the file is truncated`,
    );
  }
  if (await has(end))
    throw new SafetensorsError(
      header.file,
      null,
      `bytes follow the last tensor's data (the data section should end at byte ${end}); expected none`,
    );
}
