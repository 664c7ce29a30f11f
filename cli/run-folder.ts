/**
 * A run folder the CLI writes (`dewpoint train --save DIR`) and `dewpoint export DIR` reads:
 * `run.json` (the run options, as the Experiments view's "Config as JSON") and `steps.jsonl`,
 * one line per step with its advantage groups and rollout rows (worker/interop/rollouts.ts), the
 * same records the app's store keeps and exports from, and its metrics (for `dewpoint audit DIR`);
 * and `model/`, the checkpoint the run ended with (worker/model/checkpoint.ts `exportCheckpoint`:
 * a Hugging Face folder), for the bundle.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BatchRecord, GroupRecord, RunOptions, SessionRecord } from '../worker/protocol';
import type { StepExport } from '../worker/interop/files';
import { verlDataSource } from '../worker/interop/files';
import { rolloutRows } from '../worker/interop/rollouts';
import { checkRunOptions } from '../worker/presets/table';
import { decodeSessions, encodeSessions } from '../worker/store/sessions-codec';
import type { Session } from '../worker/rl/types';
import type { CheckpointFiles } from '../worker/model/checkpoint';
import { UsageError } from './args';

/** One line of steps.jsonl: the step's export records and its metrics (absent in folders saved before they were kept). */
export interface RunFolderStep extends StepExport {
  metrics?: Record<string, number>;
}

const RUN_OPTIONS_FILE = 'run.json';
const STEPS_FILE = 'steps.jsonl';
const MODEL_DIR = 'model';

export class RunFolderWriter {
  private readonly dataSource: string;

  constructor(
    readonly dir: string,
    options: RunOptions,
  ) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, RUN_OPTIONS_FILE), `${JSON.stringify(options, null, 2)}\n`);
    writeFileSync(join(dir, STEPS_FILE), '');
    this.dataSource = verlDataSource(options).dataSource;
  }

  add(
    step: number,
    records: { groups?: GroupRecord[]; batch?: BatchRecord; sessions?: readonly Session[] },
    metrics: Record<string, number>,
  ): void {
    if (!records.groups) return;
    // Through the store's codec, so the rows are what an app export of the same run gives.
    const sessions: SessionRecord[] = records.sessions ? decodeSessions(encodeSessions(records.sessions)) : [];
    const line: RunFolderStep = {
      step,
      groups: records.groups,
      rows: rolloutRows({ step, groups: records.groups, sessions, batch: records.batch }, this.dataSource),
      metrics,
    };
    appendFileSync(join(this.dir, STEPS_FILE), `${JSON.stringify(line)}\n`);
  }

  /** The checkpoint the run ended with, as `model/` (replacing one an earlier run left). */
  model(files: CheckpointFiles): void {
    const dir = join(this.dir, MODEL_DIR);
    mkdirSync(dir, { recursive: true });
    for (const [name, bytes] of Object.entries(files)) if (bytes) writeFileSync(join(dir, name), bytes);
  }
}

/** The run folder's `model/` files, or null when it has none. */
export function readRunModel(dir: string): CheckpointFiles | null {
  const path = join(dir, MODEL_DIR);
  if (!existsSync(path)) return null;
  const files: Record<string, Uint8Array> = {};
  for (const name of readdirSync(path)) files[name] = new Uint8Array(readFileSync(join(path, name)));
  return files as CheckpointFiles;
}

/** Reads a run folder; a usage error names the file and what is wrong. */
export function readRunFolder(dir: string, command: string): { options: RunOptions; steps: RunFolderStep[] } {
  const path = (f: string) => join(dir, f);
  for (const f of [RUN_OPTIONS_FILE, STEPS_FILE]) {
    if (!existsSync(path(f)))
      throw new UsageError(
        `dewpoint ${command}: ${dir} is not a run folder: ${f} is missing (dewpoint train --save DIR writes one)`,
      );
  }
  let options: unknown;
  try {
    options = JSON.parse(readFileSync(path(RUN_OPTIONS_FILE), 'utf8'));
  } catch (e) {
    throw new UsageError(`dewpoint ${command}: ${path(RUN_OPTIONS_FILE)} is not JSON: ${(e as Error).message}`);
  }
  const problems = checkRunOptions(options);
  if (problems.length)
    throw new UsageError(
      `dewpoint ${command}: invalid run options in ${path(RUN_OPTIONS_FILE)}:\n${problems.map((p) => `  ${p.message}`).join('\n')}`,
    );
  const steps: RunFolderStep[] = [];
  readFileSync(path(STEPS_FILE), 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (!line.trim()) return;
      try {
        steps.push(JSON.parse(line) as RunFolderStep);
      } catch (e) {
        throw new UsageError(
          `dewpoint ${command}: ${path(STEPS_FILE)} line ${i + 1} is not JSON: ${(e as Error).message}`,
        );
      }
    });
  return { options: options as RunOptions, steps };
}
