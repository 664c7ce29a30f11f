#!/usr/bin/env node
// The `dewpoint` command: runs cli/main.ts through tsx, with WGSL `?raw` imports served from disk.
// Errors print as one line (the stack too with DEWPOINT_DEBUG=1) and exit with status 1.
import { register } from 'node:module';
import { register as registerTsx } from 'tsx/esm/api';

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
