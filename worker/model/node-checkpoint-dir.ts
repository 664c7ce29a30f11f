/** Reads and writes a checkpoint folder (the files of checkpoint.ts) in Node: the CLI and the tests. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { loadHfFolder } from '../hf/folder';
import { hfDirReader } from '../hf/node-hf-dir';
import type { CheckpointFiles, LoadedCheckpoint } from './checkpoint';
import { CHECKPOINT_FILES, checkpointFromHf, importCheckpoint } from './checkpoint';

const TOKENIZER_CONFIG = 'tokenizer_config.json';

export function readCheckpointDir(dir: string): CheckpointFiles {
  const missing = CHECKPOINT_FILES.filter((f) => !existsSync(join(dir, f)));
  if (missing.length)
    throw new Error(
      `checkpoint folder '${dir}' lacks ${missing.join(', ')} (a checkpoint has ${CHECKPOINT_FILES.join(', ')})`,
    );
  const files = Object.fromEntries(
    CHECKPOINT_FILES.map((f) => [f, new Uint8Array(readFileSync(join(dir, f)))]),
  ) as CheckpointFiles;
  if (existsSync(join(dir, TOKENIZER_CONFIG)))
    files[TOKENIZER_CONFIG] = new Uint8Array(readFileSync(join(dir, TOKENIZER_CONFIG)));
  return files;
}

export function writeCheckpointDir(dir: string, files: CheckpointFiles): void {
  mkdirSync(dir, { recursive: true });
  for (const f of CHECKPOINT_FILES) writeFileSync(join(dir, f), files[f]);
  if (files[TOKENIZER_CONFIG]) writeFileSync(join(dir, TOKENIZER_CONFIG), files[TOKENIZER_CONFIG]);
}

/**
 * A base for training from a folder: a Dewpoint checkpoint (it has dewpoint.json), or a Hugging
 * Face Llama/Mistral folder (config.json, safetensors, tokenizer.json), checked and loaded whole
 * by worker/hf/folder.ts.
 */
export async function loadCheckpointDir(dir: string): Promise<LoadedCheckpoint> {
  if (existsSync(join(dir, 'dewpoint.json'))) return importCheckpoint(readCheckpointDir(dir));
  return checkpointFromHf(await loadHfFolder(hfDirReader(dir)), basename(dir));
}

/** The shipped base checkpoint's folder, relative to the repository root (where the CLI and the tests run). */
export const BASE_CHECKPOINT_DIR = 'public/checkpoints/arith-base';
