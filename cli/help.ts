/**
 * `dewpoint --help` and `dewpoint <command> --help`, written from the commands' own tables
 * (cli/args.ts `CommandSpec`: the flags each command parses, with their descriptions, and its
 * extra sections, such as the presets `train` reads from worker/presets/table.ts), so the help
 * names exactly what the commands take. Not the parsing: cli/args.ts.
 */
import type { CommandSpec, Flag } from './args';

const WIDTH = 100;
const FLAG_COLUMN = 30;

/** `text` in lines of at most WIDTH characters, each after `indent` spaces (the first after `first` characters already written). */
function wrap(text: string, indent: number, first = indent): string {
  const lines: string[] = [];
  let line = '';
  let room = WIDTH - first;
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > room) {
      lines.push(line);
      line = word;
      room = WIDTH - indent;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
}

/** One row of a two-column list: the term, then its text wrapped in the second column. */
function row(term: string, text: string): string {
  const head = `  ${term}`;
  if (head.length + 1 >= FLAG_COLUMN) return `${head}\n${' '.repeat(FLAG_COLUMN)}${wrap(text, FLAG_COLUMN)}\n`;
  return `${head.padEnd(FLAG_COLUMN)}${wrap(text, FLAG_COLUMN)}\n`;
}

const flagTerm = (name: string, f: Flag) => `--${name}${f.value ? ` ${f.value}` : ''}`;

const synopsis = (c: CommandSpec) => `dewpoint ${c.name}${c.args ? ` ${c.args}` : ''}`;

function sections(c: CommandSpec): string {
  return (c.sections?.() ?? []).map((s) => `\n${s.heading}:\n${s.lines.map((l) => `  ${l}\n`).join('')}`).join('');
}

/** `dewpoint <command> --help`: usage, what it does, every flag it takes, its sections. */
export function commandHelp(c: CommandSpec): string {
  const flags = Object.entries(c.flags);
  return (
    `usage: ${synopsis(c)}${flags.length ? ' [flags]' : ''}\n\n${wrap(c.summary, 0)}\n\nflags:\n` +
    flags.map(([name, f]) => row(flagTerm(name, f), f.help)).join('') +
    row('-h, --help', 'this help') +
    sections(c)
  );
}

/** `dewpoint --help`: every command with what it does, then each command's sections (the presets). */
export function mainHelp(commands: readonly CommandSpec[]): string {
  return (
    'usage: dewpoint <command> [flags]    (dewpoint <command> --help: its flags)\n' +
    '       dewpoint --version\n\ncommands:\n' +
    commands.map((c) => row(`${c.name}${c.args ? ` ${c.args}` : ''}`, c.summary)).join('') +
    commands.map(sections).join('')
  );
}
