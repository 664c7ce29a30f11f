#!/usr/bin/env node
// The `dewpoint` command: runs cli/main.ts through tsx, with WGSL `?raw` imports served from disk.
// Errors print as one line (the stack too with DEWPOINT_DEBUG=1) and exit with status 1.
import { register } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { register as registerTsx } from 'tsx/esm/api';

// Relaxed SIMD (the wasm kernels' fused multiply-adds, on by default in Chrome since 114) is behind
// a flag in Node 20: turned on before any module compiles, so the CLI runs the browser's kernels.
setFlagsFromString('--experimental-wasm-relaxed-simd');
registerTsx();
register('../cli/wgsl-loader.mjs', import.meta.url);
try {
  const { main } = await import('../cli/main.ts');
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`dewpoint: ${e?.name && e.name !== 'Error' ? `${e.name}: ` : ''}${e?.message ?? e}\n`);
  if (process.env.DEWPOINT_DEBUG) process.stderr.write(`${e?.stack}\n`);
  process.exitCode = 1;
}
