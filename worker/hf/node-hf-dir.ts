/**
 * A Hugging Face model folder on disk, for the CLI and the tests: a ranged reader (so inspecting
 * reads only the safetensors headers), a writer for writeHfFolder's files, and `loadCheckpointDir`
 * (a training base from a Dewpoint checkpoint folder or a Hugging Face one).
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { LoadedCheckpoint } from '../model/checkpoint';
import { checkpointFromHf, importCheckpoint } from '../model/checkpoint';
import { readCheckpointDir } from '../model/node-checkpoint-dir';
import type { HfFileReader } from './files';
import { loadHfFolder } from './folder';

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

/**
 * A base for training from a folder: a Dewpoint checkpoint (it has dewpoint.json), or a Hugging
 * Face Llama/Mistral folder (config.json, safetensors, tokenizer.json), checked and loaded whole
 * by folder.ts.
 */
export async function loadCheckpointDir(dir: string): Promise<LoadedCheckpoint> {
  if (existsSync(join(dir, 'dewpoint.json'))) return importCheckpoint(readCheckpointDir(dir));
  return checkpointFromHf(await loadHfFolder(hfDirReader(dir)), basename(dir));
}
