/**
 * `dewpoint episodes export --journal DIR [--run ID] [--out FILE]`: a journaled run's episodes as
 * JSONL (one line per episode: turns, token ids, behavior and raw log-probs, observations,
 * rewards, statuses; worker/episodes/views.ts `episodesJsonl`), the same lines the Replay view
 * exports. The journal is the one `dewpoint train --preset grpo-calc --journal DIR` writes; its
 * run folder holds the run's options (`run.json`), which say the environment and what trained.
 * Without `--run`, the journal must hold exactly one run.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { charTokenizer, importCheckpoint } from '../../worker/model/checkpoint';
import { readCheckpointDir } from '../../worker/model/node-checkpoint-dir';
import { episodesJsonl } from '../../worker/episodes/views';
import type { EpisodeGrpoRunOptions, PpoEpisodeRunOptions } from '../../worker/protocol';
import { episodeRunConfigOf } from '../../worker/presets/table';
import { configuredKind, episodePacking } from '../../worker/train/grpo-episodes';
import { UsageError, parseFlags, str, type CommandSpec } from '../args';
import { FileJournal } from '../node-journal';

/** What `train --journal` writes beside a run's journal files. */
export interface JournalRunFile {
  runId: string;
  options: EpisodeGrpoRunOptions | PpoEpisodeRunOptions;
  /** The base checkpoint folder (its tokenizer decodes the episodes). */
  checkpoint: string;
}

export const RUN_FILE = 'run.json';

export const EPISODES_EXPORT: CommandSpec = {
  name: 'episodes export',
  args: '--journal DIR',
  summary: "a journaled run's episodes (dewpoint train --journal DIR) as JSONL, one line per episode",
  flags: {
    journal: str('DIR', 'the folder given to dewpoint train --journal (required)'),
    run: str('ID', 'the run to export (the id train printed); needed when the journal holds several'),
    out: str('FILE', 'write the lines there instead of stdout'),
  },
};

export async function episodesCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'export')
    throw new UsageError(
      `dewpoint episodes: the subcommand must be 'export', got ${sub === undefined ? 'none' : `'${sub}'`}`,
    );
  const f = parseFlags(EPISODES_EXPORT.name, rest, EPISODES_EXPORT.flags);
  if (f.journal === undefined)
    throw new UsageError(
      'dewpoint episodes export: --journal DIR is required (the folder given to dewpoint train --journal)',
    );
  const dir = f.journal as string;
  let runs: string[];
  try {
    runs = readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => decodeURIComponent(d.name));
  } catch (e) {
    throw new UsageError(`dewpoint episodes export: cannot read --journal ${dir}: ${(e as Error).message}`);
  }
  const runId = (f.run as string | undefined) ?? (runs.length === 1 ? runs[0] : undefined);
  if (runId === undefined)
    throw new UsageError(
      `dewpoint episodes export: --run is required: ${dir} holds ${runs.length} runs (${runs.join(', ') || 'none'})`,
    );
  if (!runs.includes(runId))
    throw new UsageError(
      `dewpoint episodes export: --run ${runId} is not in ${dir}; it holds: ${runs.join(', ') || 'no runs'}`,
    );
  const journal = new FileJournal(dir);
  let run: JournalRunFile;
  try {
    run = JSON.parse(readFileSync(join(journal.runDir(runId), RUN_FILE), 'utf8')) as JournalRunFile;
  } catch (e) {
    throw new UsageError(
      `dewpoint episodes export: run ${runId} has no readable ${RUN_FILE} (written by dewpoint train --journal): ${(e as Error).message}`,
    );
  }
  const config = episodeRunConfigOf(run.options);
  if (!config)
    throw new UsageError(`dewpoint episodes export: run ${runId}'s preset ${run.options.preset} journals no episodes`);
  const tok = charTokenizer(importCheckpoint(readCheckpointDir(run.checkpoint)).tokenizer, 'episodes export');
  const kind = configuredKind(config);
  const steps = await journal.steps(runId);
  const text = await episodesJsonl(
    runId,
    await Promise.all(steps.map(async (step) => ({ step, records: await journal.load(runId, step) }))),
    {
      kind,
      tok,
      group: config.options.group,
      truncation: config.options.truncation,
      maskZeroAdvantage: episodePacking(config.options).maskZeroAdvantage,
    },
  );
  for (const w of journal.warnings) process.stderr.write(`episodes export: ${w}\n`);
  const lines = text ? text.split('\n').length - 1 : 0;
  if (f.out !== undefined) {
    writeFileSync(f.out as string, text);
    process.stderr.write(`episodes export: ${lines} episodes of ${steps.length} steps of run ${runId} to ${f.out}\n`);
  } else process.stdout.write(text);
  return 0;
}
