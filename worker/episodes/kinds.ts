/** The environment kinds the presets name: `calc` (a calculator tool) and `guess` (higher/lower feedback). */
import { CALC } from './calc';
import type { EnvironmentKind } from './environment';
import { GUESS } from './guess';

export type EnvironmentName = 'calc' | 'guess';

export const ENVIRONMENTS: Readonly<Record<EnvironmentName, EnvironmentKind>> = { calc: CALC, guess: GUESS };
