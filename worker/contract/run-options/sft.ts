/** SFT's run options (worker/train/sft.ts) as a zod schema, and their type. */
import { z } from 'zod';
import { lr, presetName, run } from './fields';

/** Supervised training from scratch (sft-arith). */

export const sftSchema = z.strictObject({
  preset: presetName,
  steps: run.steps,
  lr,
  seed: run.seed,
  evalEvery: run.evalEvery,
  evalN: run.evalN,
  checkpointEvery: run.checkpointEvery,
});

export type SftRunOptions = z.output<typeof sftSchema>;
