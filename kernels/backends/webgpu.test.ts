import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testGpuOps } from '../common/node-test-gpu';
import { caseMismatches, gqaCases, logprobCases, subgroupCases } from './conformance';
import { createCpuOps } from './cpu';

// The webgpu backend through `Ops` (argument order, tensor sizes) against the CPU references, on
// the grouped-query attention and the log-prob (tempered) cases; the kernels themselves are tested
// op by op in kernels/<op>.
const gpu = await testGpuOps();

describe.runIf(gpu)('webgpu backend ≡ CPU references: grouped-query attention, log-probs', () => {
  const cpu = createCpuOps();
  for (const c of [...gqaCases(), ...logprobCases()]) {
    it(c.name, async () => {
      expect(await caseMismatches(c, gpu!, cpu)).toEqual([]);
      expect(gpu!.ctx.errors.map((e) => e.message)).toEqual([]);
    });
  }
});

// The kernels with a subgroup form, through `Ops`, with the dispatcher's choice forced each way
// (by default a software adapter such as SwiftShader, which has the feature, does not use it).
const subgroups = gpu?.ctx.adapter.features.includes('subgroups') ?? false;
if (gpu && !subgroups) console.warn('[gpu] no subgroups feature: the subgroup kernels are not tested');
describe.runIf(gpu).each(subgroups ? [false, true] : [false])('webgpu ≡ CPU, subgroups %s', (on) => {
  const cpu = createCpuOps();
  let saved = false;
  beforeAll(() => {
    saved = gpu!.rt.subgroups;
    gpu!.rt.subgroups = on;
  });
  afterAll(() => {
    gpu!.rt.subgroups = saved;
  });
  for (const c of [...subgroupCases(), ...logprobCases()]) {
    it(c.name, async () => {
      expect(await caseMismatches(c, gpu!, cpu)).toEqual([]);
      expect(gpu!.ctx.errors.map((e) => e.message)).toEqual([]);
    });
  }
});

afterAll(() => gpu?.ctx.device.destroy());
