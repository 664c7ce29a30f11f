/** Importing another framework's rollouts as a stored run (worker/interop/verl-import.ts does the reading). */
import { transfer } from 'comlink';
import type { VerlImportResult } from '../../worker/protocol';
import { workbench } from '../worker-client';

/** Reads the chosen files and hands their bytes to the worker (transferred, not copied). */
export async function importVerlFiles(files: readonly File[]): Promise<VerlImportResult> {
  const read = await Promise.all(
    files.map(async (f) => ({ name: f.name, bytes: new Uint8Array(await f.arrayBuffer()) })),
  );
  return workbench.importVerlRun(
    transfer(
      read,
      read.map((f) => f.bytes.buffer),
    ),
  );
}
