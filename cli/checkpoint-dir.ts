/** Reads and writes a checkpoint folder (the files of worker/model/checkpoint.ts) in Node. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckpointFiles } from '../worker/model/checkpoint';
import { CHECKPOINT_FILES } from '../worker/model/checkpoint';

export function readCheckpointDir(dir: string): CheckpointFiles {
  const missing = CHECKPOINT_FILES.filter((f) => !existsSync(join(dir, f)));
  if (missing.length) throw new Error(`checkpoint folder '${dir}' lacks ${missing.join(', ')} (a checkpoint has ${CHECKPOINT_FILES.join(', ')})`);
  return Object.fromEntries(CHECKPOINT_FILES.map((f) => [f, new Uint8Array(readFileSync(join(dir, f)))])) as CheckpointFiles;
}

export function writeCheckpointDir(dir: string, files: CheckpointFiles): void {
  mkdirSync(dir, { recursive: true });
  for (const f of CHECKPOINT_FILES) writeFileSync(join(dir, f), files[f]);
}
