/**
 * The words the environment picker (EnvironmentPicker.tsx) says about a grpo-env run's program:
 * what it trains on now, and the files to send when a person replaces only one of the two (the
 * other is the run's current one, as text). No reading of files, no worker calls.
 */
import type { EnvProgramRunOptions } from '../../worker/protocol';

/** `calc_env.py (python3 -I calc_env.py, sha256 8e473e43d48c…) on calc-tasks.jsonl: 2000 tasks, 200 held out`. */
export function environmentSummary(env: EnvProgramRunOptions, example: EnvProgramRunOptions | undefined): string {
  const { program, tasks } = env;
  const isExample =
    example !== undefined && program.sha256 === example.program.sha256 && tasks.name === example.tasks.name;
  return (
    `${program.name} (${program.argv.join(' ')}, sha256 ${program.sha256.slice(0, 12)}…) on ${tasks.name}: ` +
    `${tasks.records.length} tasks, ${tasks.heldOut} held out${isExample ? ' — the example' : ''}`
  );
}

/** The files to load: each picked one, else the current environment's, as UTF-8 bytes. */
export function environmentFiles(
  picked: { program: { name: string; bytes: Uint8Array } | null; tasks: { name: string; bytes: Uint8Array } | null },
  current: EnvProgramRunOptions,
): { program: { name: string; bytes: Uint8Array }; tasks: { name: string; bytes: Uint8Array } } {
  const utf8 = (s: string) => new TextEncoder().encode(s);
  return {
    program: picked.program ?? { name: current.program.name, bytes: utf8(current.program.text) },
    tasks: picked.tasks ?? {
      name: current.tasks.name,
      bytes: utf8(current.tasks.records.map((r) => JSON.stringify(r)).join('\n')),
    },
  };
}
