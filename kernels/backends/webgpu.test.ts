import { afterAll, describe, expect, it } from 'vitest';
import { testGpuOps } from '../common/node-test-gpu';
import { caseMismatches, gqaCases, logprobCases } from './conformance';
import { createCpuOps } from './cpu';

// The webgpu backend through `Ops` (argument order, tensor sizes) against the CPU references, on
// the grouped-query attention and the log-prob (tempered) cases; the kernels themselves are tested
// op by op in kernels/<op>.
const gpu = await testGpuOps();

describe.runIf(gpu)('webgpu backend ≡ CPU references: grouped-query attention, log-probs', () => {
  afterAll(() => gpu?.ctx.device.destroy());
  const cpu = createCpuOps();
  for (const c of [...gqaCases(), ...logprobCases()]) {
    it(c.name, async () => {
      expect(await caseMismatches(c, gpu!, cpu)).toEqual([]);
      expect(gpu!.ctx.errors.map((e) => e.message)).toEqual([]);
    });
  }
});
