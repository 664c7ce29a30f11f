/**
 * MathReward of a completion against a task's reference answer, in the shape a PromptSource
 * reward returns (worker/rollout/prompt-source.ts): the score, the components as a plain record
 * (stored on the session) and the detail line. Its own module so that tests which replace
 * `mathReward` (vi.mock of ./math-reward) replace it here too.
 */
import { mathReward } from './math-reward';

export function taskMathReward(
  completion: string,
  task: { readonly answer: string },
): { score: number; components: Record<string, number>; detail: string } {
  const r = mathReward(completion, task.answer);
  return { score: r.score, components: { ...r.components }, detail: r.detail };
}
