import { describe, expect, it } from 'vitest';
import type { EnvProgramRunOptions } from '../../worker/protocol';
import { environmentFiles, environmentSummary } from './environment-text';

const env: EnvProgramRunOptions = {
  program: { name: 'calc_env.py', text: 'print()\n', sha256: 'ab'.repeat(32), argv: ['python3', '-I', 'calc_env.py'] },
  tasks: {
    name: 'tasks.jsonl',
    records: [
      { id: '1', prompt: '1+2=', answer: '3', data: {} },
      { id: '2', prompt: '2+2=', answer: '4', data: { k: 1 } },
    ],
    heldOut: 1,
  },
};

describe('environment picker text', () => {
  it('names the program, its command, its hash and the tasks, and says when it is the example', () => {
    expect(environmentSummary(env, undefined)).toBe(
      'calc_env.py (python3 -I calc_env.py, sha256 abababababab…) on tasks.jsonl: 2 tasks, 1 held out',
    );
    expect(environmentSummary(env, env)).toMatch(/1 held out — the example$/);
    const other = { ...env, program: { ...env.program, sha256: 'cd'.repeat(32) } };
    expect(environmentSummary(other, env)).not.toMatch(/example/);
  });

  it('sends the current file for the one not picked, as its text', () => {
    const picked = { name: 'mine.py', bytes: new Uint8Array([112]) };
    const files = environmentFiles({ program: picked, tasks: null }, env);
    expect(files.program).toBe(picked);
    expect(files.tasks.name).toBe('tasks.jsonl');
    expect(
      new TextDecoder()
        .decode(files.tasks.bytes)
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(env.tasks.records);
    const other = environmentFiles({ program: null, tasks: picked }, env);
    expect(new TextDecoder().decode(other.program.bytes)).toBe('print()\n');
  });
});
