/**
 * The one place that creates the dedicated Worker and wraps it with comlink. Everything else in
 * app/ talks to the worker through `workbench`.
 */
import { wrap } from 'comlink';
import type { WorkbenchApi } from '../worker/protocol';

const worker = new Worker(new URL('../worker/main.ts', import.meta.url), { type: 'module', name: 'dewpoint-worker' });

export const workbench = wrap<WorkbenchApi>(worker);
