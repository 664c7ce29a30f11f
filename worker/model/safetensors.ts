/**
 * The safetensors format (https://huggingface.co/docs/safetensors): an 8-byte little-endian
 * header length N, N bytes of JSON (`{name: {dtype, shape, data_offsets: [begin, end]}, ...,
 * "__metadata__": {string: string}}`, padded with spaces to a multiple of 8), then the raw
 * little-endian tensor data, which the tensors cover exactly (contiguous, no holes, nothing after).
 *
 * F32, F16 and BF16 are read, each converted to a Float32Array exactly (every F16 and BF16 value
 * is an F32 value); any other dtype is refused by tensor name. F32 is written by default, F16 or
 * BF16 on request (round to nearest, ties to even, as PyTorch's `.to(torch.float16/bfloat16)`).
 * The F32 round trip is exact (bytes in, same bytes out). Not a general tensor library: integer
 * and F64 tensors do not occur in the checkpoints this project reads.
 */

export interface NamedTensor {
  name: string;
  shape: number[];
  data: Float32Array;
}

/** The dtypes this module reads and writes. */
const SAFETENSORS_DTYPES = ['F32', 'F16', 'BF16'] as const;
export type SafetensorsDtype = (typeof SAFETENSORS_DTYPES)[number];
const BYTES: Record<SafetensorsDtype, number> = { F32: 4, F16: 2, BF16: 2 };

/**
 * A file that is not (or not entirely) valid safetensors. `file` is the file's name as the caller
 * gave it, `tensor` the tensor at fault (null for the header itself); the message names both.
 */
export class SafetensorsError extends Error {
  override readonly name = 'SafetensorsError';
  constructor(
    readonly file: string,
    readonly tensor: string | null,
    readonly detail: string,
  ) {
    super(`${file}: ${tensor === null ? 'header' : `tensor '${tensor}'`}: ${detail}`);
  }
}

interface EncodeOptions {
  /** Dtype of every tensor in the file. Default F32 (exact); F16/BF16 round to nearest even. */
  dtype?: SafetensorsDtype;
}

export function encodeSafetensors(
  tensors: readonly NamedTensor[],
  metadata: Record<string, string> = {},
  options: EncodeOptions = {},
): Uint8Array {
  const dtype = options.dtype ?? 'F32';
  const width = BYTES[dtype];
  if (width === undefined)
    throw new Error(`safetensors: cannot write dtype ${String(dtype)}; allowed: ${SAFETENSORS_DTYPES.join(', ')}`);
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length) header.__metadata__ = metadata;
  let offset = 0;
  const seen = new Set<string>();
  for (const t of tensors) {
    if (seen.has(t.name)) throw new Error(`safetensors: duplicate tensor name '${t.name}'`);
    seen.add(t.name);
    const n = t.shape.reduce((a, b) => a * b, 1);
    if (n !== t.data.length)
      throw new Error(`safetensors: '${t.name}' has shape [${t.shape}] (${n} values) but ${t.data.length} values`);
    header[t.name] = { dtype, shape: t.shape, data_offsets: [offset, offset + n * width] };
    offset += n * width;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + new TextEncoder().encode(json).length) % 8)) % 8);
  const jsonBytes = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + jsonBytes.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(jsonBytes.length), true);
  out.set(jsonBytes, 8);
  let p = 8 + jsonBytes.length;
  for (const t of tensors) {
    const bytes = dtype === 'F32' ? littleEndianBytes(t.data) : halfBytes(t.data, dtype);
    out.set(bytes, p);
    p += bytes.length;
  }
  return out;
}

/** One tensor's header entry; `begin`/`end` are offsets into the data section (after the header). */
export interface TensorEntry {
  name: string;
  dtype: SafetensorsDtype;
  shape: number[];
  begin: number;
  end: number;
}

/** A parsed, validated header: entries in data order, and where the data starts and ends in the file. */
export interface SafetensorsHeader {
  file: string;
  /** Bytes of JSON (N); the data section starts at 8 + N. */
  headerLength: number;
  dataStart: number;
  /** Size of the data section: the end offset of the last tensor (the file is dataStart + dataBytes long). */
  dataBytes: number;
  tensors: TensorEntry[];
  metadata: Record<string, string>;
}

/**
 * The header length N from a file's first 8 bytes; `fileSize` (when known) bounds it: a header that
 * runs past the end means a truncated file.
 */
export function readHeaderLength(first8: Uint8Array, file: string, fileSize?: number): number {
  if (first8.length < 8)
    throw new SafetensorsError(file, null, `file of ${first8.length} bytes is shorter than the 8-byte header length`);
  const n = Number(new DataView(first8.buffer, first8.byteOffset, 8).getBigUint64(0, true));
  if (fileSize !== undefined && 8 + n > fileSize) {
    throw new SafetensorsError(
      file,
      null,
      `header length ${n} (bytes 8..${8 + n}) runs past the end of the file (${fileSize} bytes); the file is truncated or not safetensors`,
    );
  }
  return n;
}

/**
 * Parses and checks the JSON header: every dtype is one of SAFETENSORS_DTYPES, every shape is a
 * list of non-negative integers, each tensor's byte span matches its shape, and the spans tile the
 * data section from 0 without gaps or overlaps. The file size is not checked here (see
 * `checkDataExtent`), so a header alone can be inspected.
 */
export function parseHeader(json: Uint8Array, file: string): SafetensorsHeader {
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder().decode(json));
  } catch (e) {
    throw new SafetensorsError(
      file,
      null,
      `the ${json.length}-byte header is not valid JSON (${(e as Error).message}); the file is truncated or not safetensors`,
    );
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header))
    throw new SafetensorsError(file, null, 'the header is not a JSON object');
  const tensors: TensorEntry[] = [];
  let metadata: Record<string, string> = {};
  for (const [name, raw] of Object.entries(header as Record<string, unknown>)) {
    if (name === '__metadata__') {
      metadata = raw as Record<string, string>;
      continue;
    }
    const entry = (raw ?? {}) as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    const dtype = entry.dtype;
    if (!SAFETENSORS_DTYPES.includes(dtype as SafetensorsDtype)) {
      throw new SafetensorsError(
        file,
        name,
        `dtype ${JSON.stringify(dtype)} is not supported; allowed: ${SAFETENSORS_DTYPES.join(', ')}`,
      );
    }
    const shape = entry.shape;
    if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
      throw new SafetensorsError(
        file,
        name,
        `shape ${JSON.stringify(shape)}; expected a list of non-negative integers`,
      );
    }
    const offsets = entry.data_offsets;
    if (
      !Array.isArray(offsets) ||
      offsets.length !== 2 ||
      !offsets.every((o) => Number.isInteger(o) && o >= 0) ||
      offsets[1] < offsets[0]
    ) {
      throw new SafetensorsError(
        file,
        name,
        `data_offsets ${JSON.stringify(offsets)}; expected [begin, end] with 0 <= begin <= end`,
      );
    }
    const bytes = shape.reduce((a: number, b: number) => a * b, 1) * BYTES[dtype as SafetensorsDtype];
    if (offsets[1] - offsets[0] !== bytes) {
      throw new SafetensorsError(
        file,
        name,
        `shape [${shape}] of ${String(dtype)} needs ${bytes} bytes but data_offsets [${offsets}] span ${offsets[1] - offsets[0]}`,
      );
    }
    tensors.push({
      name,
      dtype: dtype as SafetensorsDtype,
      shape: shape as number[],
      begin: offsets[0],
      end: offsets[1],
    });
  }
  tensors.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let at = 0;
  let previous: string | null = null;
  for (const t of tensors) {
    if (t.begin !== at) {
      const after = previous === null ? 'the start of the data' : `tensor '${previous}', which ends at ${at}`;
      throw new SafetensorsError(
        file,
        t.name,
        `data_offsets [${t.begin}, ${t.end}] are not contiguous: expected begin ${at} (after ${after}); the data must be covered without gaps or overlaps`,
      );
    }
    at = t.end;
    previous = t.name;
  }
  return { file, headerLength: json.length, dataStart: 8 + json.length, dataBytes: at, tensors, metadata };
}

/** Checks that a file of `fileSize` bytes holds the data `header` describes: truncated files name the first tensor cut off. */
export function checkDataExtent(header: SafetensorsHeader, fileSize: number): void {
  const available = fileSize - header.dataStart;
  if (header.dataBytes > available) {
    const cut = header.tensors.find((t) => t.end > available)!;
    throw new SafetensorsError(
      header.file,
      cut.name,
      `data_offsets [${cut.begin}, ${cut.end}] end at byte ${header.dataStart + cut.end} of the file, which has only ${fileSize} bytes; the file is truncated`,
    );
  }
  if (header.dataBytes < available) {
    throw new SafetensorsError(
      header.file,
      null,
      `${available - header.dataBytes} bytes follow the last tensor's data (the data section is ${header.dataBytes} bytes); expected none`,
    );
  }
}

/** The header of a whole file in memory, checked against the file's size. */
export function readSafetensorsHeader(bytes: Uint8Array, file = 'safetensors'): SafetensorsHeader {
  const n = readHeaderLength(bytes.subarray(0, 8), file, bytes.length);
  const header = parseHeader(bytes.subarray(8, 8 + n), file);
  checkDataExtent(header, bytes.length);
  return header;
}

/** One tensor's values as F32 (exact for F32, F16 and BF16); `bytes` is the whole file. */
export function decodeTensor(bytes: Uint8Array, header: SafetensorsHeader, entry: TensorEntry): Float32Array {
  const raw = bytes.subarray(header.dataStart + entry.begin, header.dataStart + entry.end);
  if (raw.length !== entry.end - entry.begin)
    throw new SafetensorsError(
      header.file,
      entry.name,
      `data_offsets [${entry.begin}, ${entry.end}] run past the end of the file (${bytes.length} bytes); the file is truncated`,
    );
  return entry.dtype === 'F32' ? fromLittleEndian(raw) : fromHalf(raw, entry.dtype);
}

interface DecodedSafetensors {
  tensors: Map<string, NamedTensor>;
  metadata: Record<string, string>;
  /** Dtype of each tensor as stored. */
  dtypes: Map<string, SafetensorsDtype>;
}

/** Every tensor of a file, as F32; `file` names the file in errors. */
export function decodeSafetensors(bytes: Uint8Array, file = 'safetensors'): DecodedSafetensors {
  const header = readSafetensorsHeader(bytes, file);
  const tensors = new Map<string, NamedTensor>();
  const dtypes = new Map<string, SafetensorsDtype>();
  for (const t of header.tensors) {
    tensors.set(t.name, { name: t.name, shape: t.shape, data: decodeTensor(bytes, header, t) });
    dtypes.set(t.name, t.dtype);
  }
  return { tensors, metadata: header.metadata, dtypes };
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function littleEndianBytes(data: Float32Array): Uint8Array {
  const copy = new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
  if (!LITTLE_ENDIAN) for (let i = 0; i < copy.length; i += 4) copy.subarray(i, i + 4).reverse();
  return copy;
}

function fromLittleEndian(bytes: Uint8Array): Float32Array {
  const copy = bytes.slice();
  if (!LITTLE_ENDIAN) for (let i = 0; i < copy.length; i += 4) copy.subarray(i, i + 4).reverse();
  return new Float32Array(copy.buffer, copy.byteOffset, copy.byteLength / 4);
}

function fromHalf(bytes: Uint8Array, dtype: 'F16' | 'BF16'): Float32Array {
  const n = bytes.length / 2;
  const out = new Float32Array(n);
  const bits = new Uint32Array(out.buffer);
  // Little-endian host: read the 16-bit words directly (from a copy when the offset is odd).
  const words = LITTLE_ENDIAN
    ? new Uint16Array(
        bytes.byteOffset % 2 === 0 ? bytes.buffer : bytes.slice().buffer,
        bytes.byteOffset % 2 === 0 ? bytes.byteOffset : 0,
        n,
      )
    : null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const word = (i: number) => (words ? words[i] : view.getUint16(2 * i, true));
  if (dtype === 'BF16') for (let i = 0; i < n; i++) bits[i] = word(i) << 16;
  else {
    const table = f16Table();
    for (let i = 0; i < n; i++) bits[i] = table[word(i)];
  }
  return out;
}

let F16_TABLE: Uint32Array | null = null;

/** F32 bits of each of the 2^16 F16 patterns (256 KiB, built on first use). */
function f16Table(): Uint32Array {
  if (!F16_TABLE) {
    F16_TABLE = new Uint32Array(0x10000);
    for (let h = 0; h < 0x10000; h++) F16_TABLE[h] = f16BitsToF32Bits(h);
  }
  return F16_TABLE;
}

function halfBytes(data: Float32Array, dtype: 'F16' | 'BF16'): Uint8Array {
  const out = new Uint8Array(data.length * 2);
  const view = new DataView(out.buffer);
  const bits = new Uint32Array(Float32Array.from(data).buffer);
  const round = dtype === 'BF16' ? f32BitsToBf16Bits : f32BitsToF16Bits;
  for (let i = 0; i < data.length; i++) view.setUint16(2 * i, round(bits[i]), true);
  return out;
}

/** IEEE binary16 bits → binary32 bits, exactly (subnormals normalised, Inf and NaN kept). */
export function f16BitsToF32Bits(h: number): number {
  const sign = (h & 0x8000) << 16;
  const e = (h >> 10) & 0x1f;
  let m = h & 0x3ff;
  if (e === 0x1f) return (sign | 0x7f800000 | (m << 13)) >>> 0;
  if (e !== 0) return (sign | ((e + 112) << 23) | (m << 13)) >>> 0;
  if (m === 0) return sign >>> 0;
  // Subnormal m · 2^-24: shift the leading 1 into the implicit bit, lowering the exponent from 2^-14.
  let exp = 113;
  while ((m & 0x400) === 0) {
    m <<= 1;
    exp--;
  }
  return (sign | (exp << 23) | ((m & 0x3ff) << 13)) >>> 0;
}

/** binary32 bits → binary16 bits, round to nearest, ties to even; overflow gives ±Inf, NaN stays NaN. */
function f32BitsToF16Bits(u: number): number {
  const sign = (u >>> 16) & 0x8000;
  const e = (u >>> 23) & 0xff;
  const m = u & 0x7fffff;
  if (e === 0xff) return sign | 0x7c00 | (m ? 0x200 | (m >>> 13) : 0);
  const he = e - 112; // exponent rebiased from 127 to 15
  if (he >= 0x1f) return sign | 0x7c00;
  let k: number, rem: number, half: number;
  if (he >= 1) {
    k = (he << 10) | (m >>> 13);
    rem = m & 0x1fff;
    half = 0x1000;
  } else {
    // Half subnormal: k · 2^-24 with k = (1.m · 2^(e-127)) / 2^-24 = (m | 2^23) >> (126 - e), rounded.
    const shift = 126 - e;
    if (shift > 25) return sign;
    const full = m | 0x800000;
    k = full >>> shift;
    rem = full & ((1 << shift) - 1);
    half = 1 << (shift - 1);
  }
  // A carry out of the mantissa moves to the next binade (or to Inf): the encoding is monotone.
  if (rem > half || (rem === half && (k & 1) === 1)) k++;
  return sign | k;
}

/** binary32 bits → bfloat16 bits (the upper half), round to nearest, ties to even; NaN stays NaN. */
function f32BitsToBf16Bits(u: number): number {
  if ((u & 0x7f800000) === 0x7f800000 && (u & 0x7fffff) !== 0) return ((u >>> 16) | 0x40) & 0xffff;
  return Math.floor((u + 0x7fff + ((u >>> 16) & 1)) / 0x10000) & 0xffff;
}
