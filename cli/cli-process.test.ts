/**
 * The CLI as a person runs it: `node bin/dewpoint.mjs …` in a process of its own, so what native
 * libraries write to the process's stderr (Dawn, the Vulkan loader and its layers) is seen too.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** `dewpoint argv` in a child process, with `env` over this one's. */
function dewpoint(argv: string[], env: Record<string, string | undefined> = {}) {
  const r = spawnSync(process.execPath, ['bin/dewpoint.mjs', ...argv], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 120_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('dewpoint in a process of its own', () => {
  it('a run without XDG_RUNTIME_DIR writes only its own lines to stderr (no libwayland error)', () => {
    const { code, err } = dewpoint(['train', '--preset', 'grpo-arith', '--steps', '1', '--eval-every', '0'], {
      XDG_RUNTIME_DIR: undefined,
    });
    expect(code, err).toBe(0);
    expect(err).not.toContain('XDG_RUNTIME_DIR');
    for (const line of err.trimEnd().split('\n')) expect(line).toMatch(/^train grpo-arith: /);
  });
});
