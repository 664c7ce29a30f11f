/**
 * The episode journal (worker/episodes/journal.ts) as files, for Node (the CLI): one JSONL file per
 * step of a run, `DIR/<runId>/step-000012.jsonl`, one JSON record per line in commit order.
 *
 * A commit appends its records' lines and then a commit line `{"kind":"commit","records":N}` in
 * one write, then fsyncs the file (and, when it created them, the file's folders). The commit
 * line is what makes a commit atomic: after a crash mid-write the file ends in a torn tail (a line
 * without its newline, an unparsable line, or whole record lines whose commit line never made
 * it); load ignores that tail and says so in `warnings`, never throws, and the next commit cuts it
 * off before appending. Anything unreadable before the last commit line is damage from outside,
 * not a crash, and load throws. A record that parses but fails `checksumOk` is returned as it is:
 * the caller marks its episode corrupt.
 *
 * Keys are checked against those already in the file (read once, then kept in memory for the few
 * files last written), so committing a key twice is a `JournalConflict` and writes nothing. One
 * writer per directory; operations of one `FileJournal` run one at a time. A commit covers one
 * step of one run (one file): one write cannot be atomic across two files.
 *
 * JSON round-trips every finite number exactly; -0, NaN and ±Infinity, which JSON cannot write,
 * are written as `{"$num":"-0"}` (etc.) and read back as numbers.
 */
import type { FileHandle } from 'node:fs/promises';
import { access, mkdir, open, readFile, readdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { EpisodeJournal, JournalRecord } from '../worker/episodes/journal';
import { JournalConflict, byEpisodeTurn, describeRecord } from '../worker/episodes/journal';
import { StorageFullError } from '../worker/store/run-store';

const NUM_TAG = '$num';
const COMMIT_PREFIX = '{"kind":"commit","records":';
const COMMIT_LINE = /^\{"kind":"commit","records":(\d+)\}$/;
const NEWLINE = 0x0a; // one byte in UTF-8, never part of a multibyte character
/** How many files' keys stay in memory (the step being collected, and a few before it). */
const CACHED_FILES = 8;

function replacer(_key: string, v: unknown): unknown {
  if (typeof v === 'number' && (!Number.isFinite(v) || Object.is(v, -0)))
    return { [NUM_TAG]: Object.is(v, -0) ? '-0' : String(v) };
  return v;
}

function reviver(_key: string, v: unknown): unknown {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const keys = Object.keys(v);
    const tag = (v as Record<string, unknown>)[NUM_TAG];
    if (keys.length === 1 && typeof tag === 'string' && ['-0', 'NaN', 'Infinity', '-Infinity'].includes(tag))
      return Number(tag);
  }
  return v;
}

/** A record as its line (with the newline). */
const recordLine = (r: JournalRecord) => `${JSON.stringify(r, replacer)}\n`;

const keyOf = (r: Pick<JournalRecord, 'episode' | 'turn'>) => `${r.episode}/${r.turn}`;

/** What a journal file holds: its committed records, and what follows them uncommitted. */
interface ParsedJournalFile {
  records: JournalRecord[];
  /** Bytes of the committed part: up to and including the last commit line. */
  committedBytes: number;
  /** Lines after the last commit line (torn or never committed), a partial last line included. */
  tailLines: number;
}

/**
 * Parses a journal file's bytes. Throws on damage before the last commit line (an unparsable line,
 * or a commit line whose count does not match the lines before it); `where` names the file.
 */
function parseJournalFile(bytes: Uint8Array, where: string): ParsedJournalFile {
  const decoder = new TextDecoder();
  const records: JournalRecord[] = [];
  let pending: (JournalRecord | null)[] = []; // null: a line that did not parse
  let committedBytes = 0;
  let lineNo = 0;
  let start = 0; // byte offsets: a damaged (non-UTF-8) byte must not shift where the next commit cuts
  for (let nl = bytes.indexOf(NEWLINE, start); nl >= 0; nl = bytes.indexOf(NEWLINE, start)) {
    const line = decoder.decode(bytes.subarray(start, nl));
    lineNo++;
    start = nl + 1;
    if (line.startsWith(COMMIT_PREFIX)) {
      const n = COMMIT_LINE.exec(line)?.[1];
      const bad = pending.indexOf(null);
      if (n === undefined || Number(n) !== pending.length || bad >= 0) {
        const what =
          bad >= 0
            ? `line ${lineNo - pending.length + bad} does not parse`
            : `commit line ${lineNo} (${line}) does not match the ${pending.length} record line(s) before it`;
        throw new Error(
          `journal ${where}: ${what}, inside committed records (changed outside dewpoint, not a crash); delete the file to collect the step again`,
        );
      }
      records.push(...(pending as JournalRecord[]));
      pending = [];
      committedBytes = start;
      continue;
    }
    let r: unknown;
    try {
      r = JSON.parse(line, reviver);
    } catch {
      r = null; // torn if no commit line follows, else damage: the next commit line decides
    }
    pending.push(r !== null && typeof r === 'object' && !Array.isArray(r) ? (r as JournalRecord) : null);
  }
  return { records, committedBytes, tailLines: pending.length + (start < bytes.length ? 1 : 0) };
}

interface FileState {
  /** `episode/turn` of every committed record. */
  keys: Set<string>;
  /** Bytes of the committed part. */
  committed: number;
  /** Bytes of the whole file when last seen (more than `committed`: a torn tail to cut). */
  size: number;
}

const isMissing = (e: unknown) => (e as NodeJS.ErrnoException)?.code === 'ENOENT';
const isFull = (e: unknown) => ['ENOSPC', 'EDQUOT'].includes((e as NodeJS.ErrnoException)?.code ?? '');

async function syncDir(path: string): Promise<void> {
  if (process.platform === 'win32') return; // folders cannot be opened for fsync there
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

export class FileJournal implements EpisodeJournal {
  readonly kind = 'files' as const;
  /** What load ignored (torn tails after a crash), one message per file and state, oldest first. */
  readonly warnings: string[] = [];
  private readonly states = new Map<string, FileState>();
  private queue: Promise<unknown> = Promise.resolve();

  /** The journal's root folder (absolute). */
  readonly dir: string;

  constructor(dir: string) {
    this.dir = resolve(dir);
  }

  /** The run's folder: its id as one path segment. */
  runDir(runId: string): string {
    const name = encodeURIComponent(runId);
    if (name === '' || name === '.' || name === '..')
      throw new Error(
        `journal: run id ${JSON.stringify(runId)} cannot name a folder; use a non-empty id other than '.' and '..'`,
      );
    return join(this.dir, name);
  }

  stepFile(runId: string, step: number): string {
    return join(this.runDir(runId), `step-${String(step).padStart(6, '0')}.jsonl`);
  }

  load(runId: string, step: number): Promise<JournalRecord[]> {
    return this.exclusive(async () => {
      const path = this.stepFile(runId, step);
      let bytes: Uint8Array;
      try {
        bytes = await readFile(path);
      } catch (e) {
        if (isMissing(e)) return [];
        throw e;
      }
      return this.parse(path, bytes).sort(byEpisodeTurn);
    });
  }

  commit(records: readonly JournalRecord[]): Promise<void> {
    return this.exclusive(async () => {
      if (records.length === 0) return;
      const { runId, step } = records[0];
      const seen = new Set<string>();
      const conflict = (r: JournalRecord) =>
        new JournalConflict(
          `journal: ${describeRecord(r)} of run '${r.runId}' is already committed; nothing of this commit (${records.length} records) was written`,
        );
      for (const r of records) {
        const ok =
          typeof r.runId === 'string' && [r.step, r.episode, r.turn].every((n) => Number.isSafeInteger(n) && n >= 0);
        if (!ok)
          throw new Error(
            `journal: a record's key must be (runId: string, step, episode, turn: non-negative integers), got ` +
              `(${JSON.stringify(r.runId)}, ${r.step}, ${r.episode}, ${r.turn})`,
          );
        if (r.runId !== runId || r.step !== step)
          throw new Error(
            `journal: one commit covers one step of one run (one file, one atomic write), got step ${step} of ` +
              `'${runId}' and step ${r.step} of '${r.runId}'; commit them separately`,
          );
        if (seen.has(keyOf(r))) throw conflict(r); // twice in this batch: refused before touching the disk
        seen.add(keyOf(r));
      }
      const path = this.stepFile(runId, step);
      const created = await access(path).then(
        () => false,
        (e: unknown) => {
          if (isMissing(e)) return true;
          throw e;
        },
      );
      const firstNewDir = created ? await mkdir(dirname(path), { recursive: true }) : undefined;
      const fh = await open(path, 'a+');
      try {
        const state = await this.stateOf(path, fh);
        const known = records.find((r) => state.keys.has(keyOf(r)));
        if (known) throw conflict(known);
        const buf = Buffer.from(records.map(recordLine).join('') + `${COMMIT_PREFIX}${records.length}}\n`);
        try {
          if (state.size > state.committed) await fh.truncate(state.committed); // cut a torn tail: appending after it would glue lines
          state.size = state.committed;
          for (let done = 0; done < buf.length;) done += (await fh.write(buf, done, buf.length - done)).bytesWritten;
          await fh.sync();
        } catch (e) {
          // Take back whatever part reached the file (without its commit line it would read as a torn tail anyway).
          state.size = -1; // unknown until read again
          await fh
            .truncate(state.committed)
            .catch((t: Error) =>
              console.error(
                `journal ${path}: could not cut a failed write back to ${state.committed} bytes: ${t.message}`,
              ),
            );
          if (isFull(e))
            throw new StorageFullError(
              `disk full writing the episode journal (${path}): the run is paused; free space and resume`,
            );
          throw e;
        }
        for (const k of seen) state.keys.add(k);
        state.committed += buf.length;
        state.size = state.committed;
      } finally {
        await fh.close();
      }
      if (created) {
        // Make the new file's name durable, and every folder mkdir made on the way to it.
        const dirs = [dirname(path)];
        for (let d = dirname(path); firstNewDir !== undefined && dirname(d) !== d; d = dirname(d)) {
          dirs.push(dirname(d)); // the folder that holds the new folder d
          if (d === firstNewDir) break;
        }
        for (const d of dirs) await syncDir(d);
      }
    });
  }

  steps(runId: string): Promise<number[]> {
    return this.exclusive(async () => {
      let names: string[];
      try {
        names = await readdir(this.runDir(runId));
      } catch (e) {
        if (isMissing(e)) return [];
        throw e;
      }
      const steps: number[] = [];
      for (const name of names) {
        const m = /^step-(\d+)\.jsonl$/.exec(name);
        if (!m) continue;
        // A file holds a committed record once it has a commit line (a crash may leave one with none).
        const text = await readFile(join(this.runDir(runId), name), 'utf8');
        if (text.includes(`\n${COMMIT_PREFIX}`)) steps.push(Number(m[1]));
      }
      return steps.sort((a, b) => a - b);
    });
  }

  deleteRun(runId: string): Promise<void> {
    return this.exclusive(async () => {
      const dir = this.runDir(runId);
      await rm(dir, { recursive: true, force: true });
      for (const path of this.states.keys()) if (dirname(path) === dir) this.states.delete(path);
    });
  }

  /** Runs operations one at a time, so a load never reads a commit half-written. */
  private exclusive<T>(f: () => Promise<T>): Promise<T> {
    const run = this.queue.then(f, f);
    this.queue = run.catch(() => undefined); // a failure belongs to its caller, not to the next operation
    return run;
  }

  /** The file's committed keys: from memory when the file is as it was left, else read through `fh`. */
  private async stateOf(path: string, fh: FileHandle): Promise<FileState> {
    const { size } = await fh.stat();
    const known = this.states.get(path);
    if (known && known.size === size) return known;
    this.parse(path, size === 0 ? new Uint8Array() : await fh.readFile());
    return this.states.get(path)!;
  }

  /** Parses a file, remembers its keys, warns once about a torn tail. */
  private parse(path: string, bytes: Uint8Array): JournalRecord[] {
    const parsed = parseJournalFile(bytes, path);
    if (parsed.tailLines > 0) {
      const message =
        `journal ${path}: ignored ${parsed.tailLines} uncommitted line(s) after byte ` +
        `${parsed.committedBytes} (a write torn by a crash); the next commit cuts them off`;
      if (!this.warnings.includes(message)) this.warnings.push(message);
    }
    this.states.delete(path); // re-inserted last: the Map's order is least recently used first
    this.states.set(path, {
      keys: new Set(parsed.records.map(keyOf)),
      committed: parsed.committedBytes,
      size: bytes.length,
    });
    while (this.states.size > CACHED_FILES) this.states.delete(this.states.keys().next().value!);
    return parsed.records;
  }
}
