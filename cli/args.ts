/**
 * A small flag parser for the CLI: `--name value` and boolean `--flag`, each checked against the
 * command's flag table, with errors that name the flag and the allowed values. The table carries
 * each flag's kind, placeholder and description, so the parser and `--help` (cli/help.ts) read the
 * same list and the help cannot name a flag the command refuses, or leave one out.
 */
export interface Flag {
  kind: 'string' | 'number' | 'boolean';
  /** What the value stands for in the help (`--steps N`); none for a boolean. */
  value?: string;
  /** One sentence: what it does, its default. */
  help: string;
}
type FlagSpec = Record<string, Flag>;
export type Flags = Record<string, string | number | boolean | undefined>;

/** A command as `--help` shows it and `parseFlags` checks it. */
export interface CommandSpec {
  /** As typed after `dewpoint`: `train`, `episodes export`. */
  name: string;
  /** The positional part of the usage line (`RUN`, `<name>`), before the flags; empty: none. */
  args: string;
  /** What it does, in a sentence or two. */
  summary: string;
  flags: FlagSpec;
  /** More sections for its help (the presets `train` offers), each a heading and its lines. */
  sections?: () => { heading: string; lines: string[] }[];
}

export const str = (value: string, help: string): Flag => ({ kind: 'string', value, help });
export const num = (value: string, help: string): Flag => ({ kind: 'number', value, help });
export const bool = (help: string): Flag => ({ kind: 'boolean', help });

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** `--help` and `-h`: every command takes them (cli/main.ts prints its help). */
export const HELP_FLAGS: readonly string[] = ['--help', '-h'];

/**
 * Whether `argv` asks for help: `--help` or `-h` where a flag may stand, that is, not as the value
 * of a flag that takes one (`--reward-pattern -h` is a pattern).
 */
export function asksForHelp(argv: readonly string[], spec: FlagSpec): boolean {
  for (let i = 0; i < argv.length; i++) {
    if (HELP_FLAGS.includes(argv[i])) return true;
    const flag = argv[i].startsWith('--') ? spec[argv[i].slice(2)] : undefined;
    if (flag && flag.kind !== 'boolean') i++;
  }
  return false;
}

export function parseFlags(command: string, argv: readonly string[], spec: FlagSpec): Flags {
  const out: Flags = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const name = arg.startsWith('--') ? arg.slice(2) : null;
    const kind = name && Object.prototype.hasOwnProperty.call(spec, name) ? spec[name].kind : undefined;
    if (!name || !kind)
      throw new UsageError(
        `dewpoint ${command}: unknown argument '${arg}'; allowed: ${Object.keys(spec)
          .map((k) => `--${k}`)
          .join(', ')} (dewpoint ${command} --help says what each does)`,
      );
    if (kind === 'boolean') {
      out[name] = true;
      continue;
    }
    const value = argv[++i];
    if (value === undefined) throw new UsageError(`dewpoint ${command}: --${name} needs a value`);
    if (kind === 'number') {
      const n = Number(value);
      if (!Number.isFinite(n)) throw new UsageError(`dewpoint ${command}: --${name} must be a number, got '${value}'`);
      out[name] = n;
    } else out[name] = value;
  }
  return out;
}
