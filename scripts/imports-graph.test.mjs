import { describe, expect, it } from 'vitest';
import { checkGraph, cycles, importSpecifiers, resolveSpecifier, shortestCycle } from './imports-graph.mjs';

/** A graph from `{ file: [imports] }`. */
const graphOf = (edges) => new Map(Object.entries(edges).map(([f, to]) => [f, new Set(to)]));

describe('cycles', () => {
  it('finds each tangle once, and a shortest cycle through it', () => {
    const g = graphOf({ a: ['b'], b: ['c'], c: ['a', 'd'], d: ['e'], e: ['d'], f: ['a'] });
    expect(cycles(g)).toEqual([
      ['a', 'b', 'c'],
      ['d', 'e'],
    ]);
    expect(shortestCycle(g, ['a', 'b', 'c'])).toEqual(['a', 'b', 'c', 'a']);
    expect(shortestCycle(g, ['d', 'e'])).toEqual(['d', 'e', 'd']);
  });

  it('finds none in a graph without cycles, however the edges are ordered', () => {
    expect(cycles(graphOf({ a: ['b', 'c'], b: ['c'], c: [], d: ['a', 'c'] }))).toEqual([]);
  });

  it('takes the shorter of two cycles through the same file', () => {
    const g = graphOf({ a: ['b', 'x'], b: ['c'], c: ['a'], x: ['a'] });
    expect(shortestCycle(g, cycles(g)[0])).toEqual(['a', 'x', 'a']);
  });
});

describe('checkGraph', () => {
  const layers = ['w/low', 'w/contract.ts', 'w/high', 'w/'];
  const check = (edges, options = {}) => checkGraph(graphOf(edges), { prefix: 'w/', layers, ...options });

  it('passes a layered graph', () => {
    expect(
      check({
        'w/low/a.ts': [],
        'w/contract.ts': ['w/low/a.ts'],
        'w/high/b.ts': ['w/low/a.ts', 'w/contract.ts'],
        'w/api.ts': ['w/high/b.ts'],
      }),
    ).toEqual([]);
  });

  it('reports a file cycle, naming both files, a test file included', () => {
    expect(check({ 'w/high/a.test.ts': ['w/high/b.ts'], 'w/high/b.ts': ['w/high/a.test.ts'] })).toEqual([
      'cycle: w/high/a.test.ts -> w/high/b.ts -> w/high/a.test.ts',
    ]);
  });

  it('reports a folder cycle without a file cycle, and the upward import in it', () => {
    const problems = check({
      'w/low/a.ts': ['w/high/c.ts'],
      'w/high/b.ts': ['w/low/d.ts'],
      'w/high/c.ts': [],
      'w/low/d.ts': [],
    });
    expect(problems).toEqual([
      'folder cycle: w/high -> w/low -> w/high (w/high/b.ts imports w/low/d.ts; w/low/a.ts imports w/high/c.ts)',
      'upward import: w/low/a.ts (w/low) imports w/high/c.ts (w/high, a higher layer)',
    ]);
  });

  it('leaves test files out of the folder checks', () => {
    expect(check({ 'w/low/a.test.ts': ['w/high/b.ts'], 'w/high/b.ts': ['w/low/c.ts'], 'w/low/c.ts': [] })).toEqual([]);
  });

  it('makes a root file named in the layers its own node; the other root files are one', () => {
    expect(check({ 'w/low/a.ts': ['w/contract.ts'], 'w/contract.ts': [] })).toEqual([
      'upward import: w/low/a.ts (w/low) imports w/contract.ts (w/contract.ts, a higher layer)',
    ]);
    expect(check({ 'w/high/a.ts': ['w/api.ts'], 'w/api.ts': [] })).toEqual([
      'upward import: w/high/a.ts (w/high) imports w/api.ts (w/, a higher layer)',
    ]);
  });

  it('drops allowlisted edges from every check', () => {
    const edges = { 'w/low/a.ts': ['w/contract.ts'], 'w/contract.ts': ['w/low/a.ts'] };
    expect(check(edges)).toHaveLength(3);
    expect(check(edges, { allow: [['w/low/a.ts', 'w/contract.ts']] })).toEqual([]);
  });

  it('reports a folder missing from the layers', () => {
    expect(check({ 'w/new/a.ts': [] })).toEqual([
      'unlayered: w/new is not in the layer order; add it where it belongs',
    ]);
  });

  it('reports an import out of a closed folder', () => {
    expect(check({ 'k/a.ts': ['s/b.mjs'], 's/b.mjs': ['k/a.ts'] }, { closed: ['k/'] })).toEqual([
      'cycle: k/a.ts -> s/b.mjs -> k/a.ts',
      'outside: k/a.ts imports s/b.mjs (outside k/)',
    ]);
  });
});

describe('imports', () => {
  it('lists static, re-export, type-only and dynamic imports', () => {
    const text = [
      "import type { A } from './a';",
      "export * from './b';",
      "export type { C } from './c';",
      "const d = await import('./d.mjs');",
      "import shader from './e.wgsl?raw';",
      "import { x } from 'vitest';",
    ].join('\n');
    expect(importSpecifiers(text)).toEqual(['./a', './b', './c', './d.mjs', './e.wgsl?raw', 'vitest']);
  });

  it('resolves relative specifiers to source files only', () => {
    const files = new Set(['w/a.ts', 'w/b/index.ts', 's/c.mjs', 'w/d.tsx']);
    expect(resolveSpecifier('w/x.ts', './a', files)).toBe('w/a.ts');
    expect(resolveSpecifier('w/x.ts', './a.js', files)).toBe('w/a.ts');
    expect(resolveSpecifier('w/x.ts', './b', files)).toBe('w/b/index.ts');
    expect(resolveSpecifier('w/x.ts', '../s/c.mjs', files)).toBe('s/c.mjs');
    expect(resolveSpecifier('w/x.ts', './d', files)).toBe('w/d.tsx');
    expect(resolveSpecifier('w/x.ts', './e.wgsl?raw', files)).toBeNull();
    expect(resolveSpecifier('w/x.ts', 'vitest', files)).toBeNull();
  });
});
