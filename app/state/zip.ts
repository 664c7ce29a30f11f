/**
 * A ZIP archive of a few files, stored uncompressed (method 0, STORE): one download instead of
 * several, which a browser would interrupt with a "download multiple files" permission prompt.
 * Layout per PKWARE's APPNOTE.TXT (6.3.10): for each file a local file header (4.3.7) then its
 * bytes, then the central directory (4.3.12), then the end of central directory record (4.3.16);
 * CRC-32 is the IEEE 802.3 polynomial (reflected 0xEDB88320), as zlib's `crc32`. Names are UTF-8
 * (general purpose flag bit 11). No ZIP64: each file and the archive stay under 4 GiB and 65,535
 * entries, and a larger export throws. Not compression (parquet is compressed already) nor reading.
 */

export interface ZipEntry {
  /** The path inside the archive, `/`-separated (`launch.sh`). */
  name: string;
  bytes: Uint8Array;
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 of `bytes` (the value zip headers and zlib's `crc32` give). */
export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** MS-DOS time and date (2-second resolution, years 1980..2107), as zip headers keep them. */
function dosTime(d: Date): { time: number; date: number } {
  const year = Math.min(Math.max(d.getFullYear(), 1980), 2107);
  return {
    time: (d.getHours() << 11) | (d.getMinutes() << 5) | (d.getSeconds() >> 1),
    date: ((year - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate(),
  };
}

const LOCAL = 0x04034b50;
const CENTRAL = 0x02014b50;
const END = 0x06054b50;
/** Version 2.0 of the format, needed to extract and written by. */
const VERSION = 20;
/**
 * "Version made by": Unix (3) in the high byte, so readers take the external attributes as a Unix
 * mode (a plain file, rw-r--r--) and the names as they are: Info-ZIP's unzip reads names "made by
 * MS-DOS" as code page 437 whatever bit 11 says.
 */
const MADE_BY = (3 << 8) | VERSION;
const FILE_MODE = (0o100644 << 16) >>> 0;
const UTF8_NAMES = 0x0800;
const MAX32 = 0xffffffff;

/** The files as one uncompressed .zip; `modified` is every entry's time (default now). */
export function zipStore(entries: readonly ZipEntry[], modified = new Date()): Uint8Array<ArrayBuffer> {
  if (entries.length > 0xffff) throw new Error(`zipStore: ${entries.length} files; at most 65535 without ZIP64`);
  const { time, date } = dosTime(modified);
  const utf8 = new TextEncoder();
  const seen = new Set<string>();
  const files = entries.map((e) => {
    if (!e.name || e.name.startsWith('/') || e.name.split('/').includes('..'))
      throw new Error(`zipStore: '${e.name}' is not a relative path inside the archive`);
    if (seen.has(e.name)) throw new Error(`zipStore: '${e.name}' is in the archive twice`);
    seen.add(e.name);
    if (e.bytes.length >= MAX32) throw new Error(`zipStore: '${e.name}' is 4 GiB or more; ZIP64 is not written`);
    return { name: utf8.encode(e.name), bytes: e.bytes, crc: crc32(e.bytes) };
  });
  const localSize = files.reduce((n, f) => n + 30 + f.name.length + f.bytes.length, 0);
  const centralSize = files.reduce((n, f) => n + 46 + f.name.length, 0);
  if (localSize + centralSize >= MAX32) throw new Error('zipStore: the archive would be 4 GiB or more');
  const out = new Uint8Array(localSize + centralSize + 22);
  const view = new DataView(out.buffer);
  let at = 0;
  const u16 = (v: number) => (view.setUint16(at, v, true), (at += 2));
  const u32 = (v: number) => (view.setUint32(at, v, true), (at += 4));
  const bytes = (b: Uint8Array) => (out.set(b, at), (at += b.length));
  /** The fields local and central headers share, from "version needed" to "extra field length". */
  const common = (f: (typeof files)[number]) => {
    u16(VERSION);
    u16(UTF8_NAMES);
    u16(0); // STORE
    u16(time);
    u16(date);
    u32(f.crc);
    u32(f.bytes.length); // compressed size = size
    u32(f.bytes.length);
    u16(f.name.length);
    u16(0); // no extra field
  };
  const offsets = files.map((f) => {
    const offset = at;
    u32(LOCAL);
    common(f);
    bytes(f.name);
    bytes(f.bytes);
    return offset;
  });
  const centralStart = at;
  files.forEach((f, i) => {
    u32(CENTRAL);
    u16(MADE_BY);
    common(f);
    u16(0); // comment length
    u16(0); // disk number start
    u16(0); // internal attributes
    u32(FILE_MODE); // external attributes
    u32(offsets[i]);
    bytes(f.name);
  });
  u32(END);
  u16(0); // this disk
  u16(0); // the disk with the central directory
  u16(files.length);
  u16(files.length);
  u32(centralSize);
  u32(centralStart);
  u16(0); // comment length
  if (at !== out.length || centralStart !== localSize) throw new Error(`zipStore: wrote ${at} of ${out.length} bytes`);
  return out;
}
