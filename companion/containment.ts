/**
 * What ProcessRunner can contain on this machine, found once by real probes at start, and the
 * per-run `Jail` that applies it: the exec stages between the prlimit launcher and the program.
 *
 * - Network: a network and System V IPC namespace of its own, `unshare --net --ipc` as root, else
 *   `unshare --user --map-root-user --net --ipc` (an unprivileged user namespace). It holds one
 *   loopback interface, which a small `sh -c 'ip link set lo up; exec "$@"'` stage brings up inside
 *   it (as a network-less container has one): the program may talk to itself over 127.0.0.1, a
 *   closed port there is refused (ECONNREFUSED), and nothing outside answers (ENETUNREACH). Without
 *   `ip` (iproute2) the loopback stays down and the report says so. IPC objects die with it.
 * - User (root companions only): a uid and gid of its own per run, drawn from UID_RANGE, with no
 *   supplementary groups and no_new_privs (`setpriv`), owning its job directory. So it cannot
 *   write outside that directory but the world-writable ones (what it leaves at their top level
 *   is deleted after the run), nor signal, trace or read the environment of any other process;
 *   and every process of that uid is the job's, so the /proc sweep finds all of them. One uid per
 *   run, not 65534 for all: with a shared uid one run could kill, trace or starve (RLIMIT_NPROC
 *   counts per uid) the programs of the others.
 * - Processes: RLIMIT_NPROC counts the tasks of the real uid, per user namespace (Linux 5.14+).
 *   With a uid of its own, or set inside a user namespace of its own, it bounds this run alone and
 *   so stops a fork bomb. Otherwise it would count every process of the companion's user: not set.
 *
 * Stage order (each an exec; the loopback stage is the one shell): prlimit (cpu, as, core[, nproc])
 * → [unshare --net --ipc → lo up] → [setpriv] → [unshare --user ... → lo up] → [prlimit --nproc] →
 * program. `ip` needs CAP_NET_ADMIN in the namespace, so lo comes up before the drop, or as root of
 * the user namespace. A plain unshare needs root, so
 * it comes before the drop; a user namespace made by the dropped uid after it; and a user
 * namespace's own NPROC ceiling is its creator's RLIMIT_NPROC, so a non-root limit goes inside it.
 *
 * Not contained, by design of a process runner: memory summed over processes (RLIMIT_AS is per
 * process, so MAX_PROCESSES × memoryBytes at worst), disk space (no quota), what any user may
 * read, and the view of other processes (no pid namespace). That is ContainerRunner's job.
 */
import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { lchown, lstat, readFile, readdir, rm } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';

/** Processes and threads one program may have at once, where that can be bounded for one run. */
const MAX_PROCESSES = 64;
/**
 * The uids (= gids) programs run as when the companion is root. Above systemd's container ranges
 * (which end at 1879048191), below 2^31 and its foreign range; no account has them. Each runner
 * process starts at a random place, so two companions on one machine rarely draw the same uid.
 */
export const UID_RANGE = { first: 2_000_000_000, count: 2 ** 20 } as const;
/** Where a dropped program can still write besides its job directory (leftovers are deleted). */
const WORLD_WRITABLE = ['/tmp', '/var/tmp', '/dev/shm'];
const PROBE_TIMEOUT_MS = 5000;

/** What the runner contains on this machine, as the probe found it (health reports it). */
export interface Containment {
  /** The program has a network namespace of its own: no connection out of it (its own loopback, where up, aside). */
  networkIsolation: boolean;
  /** Inside that namespace the loopback is up: the program may talk to itself over 127.0.0.1 (absent: not said). */
  loopback?: boolean;
  /**
   * The program runs as a uid of its own for this run: it cannot write outside its job directory
   * (but /tmp, /var/tmp, /dev/shm), signal, trace or read the environment of another process.
   */
  dedicatedUser: boolean;
  /** Who the program runs as, in words. */
  user: string;
  /** RLIMIT_NPROC for this run alone (a fork bomb stops there), or null when nothing bounds it. */
  maxProcesses: number | null;
  /** One line per property: what is contained, what is not, and why. */
  notes: string[];
}

/** The executables the probe uses, as absolute paths, or null where missing. */
interface Tools {
  prlimit: string | null;
  unshare: string | null;
  setpriv: string | null;
  /** Any program that exits 0 (`true`), run at the end of each probed chain. */
  true: string | null;
  /** iproute2's `ip` and a POSIX shell, to bring the namespace's loopback up (optional: without, it stays down). */
  ip?: string | null;
  sh?: string | null;
}

/** What the probe found: the report, and how each run is confined. */
export interface Sandboxing {
  containment: Containment;
  /** Programs run as another user than the companion's: argv[0] must be reachable by others. */
  runsAsOthers: boolean;
  /** A fresh jail for one run (a uid of its own where the runner is root). */
  jail(): Jail;
}

/** One run's confinement. `close()` it after the run, whatever happened. */
export class Jail {
  private clear = false;
  constructor(
    /** The uid and gid the program runs as, its own for this run; null: the companion's. */
    readonly uid: number | null,
    /** Extra arguments for the launcher (prlimit), before its `--`. */
    readonly launcherArgs: readonly string[],
    /** The exec stages between the launcher and the program, each ending in `--`. */
    readonly stages: readonly string[],
  ) {}

  /** The /proc sweep found no process of this uid left: the uid may serve another run once closed. */
  swept(): void {
    this.clear = true;
  }

  /**
   * Delete what the program left at the top level of the world-writable directories, and give
   * the uid back. A uid whose processes were not swept is never reused.
   */
  async close(): Promise<void> {
    if (this.uid === null) return;
    await removeLitter(this.uid);
    if (this.clear) UIDS.release(this.uid);
  }
}

class UidPool {
  private next: number;
  private readonly used = new Set<number>();
  constructor(
    readonly first: number,
    readonly count: number,
  ) {
    this.next = randomInt(count);
  }
  acquire(): number {
    for (let i = 0; i < this.count; i++) {
      const k = (this.next + i) % this.count;
      if (!this.used.has(this.first + k)) {
        this.next = (k + 1) % this.count;
        this.used.add(this.first + k);
        return this.first + k;
      }
    }
    throw new Error(
      `all ${this.count} sandbox uids from ${this.first} are in use (uids are kept while a process of theirs may live)`,
    );
  }
  release(uid: number): void {
    this.used.delete(uid);
  }
}

/** One pool per companion process, shared by its runners, so no two runs of it share a uid. */
const UIDS = new UidPool(UID_RANGE.first, UID_RANGE.count);

/** Runs `argv` (a launcher chain ending in `true`) and says whether it exited 0, or why not. */
function attempt(argv: readonly string[]): Promise<{ ok: boolean; why: string }> {
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), {
      cwd: '/',
      env: { PATH: '/usr/bin:/bin' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    child.once('error', (e) => {
      clearTimeout(timer);
      resolve({ ok: false, why: e.message });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        ok: code === 0,
        why: stderr.trim().split('\n').pop() || (signal ? `killed by ${signal}` : `exit code ${code}`),
      });
    });
  });
}

/** A /proc/sys value, trimmed, or null where it does not exist. */
async function sysctl(name: string): Promise<string | null> {
  try {
    return (await readFile(`/proc/sys/${name}`, 'utf8')).trim();
  } catch (e) {
    if (gone(e)) return null;
    throw e;
  }
}

/** The hard RLIMIT_NPROC of this process (what prlimit cannot raise), or Infinity. */
async function ownProcessLimit(): Promise<number> {
  const line = (await readFile('/proc/self/limits', 'utf8')).split('\n').find((l) => l.startsWith('Max processes'));
  const hard = line?.slice('Max processes'.length).trim().split(/\s+/)[1];
  return hard === undefined || hard === 'unlimited' ? Infinity : Number(hard);
}

/**
 * Probe, by running real launcher chains, what this machine lets the runner contain, and return
 * the report and the jail factory. Never throws for a missing tool: it reports it.
 */
export async function probeSandboxing(tools: Tools): Promise<Sandboxing> {
  const root = process.geteuid?.() === 0;
  const me = whoami();
  const notes: string[] = [];
  const nproc = Math.min(MAX_PROCESSES, await ownProcessLimit());
  const { true: exits0, setpriv, unshare, prlimit } = tools;

  // The user: a uid of our own (root), else no_new_privs only.
  const setprivStage = (uid: number | null) =>
    setpriv
      ? [
          setpriv,
          ...(uid === null ? [] : ['--reuid', `${uid}`, '--regid', `${uid}`, '--clear-groups']),
          '--no-new-privs',
          '--',
        ]
      : [];
  const probeUid = root ? UIDS.acquire() : null;
  let useSetpriv = false;
  try {
    if (!exits0) notes.push('probe: no `true` on PATH, so nothing could be probed and nothing is contained');
    else if (!setpriv)
      notes.push(
        `user: setpriv (util-linux) is missing, so ${root ? "programs run as the companion's own user" : 'no no_new_privs'}`,
      );
    else {
      const r = await attempt([...setprivStage(probeUid), exits0]);
      useSetpriv = r.ok;
      if (!r.ok)
        notes.push(
          `user: ${root ? `dropping to a uid of its own` : 'no_new_privs'} failed (setpriv: ${r.why}), so programs run as the companion's own user`,
        );
    }
    const drop = root && useSetpriv;

    // The network: a plain namespace needs CAP_SYS_ADMIN (before the drop), a user namespace does not (after it).
    let net: 'plain' | 'user' | null = null;
    const plainStage = unshare ? [unshare, '--net', '--ipc', '--'] : [];
    const userStage = unshare ? [unshare, '--user', '--map-root-user', '--net', '--ipc', '--'] : [];
    // The loopback, brought up inside the namespace by its root; `exec "$@"` runs the rest of the chain
    // (without the PWD the shell exported: the program's environment stays the runner's).
    const { ip, sh } = tools;
    const loScript = `${ip} link set lo up || exit 125; unset PWD; exec "$@"`;
    const loStage = ip && sh ? [sh, '-c', loScript, 'dewpoint-lo-up'] : [];
    const why: string[] = [];
    if (exits0 && unshare) {
      const mid = useSetpriv ? setprivStage(probeUid) : [];
      if (root) {
        const r = await attempt([...plainStage, ...mid, exits0]);
        if (r.ok) net = 'plain';
        else why.push(`unshare --net: ${r.why}`);
      }
      if (!net) {
        const r = await attempt([...mid, ...userStage, exits0]);
        if (r.ok) net = 'user';
        else why.push(`unshare --user --net: ${r.why}`);
      }
    } else if (exits0) why.push('unshare (util-linux) is missing');
    let loUp = false;
    let loWhy = !sh ? 'no sh' : !ip ? 'no ip (iproute2) on PATH, /usr/sbin or /sbin' : '';
    if (net && exits0 && loStage.length > 0) {
      const mid = useSetpriv ? setprivStage(probeUid) : [];
      const r = await attempt(
        net === 'plain' ? [...plainStage, ...loStage, exits0] : [...mid, ...userStage, ...loStage, exits0],
      );
      loUp = r.ok;
      if (!r.ok) loWhy = `ip link set lo up: ${r.why}`;
    }
    const lo = loUp ? loStage : [];

    // Processes: bounded for this run alone with a uid of its own, or inside a user namespace of its own.
    // Root's own processes are exempt from RLIMIT_NPROC, in a user namespace too: only a non-root creator counts.
    const limitInside = !root && net === 'user' && prlimit !== null;
    const bounded = drop || limitInside;
    const launcherArgs = drop ? [`--nproc=${nproc}:${nproc}`] : [];
    const stagesFor = (uid: number | null) => [
      ...(net === 'plain' ? [...plainStage, ...lo] : []),
      ...(useSetpriv ? setprivStage(uid) : []),
      ...(net === 'user' ? [...userStage, ...lo] : []),
      ...(limitInside ? [prlimit!, `--nproc=${nproc}:${nproc}`, '--'] : []),
    ];

    // The whole chain once, as a run would start it.
    if (exits0 && prlimit && (useSetpriv || net)) {
      const r = await attempt([prlimit, ...launcherArgs, '--', ...stagesFor(probeUid), exits0]);
      if (!r.ok) {
        notes.push(`probe: the whole launcher chain failed (${r.why}), so nothing is contained`);
        return uncontained(me, notes);
      }
    }

    const range = `${UID_RANGE.first}–${UID_RANGE.first + UID_RANGE.count - 1}`;
    const user = drop
      ? `a uid and gid of its own per run (from ${range}), no supplementary groups, no_new_privs`
      : `the companion's own user, ${me}${net === 'user' ? ', as root of a user namespace of its own' : ''}${useSetpriv ? ', no_new_privs' : ''}`;
    notes.unshift(
      net
        ? `network: isolated (a network namespace of its own via ${net === 'plain' ? 'unshare --net' : 'a user namespace'}; ${
            loUp
              ? 'its own loopback is up, so a program may talk to itself over 127.0.0.1, and nothing outside answers'
              : `its loopback is down (${loWhy}), so not even 127.0.0.1 answers`
          })`
        : `network: NOT isolated (${why.join('; ')}): programs reach whatever this machine reaches`,
      drop
        ? `files: writes only its job directory and the world-writable ${WORLD_WRITABLE.join(', ')} (its leftovers at their top level are deleted after the run); reads what any user may read`
        : `files: NOT confined: a program reads and writes whatever ${me} can`,
      drop
        ? 'processes: cannot signal, trace or read the environment of any other process; every process of its uid is killed after the run'
        : `processes: can signal and trace every process of ${me}, the companion included; a child that leaves ` +
            `its session, environment and job directory outlives the run`,
      bounded
        ? `fork bomb: at most ${nproc} processes and threads at once (RLIMIT_NPROC, counted for this run alone)`
        : `fork bomb: NOT bounded (${root ? 'root is exempt from RLIMIT_NPROC' : `RLIMIT_NPROC would count every process of ${me}, so it cannot bound one run`}); the wall deadline kills its group`,
      `memory: RLIMIT_AS bounds each process, not their sum${bounded ? ` (${nproc} × memoryBytes at worst)` : ''}; disk: no quota`,
      net
        ? 'System V IPC: a namespace of its own, freed at exit'
        : 'System V IPC: shared with the machine; objects a program leaves outlive it',
    );
    if (drop && (await sysctl('fs/protected_symlinks')) === '0') {
      notes.push(
        'files: fs.protected_symlinks is 0 here, so while it runs a program can plant links in /tmp for a ' +
          'root process that uses predictable names there (sysctl fs.protected_symlinks=1 closes that)',
      );
    }
    return {
      containment: {
        networkIsolation: net !== null,
        loopback: loUp,
        dedicatedUser: drop,
        user,
        maxProcesses: bounded ? nproc : null,
        notes,
      },
      runsAsOthers: drop,
      jail: () => {
        const uid = drop ? UIDS.acquire() : null;
        return new Jail(uid, launcherArgs, stagesFor(uid));
      },
    };
  } finally {
    if (probeUid !== null) UIDS.release(probeUid);
  }
}

/** This process's user name and uid; a uid without a passwd entry (a container's) is named by number. */
function whoami(): string {
  const uid = process.geteuid?.() ?? -1;
  try {
    return `${userInfo().username} (uid ${uid})`;
  } catch (e) {
    // Node's SystemError: uv_os_get_passwd returned ENOENT.
    if ((e as { info?: { code?: string } }).info?.code !== 'ENOENT') throw e;
    return `uid ${uid}`;
  }
}

function uncontained(me: string, notes: string[]): Sandboxing {
  return {
    containment: {
      networkIsolation: false,
      loopback: false,
      dedicatedUser: false,
      user: `the companion's own user, ${me}`,
      maxProcesses: null,
      notes,
    },
    runsAsOthers: false,
    jail: () => new Jail(null, [], []),
  };
}

/** Give the job directory and everything in it to `uid` (gid the same), links not followed. */
export async function handOver(dir: string, uid: number): Promise<void> {
  await lchown(dir, uid, uid);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await handOver(path, uid);
    else await lchown(path, uid, uid);
  }
}

/** Delete what `uid` owns at the top level of the world-writable directories (its processes are dead). */
async function removeLitter(uid: number): Promise<void> {
  for (const dir of WORLD_WRITABLE) {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (e) {
      if (gone(e)) continue;
      throw e;
    }
    await Promise.all(
      names.map(async (name) => {
        const path = join(dir, name);
        try {
          if ((await lstat(path)).uid === uid) await rm(path, { recursive: true, force: true });
        } catch (e) {
          if (!gone(e))
            throw new Error(`could not delete ${path}, left by sandbox uid ${uid}: ${(e as Error).message}`, {
              cause: e,
            });
        }
      }),
    );
  }
}

function gone(e: unknown): boolean {
  return ['ENOENT', 'ENOTDIR'].includes((e as NodeJS.ErrnoException)?.code ?? '');
}
