/**
 * Hostile environment programs through the session routes the server serves (`companionApp`
 * with its own EnvSessions table, ProcessRunner, real processes): garbage on stdout, silence past
 * the deadline, a flood, an exit mid-episode, children that outlive it, writes outside its job
 * directory, reads of another session's files. Each ends with a *named* error (`error`, protocol.ts
 * ENV_ERROR_KINDS, besides the words of `detail`), leaves no process (the /proc table: its group,
 * session, HOME, its own uid, every pid it reported) and no job directory, and a bystander session
 * of the same table answers on, unaffected, after every one.
 *
 * Where this machine cannot confine files (no uid of its own: the companion is not root), the
 * file tests assert what the probe reports and what the program then really could do.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Containment } from './containment';
import { EnvSessions } from './env-sessions';
import { SandboxFleet } from './fleet';
import { ProcessRunner } from './process-runner';
import type { EnvErrorKind, EnvStepReply } from './protocol';
import { ENV_ERROR_KINDS } from './protocol';
import { companionApp } from './server';
import { alive, processesOf, py } from './testing/processes';

const TOKEN = `hostile-env-${randomBytes(12).toString('hex')}`;
const ORIGIN = 'http://localhost:5173';
const PORT = 1; // never listened on: requests go to app.request, the Host check wants a port

/** An environment: reset answers [1, pid], then each step runs `hostile` (Python) once, else echoes. */
function program(hostile: string, onReset = ''): string {
  const indent = (source: string, by: string) =>
    py(source)
      .trimEnd()
      .split('\n')
      .map((l) => by + l)
      .join('\n');
  return py(`
    import json, os, sys, time
    steps = 0
    for line in sys.stdin:
        req = json.loads(line)
        if req["op"] == "close":
            break
        if req["op"] == "reset":
${indent(onReset || 'pass', '            ')}
            print(json.dumps({"context": [1, os.getpid()]}), flush=True)
            continue
        steps += 1
        if steps == 1:
${indent(hostile, '            ')}
        print(json.dumps({"observation": req["action"]["ids"], "status": "running"}), flush=True)
  `);
}

const RESET = {
  task: { id: 't', prompt: '', answer: '', data: {} },
  tokenizer: { type: 'char', vocab: ['<pad>', '<bos>', '<eos>', 'x'], specials: { pad: 0, bos: 1, eos: 2 } },
};
const STEP = { action: { ids: [3], text: 'x', terminated: false } };

describe.skipIf(process.platform !== 'linux')(
  'hostile environment programs (the session routes, real processes)',
  () => {
    let root: string;
    let outside: string;
    let runner: ProcessRunner;
    let containment: Containment;
    let sessions: EnvSessions;
    let fleet: SandboxFleet;
    let app: ReturnType<typeof companionApp>;
    let bystander: { id: string; pid: number; steps: number };

    const post = async (path: string, body?: unknown) => {
      const r = await app.request(`http://127.0.0.1:${PORT}${path}`, {
        method: 'POST',
        headers: {
          host: `127.0.0.1:${PORT}`,
          origin: ORIGIN,
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: r.status, body: (await r.json()) as Record<string, unknown> };
    };

    /** Opens a session on `source` and resets it: its id, pid, job directory and uid. */
    async function open(source: string, wallSeconds = 5, messageBytes?: number) {
      const opened = await post('/v1/sessions', {
        files: { 'main.py': source },
        limits: { wallSeconds, ...(messageBytes ? { messageBytes } : {}) },
      });
      expect(opened.status, JSON.stringify(opened.body)).toBe(200);
      const id = opened.body.id as string;
      const env = sessions.get(id)!;
      const job = { pid: env.pid, dir: env.dir, uid: env.uid };
      const reset = await post(`/v1/sessions/${id}/reset`, RESET);
      expect(reset.body, JSON.stringify(reset.body)).toMatchObject({ status: 'running', context: [1, env.pid] });
      return { id, job };
    }

    /** Steps `id` once, expecting the named error `kind`; then checks that nothing of it is left. */
    async function expectEnds(
      id: string,
      job: { pid: number; dir: string; uid: number | null },
      kind: EnvErrorKind,
      detail: RegExp,
      printed: number[] = [],
    ): Promise<EnvStepReply> {
      const t0 = performance.now();
      const r = await post(`/v1/sessions/${id}/step`, STEP);
      expect(r.status).toBe(200);
      const reply = r.body as unknown as EnvStepReply;
      expect(reply, JSON.stringify(reply).slice(0, 500)).toMatchObject({ status: 'error', error: kind });
      expect(ENV_ERROR_KINDS).toContain(reply.error);
      // The companion's words, then what the program wrote to stderr (a reply carries both, apart).
      expect(`${reply.detail}\n${reply.stderr ?? ''}`).toMatch(detail);
      expect((performance.now() - t0) / 1000, 'the step took too long').toBeLessThan(20);
      // Every later request answers the same named error.
      expect((await post(`/v1/sessions/${id}/step`, STEP)).body).toMatchObject({ status: 'error', error: kind });
      await expectNothingLeft(job, printed);
      expect((await post(`/v1/sessions/${id}/close`)).body).toEqual({ closed: true });
      return reply;
    }

    async function expectNothingLeft(job: { pid: number; dir: string; uid: number | null }, printed: number[] = []) {
      expect(existsSync(job.dir), `job directory ${job.dir} left`).toBe(false);
      expect(await processesOf(job), `processes of session ${job.pid} left`).toEqual([]);
      for (const pid of printed) expect(await alive(pid), `pid ${pid} the program reported is alive`).toBe(false);
    }

    async function expectBystanderUnaffected(): Promise<void> {
      const r = await post(`/v1/sessions/${bystander.id}/step`, STEP);
      expect(r.body, 'the bystander session').toEqual({ observation: [3], status: 'running' });
      expect(await alive(bystander.pid)).toBe(true);
    }

    beforeAll(async () => {
      root = await mkdtemp(join(tmpdir(), 'dewpoint-hostile-env-'));
      // A program with a uid of its own must pass through here to reach its job directory by path.
      await chmod(root, 0o711);
      outside = await mkdtemp(join(tmpdir(), 'dewpoint-hostile-env-outside-'));
      await chmod(outside, 0o755);
      runner = new ProcessRunner({ tmpRoot: root });
      containment = await runner.probe();
      const o = {
        runner: { name: 'process', run: runner.run.bind(runner) },
        token: TOKEN,
        origins: [ORIGIN],
        workers: 1,
        queueLimit: 1,
        maxBodyBytes: 1024 ** 2,
        networkIsolation: containment.networkIsolation,
      };
      fleet = new SandboxFleet(o.runner, 1, 1);
      sessions = new EnvSessions({ launcher: runner, max: 8, idleSeconds: 600 });
      app = companionApp(o, PORT, fleet, sessions);
      const b = await open(program('pass'), 30);
      bystander = { id: b.id, pid: b.job.pid, steps: 0 };
    });

    afterAll(async () => {
      await sessions?.close();
      await fleet?.close();
      await rm(root, { recursive: true, force: true });
      await rm(outside, { recursive: true, force: true });
    });

    it('garbage on stdout (not JSON) is bad-reply', async () => {
      const { id, job } = await open(program(`print("hello, I am not JSON", flush=True)`));
      await expectEnds(id, job, 'bad-reply', /not JSON: "hello, I am not JSON"/);
      await expectBystanderUnaffected();
    });

    it('JSON that is no valid reply is bad-reply too', async () => {
      const { id, job } = await open(program(`print(json.dumps({"status": "maybe"}), flush=True)`));
      await expectEnds(id, job, 'bad-reply', /an invalid reply to step/);
      await expectBystanderUnaffected();
    });

    it('never answering, past the step deadline, is deadline', async () => {
      const { id, job } = await open(program(`time.sleep(600)`), 1);
      await expectEnds(id, job, 'deadline', /did not answer step within the 1 s deadline/);
      await expectBystanderUnaffected();
    });

    it('a flood on stdout without a newline is message-limit', async () => {
      const { id, job } = await open(
        program(`sys.stdout.write("x" * 10_000_000); sys.stdout.flush(); time.sleep(600)`),
      );
      await expectEnds(id, job, 'message-limit', /passed the \d+-byte message limit/);
      await expectBystanderUnaffected();
    });

    it('a flood of valid lines, more than one per request, is bad-reply (a reply with no request waiting)', async () => {
      const { id, job } = await open(
        program(`
        while True:
            print(json.dumps({"observation": [3], "status": "running"}), flush=True)
      `),
      );
      // A line answers each step; the first that finds no request waiting ends the session (one
      // read before the next request is sent: soon, as the program never stops writing).
      let answered = 0;
      for (; answered < 200; answered++) {
        const r = await post(`/v1/sessions/${id}/step`, STEP);
        if (r.body.status === 'error') break;
        expect(r.body).toEqual({ observation: [3], status: 'running' });
      }
      expect(answered, 'steps answered before the stray line').toBeLessThan(200);
      await expectEnds(id, job, 'bad-reply', /with no request waiting/);
      await expectBystanderUnaffected();
    });

    it('exiting mid-episode is exited, with its exit code and stderr', async () => {
      const { id, job } = await open(program(`sys.stderr.write("bye\\n"); sys.exit(3)`));
      await expectEnds(id, job, 'exited', /exit code 3.*bye/s);
      await expectBystanderUnaffected();
    });

    it('children that outlive it (in its group, and a setsid one) are killed when it exits: exited', async () => {
      const { id, job } = await open(
        program(`
        pids = []
        for leave in (False, True):
            r, w = os.pipe()
            if os.fork() == 0:
                if leave:
                    os.setsid()
                if os.fork() == 0:
                    os.write(w, (str(os.getpid()) + " ").encode())
                    time.sleep(600)
                os._exit(0)
            pids.append(int(os.read(r, 32)))
        sys.stderr.write("children " + " ".join(map(str, pids)) + "\\n")
        sys.stderr.flush()
        os._exit(0)
      `),
      );
      const reply = await expectEnds(id, job, 'exited', /exit code 0/);
      const pids = (reply.stderr!.match(/children (\d+) (\d+)/) ?? []).slice(1).map(Number);
      expect(pids).toHaveLength(2);
      for (const pid of pids) expect(await alive(pid), `child ${pid}`).toBe(false);
      await expectBystanderUnaffected();
    });

    it('a write outside its job directory is refused with a uid of its own (the uncaught error: exited)', async () => {
      const target = join(outside, 'planted');
      const { id, job } = await open(program(`open(${JSON.stringify(target)}, "w").write("x")`));
      if (containment.dedicatedUser) {
        await expectEnds(id, job, 'exited', /exit code 1.*PermissionError/s);
        expect(existsSync(target)).toBe(false);
      } else {
        // Not confined, as reported: it writes, and the session runs on.
        expect(containment.notes.join('\n')).toMatch(/files: NOT confined/);
        expect((await post(`/v1/sessions/${id}/step`, STEP)).body).toMatchObject({ status: 'running' });
        expect(existsSync(target)).toBe(true);
        await post(`/v1/sessions/${id}/close`);
        await expectNothingLeft(job);
      }
      await expectBystanderUnaffected();
    });

    it("another session's files are out of its reach with a uid of its own (the uncaught error: exited)", async () => {
      const secret = randomBytes(12).toString('hex');
      const victim = await open(program('pass'), 10);
      // The victim's own file, written by the victim itself.
      const planted = await open(program('pass', `open("secret.txt", "w").write(${JSON.stringify(secret)})`), 10);
      await post(`/v1/sessions/${victim.id}/close`);
      const secretPath = join(planted.job.dir, 'secret.txt');
      expect(existsSync(secretPath)).toBe(true);
      const thief = await open(
        program(`
        data = open(${JSON.stringify(secretPath)}).read()
        print(json.dumps({"observation": [], "status": "done", "detail": data}), flush=True)
        continue
      `),
      );
      if (containment.dedicatedUser) {
        await expectEnds(thief.id, thief.job, 'exited', /PermissionError/);
      } else {
        expect(containment.notes.join('\n')).toMatch(/files: NOT confined/);
        const r = await post(`/v1/sessions/${thief.id}/step`, STEP);
        expect(r.body).toMatchObject({ status: 'done', detail: secret });
        await post(`/v1/sessions/${thief.id}/close`);
        await expectNothingLeft(thief.job);
      }
      // The session whose files it went for runs on.
      expect((await post(`/v1/sessions/${planted.id}/step`, STEP)).body).toEqual({
        observation: [3],
        status: 'running',
      });
      await post(`/v1/sessions/${planted.id}/close`);
      await expectNothingLeft(planted.job);
      await expectNothingLeft(victim.job);
      await expectBystanderUnaffected();
    });

    it("the environment's own error is named environment, and the session runs on", async () => {
      const { id, job } = await open(
        program(`
        print(json.dumps({"observation": [], "status": "error", "detail": "my own failure"}), flush=True)
        continue
      `),
      );
      const r = await post(`/v1/sessions/${id}/step`, STEP);
      expect(r.body).toEqual({ observation: [], status: 'error', detail: 'my own failure', error: 'environment' });
      expect((await post(`/v1/sessions/${id}/step`, STEP)).body).toEqual({ observation: [3], status: 'running' });
      await post(`/v1/sessions/${id}/close`);
      await expectNothingLeft(job);
      await expectBystanderUnaffected();
    });

    it('in the end, only the bystander is open, and it still answers', async () => {
      expect(sessions.open).toBe(1);
      await expectBystanderUnaffected();
      const b = sessions.get(bystander.id)!;
      const job = { pid: b.pid, dir: b.dir, uid: b.uid };
      await post(`/v1/sessions/${bystander.id}/close`);
      await expectNothingLeft(job);
      expect(await readdir(root)).toEqual([]);
    });
  },
);
