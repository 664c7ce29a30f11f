// The repository's import graph and the checks scripts/check-imports.mjs runs on it: file-level
// cycles, folder-level cycles among worker/'s subfolders, and imports against a declared layer
// order. Plain Node plus the `typescript` package's scanner (`ts.preProcessFile`, which lists
// static, `export … from`, `import type` and dynamic imports without type-checking). Relative
// specifiers only: packages are outside the graph. Not a bundler resolver: no path aliases (the
// repo has none), and a `?raw` query or a non-source target (.wgsl, .json, .wasm) is no edge.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import ts from 'typescript';

const SOURCE = /\.(ts|tsx|mts|mjs|js)$/;
const DECLARATION = /\.d\.(ts|mts)$/;
const SKIP_DIRS = new Set(['node_modules', 'build', 'dist']);

/** Source files (repo-relative, `/`-separated, sorted) under `dirs`, plus the root's own config files. */
export function listSources(root, dirs) {
  const out = [];
  const walk = (dir) => {
    for (const name of readdirSync(join(root, dir)).sort()) {
      const rel = dir ? `${dir}/${name}` : name;
      if (statSync(join(root, rel)).isDirectory()) {
        if (dir && !name.startsWith('.') && !SKIP_DIRS.has(name)) walk(rel);
      } else if (SOURCE.test(name) && !DECLARATION.test(name)) out.push(rel);
    }
  };
  walk('');
  for (const d of dirs) if (existsSync(join(root, d))) walk(d);
  return out.sort();
}

/** The module specifiers a source text imports (static, re-export, type-only and dynamic). */
export function importSpecifiers(text) {
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}

/** The repo-relative file a relative specifier names, or null (a package, a non-source file, not found). */
export function resolveSpecifier(from, specifier, files) {
  const spec = specifier.split('?')[0];
  if (!spec.startsWith('./') && !spec.startsWith('../')) return null;
  const p = posix.normalize(posix.join(posix.dirname(from), spec));
  const candidates = [p, p.replace(/\.js$/, '.ts'), p.replace(/\.js$/, '.tsx'), p.replace(/\.mjs$/, '.mts')];
  for (const ext of ['.ts', '.tsx', '.mts', '.mjs', '.js']) candidates.push(p + ext, `${p}/index${ext}`);
  return candidates.find((c) => files.has(c)) ?? null;
}

/** The file graph: file → Set of files it imports. */
export function buildGraph(root, dirs) {
  const list = listSources(root, dirs);
  const files = new Set(list);
  const graph = new Map();
  for (const f of list) {
    const to = new Set();
    for (const s of importSpecifiers(readFileSync(join(root, f), 'utf8'))) {
      const r = resolveSpecifier(f, s, files);
      if (r !== null && r !== f) to.add(r);
    }
    graph.set(f, to);
  }
  return graph;
}

/** A copy of `graph` without the `[from, to]` edges listed. */
export function withoutEdges(graph, edges) {
  const drop = new Set(edges.map(([a, b]) => `${a}\n${b}`));
  return new Map([...graph].map(([f, to]) => [f, new Set([...to].filter((t) => !drop.has(`${f}\n${t}`)))]));
}

/** Strongly connected components with more than one node (each one a tangle of cycles), sorted. Tarjan's algorithm. */
export function cycles(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const out = [];
  let next = 0;
  // Iterative, so a long import chain cannot overflow the call stack.
  for (const start of [...graph.keys()].sort()) {
    if (index.has(start)) continue;
    const work = [[start, [...(graph.get(start) ?? [])].sort(), 0]];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length) {
      const frame = work[work.length - 1];
      const [v, succ] = frame;
      if (frame[2] < succ.length) {
        const w = succ[frame[2]++];
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push([w, [...(graph.get(w) ?? [])].sort(), 0]);
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
        continue;
      }
      work.pop();
      if (work.length) {
        const u = work[work.length - 1][0];
        low.set(u, Math.min(low.get(u), low.get(v)));
      }
      if (low.get(v) === index.get(v)) {
        const scc = [];
        let w;
        do {
          w = stack.pop();
          onStack.delete(w);
          scc.push(w);
        } while (w !== v);
        if (scc.length > 1) out.push(scc.sort());
      }
    }
  }
  return out.sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

/** A shortest cycle through `scc[0]` inside `scc` (breadth-first), as a path that ends where it starts. */
export function shortestCycle(graph, scc) {
  const inside = new Set(scc);
  const start = scc[0];
  const parent = new Map([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const w of [...(graph.get(v) ?? [])].sort()) {
      if (w === start) {
        const path = [start];
        for (let u = v; u !== null; u = parent.get(u)) path.unshift(u);
        return path;
      }
      if (inside.has(w) && !parent.has(w)) {
        parent.set(w, v);
        queue.push(w);
      }
    }
  }
  throw new Error(`shortestCycle: no cycle through ${start} in [${scc.join(', ')}]; pass a component from cycles()`);
}

/**
 * The folder graph of `prefix` (e.g. 'worker/'): a file under it maps to its first-level subfolder
 * ('worker/model'); a file directly in it maps to itself when `ownNodes` names it, else to
 * `prefix` itself. Files for which `skip` is true, and files outside `prefix`, are left out.
 * Returns node → node → the [from, to] file edges that make the link, sorted.
 */
export function folderGraph(graph, prefix, { ownNodes = [], skip = () => false } = {}) {
  const own = new Set(ownNodes);
  const node = (f) => {
    if (!f.startsWith(prefix) || skip(f)) return null;
    const rest = f.slice(prefix.length);
    if (rest.includes('/')) return prefix + rest.split('/')[0];
    return own.has(f) ? f : prefix;
  };
  const out = new Map();
  for (const [f, to] of graph) {
    const a = node(f);
    if (a === null) continue;
    if (!out.has(a)) out.set(a, new Map());
    for (const t of to) {
      const b = node(t);
      if (b === null || b === a) continue;
      const links = out.get(a);
      if (!links.has(b)) links.set(b, []);
      links.get(b).push([f, t]);
    }
  }
  for (const links of out.values()) for (const edges of links.values()) edges.sort();
  return out;
}

/** Test files: leaves that may reach any layer to set up what they test. */
export const isTest = (f) => /\.(test|spec)\.(ts|tsx|mts|mjs|js)$/.test(f);

/**
 * Every problem, one line each, naming the files:
 * - `cycle:` a file-level import cycle (a shortest one per tangle), tests included;
 * - `folder cycle:` nodes of `prefix` (see folderGraph) importing each other, with one file edge
 *   per link; test files left out;
 * - `upward import:` a file of a lower layer importing one of a higher layer (`layers`: nodes,
 *   lowest first; a file directly in `prefix` that `layers` names is its own node); tests left out;
 * - `unlayered:` a node of `prefix` missing from `layers`;
 * - `outside:` a file under one of `closed` (folders such as 'kernels/') importing a file outside it.
 * `allow` lists [from, to] file edges left out of every check (known, temporary).
 */
export function checkGraph(graph, { prefix, layers, allow = [], closed = [] }) {
  const g = withoutEdges(graph, allow);
  const problems = [];
  for (const scc of cycles(g)) problems.push(`cycle: ${shortestCycle(g, scc).join(' -> ')}`);

  const folders = folderGraph(g, prefix, { ownNodes: layers, skip: isTest });
  const links = new Map([...folders].map(([a, l]) => [a, new Set(l.keys())]));
  for (const scc of cycles(links)) {
    const path = shortestCycle(links, scc);
    const via = path.slice(1).map((b, i) => folders.get(path[i]).get(b)[0].join(' imports '));
    problems.push(`folder cycle: ${path.join(' -> ')} (${via.join('; ')})`);
  }

  const rank = new Map(layers.map((l, i) => [l, i]));
  for (const a of [...folders.keys()].sort())
    if (!rank.has(a)) problems.push(`unlayered: ${a} is not in the layer order; add it where it belongs`);
  for (const [a, l] of [...folders].sort()) {
    for (const [b, edges] of [...l].sort()) {
      if (!rank.has(a) || !rank.has(b) || rank.get(a) > rank.get(b)) continue;
      for (const [from, to] of edges)
        problems.push(`upward import: ${from} (${a}) imports ${to} (${b}, a higher layer)`);
    }
  }

  for (const [f, to] of [...g].sort()) {
    const home = closed.find((c) => f.startsWith(c));
    if (home === undefined) continue;
    for (const t of [...to].sort())
      if (!t.startsWith(home)) problems.push(`outside: ${f} imports ${t} (outside ${home})`);
  }
  return problems;
}
