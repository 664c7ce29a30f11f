import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JournalRecord, StartRecord, TurnRecord } from '../worker/episodes/journal';
import { JournalConflict, checksumOk, withChecksum } from '../worker/episodes/journal';
import { FileJournal } from './node-journal';

const cohort = (runId: string, step: number) => `${runId}/step ${step}/version 0/seed 7`;

function start(runId: string, step: number, episode: number): StartRecord {
  return withChecksum<StartRecord>({
    runId,
    step,
    episode,
    turn: 0,
    cohort: cohort(runId, step),
    writer: 'loop-1',
    kind: 'start',
    task: { id: 'add/47/35', prompt: '47+35=\n"ok"', answer: '82', data: { a: 47, b: 35 } },
    group: 'add/47/35',
    sample: episode,
    initial: [1, 7, 9],
    ms: 0.25,
  });
}

function turn(runId: string, step: number, episode: number, k: number): TurnRecord {
  return withChecksum<TurnRecord>({
    runId,
    step,
    episode,
    turn: k,
    cohort: cohort(runId, step),
    writer: 'loop-1',
    kind: 'turn',
    trace: {
      traceId: `t${episode}.${k}`,
      parentTraceId: k > 1 ? `t${episode}.${k - 1}` : null,
      promptDeltaIds: [3, 4],
      completionIds: [5, 2],
    },
    // Doubles that float32 or a short decimal would round, and values JSON cannot write: all must come back exactly.
    action: {
      rawLogProbs: [-0.1234567890123, -1e-9, -Infinity, -0],
      behaviorLogProbs: [-0.1234567890124, -3e-9, 5e-324, -1.7976931348623157e308],
      terminated: k === 2,
      policyStep: 0,
      sampling: { temperature: 0.7, topP: 0.95 },
    },
    observation: {
      ids: k === 2 ? [] : [6],
      status: k === 2 ? 'completed' : 'running',
      ...(k === 2 ? { reward: 1 / 3 } : {}),
    },
    state: `{"turn":${k}}\u00e9\u{1f600}`,
    sampleMs: 1.5,
    envMs: 0.5,
  });
}

const episodes = (runId: string, step: number): JournalRecord[] => [
  start(runId, step, 1),
  turn(runId, step, 1, 1),
  start(runId, step, 0),
  turn(runId, step, 0, 1),
  turn(runId, step, 1, 2),
  turn(runId, step, 0, 2),
];
const keys = (rs: JournalRecord[]) => rs.map((r) => [r.episode, r.turn]);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'dewpoint-journal-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('file episode journal', () => {
  it('round-trips records exactly, one JSONL file per step, ordered by (episode, turn)', async () => {
    const journal = new FileJournal(dir);
    expect(journal.kind).toBe('files');
    await journal.commit(episodes('run-1', 12));
    await journal.commit([start('run-1', 3, 0)]);
    await journal.commit([start('other', 12, 0)]);
    expect(readdirSync(join(dir, 'run-1')).sort()).toEqual(['step-000003.jsonl', 'step-000012.jsonl']);
    // A fresh journal over the same folder (a restarted CLI) reads the same records back.
    const again = new FileJournal(dir);
    const got = await again.load('run-1', 12);
    expect(keys(got)).toEqual([
      [0, 0],
      [0, 1],
      [0, 2],
      [1, 0],
      [1, 1],
      [1, 2],
    ]);
    expect(got).toEqual([
      start('run-1', 12, 0),
      turn('run-1', 12, 0, 1),
      turn('run-1', 12, 0, 2),
      start('run-1', 12, 1),
      turn('run-1', 12, 1, 1),
      turn('run-1', 12, 1, 2),
    ]);
    const t = got[1] as TurnRecord;
    expect(Object.is(t.action.rawLogProbs[3], -0)).toBe(true);
    expect(t.action.rawLogProbs[2]).toBe(-Infinity);
    expect(got.every(checksumOk)).toBe(true);
    expect(await again.steps('run-1')).toEqual([3, 12]);
    expect(await again.steps('nobody')).toEqual([]);
    expect(await again.load('run-1', 4)).toEqual([]);
    expect(again.warnings).toEqual([]);
  });

  it('refuses a key already in the file, also after a restart, and writes nothing of that commit', async () => {
    const journal = new FileJournal(dir);
    await journal.commit([start('c', 1, 0), turn('c', 1, 0, 1)]);
    const file = join(dir, 'c', 'step-000001.jsonl');
    const size = statSync(file).size;
    for (const j of [journal, new FileJournal(dir)]) {
      const err = await j.commit([start('c', 1, 1), turn('c', 1, 0, 1)]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(JournalConflict);
      expect((err as Error).message).toMatch(/step 1, episode 0, turn 1 of run 'c' is already committed/);
    }
    await expect(journal.commit([start('c', 1, 2), start('c', 1, 2)])).rejects.toThrow(/episode 2, turn 0/);
    expect(statSync(file).size).toBe(size);
    expect(keys(await journal.load('c', 1))).toEqual([
      [0, 0],
      [0, 1],
    ]);
    await journal.commit([start('c', 1, 1)]);
    expect(keys(await new FileJournal(dir).load('c', 1))).toEqual([
      [0, 0],
      [0, 1],
      [1, 0],
    ]);
  });

  it('refuses a commit spanning two steps (one write cannot be atomic across files)', async () => {
    const journal = new FileJournal(dir);
    await expect(journal.commit([start('s', 1, 0), start('s', 2, 0)])).rejects.toThrow(/one step of one run/);
    expect(existsSync(join(dir, 's'))).toBe(false);
  });

  it('ignores a torn last line with a warning, and the next commit cuts it off', async () => {
    const journal = new FileJournal(dir);
    await journal.commit([start('t', 1, 0), turn('t', 1, 0, 1)]);
    const file = join(dir, 't', 'step-000001.jsonl');
    const committed = readFileSync(file, 'utf8');
    // A crash mid-write: a whole record line of the next commit, then half of another, no commit line.
    const next = readFileSync(file, 'utf8').split('\n')[1].replace('"turn":1', '"turn":2');
    appendFileSync(file, `${next}\n${next.slice(0, 40)}`);
    const reader = new FileJournal(dir);
    expect(keys(await reader.load('t', 1))).toEqual([
      [0, 0],
      [0, 1],
    ]);
    expect(reader.warnings).toHaveLength(1);
    expect(reader.warnings[0]).toMatch(
      /step-000001\.jsonl: ignored 2 uncommitted line\(s\) after byte \d+ \(a write torn by a crash\)/,
    );
    await reader.load('t', 1);
    expect(reader.warnings).toHaveLength(1); // said once
    // The same journal (its keys in memory, file grown behind it) and a fresh one both cut the tail.
    await journal.commit([turn('t', 1, 0, 2)]);
    expect(readFileSync(file, 'utf8').startsWith(committed)).toBe(true);
    const fresh = new FileJournal(dir);
    expect(keys(await fresh.load('t', 1))).toEqual([
      [0, 0],
      [0, 1],
      [0, 2],
    ]);
    expect(fresh.warnings).toEqual([]);
    expect((await fresh.load('t', 1)).every(checksumOk)).toBe(true);
  });

  it('a file with only a torn write has no committed step', async () => {
    const journal = new FileJournal(dir);
    await journal.commit([start('u', 1, 0)]);
    const line = readFileSync(join(dir, 'u', 'step-000001.jsonl'), 'utf8').split('\n')[0];
    writeFileSync(join(dir, 'u', 'step-000002.jsonl'), line.slice(0, 30));
    expect(await journal.steps('u')).toEqual([1]);
    expect(await journal.load('u', 2)).toEqual([]);
    expect(journal.warnings).toHaveLength(1);
    await journal.commit([start('u', 2, 0)]);
    expect(await journal.steps('u')).toEqual([1, 2]);
  });

  it('a line with one digit changed still loads, and fails its checksum', async () => {
    const journal = new FileJournal(dir);
    await journal.commit([start('d', 1, 0), turn('d', 1, 0, 1)]);
    const file = join(dir, 'd', 'step-000001.jsonl');
    const text = readFileSync(file, 'utf8');
    const changed = text.replace('-0.1234567890123,', '-0.1234567890124,');
    expect(changed).not.toBe(text);
    writeFileSync(file, changed);
    const reader = new FileJournal(dir);
    const got = await reader.load('d', 1);
    expect(keys(got)).toEqual([
      [0, 0],
      [0, 1],
    ]);
    expect(got.map(checksumOk)).toEqual([true, false]);
    expect(reader.warnings).toEqual([]);
  });

  it('an unparsable line before the last commit line is damage, and load says where', async () => {
    const journal = new FileJournal(dir);
    await journal.commit([start('x', 1, 0)]);
    await journal.commit([start('x', 1, 1)]);
    const file = join(dir, 'x', 'step-000001.jsonl');
    writeFileSync(file, readFileSync(file, 'utf8').replace('{"runId"', '{"runId'));
    await expect(new FileJournal(dir).load('x', 1)).rejects.toThrow(
      /step-000001\.jsonl: line 1 does not parse, inside committed records/,
    );
  });

  it('deleteRun removes the run folder and nothing else; the run can be journaled again', async () => {
    const journal = new FileJournal(dir);
    await journal.commit(episodes('gone', 1));
    await journal.commit(episodes('gone', 2));
    await journal.commit(episodes('kept', 1));
    await journal.deleteRun('gone');
    expect(existsSync(join(dir, 'gone'))).toBe(false);
    expect(await journal.steps('gone')).toEqual([]);
    expect(await journal.steps('kept')).toEqual([1]);
    await journal.deleteRun('never-was');
    await journal.commit(episodes('gone', 1)); // the keys in memory went with the folder
    expect(await journal.load('gone', 1)).toHaveLength(6);
  });

  it('keeps a run id inside its folder', async () => {
    const journal = new FileJournal(dir);
    await journal.commit([start('../escape/x', 1, 0)]);
    expect(readdirSync(dir)).toEqual(['..%2Fescape%2Fx']);
    expect(await journal.steps('../escape/x')).toEqual([1]);
    await expect(journal.commit([start('..', 1, 0)])).rejects.toThrow(/cannot name a folder/);
  });

  it('runs concurrent operations one at a time', async () => {
    const journal = new FileJournal(dir);
    const commits = [0, 1, 2, 3].map((e) => journal.commit([start('q', 1, e), turn('q', 1, e, 1)]));
    const loads = [journal.load('q', 1), journal.commit([start('q', 1, 0)]).catch((e: Error) => e.name)];
    await Promise.all(commits);
    const [, conflict] = await Promise.all(loads);
    expect(conflict).toBe('JournalConflict');
    expect(keys(await journal.load('q', 1))).toHaveLength(8);
    expect(journal.warnings).toEqual([]);
  });
});
