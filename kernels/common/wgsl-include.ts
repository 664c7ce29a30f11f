/**
 * The WGSL include step. WGSL has no `#include`, so a shader names a shared helper file on a line
 * of its own,
 *
 *   #include "rope/rope_lib.wgsl"
 *
 * with the path relative to kernels/, and `resolveIncludes` puts that file's text in place of the
 * line before the pipeline cache (pipelines.ts) compiles the shader. A helper file is spliced in
 * once per shader (a later include of it is dropped, so two helpers may share a third); an unknown
 * path, a malformed directive or an include cycle throws `ShaderCompileError` naming the shader.
 * Every line of the result remembers its file and line, so compiler messages point into the
 * helper file that holds the error.
 *
 * Helper files are named `*_lib.wgsl`: functions and constants only (no bindings, no entry
 * point), with a header saying what they compute and what the including shader must declare.
 * They are registered below through `?raw` imports, which Vite (the build and Vitest) and
 * cli/wgsl-loader.mjs (the CLI) serve alike, so the step is the same code everywhere. Not a
 * preprocessor: no macros, no conditionals.
 */
import attentionLib from '../attention/attention_lib.wgsl?raw';
import logprobBackwardLib from '../logprob/logprob_backward_lib.wgsl?raw';
import logprobLib from '../logprob/logprob_lib.wgsl?raw';
import matmulLib from '../matmul/matmul_lib.wgsl?raw';
import ropeLib from '../rope/rope_lib.wgsl?raw';
import { GpuError } from './errors';
import gridLib from './grid_lib.wgsl?raw';
import subgroupLib from './subgroup_lib.wgsl?raw';

/** The helper files a shader may include, by path relative to kernels/. */
export const WGSL_LIBRARY: Readonly<Record<string, string>> = {
  'attention/attention_lib.wgsl': attentionLib,
  'common/grid_lib.wgsl': gridLib,
  'common/subgroup_lib.wgsl': subgroupLib,
  'logprob/logprob_backward_lib.wgsl': logprobBackwardLib,
  'logprob/logprob_lib.wgsl': logprobLib,
  'matmul/matmul_lib.wgsl': matmulLib,
  'rope/rope_lib.wgsl': ropeLib,
};

/** Where one line of a resolved shader came from (`line` is 1-based). */
interface SourceLine {
  file: string;
  line: number;
}

interface ResolvedShader {
  /** WGSL with every include spliced in. */
  code: string;
  /** `lines[i]`: the origin of line i + 1 of `code`. The shader itself is `<label>.wgsl`. */
  lines: SourceLine[];
}

const DIRECTIVE = /^\s*#include\b/;
const INCLUDE = /^\s*#include\s+"([^"]+)"\s*$/;

/** Resolves the `#include` lines of shader `label` from `library` (the registered helpers by default). */
export function resolveIncludes(
  label: string,
  code: string,
  library: Readonly<Record<string, string>> = WGSL_LIBRARY,
): ResolvedShader {
  const out: string[] = [];
  const lines: SourceLine[] = [];
  const spliced = new Set<string>();
  const refuse = (what: string) => new GpuError('ShaderCompileError', `shader '${label}': ${what}`);

  const splice = (file: string, text: string, chain: readonly string[]): void => {
    text.split('\n').forEach((line, i) => {
      if (!DIRECTIVE.test(line)) {
        out.push(line);
        lines.push({ file, line: i + 1 });
        return;
      }
      const at = `${file}:${i + 1}`;
      const path = INCLUDE.exec(line)?.[1];
      if (path === undefined) {
        throw refuse(`malformed include at ${at}: '${line.trim()}'; expected #include "dir/name_lib.wgsl"`);
      }
      if (chain.includes(path)) throw refuse(`include cycle at ${at}: ${[...chain, path].join(' -> ')}`);
      if (!Object.hasOwn(library, path)) {
        const known = Object.keys(library).join(', ') || 'none';
        throw refuse(`unknown include "${path}" at ${at}; known (paths relative to kernels/): ${known}`);
      }
      if (spliced.has(path)) return;
      spliced.add(path);
      splice(path, library[path], [...chain, path]);
    });
  };

  splice(`${label}.wgsl`, code, [`${label}.wgsl`]);
  return { code: out.join('\n'), lines };
}
