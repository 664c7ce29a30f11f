/**
 * Test fixture (Node): the shipped base as a real arithmetic model on the CPU backend, so that
 * completions end on EOS or run out of budget as in training, and a PromptSource over it with
 * MathReward, for the rollout tests.
 */
import { createCpuOps } from '../../kernels/backends/cpu';
import type { ArithTask } from '../data/arith';
import { encodeExample, heldOut } from '../data/arith';
import { importCheckpoint } from '../model/checkpoint';
import { Model } from '../model/model';
import { BASE_CHECKPOINT_DIR, readCheckpointDir } from '../model/node-checkpoint-dir';
import { taskMathReward } from '../rewards/task-math-reward';
import type { PromptReward, PromptSourceOptions } from './prompt-source';
import { PromptSource } from './prompt-source';

const base = importCheckpoint(readCheckpointDir(BASE_CHECKPOINT_DIR));
export const tok = base.tokenizer;
export const model = new Model(createCpuOps(), base.config);
model.setWeights(base.weights);
export const TASKS = heldOut(3, { difficulty: 1, format: 'bare' });
export const math: PromptReward<ArithTask> = taskMathReward;

export function source(o: Partial<PromptSourceOptions<ArithTask>> = {}) {
  return new PromptSource<ArithTask>({
    model,
    reward: math,
    decode: (ids) => tok.decode(ids),
    prompt: (t) => encodeExample(tok, t).promptIds,
    eos: tok.eos,
    maxNewTokens: 16,
    seed: 5,
    ...o,
  });
}
