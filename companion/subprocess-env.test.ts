/**
 * SubprocessEnvironment against real programs, one property per test: the JSON-lines round trip,
 * and each way a session ends (the per-request deadline, a stray or invalid stdout line, an
 * oversized line, the program's exit mid-episode, cancellation, close), each leaving no process
 * of the program (its group and session, HOME = its job directory, any pid it printed) and no job
 * directory. Bounds on time are generous (2 slow shared cores): deadlines are the property here.
 */
import { chmod, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProcessRunner } from './process-runner';
import type { EnvResetRequest, SandboxLimitsInput } from './protocol';
import { sandboxLimitsSchema } from './protocol';
import { SubprocessEnvironment } from './subprocess-env';

let root: string;
let open: SubprocessEnvironment[];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'dewpoint-subenv-test-'));
  // Programs may run as a uid of their own (the runner's jail, as root): they must pass through.
  await chmod(root, 0o711);
  open = [];
});
afterEach(async () => {
  await Promise.all(open.map((e) => e.close()));
  await rm(root, { recursive: true, force: true });
});

/** Strip the common indentation of a Python source written inside a template literal. */
function py(source: string): string {
  const lines = source.replace(/^\n/, '').trimEnd().split('\n');
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => l.match(/^ */)![0].length));
  return lines.map((l) => l.slice(indent)).join('\n') + '\n';
}

/** A JSON-lines loop around `handle(request) -> reply` (Python), so each test writes only its behaviour. */
const loop = (handle: string) =>
  py(`
    import json, os, subprocess, sys, time
    ${handle.trim().split('\n').join('\n    ')}
    for line in sys.stdin:
        req = json.loads(line)
        if req["op"] == "close":
            break
        reply = handle(req)
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\\n")
            sys.stdout.flush()
  `);

async function start(source: string, limits: SandboxLimitsInput = {}): Promise<SubprocessEnvironment> {
  const env = await SubprocessEnvironment.start(
    new ProcessRunner({ tmpRoot: root }),
    { files: { 'main.py': source } },
    sandboxLimitsSchema.parse({ wallSeconds: 10, ...limits }),
  );
  open.push(env);
  return env;
}

const RESET: EnvResetRequest = {
  task: { id: 't', prompt: 'p', answer: 'a', data: { n: 3 } },
  tokenizer: { type: 'char', vocab: ['<pad>', '<bos>', '<eos>', 'x'], specials: { pad: 0, bos: 1, eos: 2 } },
};
const act = (ids: number[]) => ({ action: { ids, text: 'x'.repeat(ids.length), terminated: true } });

async function alive(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'latin1');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch (e) {
    if (['ENOENT', 'ESRCH'].includes((e as NodeJS.ErrnoException).code ?? '')) return false; // gone, or going
    throw e;
  }
}

/** After close: no job directory, the program and every pid it named are dead, nothing left in its group or session. */
async function expectNothingLeft(env: SubprocessEnvironment, pids: number[] = []): Promise<void> {
  await env.close();
  expect(await readdir(root), 'job directories left behind').toEqual([]);
  for (const pid of [env.pid, ...pids]) expect(await alive(pid), `pid ${pid} is alive`).toBe(false);
  for (const name of await readdir('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || !(await alive(pid))) continue;
    const stat = await readFile(`/proc/${pid}/stat`, 'latin1').catch(() => '');
    const [, , pgrp, session] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    expect([Number(pgrp), Number(session)], `pid ${pid} is in the program's group or session`).not.toContain(env.pid);
  }
}

describe('SubprocessEnvironment: the protocol', () => {
  it('reset gets the task and tokenizer, step the action; replies come back as the worker reads them', async () => {
    const env = await start(
      loop(`
        def handle(req):
            if req["op"] == "reset":
                return {"context": [req["tokenizer"]["specials"]["bos"], req["task"]["data"]["n"]]}
            ids = req["action"]["ids"]
            if len(ids) == 1:
                return {"observation": ids + ids, "status": "running", "detail": req["action"]["text"]}
            if len(ids) == 2:
                return {"context": [1, 2, 3], "status": "running"}
            return {"status": "done", "reward": 0.25}
      `),
    );
    expect(await env.reset(RESET)).toEqual({ status: 'running', context: [1, 3] });
    expect(await env.step(act([3]))).toEqual({ observation: [3, 3], status: 'running', detail: 'x' });
    expect(await env.step(act([3, 3]))).toEqual({ observation: [], context: [1, 2, 3], status: 'running' });
    expect(await env.step(act([3, 3, 3]))).toEqual({ observation: [], status: 'done', reward: 0.25 });
    expect(env.ended).toBeNull();
    await expectNothingLeft(env);
  });

  it("the environment's own error passes through as status error, with its detail", async () => {
    const env = await start(loop(`def handle(req): return {"status": "error", "detail": "no such task"}`));
    expect(await env.reset(RESET)).toEqual({
      status: 'error',
      context: [],
      detail: 'no such task',
      error: 'environment',
    });
    expect(await env.step(act([3]))).toEqual({
      observation: [],
      status: 'error',
      detail: 'no such task',
      error: 'environment',
    });
    await expectNothingLeft(env);
  });
});

describe('SubprocessEnvironment: how a session ends', () => {
  it('a step past the per-request deadline is an error naming the deadline; the program is killed', async () => {
    const env = await start(
      loop(`def handle(req): return {"context": [1]} if req["op"] == "reset" else time.sleep(60)`),
      { wallSeconds: 0.5 },
    );
    expect(await env.reset(RESET)).toMatchObject({ status: 'running' });
    const t0 = performance.now();
    const r = await env.step(act([3]));
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(r.status).toBe('error');
    expect(r.detail).toMatch(/did not answer step within the 0\.5 s deadline \(limits\.wallSeconds\) and was killed/);
    expect(await alive(env.pid)).toBe(false);
    // Every later request answers the same reason, without a program to ask.
    expect((await env.step(act([3]))).detail).toBe(r.detail);
    await expectNothingLeft(env);
  });

  it('a stray line on stdout (not JSON) is an error that quotes it, truncated when long', async () => {
    const env = await start(loop(`def handle(req): print("debug: thinking"); return {"context": [1]}`));
    const r = await env.reset(RESET);
    expect(r).toMatchObject({ status: 'error' });
    expect(r.detail).toMatch(
      /a stray line on the environment's stdout in reply to reset, not JSON: "debug: thinking" \(stdout is for replies only/,
    );
    await expectNothingLeft(env);

    const long = await start(loop(`def handle(req): print("y" * 5000); return {"context": [1]}`));
    const d = (await long.reset(RESET)).detail!;
    expect(d).toMatch(/not JSON: "y{300}"… \(5000 characters\)/);
    expect(d.length).toBeLessThan(1000);
    await expectNothingLeft(long);
  });

  it('a reply that is JSON but not a valid reply is an error naming the field and quoting the line', async () => {
    const env = await start(
      loop(`def handle(req): return {"context": [1]} if req["op"] == "reset" else {"obs": [3], "status": "running"}`),
    );
    await env.reset(RESET);
    const r = await env.step(act([3]));
    expect(r.detail).toMatch(
      /an invalid reply to step .*reply\.obs: unknown field.*: "\{\\"obs\\": \[3\], \\"status\\": \\"running\\"\}"/,
    );
    await expectNothingLeft(env);
    const bad = await start(loop(`def handle(req): return {"context": [1, -2]}`));
    expect((await bad.reset(RESET)).detail).toMatch(/reply\.context\[1\]: must be a non-negative integer id/);
    await expectNothingLeft(bad);
  });

  it('a line before any request is a stray line', async () => {
    const env = await start(
      py(`
      import sys, time
      print("ready!", flush=True)
      time.sleep(60)
    `),
    );
    await new Promise((r) => setTimeout(r, 300));
    const r = await env.reset(RESET);
    expect(r.detail).toMatch(/stray line .*"ready!"/);
    await expectNothingLeft(env);
  });

  it('a line over limits.messageBytes is an error, and the program is killed', async () => {
    const env = await start(
      loop(`def handle(req): sys.stdout.write("[" * 100000); sys.stdout.flush(); time.sleep(60)`),
      { messageBytes: 1000 },
    );
    const r = await env.reset(RESET);
    expect(r.detail).toMatch(/passed the 1000-byte message limit \(limits\.messageBytes\)/);
    await expectNothingLeft(env);
  });

  it('a program that exits mid-episode is an error with its exit code and the end of its stderr', async () => {
    const env = await start(
      loop(`
        def handle(req):
            if req["op"] == "reset":
                return {"context": [1]}
            if req["action"]["ids"] == [3, 3]:
                sys.stderr.write("Traceback: something broke\\n")
                sys.exit(3)
            return {"observation": [3], "status": "running"}
      `),
    );
    await env.reset(RESET);
    expect(await env.step(act([3]))).toMatchObject({ status: 'running' });
    const r = await env.step(act([3, 3]));
    expect(r.status).toBe('error');
    expect(r.detail).toBe('the environment exited (exit code 3) before answering step');
    // The program's own words come beside the companion's, in the reply's stderr (and not twice).
    expect(r.stderr).toBe('Traceback: something broke\n');
    await expectNothingLeft(env);
  });

  it('a program that replies and exits at once still delivers its reply', async () => {
    const env = await start(
      py(`
      import json, sys
      sys.stdin.readline()
      print(json.dumps({"context": [1, 3]}), flush=True)
    `),
    );
    expect(await env.reset(RESET)).toEqual({ status: 'running', context: [1, 3] });
    await expectNothingLeft(env);
  });

  it('cancellation (the signal aborts) during a step is an error and kills the program', async () => {
    const env = await start(
      loop(`def handle(req): return {"context": [1]} if req["op"] == "reset" else time.sleep(60)`),
    );
    await env.reset(RESET);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const r = await env.step(act([3]), ac.signal);
    expect(r.detail).toMatch(/step was cancelled \(its client went away\); the environment was killed/);
    expect(await alive(env.pid)).toBe(false);
    await expectNothingLeft(env);
  });

  it('close kills the whole group, a child that left it with setsid too, and deletes the job directory', async () => {
    const env = await start(
      loop(`
        def handle(req):
            same = subprocess.Popen(["sleep", "600"])
            away = subprocess.Popen(["sleep", "600"], start_new_session=True)
            return {"context": [1], "detail": json.dumps([same.pid, away.pid, os.getcwd()])}
      `),
    );
    const r = await env.reset(RESET);
    const [same, away, cwd] = JSON.parse(r.detail!) as [number, number, string];
    expect(await alive(same)).toBe(true);
    expect(await alive(away)).toBe(true);
    expect(cwd).toBe(env.dir);
    await expectNothingLeft(env, [same, away]);
    expect(env.ended).toBe('the session was closed');
  });
});
