// Node module hooks: `import src from './x.wgsl?raw'` yields the file's text, as Vite's `?raw`
// does in the browser build and in Vitest; so do the other files imported `?raw` (the example
// environment program and its tasks, worker/episodes/program-example.ts). Registered by
// bin/dewpoint.mjs. A shader's `#include` lines stay in the text: kernels/common/wgsl-include.ts
// resolves them when a pipeline is created.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export async function resolve(specifier, context, next) {
  if (specifier.endsWith('?raw') && context.parentURL) {
    return { url: new URL(specifier, context.parentURL).href, shortCircuit: true };
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (url.startsWith('file:') && url.endsWith('?raw')) {
    const path = fileURLToPath(url.slice(0, -'?raw'.length));
    const text = await readFile(path, 'utf8');
    return { format: 'module', source: `export default ${JSON.stringify(text)};`, shortCircuit: true };
  }
  return next(url, context);
}
