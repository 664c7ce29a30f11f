// A sampler thread's entry (cli/thread-sampler.ts starts it): TypeScript through tsx, WGSL `?raw`
// imports from disk, as bin/dewpoint.mjs, then the thread's own module.
import { register } from 'node:module';
import { register as registerTsx } from 'tsx/esm/api';

registerTsx();
register('./wgsl-loader.mjs', import.meta.url);
await import('./sampler-thread-main.ts');
