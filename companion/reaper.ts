/**
 * The reaper: one small watchdog process per companion process that kills every program the
 * companion started when the companion itself dies, however it dies (a normal exit that skipped
 * `close`, a crash, SIGTERM or SIGINT without a handler, SIGKILL, the OOM killer).
 *
 * The companion keeps a pipe to the reaper's stdin and writes one JSON line per program it
 * starts (`+`: its process group, the uid it runs as when that is its own, its job directory) and
 * one when that program's group is dead and swept (`-`). When the companion dies the kernel closes
 * the pipe; the reaper reads EOF and, for each program still listed, kills its process group and
 * sweeps /proc for what left it (every process of the run's own uid; else its session, or HOME =
 * its job directory), in rounds until none is left, then deletes the job directory, and exits. A
 * companion that exits cleanly has listed nothing by then, so the reaper just exits.
 *
 * Why a process and not PR_SET_PDEATHSIG alone: the parent-death signal reaches only the
 * program's first process (a fork clears it), so its children would outlive the companion, and
 * with a uid of its own nobody else may kill them. The reaper runs as the companion's user (root
 * where programs get uids of their own), in a session of its own (a Ctrl-C to the companion's
 * terminal group does not reach it), with an empty environment and `/` as its cwd (no sweep of a
 * job mistakes it for one of the job's), and is Node itself (`process.execPath`), so it needs
 * nothing this machine may lack.
 *
 * Not the runners' own cleanup after a run (process-runner.ts, subprocess-env.ts): this is only
 * the last resort when the companion cannot clean up itself. Linux only (/proc), like the runners.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';

/** A running program to kill if the companion dies. */
interface Watched {
  /** Its process group and session id (the program's pid: it was started detached). */
  pgid: number;
  /** The uid it runs as when that is its own for this run (every process of it is the job's), else null. */
  uid: number | null;
  /** Its job directory (deleted after the kill). */
  dir: string;
}

/** The reaper's program, run by `node -e`: plain JavaScript, no imports but Node's own. */
const REAPER_SOURCE = String.raw`
'use strict';
const fs = require('node:fs');
const jobs = new Map();
let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
    const line = buffer.slice(0, nl);
    buffer = buffer.slice(nl + 1);
    let m;
    try { m = JSON.parse(line); } catch { continue; }
    if (m.op === '+') jobs.set(m.id, m);
    else if (m.op === '-') jobs.delete(m.id);
  }
});
const kill = (pid) => { try { process.kill(pid, 'SIGKILL'); } catch {} };
function strays() {
  const found = [];
  let names = [];
  try { names = fs.readdirSync('/proc'); } catch { return found; }
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let status;
    try { status = fs.readFileSync('/proc/' + pid + '/status', 'latin1'); } catch { continue; }
    const field = (f) => ((status.match(new RegExp('^' + f + ':\\s*(.*)$', 'm')) || [])[1] || '').trim().split(/\s+/);
    if (['Z', 'X'].includes(field('State')[0])) continue;
    const uids = field('Uid').map(Number);
    const pgrp = Number(field('NSpgid')[0]);
    const sid = Number(field('NSsid')[0]);
    for (const j of jobs.values()) {
      let mine = pgrp === j.pgid || sid === j.pgid || (j.uid !== null && uids.includes(j.uid));
      if (!mine && j.uid === null) {
        try { mine = fs.readFileSync('/proc/' + pid + '/environ').includes('HOME=' + j.dir + '\0'); } catch {}
      }
      if (mine) { found.push(pid); break; }
    }
  }
  return found;
}
let reaping = false;
function reap() {
  if (reaping) return;
  reaping = true;
  if (jobs.size === 0) process.exit(0);
  for (const j of jobs.values()) kill(-j.pgid);
  let round = 0;
  const again = () => {
    const left = strays();
    left.forEach(kill);
    if (left.length > 0 && ++round < 50) return setTimeout(again, 10 * Math.min(round, 10));
    for (const j of jobs.values()) { try { fs.rmSync(j.dir, { recursive: true, force: true }); } catch {} }
    process.exit(0);
  };
  again();
}
process.stdin.on('end', reap);
process.stdin.on('error', reap);
process.stdin.on('close', reap);
`;

let reaper: ChildProcess | null = null;
let nextId = 0;
/** What is listed now, to list again in a new reaper if the last one died. */
const listed = new Map<number, Watched>();

function send(line: object): void {
  reaper?.stdin?.write(`${JSON.stringify(line)}\n`);
}

function ensureReaper(): void {
  if (reaper || process.platform !== 'linux') return;
  // detached: a session of its own; env empty (no NODE_OPTIONS loaders); stdout and stderr unused.
  const child = spawn(process.execPath, ['-e', REAPER_SOURCE], {
    cwd: '/',
    env: {},
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  reaper = child;
  // Neither the reaper nor its pipe keeps the companion's event loop alive.
  child.unref();
  const stdin = child.stdin as (NodeJS.WritableStream & { unref?: () => void }) | null;
  stdin?.unref?.();
  // A reaper that could not start or died: the next program starts a new one, which gets the list again.
  child.stdin?.on('error', () => undefined);
  const gone = () => {
    if (reaper === child) reaper = null;
  };
  child.once('error', (e) => {
    gone();
    console.error(`companion: the reaper (kills programs if the companion dies) could not start: ${e.message}`);
  });
  child.once('exit', gone);
  for (const [id, w] of listed) send({ op: '+', id, ...w });
}

/**
 * Lists a program just started, to be killed (group, strays, job directory) if the companion dies.
 * Call the returned function once its group is dead and swept. Linux only; a no-op elsewhere.
 */
export function watch(w: Watched): () => void {
  const id = nextId++;
  listed.set(id, w);
  if (reaper) send({ op: '+', id, ...w });
  else ensureReaper();
  return () => {
    if (!listed.delete(id)) return;
    send({ op: '-', id });
  };
}
