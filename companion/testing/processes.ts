/**
 * Helpers for the companion's tests on real processes (process-runner, hostile): read /proc to
 * find what is left of a job, and write Python sources inline. Not used by the companion itself.
 */
import { readFile, readdir } from 'node:fs/promises';

/** A job as ProcessRunner's onStart reports it. */
export interface StartedJob {
  pid: number;
  dir: string;
  uid: number | null;
}

export interface Proc {
  pid: number;
  state: string;
  pgrp: number;
  session: number;
  /** Real, effective, saved and filesystem uid. */
  uids: number[];
}

/** Strip the common indentation of a Python source written inside a template literal. */
export function py(source: string): string {
  const lines = source.replace(/^\n/, '').trimEnd().split('\n');
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => l.match(/^ */)![0].length));
  return lines.map((l) => l.slice(indent)).join('\n') + '\n';
}

/** The whitespace-separated integers of a program's output (the pids it printed). */
export const pidsIn = (text: string): number[] => text.split(/\s+/).filter(Boolean).map(Number);

export async function proc(pid: number): Promise<Proc | null> {
  try {
    // /proc/<pid>/stat: "pid (comm) state ppid pgrp session ...", comm may hold spaces and parens.
    const stat = await readFile(`/proc/${pid}/stat`, 'latin1');
    const [state, , pgrp, session] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const status = await readFile(`/proc/${pid}/status`, 'latin1');
    const uids = (status.match(/^Uid:\s*(.*)$/m)?.[1] ?? '').trim().split(/\s+/).map(Number);
    return { pid, state, pgrp: Number(pgrp), session: Number(session), uids };
  } catch (e) {
    if (['ENOENT', 'ESRCH'].includes((e as NodeJS.ErrnoException).code ?? '')) return null;
    throw e;
  }
}

/** Alive: in /proc and not a zombie (a dead process whose parent has not reaped it yet). */
export async function alive(pid: number): Promise<boolean> {
  const p = await proc(pid);
  return p !== null && p.state !== 'Z' && p.state !== 'X';
}

/** Live processes of a job: its group or session, HOME = its directory, or its own uid. */
export async function processesOf(job: StartedJob): Promise<number[]> {
  const home = Buffer.from(`HOME=${job.dir}\0`);
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const p = await proc(pid);
    if (!p || p.state === 'Z' || p.state === 'X') continue;
    const environ = await readFile(`/proc/${pid}/environ`).catch(() => Buffer.alloc(0));
    if (
      p.pgrp === job.pid ||
      p.session === job.pid ||
      environ.includes(home) ||
      (job.uid !== null && p.uids.includes(job.uid))
    )
      found.push(pid);
  }
  return found;
}
