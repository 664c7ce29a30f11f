/** Reads and writes a checkpoint folder (the files of checkpoint.ts) in Node: the CLI and the tests. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckpointFiles } from './checkpoint';
import { CHECKPOINT_FILES, OPTIONAL_CHECKPOINT_FILES } from './checkpoint';

export function readCheckpointDir(dir: string): CheckpointFiles {
  const missing = CHECKPOINT_FILES.filter((f) => !existsSync(join(dir, f)));
  if (missing.length)
    throw new Error(
      `checkpoint folder '${dir}' lacks ${missing.join(', ')} (a checkpoint has ${CHECKPOINT_FILES.join(', ')})`,
    );
  const files = Object.fromEntries(
    CHECKPOINT_FILES.map((f) => [f, new Uint8Array(readFileSync(join(dir, f)))]),
  ) as CheckpointFiles;
  for (const f of OPTIONAL_CHECKPOINT_FILES)
    if (existsSync(join(dir, f))) files[f] = new Uint8Array(readFileSync(join(dir, f)));
  return files;
}

export function writeCheckpointDir(dir: string, files: CheckpointFiles): void {
  mkdirSync(dir, { recursive: true });
  for (const f of CHECKPOINT_FILES) writeFileSync(join(dir, f), files[f]);
  for (const f of OPTIONAL_CHECKPOINT_FILES) if (files[f]) writeFileSync(join(dir, f), files[f]);
}

/** The shipped base checkpoint's folder, relative to the repository root (where the CLI and the tests run). */
export const BASE_CHECKPOINT_DIR = 'public/checkpoints/arith-base';
