/**
 * The CLI's help and version (cli/help.ts, cli/main.ts): every command takes --help and -h, the
 * help lists every preset of the table and exactly the flags each command parses.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PRESETS } from '../worker/presets/table';
import { main } from './main';
import { capture } from './testing/capture';

afterEach(() => vi.restoreAllMocks());

/** What `main(argv)` returns and writes. */
async function run(...argv: string[]) {
  const { out, err } = capture();
  const code = await main(argv);
  vi.restoreAllMocks();
  return { code, out: out.join(''), err: err.join('') };
}

/** The flags a command refuses an unknown one with: its parser's list. */
async function parsedFlags(...command: string[]): Promise<string[]> {
  const { code, err } = await run(...command, '--no-such-flag');
  expect(code).toBe(2);
  const allowed = /allowed: (.*?) \(dewpoint/.exec(err)?.[1];
  expect(allowed, err).toBeDefined();
  return allowed!.split(', ').sort();
}

/** The flags a help text lists (the rows that start with --name). */
const helpFlags = (help: string) =>
  [...help.matchAll(/^ {2}(--[a-z-]+)/gm)]
    .map((m) => m[1])
    .filter((f) => f !== '--help')
    .sort();

describe('dewpoint --help, <command> --help, --version', () => {
  it('the top-level help names every command and every preset of the table, SFT too', async () => {
    const { code, out } = await run('--help');
    expect(code).toBe(0);
    for (const c of [
      'info',
      'bench',
      'pretrain',
      'eval',
      'train',
      'episodes',
      'companion',
      'export',
      'audit',
      'lab',
      'model',
    ])
      expect(out).toMatch(new RegExp(`^ {2}${c}\\b`, 'm'));
    for (const p of PRESETS)
      expect(out).toMatch(new RegExp(`^ {2}${p.name} +${p.title.replace(/[()]/g, '\\$&')}`, 'm'));
    expect((await run('-h')).out).toBe(out);
  });

  it('train --help and -h print its help, exit 0: every preset, and exactly the flags train parses', async () => {
    const help = await run('train', '--help');
    expect(help.code).toBe(0);
    expect(help.err).toBe('');
    expect(help.out).toMatch(/^usage: dewpoint train/);
    for (const p of PRESETS) expect(help.out).toContain(`  ${p.name} `);
    for (const flag of ['--env-program', '--tasks', '--companion', '--dataset', '--journal', '--save'])
      expect(help.out).toContain(`  ${flag} `);
    expect(helpFlags(help.out)).toEqual(await parsedFlags('train'));
    // -h after other flags asks for help too; as a flag's value it is that value.
    expect(await run('train', '--preset', 'grpo-arith', '-h')).toEqual(help);
  });

  it('every command takes --help and -h and lists the flags it parses', async () => {
    for (const command of [
      ['bench'],
      ['pretrain'],
      ['eval'],
      ['episodes', 'export'],
      ['companion'],
      ['export'],
      ['audit'],
      ['lab', 'mismatch'],
    ]) {
      for (const flag of ['--help', '-h']) {
        const { code, out, err } = await run(...command, flag);
        expect([command, code, err]).toEqual([command, 0, '']);
        expect(out).toMatch(new RegExp(`^usage: dewpoint ${command.join(' ')}`));
        // bench parses its flags after a bench's name.
        expect(helpFlags(out)).toEqual(await parsedFlags(...(command[0] === 'bench' ? ['bench', 'pack'] : command)));
      }
    }
    const model = await run('model', 'inspect', '--help');
    expect(model.code).toBe(0);
    expect(model.out).toMatch(/^usage: dewpoint model inspect DIR/);
    expect(helpFlags(model.out)).toEqual(await parsedFlags('model', 'inspect', 'DIR'));
    expect((await run('info', '--help')).out).toMatch(/^usage: dewpoint info\n/);
  });

  it('--version prints the version in package.json', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(await run('--version')).toEqual({ code: 0, out: `dewpoint ${version}\n`, err: '' });
  });
});
