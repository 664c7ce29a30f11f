/**
 * `dewpoint audit RUN [--json]`: the reward-hacking audit (worker/runs/audit.ts) over a run folder
 * (`dewpoint train --save RUN`, cli/run-folder.ts): its steps' metrics and advantage groups, read
 * again after the run, as the app's "Audit the rewards" reads a stored run. Each check prints
 * found, clear or not applicable with its reason; `--json` prints `{ steps, findings }`. A finding
 * is not an error: the exit code is 0 whatever it says.
 */
import { auditLines, auditStep, rewardAudit } from '../../worker/runs/audit';
import { UsageError, bool, parseFlags, type CommandSpec } from '../args';
import { readRunFolder } from '../run-folder';

export const AUDIT: CommandSpec = {
  name: 'audit',
  args: 'RUN',
  summary:
    'the reward-hacking audit of a run folder (dewpoint train --save RUN): length against reward, reward-component ' +
    'dominance, group collapse and KL acceleration, each found, clear or not applicable with its figures',
  flags: {
    json: bool('print the audit as JSON: { steps, findings }'),
  },
};

export function auditCommand(argv: string[]): number {
  const run = argv[0] !== undefined && !argv[0].startsWith('--') ? argv[0] : undefined;
  const f = parseFlags(AUDIT.name, run === undefined ? argv : argv.slice(1), AUDIT.flags);
  if (run === undefined) throw new UsageError('dewpoint audit: a run folder (dewpoint train --save DIR) is required');
  const { steps } = readRunFolder(run, 'audit');
  const findings = rewardAudit(steps.map((s) => auditStep(s.step, s.metrics ?? {}, s.groups)));
  if (steps.length > 0 && steps.every((s) => s.metrics === undefined))
    process.stderr.write(
      `dewpoint audit: ${run} keeps no per-step metrics (saved before they were kept): the checks that read them ` +
        '(length drift, group collapse, KL) have only the groups to go on\n',
    );
  process.stdout.write(
    f.json
      ? `${JSON.stringify({ steps: steps.length, findings }, null, 2)}\n`
      : `${auditLines(findings, steps.length).join('\n')}\n`,
  );
  return 0;
}
