#!/usr/bin/env node
// The `dewpoint` command: runs cli/main.ts through tsx, with WGSL `?raw` imports served from disk.
import { register } from 'node:module';
import { register as registerTsx } from 'tsx/esm/api';

registerTsx();
register('../cli/wgsl-loader.mjs', import.meta.url);
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
