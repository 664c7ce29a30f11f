import { afterAll, describe, expect, it } from 'vitest';
import { testGpuOps } from '../common/node-test-gpu';
import { compareClose } from '../testing/expect-close';
import { gqaCases, logprobCases } from './conformance';
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
      const want = c.run(cpu);
      const got = c.run(gpu!);
      for (const [name, t] of Object.entries(want)) {
        const r = compareClose(await gpu!.read(got[name]), await cpu.read(t), {
          atol: c.atol,
          rtol: c.rtol,
          label: `${c.name}: ${name}`,
        });
        expect(r.ok, r.message).toBe(true);
      }
      expect(gpu!.ctx.errors.map((e) => e.message)).toEqual([]);
    });
  }
});
