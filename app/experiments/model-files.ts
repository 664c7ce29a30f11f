/**
 * The files of a model folder as the browser gives them: from a folder input (`webkitdirectory`,
 * each File's `webkitRelativePath` is `folder/name`) or a drop (the folder itself, read through
 * its directory entry, or some of its files). Only the folder's own files are kept: a Hugging
 * Face folder is flat, and a subfolder (`original/`, `.git/`) is none of the loader's business.
 * Also the words of an inspection's memory estimate. No reading of the files (the worker does).
 */
import type { MemoryPlanSummary, ModelSummary } from '../../worker/protocol';
import type { PickedFolder } from '../queries/models';

/** The top-level files of a folder input's selection, and the folder's name. */
export function filesOfInput(list: ArrayLike<File>): PickedFolder {
  const all = Array.from(list);
  const paths = all.map((f) => (f.webkitRelativePath || f.name).split('/'));
  const name = paths.find((p) => p.length > 1)?.[0];
  return { ...(name ? { name } : {}), files: all.filter((_, i) => paths[i].length <= 2) };
}

/** The entries of one directory (readEntries gives them in batches until an empty one). */
async function entriesOf(dir: FileSystemDirectoryEntry): Promise<FileSystemEntry[]> {
  const reader = dir.createReader();
  const out: FileSystemEntry[] = [];
  for (;;) {
    const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
    if (!batch.length) return out;
    out.push(...batch);
  }
}

const fileOf = (e: FileSystemFileEntry) => new Promise<File>((resolve, reject) => e.file(resolve, reject));

/**
 * What was dropped: one folder (its top-level files), or files. The entries are taken at once,
 * as the drop event requires (the DataTransfer is emptied when the handler returns).
 */
export function filesOfDrop(dt: DataTransfer): Promise<PickedFolder> {
  const entries = Array.from(dt.items, (item) => item.webkitGetAsEntry?.() ?? null);
  const files = Array.from(dt.files);
  const dir = entries.length === 1 && entries[0]?.isDirectory ? (entries[0] as FileSystemDirectoryEntry) : null;
  if (!dir) return Promise.resolve({ files });
  return entriesOf(dir).then(async (inside) => ({
    name: dir.name,
    files: await Promise.all(inside.filter((e) => e.isFile).map((e) => fileOf(e as FileSystemFileEntry))),
  }));
}

export const MiB = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;

const GiB = (b: number) => `${(b / 2 ** 30).toFixed(2)} GiB`;

/** "3.41 GiB on wasm, of its 4.00 GiB: trained model … + …; fits." (or why not, and what would fit). */
export function planText(p: MemoryPlanSummary): string {
  const parts = p.parts.map((x) => `${x.part} ${GiB(x.bytes)}`).join(' + ');
  return `${GiB(p.total)} on wasm, of its ${GiB(p.limit)}: ${parts}; ${p.problem === null ? 'fits' : `does not fit: ${p.problem}`}.`;
}

/** WebGPU's default maxStorageBufferBindingSize (128 MiB): the bound of an adapter that reports none. */
const WEBGPU_DEFAULT_MAX_BINDING = 2 ** 27;

/**
 * The plan where the backend is WebGPU: the same tensors are GPU buffers, each of its own, so the
 * wasm heap's 4 GiB does not bound them (the GPU's memory does, which WebGPU does not report) and the
 * trainer does not refuse by it; each buffer must fit the adapter's maxStorageBufferBindingSize. Its
 * words, and whether the largest buffer fits.
 */
export function webgpuPlanText(p: MemoryPlanSummary, maxBinding: number | undefined): { text: string; fits: boolean } {
  const limit = maxBinding ?? WEBGPU_DEFAULT_MAX_BINDING;
  const fits = p.largestBuffer.bytes <= limit;
  const parts = p.parts.map((x) => `${x.part} ${GiB(x.bytes)}`).join(' + ');
  return {
    fits,
    text:
      `${GiB(p.total)} of GPU buffers on WebGPU, not the wasm heap (its ${GiB(p.limit)} does not bound them, the GPU's ` +
      `memory does): ${parts}; the largest buffer, ${p.largestBuffer.label}, is ${MiB(p.largestBuffer.bytes)}, ` +
      `${fits ? 'within' : 'more than'} this adapter's ${MiB(limit)} a buffer (maxStorageBufferBindingSize)` +
      `${fits ? '' : ': the run cannot allocate it here'}.`,
  };
}

/** "about 80.2 MiB in f32 for a 8 × 256 batch (rows × ids): weights … + gradients … + AdamW m and v … + activations …". */
export function memoryText(t: ModelSummary['training']): string {
  return `about ${MiB(t.total)} in f32 for a ${t.rows} × ${t.seq} batch (rows × ids): weights ${MiB(t.weights)} + gradients ${MiB(t.grads)} + AdamW m and v ${MiB(t.adamMoments)} + activations ${MiB(t.activations)}`;
}
