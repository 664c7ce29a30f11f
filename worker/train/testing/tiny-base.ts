/**
 * Test-only: a tiny model (SftConfig `model: 'tiny'`) after a few SFT steps on arithmetic, so its
 * next-token distributions are far from uniform, imported back as a checkpoint: the base the GRPO
 * trainer tests sample from. Deterministic: the same steps give the same weights.
 */
import { createCpuOps } from '../../../kernels/backends/cpu';
import type { LoadedCheckpoint } from '../../model/checkpoint';
import { exportCheckpoint, importCheckpoint } from '../../model/checkpoint';
import { SFT_ARITH, SftRun } from '../sft';

export async function tinySftBase(steps = 3): Promise<LoadedCheckpoint> {
  const sft = new SftRun(createCpuOps(), {
    ...SFT_ARITH,
    model: 'tiny',
    steps,
    examples: 8,
    rows: 4,
    lr: 1e-2,
    warmup: 1,
    evalEvery: 0,
    evalN: 1,
  });
  for (let i = 0; i < steps; i++) await sft.next();
  return importCheckpoint(await exportCheckpoint(sft.model, sft.tok, { note: 'test base' }));
}
