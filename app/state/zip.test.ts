import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { crc32, zipStore, type ZipEntry } from './zip';

/**
 * Reads an archive back by its central directory (APPNOTE.TXT 4.3.12, 4.3.16), checking each
 * local header against it and each file's CRC with zlib's: written by hand from the spec, not
 * from zip.ts.
 */
function readZip(zip: Uint8Array): { name: string; bytes: Uint8Array; flags: number; method: number }[] {
  const v = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  const end = zip.length - 22;
  expect(v.getUint32(end, true)).toBe(0x06054b50);
  const count = v.getUint16(end + 10, true);
  expect(v.getUint16(end + 8, true)).toBe(count);
  const cdSize = v.getUint32(end + 12, true);
  const cdOffset = v.getUint32(end + 16, true);
  expect(cdOffset + cdSize).toBe(end);
  const out = [];
  let at = cdOffset;
  for (let i = 0; i < count; i++) {
    expect(v.getUint32(at, true)).toBe(0x02014b50);
    const flags = v.getUint16(at + 8, true);
    const method = v.getUint16(at + 10, true);
    const crc = v.getUint32(at + 16, true);
    const size = v.getUint32(at + 20, true);
    expect(v.getUint32(at + 24, true)).toBe(size);
    const nameLength = v.getUint16(at + 28, true);
    const skip = v.getUint16(at + 30, true) + v.getUint16(at + 32, true);
    const local = v.getUint32(at + 42, true);
    const name = new TextDecoder().decode(zip.subarray(at + 46, at + 46 + nameLength));
    at += 46 + nameLength + skip;
    // The local header says the same.
    expect(v.getUint32(local, true)).toBe(0x04034b50);
    expect(v.getUint16(local + 8, true)).toBe(method);
    expect(v.getUint32(local + 14, true)).toBe(crc);
    expect(v.getUint32(local + 18, true)).toBe(size);
    expect(v.getUint32(local + 22, true)).toBe(size);
    const localName = v.getUint16(local + 26, true);
    const start = local + 30 + localName + v.getUint16(local + 28, true);
    expect(new TextDecoder().decode(zip.subarray(local + 30, local + 30 + localName))).toBe(name);
    const bytes = zip.slice(start, start + size);
    expect(zlibCrc32(bytes) >>> 0).toBe(crc);
    out.push({ name, bytes, flags, method });
  }
  expect(at).toBe(end);
  return out;
}

const enc = (s: string) => new TextEncoder().encode(s);
const FILES: ZipEntry[] = [
  { name: 'rollouts.parquet', bytes: Uint8Array.from({ length: 5000 }, (_, i) => (i * 131 + 7) & 0xff) },
  { name: 'val.parquet', bytes: new Uint8Array(0) },
  { name: 'launch.sh', bytes: enc('#!/usr/bin/env bash\npython3 -m verl.trainer.main_ppo\n') },
  { name: 'notes/ε-clip.txt', bytes: enc('clip ε = 0.2\n') },
];

describe('zipStore', () => {
  it('crc32 gives the check value of the CRC-32/ISO-HDLC catalogue and agrees with zlib', () => {
    expect(crc32(enc('123456789'))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array(0))).toBe(0);
    for (const f of FILES) expect(crc32(f.bytes)).toBe(zlibCrc32(f.bytes) >>> 0);
  });

  it('reads back: the same names, in order, with the same bytes, stored (method 0) with UTF-8 names', () => {
    const back = readZip(zipStore(FILES, new Date(2025, 4, 17, 13, 45, 30)));
    expect(back.map((f) => f.name)).toEqual(FILES.map((f) => f.name));
    back.forEach((f, i) => {
      expect(f.method).toBe(0);
      expect(f.flags & 0x0800).toBe(0x0800);
      expect(Buffer.from(f.bytes).equals(Buffer.from(FILES[i].bytes))).toBe(true);
    });
  });

  it('writes the modification time as MS-DOS time and date', () => {
    const zip = zipStore([FILES[2]], new Date(2025, 4, 17, 13, 45, 30));
    const v = new DataView(zip.buffer);
    expect(v.getUint16(10, true)).toBe((13 << 11) | (45 << 5) | 15);
    expect(v.getUint16(12, true)).toBe(((2025 - 1980) << 9) | (5 << 5) | 17);
  });

  it('an empty archive is the end record alone', () => {
    const zip = zipStore([]);
    expect(zip.length).toBe(22);
    expect(readZip(zip)).toEqual([]);
  });

  it('refuses a name twice, an absolute path or one leaving the archive', () => {
    expect(() => zipStore([FILES[0], FILES[0]])).toThrow(/'rollouts.parquet' is in the archive twice/);
    expect(() => zipStore([{ name: '/etc/x', bytes: new Uint8Array(1) }])).toThrow(/not a relative path/);
    expect(() => zipStore([{ name: 'a/../../x', bytes: new Uint8Array(1) }])).toThrow(/not a relative path/);
  });

  // Info-ZIP's unzip, where the machine has it: its own reader, CRC check included.
  it.skipIf(!existsSync('/usr/bin/unzip'))('unzip -t passes it and unzip -p gives each file back', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dewpoint-zip-'));
    const file = join(dir, 'export.zip');
    writeFileSync(file, zipStore(FILES));
    expect(execFileSync('unzip', ['-t', file], { encoding: 'utf8' })).toMatch(/No errors detected/);
    expect(execFileSync('unzip', ['-Z1', file], { encoding: 'utf8' }).trim().split('\n')).toEqual(
      FILES.map((f) => f.name),
    );
    for (const f of FILES)
      expect(Buffer.from(execFileSync('unzip', ['-p', file, f.name])).equals(Buffer.from(f.bytes))).toBe(true);
  });
});
