/**
 * The environment kinds the presets name: `calc` (a calculator tool), `guess` (higher/lower
 * feedback) and `code` (a program graded in the companion's sandbox). `resolveKind` gives a
 * kind with the services it needs: `code` grades with `services.codeGrader` (without one, every
 * code episode fails as an infrastructure failure that says how to start a companion).
 */
import { CALC } from './calc';
import type { ModelConfig } from '../model/config';
import type { RemoteSampler } from '../rollout/remote-sampler';
import { CODE, codeKind } from './code';
import type { EnvironmentKind } from './environment';
import { GUESS } from './guess';
import type { CodeGrader } from '../rewards/code-grader';
import type { CompanionClient } from '../companion-client/client';

export type EnvironmentName = 'calc' | 'guess' | 'code';

export const ENVIRONMENTS: Readonly<Record<EnvironmentName, EnvironmentKind>> = {
  calc: CALC,
  guess: GUESS,
  code: CODE,
};

/** What an environment kind may need from outside the worker's model: the code grader, the companion (a program's sessions). */
export interface KindServices {
  codeGrader?: CodeGrader | null;
  companion?: CompanionClient | null;
  /**
   * The `samplerWorker` option: starts a sampler slot of a run of this shape elsewhere (a Web Worker
   * in the browser: worker/main.ts; a worker thread in Node: cli/thread-sampler.ts).
   */
  remoteSampler?: (config: ModelConfig) => RemoteSampler;
}

/** The kind a name gives, with its services; throws naming the allowed names. */
export function resolveKind(name: string, services: KindServices = {}): EnvironmentKind {
  if (!Object.prototype.hasOwnProperty.call(ENVIRONMENTS, name))
    throw new Error(`environment = ${JSON.stringify(name)}; expected one of ${Object.keys(ENVIRONMENTS).join(', ')}`);
  if (name === 'code') return codeKind(services.codeGrader ?? null);
  return ENVIRONMENTS[name as EnvironmentName];
}
