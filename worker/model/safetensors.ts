/**
 * The safetensors format (https://huggingface.co/docs/safetensors): an 8-byte little-endian
 * header length N, N bytes of JSON (`{name: {dtype, shape, data_offsets: [begin, end]}, ...,
 * "__metadata__": {string: string}}`, padded with spaces to a multiple of 8), then the raw
 * little-endian tensor data. Only F32 is written; F32 is read, anything else is refused by name.
 * The round trip is exact (bytes in, same bytes out).
 */

export interface NamedTensor {
  name: string;
  shape: number[];
  data: Float32Array;
}

export function encodeSafetensors(tensors: readonly NamedTensor[], metadata: Record<string, string> = {}): Uint8Array {
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length) header.__metadata__ = metadata;
  let offset = 0;
  const seen = new Set<string>();
  for (const t of tensors) {
    if (seen.has(t.name)) throw new Error(`safetensors: duplicate tensor name '${t.name}'`);
    seen.add(t.name);
    const n = t.shape.reduce((a, b) => a * b, 1);
    if (n !== t.data.length) throw new Error(`safetensors: '${t.name}' has shape [${t.shape}] (${n} values) but ${t.data.length} values`);
    header[t.name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + t.data.byteLength] };
    offset += t.data.byteLength;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + new TextEncoder().encode(json).length) % 8)) % 8);
  const jsonBytes = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + jsonBytes.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(jsonBytes.length), true);
  out.set(jsonBytes, 8);
  let p = 8 + jsonBytes.length;
  for (const t of tensors) {
    out.set(littleEndianBytes(t.data), p);
    p += t.data.byteLength;
  }
  return out;
}

export interface DecodedSafetensors {
  tensors: Map<string, NamedTensor>;
  metadata: Record<string, string>;
}

export function decodeSafetensors(bytes: Uint8Array): DecodedSafetensors {
  if (bytes.length < 8) throw new Error(`safetensors: file of ${bytes.length} bytes is shorter than the 8-byte header length`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  if (8 + n > bytes.length) throw new Error(`safetensors: header length ${n} runs past the end of the file (${bytes.length} bytes)`);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))) as Record<string, unknown>;
  const dataStart = 8 + n;
  const tensors = new Map<string, NamedTensor>();
  let metadata: Record<string, string> = {};
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') {
      metadata = entry as Record<string, string>;
      continue;
    }
    const { dtype, shape, data_offsets } = entry as { dtype: string; shape: number[]; data_offsets: [number, number] };
    if (dtype !== 'F32') throw new Error(`safetensors: tensor '${name}' has dtype ${dtype}; only F32 is supported`);
    const [begin, end] = data_offsets;
    const count = shape.reduce((a, b) => a * b, 1);
    if (end - begin !== count * 4 || dataStart + end > bytes.length) {
      throw new Error(`safetensors: tensor '${name}' offsets [${begin}, ${end}] do not match shape [${shape}] or the file size`);
    }
    const data = fromLittleEndian(bytes.subarray(dataStart + begin, dataStart + end));
    tensors.set(name, { name, shape, data });
  }
  return { tensors, metadata };
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
