/** DPO's run options (worker/train/dpo.ts) as a zod schema, and their type. */
import { z } from 'zod';
import {
  base,
  dataset,
  frozenWeights,
  idsPerPass,
  int,
  lora,
  lr,
  maxNew,
  maxNewRefine,
  num,
  optimizer,
  recomputeLayers,
  run,
  temperature,
  presetName,
} from './fields';

export const dpoSchema = z
  .strictObject({
    preset: presetName,
    steps: run.steps,
    lr,
    pairs: int(1, 256, {
      title: 'Pairs per step',
      section: 'Sampling',
      description: 'Preference pairs per optimizer step.',
      common: true,
    }),
    seed: run.seed,
    beta: num('(0, 10]', {
      title: 'DPO β',
      section: 'Objective',
      description: 'Strength of the implicit KL to the reference (τ for IPO).',
    }),
    loss: z
      .discriminatedUnion('type', [
        z.strictObject({
          type: z.literal('sigmoid'),
          labelSmoothing: num('[0, 0.5]', {
            title: 'Label smoothing',
            section: 'Objective',
            description: 'ε of cDPO: the chance a preference label is flipped. Empty: 0.',
          }).optional(),
        }),
        z.strictObject({
          type: z.literal('robust'),
          labelSmoothing: num('[0, 0.5)', {
            title: 'Label smoothing',
            section: 'Objective',
            description: 'ε of robust DPO (below 0.5). Empty: 0.',
          }).optional(),
        }),
        z.strictObject({ type: z.literal(['ipo', 'hinge']) }),
      ])
      .meta({
        title: 'DPO loss',
        section: 'Objective',
        description: 'sigmoid (DPO eq. 7), ipo, hinge (SLiC) or robust (TRL loss_type).',
      }),
    nllWeight: num('[0, 10]', {
      title: 'NLL weight',
      section: 'Objective',
      description: 'Weight of the NLL term on chosen completions (TRL rpo_alpha); 0 = plain DPO.',
    }),
    samplesPerPrompt: int(2, 64, {
      title: 'Samples per prompt',
      section: 'Sampling',
      description: 'Completions sampled per prompt to find a correct and an incorrect one.',
    }),
    temperature,
    maxNew,
    ...optimizer,
    ...lora,
    idsPerPass,
    recomputeLayers,
    frozenWeights,
    dataset,
    base,
    evalEvery: run.evalEvery,
    evalN: run.evalN,
    checkpointEvery: run.checkpointEvery,
  })
  .superRefine(maxNewRefine);

/** Options of a DPO run from the shipped base checkpoint or a person's model (pairs from its own samples). */
export type DpoRunOptions = z.output<typeof dpoSchema>;
