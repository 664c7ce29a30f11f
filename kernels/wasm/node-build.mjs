// Compiles the wasm backend's kernels (kernels/wasm/assembly/*.ts, AssemblyScript) with the
// `asc` that `npm ci` installs: kernels/wasm/build/ops.wasm (its own memory, one thread) and
// ops-mt.wasm (an imported shared memory, for workers over SharedArrayBuffer), each also built with
// relaxed SIMD (ops-relaxed.wasm, ops-mt-relaxed.wasm: fused multiply-adds, for engines that have
// it; kernels/wasm/simd.ts chooses). Skips the compile
// when both outputs are newer than every source and this file (its flags); `force` rebuilds.
// Node only. Callers: node-wasm.ts before it reads a binary (the CLI, the tests), the command line
// scripts/build-wasm.mjs (`npm ci`, `npm test`), and vite.config.ts (`npm run build`, the dev server).
import { mkdirSync, readdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const src = join(here, 'assembly');
const out = join(here, 'build');
const THREADS = ['--enable', 'threads', '--sharedMemory'];
const RELAXED = ['--enable', 'relaxed-simd'];
const TARGETS = [
  { file: 'ops.wasm', flags: [] },
  { file: 'ops-mt.wasm', flags: THREADS },
  { file: 'ops-relaxed.wasm', flags: RELAXED },
  { file: 'ops-mt-relaxed.wasm', flags: [...THREADS, ...RELAXED] },
];
// 64 KiB pages: 4 GiB at most, memory32's limit (the shared build must declare a maximum).
const COMMON = [
  '--runtime',
  'stub',
  '--importMemory',
  '--initialMemory',
  '1',
  '--maximumMemory',
  '65536',
  '-O3',
  '--noAssert',
  '--enable',
  'simd',
];

export async function buildWasm({ force = false, quiet = false } = {}) {
  const sources = readdirSync(src)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(src, f));
  // This file too: its flags are part of what the binaries are built from.
  const newest = Math.max(...sources.map((f) => statSync(f).mtimeMs), statSync(fileURLToPath(import.meta.url)).mtimeMs);
  const stale = TARGETS.filter((t) => force || !isNewer(join(out, t.file), newest));
  if (!stale.length) return;
  mkdirSync(out, { recursive: true });
  const asc = await import('assemblyscript/asc');
  for (const t of stale) {
    // Written beside, then renamed: a reader (a test process, the dev server) never sees half a file.
    const tmp = join(out, `.${t.file}.${process.pid}`);
    const { error, stderr } = await asc.main([join(src, 'index.ts'), ...COMMON, ...t.flags, '--outFile', tmp]);
    if (error) throw new Error(`asc ${t.file}: ${error.message}\n${stderr.toString()}`);
    renameSync(tmp, join(out, t.file));
    if (!quiet) console.log(`[wasm] built kernels/wasm/build/${t.file}`);
  }
}

function isNewer(file, than) {
  try {
    return statSync(file).mtimeMs >= than;
  } catch {
    return false;
  }
}
