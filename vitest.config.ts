import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{kernels,worker,cli,app,companion}/**/*.test.{ts,tsx}', 'e2e/demo/*.test.ts', 'scripts/*.test.mjs'],
    // Dawn (the `webgpu` package) is a native addon: run each file in its own process.
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
