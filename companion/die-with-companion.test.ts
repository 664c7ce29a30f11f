/**
 * Every program dies with the companion: a real companion in a child Node process
 * (testing/companion-child.ts, which installs no signal handlers), an environment session whose
 * program forks a sleeping child and a setsid'd grandchild, then the companion killed by SIGTERM,
 * SIGINT or SIGKILL. Afterwards no process of the program is left (the /proc table: the pids it
 * reported, its group, session, HOME and uid), and its job directory is gone: the reaper's work
 * (companion/reaper.ts), since the dead companion cleans up nothing.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive, proc, py } from './testing/processes';

const ORIGIN = 'http://localhost:5173';
const TOKEN = `die-${randomBytes(12).toString('hex')}`;

/** Forks a child that sleeps and a setsid'd grandchild that sleeps; reset answers the three pids. */
const PROGRAM = py(`
  import json, os, sys, time
  def sleeper(leave):
      r, w = os.pipe()
      pid = os.fork()
      if pid == 0:
          if leave:
              os.setsid()
          os.write(w, b"x")  # its session is settled: the test may look at it
          time.sleep(600)
          os._exit(0)
      os.read(r, 1)
      return pid
  for line in sys.stdin:
      req = json.loads(line)
      if req["op"] == "reset":
          pids = [os.getpid(), sleeper(False), sleeper(True)]
          print(json.dumps({"context": pids}), flush=True)
      elif req["op"] == "close":
          break
`);

const RESET = {
  task: { id: 't', prompt: 'p', answer: 'a', data: {} },
  tokenizer: { type: 'char', vocab: ['<pad>', '<bos>', '<eos>'], specials: { pad: 0, bos: 1, eos: 2 } },
};

async function until(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const t0 = Date.now();
  while (!(await check())) {
    if (Date.now() - t0 > ms) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

describe.skipIf(process.platform !== 'linux')('every program dies with the companion', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'dewpoint-die-'));
    await chmod(root, 0o711);
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it.each(['SIGTERM', 'SIGINT', 'SIGKILL'] as const)(
    'killed by %s, the companion leaves no process of a session and no job directory',
    async (signal) => {
      const tmpRoot = await mkdtemp(join(root, 'c-'));
      await chmod(tmpRoot, 0o711);
      const child = spawn(process.execPath, ['--import', 'tsx', 'companion/testing/companion-child.ts'], {
        env: { ...process.env, DEWPOINT_TEST_TOKEN: TOKEN, DEWPOINT_TEST_ROOT: tmpRoot },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let pids: number[] = [];
      try {
        const port = await new Promise<number>((resolve, reject) => {
          let out = '';
          child.stdout.on('data', (d: Buffer) => {
            out += d.toString();
            const m = out.match(/\{"port":(\d+)\}/);
            if (m) resolve(Number(m[1]));
          });
          child.once('exit', (code) => reject(new Error(`the companion exited (${code}) before it listened`)));
        });
        const post = async (path: string, body: unknown) => {
          const r = await fetch(`http://127.0.0.1:${port}${path}`, {
            method: 'POST',
            headers: { origin: ORIGIN, authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
          expect(r.status, await r.clone().text()).toBe(200);
          return (await r.json()) as Record<string, unknown>;
        };
        const { id } = (await post('/v1/sessions', { files: { 'main.py': PROGRAM }, limits: { wallSeconds: 20 } })) as {
          id: string;
        };
        const reset = await post(`/v1/sessions/${id}/reset`, RESET);
        expect(reset.status).toBe('running');
        pids = reset.context as number[];
        expect(pids).toHaveLength(3);
        for (const pid of pids) expect(await alive(pid), `pid ${pid} alive before the kill`).toBe(true);
        const leader = (await proc(pids[0]))!;
        // The grandchild left the program's session: only the reaper's sweep finds it.
        expect((await proc(pids[2]))!.session).not.toBe(leader.session);
        expect(await readdir(tmpRoot)).toHaveLength(1);

        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill(signal);
        await exited;
        const allDead = await until(async () => (await Promise.all(pids.map(alive))).every((a) => !a), 10_000);
        const still = (await Promise.all(pids.map(async (p) => ((await alive(p)) ? p : null)))).filter((p) => p);
        expect(allDead, `still alive after the companion died: ${still.join(', ')}`).toBe(true);
        expect(await until(async () => (await readdir(tmpRoot)).length === 0, 5000), 'job directory left').toBe(true);
      } finally {
        child.kill('SIGKILL');
        for (const pid of pids) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone already: what the test wants
          }
        }
      }
    },
    40_000,
  );
});
