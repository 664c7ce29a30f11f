#!/usr/bin/env node
// `node scripts/check-imports.mjs` (run by `npm run lint` and `npm test`): fails, one line per
// problem naming both files, on
//   - an import cycle between files (app, worker, kernels, companion, cli, e2e, scripts; tests and
//     `import type` included);
//   - a cycle between worker/'s folders (worker/model, worker/hf, ...; the files directly in
//     worker/ are one node, "worker/", except those LAYERS names), test files left out;
//   - an import from a lower layer of worker/ into a higher one (LAYERS), test files left out
//     (a test may set up its subject with anything above it; no module imports a test);
//   - a file under kernels/ importing anything outside kernels/.
// The graph and the checks: scripts/imports-graph.mjs.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildGraph, checkGraph } from './imports-graph.mjs';

/**
 * worker/'s layers, lowest first: a file may import its own layer and the ones below it. Derived
 * from the graph once its cycles were gone; a new folder goes where its imports put it.
 * - contract: the API's data types and error names (plain types; imports nothing from worker/);
 * - rl: the RL core (objectives, advantages, packing), pure functions over arrays;
 * - rewards, data: rewards, then tasks, datasets and tokenizers (a dataset row names its reward);
 * - model: the model on Ops, its checkpoints and optimizer step; hf: Hugging Face model folders;
 * - rollout: sampling; companion-client: the companion over HTTP (code grading);
 * - episodes: multi-turn environments; train: the trainers; flow: the flow policy;
 * - store: IndexedDB and the in-memory store (types of the contract, the RL core, the journal and
 *   checkpoints only); presets: run presets and their options; interop: other frameworks' files;
 * - runs: the run lifecycle, loop, bases and reads; protocol.ts: the API as the app sees it (the
 *   contract re-exported; no worker module imports it, lint says so); worker/: the API (api.ts,
 *   main.ts, selftest.ts).
 */
const LAYERS = [
  'worker/contract',
  'worker/rl',
  'worker/rewards',
  'worker/data',
  'worker/model',
  'worker/hf',
  'worker/rollout',
  'worker/companion-client',
  'worker/episodes',
  'worker/train',
  'worker/flow',
  'worker/store',
  'worker/presets',
  'worker/interop',
  'worker/runs',
  'worker/protocol.ts',
  'worker/',
];

/** Known edges left out of every check: none. */
const ALLOW = [];

const ROOTS = ['app', 'worker', 'kernels', 'companion', 'cli', 'e2e', 'scripts'];

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const graph = buildGraph(root, ROOTS);
const problems = checkGraph(graph, { prefix: 'worker/', layers: LAYERS, allow: ALLOW, closed: ['kernels/'] });
for (const p of problems) console.error(p);
if (problems.length) {
  console.error(`check-imports: ${problems.length} problem(s) in ${graph.size} files (scripts/check-imports.mjs)`);
  process.exit(1);
}
console.log(`check-imports: ${graph.size} files, no cycles, worker/ layered`);
