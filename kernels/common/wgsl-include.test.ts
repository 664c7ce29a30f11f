import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { acquireGpu } from './context';
import { Dispatcher } from './dispatcher';
import { nodeGpu } from './node-gpu';
import { resolveIncludes, WGSL_LIBRARY } from './wgsl-include';

const KERNELS = fileURLToPath(new URL('..', import.meta.url));
const wgslFiles = (readdirSync(KERNELS, { recursive: true }) as string[])
  .map((f) => f.split('\\').join('/'))
  .filter((f) => f.endsWith('.wgsl'))
  .sort();

/** What `f` throws, or null. */
function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return null;
}

describe('resolveIncludes', () => {
  const library = {
    'x/a_lib.wgsl': '// a_lib\nfn a() -> f32 { return 1.0; }',
    'x/b_lib.wgsl': '// b_lib\n#include "x/a_lib.wgsl"\nfn b() -> f32 { return a(); }',
  };

  it('splices the helper in place of the line and maps every line to its file', () => {
    const { code, lines } = resolveIncludes('k', '// k\n#include "x/a_lib.wgsl"\nfn k() {}', library);
    expect(code).toBe('// k\n// a_lib\nfn a() -> f32 { return 1.0; }\nfn k() {}');
    expect(lines).toEqual([
      { file: 'k.wgsl', line: 1 },
      { file: 'x/a_lib.wgsl', line: 1 },
      { file: 'x/a_lib.wgsl', line: 2 },
      { file: 'k.wgsl', line: 3 },
    ]);
  });

  it('splices a helper once, however many times it is included', () => {
    const { code } = resolveIncludes('k', '#include "x/b_lib.wgsl"\n  #include "x/a_lib.wgsl"  \nfn k() {}', library);
    expect(code.match(/fn a\(\)/g)).toHaveLength(1);
    expect(code).toBe('// b_lib\n// a_lib\nfn a() -> f32 { return 1.0; }\nfn b() -> f32 { return a(); }\nfn k() {}');
  });

  it('leaves a shader without includes as it is', () => {
    const src = 'fn k() {}\n// #include is only a directive at the start of a line\n';
    expect(resolveIncludes('k', src, library).code).toBe(src);
  });

  it('refuses an unknown include, naming the shader, the file and line, and the known paths', () => {
    expect(
      thrown(() => resolveIncludes('rope_forward', 'fn k() {}\n#include "rope/nope.wgsl"', library)),
    ).toMatchObject({
      name: 'ShaderCompileError',
      message: expect.stringMatching(
        /^shader 'rope_forward': unknown include "rope\/nope\.wgsl" at rope_forward\.wgsl:2; known .*x\/a_lib\.wgsl, x\/b_lib\.wgsl$/,
      ),
    });
    expect(() => resolveIncludes('k', '#include "toString"', library)).toThrow(/unknown include "toString"/);
    expect(() => resolveIncludes('k', '#include "x/b_lib.wgsl"', { 'x/b_lib.wgsl': library['x/b_lib.wgsl'] })).toThrow(
      /shader 'k': unknown include "x\/a_lib\.wgsl" at x\/b_lib\.wgsl:2/,
    );
  });

  it('refuses an include cycle, naming the chain', () => {
    const cyclic = { 'c/p_lib.wgsl': '#include "c/q_lib.wgsl"', 'c/q_lib.wgsl': 'fn q() {}\n#include "c/p_lib.wgsl"' };
    expect(() => resolveIncludes('k', '#include "c/p_lib.wgsl"', cyclic)).toThrow(
      "shader 'k': include cycle at c/q_lib.wgsl:2: k.wgsl -> c/p_lib.wgsl -> c/q_lib.wgsl -> c/p_lib.wgsl",
    );
    expect(() =>
      resolveIncludes('k', '#include "c/s_lib.wgsl"', { 'c/s_lib.wgsl': '#include "c/s_lib.wgsl"' }),
    ).toThrow(/include cycle at c\/s_lib\.wgsl:1/);
  });

  it('refuses a malformed directive', () => {
    expect(() => resolveIncludes('k', '#include <x/a_lib.wgsl>', library)).toThrow(
      /shader 'k': malformed include at k\.wgsl:1: '#include <x\/a_lib\.wgsl>'/,
    );
  });
});

describe('the registered WGSL helpers', () => {
  it('are every *_lib.wgsl file under kernels/, each registered by its own path with its own text', () => {
    expect(Object.keys(WGSL_LIBRARY).sort()).toEqual(wgslFiles.filter((f) => f.endsWith('_lib.wgsl')));
    for (const [path, source] of Object.entries(WGSL_LIBRARY)) {
      expect(source, path).toBe(readFileSync(`${KERNELS}/${path}`, 'utf8'));
    }
  });

  it('resolve every include of every shader, leaving no directive behind', () => {
    for (const file of wgslFiles) {
      const label = file.replace(/^.*\//, '').replace(/\.wgsl$/, '');
      const { code } = resolveIncludes(label, readFileSync(`${KERNELS}/${file}`, 'utf8'));
      expect(code, file).not.toMatch(/^\s*#/m);
    }
  });
});

const acquired = await acquireGpu(await nodeGpu());
if (!acquired.ok && process.env.CI) throw new Error(`CI is set but no WebGPU adapter was found: ${acquired.reason}`);
const ctx = acquired.ok ? acquired.ctx : null;

describe.runIf(ctx)('an include through the pipeline cache', () => {
  it('compiles, and an error inside a helper is reported at the helper file and line', async () => {
    const rt = new Dispatcher(ctx!);
    const shader = (label: string, wg: string) =>
      `// ${label}: a test shader\n${wg}\n#include "common/grid_lib.wgsl"\n@compute @workgroup_size(1)\nfn ` +
      `${label}(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {\n  _ = ` +
      `invocation_index(wid, nwg, 0u);\n}\n`;
    await expect(
      rt.pipelines.compile({ label: 'with_grid', code: shader('with_grid', 'override WG: u32 = 1u;') }),
    ).resolves.toBeDefined();
    const line = WGSL_LIBRARY['common/grid_lib.wgsl'].split('\n').findIndex((l) => l.includes('* WG')) + 1;
    await expect(rt.pipelines.compile({ label: 'without_wg', code: shader('without_wg', '') })).rejects.toMatchObject({
      name: 'ShaderCompileError',
      message: expect.stringMatching(
        new RegExp(`shader 'without_wg'[\\s\\S]*common/grid_lib\\.wgsl:${line}:\\d+ error: .*WG`),
      ),
    });
    expect(() => rt.pipelines.get({ label: 'missing', code: '#include "common/missing_lib.wgsl"' })).toThrow(
      /shader 'missing': unknown include "common\/missing_lib\.wgsl" at missing\.wgsl:1/,
    );
  });
});
