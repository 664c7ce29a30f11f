/**
 * A Hugging Face model folder on disk, for the CLI and the tests: a ranged reader (so inspecting
 * reads only the safetensors headers) and a writer for writeHfFolder's files.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HfFileReader } from './files';

/** Reads `dir/name`; `undefined` when there is no such file. Names are plain file names. */
export function hfDirReader(dir: string): HfFileReader {
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new Error(`model folder '${dir}' does not exist or is not a folder`);
  return async (name, range) => {
    if (name.includes('/') || name.includes('\\') || name === '..')
      throw new Error(`model folder '${dir}': '${name}' is not a plain file name`);
    const path = join(dir, name);
    if (!existsSync(path)) return undefined;
    if (!range) return new Uint8Array(readFileSync(path));
    const fd = openSync(path, 'r');
    try {
      const out = new Uint8Array(Math.max(0, range.end - range.start));
      let got = 0;
      while (got < out.length) {
        const n = readSync(fd, out, got, out.length - got, range.start + got);
        if (n === 0) break;
        got += n;
      }
      return out.subarray(0, got);
    } finally {
      closeSync(fd);
    }
  };
}

export function writeHfDir(dir: string, files: ReadonlyMap<string, Uint8Array>): void {
  mkdirSync(dir, { recursive: true });
  for (const [name, bytes] of files) writeFileSync(join(dir, name), bytes);
}
