import { readdirSync, rmSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { privateRuntimeDir } from './node-gpu';

describe('privateRuntimeDir (the XDG_RUNTIME_DIR libwayland looks for when Dawn probes Vulkan)', () => {
  it('gives an environment without one an empty directory of its own, mode 0700', () => {
    for (const env of [{}, { XDG_RUNTIME_DIR: '' }, { XDG_RUNTIME_DIR: 'run/user/1' }] as NodeJS.ProcessEnv[]) {
      const dir = privateRuntimeDir(env);
      expect(dir).not.toBeNull();
      expect(env.XDG_RUNTIME_DIR).toBe(dir);
      expect(statSync(dir!).mode & 0o777).toBe(0o700);
      expect(readdirSync(dir!)).toEqual([]);
      rmSync(dir!, { recursive: true });
    }
  });

  it("leaves a set one alone (a desktop session's compositor is found there)", () => {
    const env: NodeJS.ProcessEnv = { XDG_RUNTIME_DIR: '/run/user/1000' };
    expect(privateRuntimeDir(env)).toBeNull();
    expect(env).toEqual({ XDG_RUNTIME_DIR: '/run/user/1000' });
  });
});
