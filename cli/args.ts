/**
 * A small flag parser for the CLI: `--name value` and boolean `--flag`, each checked against the
 * command's list, with errors that name the flag and the allowed values.
 */
export type FlagSpec = Record<string, 'string' | 'number' | 'boolean'>;
export type Flags = Record<string, string | number | boolean | undefined>;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function parseFlags(command: string, argv: readonly string[], spec: FlagSpec): Flags {
  const out: Flags = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const name = arg.startsWith('--') ? arg.slice(2) : null;
    const kind = name ? spec[name] : undefined;
    if (!name || !kind)
      throw new UsageError(
        `dewpoint ${command}: unknown argument '${arg}'; allowed: ${Object.keys(spec)
          .map((k) => `--${k}`)
          .join(', ')}`,
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
