/**
 * The example environment grpo-env starts from: examples/calc_env.py (the calculator environment
 * as a Python program) on examples/calc-tasks.jsonl (2000 sums from calc's held-out problems,
 * which calc-base never saw in its SFT), loaded as a person's files are (`loadEnvironment`), so
 * the preset runs as shipped and the form shows what a program and a task file look like.
 */
import program from '../../examples/calc_env.py?raw';
import tasks from '../../examples/calc-tasks.jsonl?raw';
import type { EnvProgramRunOptions } from '../contract/options';
import { loadEnvironment } from './program';

export const EXAMPLE_ENVIRONMENT: EnvProgramRunOptions = (() => {
  const loaded = loadEnvironment({
    program: { name: 'calc_env.py', text: program },
    tasks: { name: 'calc-tasks.jsonl', text: tasks },
  });
  if (!loaded.ok) throw new Error(`the example environment does not load: ${loaded.message}`);
  return loaded.environment;
})();
