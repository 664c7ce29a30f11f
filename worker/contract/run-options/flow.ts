/** Flow-GRPO's run options (worker/flow) as a zod schema, and their type. */
import { z } from 'zod';
import { int, lr, num, presetName, run } from './fields';

/** Flow-GRPO on 2-D points (worker/flow): the policy is pretrained at the start of the run, so there is no base checkpoint. */
export const flowSchema = z
  .strictObject({
    preset: presetName,
    steps: run.steps,
    lr,
    groups: int(1, 64, {
      title: 'Groups per step',
      section: 'Sampling',
      description:
        "Groups sampled per step; each group's samples share their starting noise x₁ (the group's condition).",
      common: true,
    }),
    group: int(2, 64, {
      title: 'Group size',
      section: 'Sampling',
      description: 'Samples per group (G): the advantage group.',
      common: true,
    }),
    seed: run.seed,
    sdeSteps: int(2, 50, {
      title: 'Denoising steps',
      section: 'Sampling',
      description: 'Steps of the SDE sampler from noise (t = 1) to a point (t = 0); each is one trained transition.',
    }),
    noiseLevel: num('(0, 2]', {
      title: 'SDE noise level',
      section: 'Sampling',
      description: 'a in σ_t = a·√(t/(1−t)) (Flow-GRPO 0.7): how far the SDE strays from the ODE.',
    }),
    clipRange: num('(0, 1]', {
      title: 'Clip ε',
      section: 'Objective',
      description: 'Ratio band 1 ± ε per transition (Flow-GRPO 1e-4 for images; 0.05 for two coordinates).',
    }),
    advClipMax: num('(0, 100]', {
      title: 'Advantage clip',
      section: 'Advantage',
      description: 'Advantages are clipped to ± this (Flow-GRPO 5).',
    }),
    beta: num('[0, 10]', {
      title: 'KL β',
      section: 'KL',
      description: 'KL strength to the pretrained policy; 0 = no reference.',
    }),
    epochs: int(1, 16, { title: 'Epochs', section: 'Optimizer', description: 'Passes over each sampled batch.' }),
    miniBatches: int(1, 64, {
      title: 'Mini-batches',
      section: 'Optimizer',
      description: 'Optimizer steps per pass (the samples split evenly).',
    }),
    target: z.enum(['ring', 'discs']).meta({
      title: 'Shape',
      section: 'Objective',
      description: 'Where the points should land: the ring 0.75 ≤ |p| ≤ 0.9, or three discs of radius 0.2.',
      common: true,
    }),
    smooth: num('[0, 1]', {
      title: 'Reward smoothing',
      section: 'Objective',
      description: 'Outside the shape the reward is exp(−(d/s)²) at distance d; 0: the 0/1 reward.',
    }),
    pretrainSteps: int(1, 20000, {
      title: 'Pretraining steps',
      section: 'Run',
      description: 'Flow-matching steps that make the starting policy (N(0, I) to three blobs) before RL.',
    }),
    evalEvery: run.evalEvery,
    evalN: int(1, 4096, {
      title: 'Preview points',
      section: 'Run',
      description: 'Fixed starting points whose ODE samples are scored; the accuracy is the fraction inside the shape.',
    }),
    checkpointEvery: run.checkpointEvery,
  })
  .superRefine((o, ctx) => {
    if (o.miniBatches > o.groups * o.group)
      ctx.addIssue({
        code: 'custom',
        path: ['miniBatches'],
        message: `must be at most {groups} × {group} = ${o.groups * o.group} (one sample per mini-batch at least), got ${o.miniBatches}`,
      });
  });

/** Options of a Flow-GRPO run on 2-D points (flowgrpo-2d). */
export type FlowRunOptions = z.output<typeof flowSchema>;
