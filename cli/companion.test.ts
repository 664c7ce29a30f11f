import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ORIGIN = 'http://localhost:5173';

/** Waits until `check` is true (polling), or fails after `ms`. */
async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const t0 = Date.now();
  while (!check()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('dewpoint companion (the real command, a real HTTP client)', () => {
  it('prints its address and token, runs programs, and on SIGTERM kills a running program and deletes its job directory', async () => {
    const child = spawn(process.execPath, ['bin/dewpoint.mjs', 'companion', '--port', '0', '--workers', '1'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const side = mkdtempSync(join(tmpdir(), 'companion-test-'));
    // Programs run as a uid of their own (companion/containment.ts): the marker's directory must let them write.
    chmodSync(side, 0o777);
    try {
      await until(() => /token: \S+/.test(out), 30_000, 'the companion to start');
      const url = out.match(/: (http:\/\/127\.0\.0\.1:\d+) /)![1];
      const token = out.match(/token: (\S+)/)![1];
      const headers = { origin: ORIGIN, authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const health = await (await fetch(`${url}/v1/health`, { headers })).json();
      expect(health).toMatchObject({ runner: 'process', workers: 1 });

      // A program that records its pid and job directory outside it, then sleeps.
      const marker = join(side, 'job.json');
      const sleeper = {
        files: {
          'main.py': `import json, os, time\nopen(${JSON.stringify(marker)}, 'w').write(json.dumps([os.getpid(), os.getcwd()]))\ntime.sleep(60)`,
        },
        limits: { wallSeconds: 60 },
      };
      void fetch(`${url}/v1/run`, { method: 'POST', headers, body: JSON.stringify(sleeper) }).catch(() => undefined);
      await until(() => existsSync(marker) && readFileSync(marker, 'utf8').length > 0, 20_000, 'the program to start');
      const [pid, dir] = JSON.parse(readFileSync(marker, 'utf8')) as [number, string];
      expect(existsSync(`/proc/${pid}`)).toBe(true);
      expect(existsSync(dir)).toBe(true);

      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(existsSync(`/proc/${pid}`)).toBe(false);
      expect(existsSync(dir)).toBe(false);
    } finally {
      child.kill('SIGKILL');
      rmSync(side, { recursive: true, force: true });
    }
  });
});

describe("the worker's companion client against the real server", () => {
  it('reports health when connected, and says why when the token is wrong, the page is not allowed or nothing answers', async () => {
    const { ProcessRunner } = await import('../companion/process-runner');
    const { startCompanion } = await import('../companion/server');
    const { CompanionClient, companionUrlProblem } = await import('../worker/companion-client/client');
    const inner = new ProcessRunner();
    const companion = await startCompanion(
      {
        runner: { name: 'process', run: inner.run.bind(inner) },
        token: 'secret',
        origins: [ORIGIN],
        workers: 1,
        queueLimit: 1,
        maxBodyBytes: 1 << 20,
        networkIsolation: false,
      },
      0,
    );
    // A browser sends the page's Origin by itself; Node's fetch does not, so these add it.
    const from =
      (origin: string): typeof fetch =>
      (input, init) =>
        fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), origin } });
    try {
      const ok = await new CompanionClient(companion.url, 'secret', from(ORIGIN)).status();
      expect(ok).toMatchObject({ connected: true, health: { runner: 'process', workers: 1, networkIsolation: false } });
      expect(await new CompanionClient(companion.url, 'nope', from(ORIGIN)).status()).toMatchObject({
        connected: false,
        error: expect.stringMatching(/refused the token \(wrong token\)/),
      });
      expect(await new CompanionClient(companion.url, 'secret', from('http://evil.example')).status()).toMatchObject({
        connected: false,
        error: expect.stringMatching(/refused this page \(Origin 'http:\/\/evil.example' is not allowed/),
      });
    } finally {
      await companion.close();
    }
    expect(await new CompanionClient(companion.url, 'secret', from(ORIGIN)).status()).toMatchObject({
      connected: false,
      error: expect.stringMatching(/no companion answers at http:\/\/127\.0\.0\.1:\d+/),
    });
    expect(companionUrlProblem('http://127.0.0.1:8787')).toBeNull();
    expect(companionUrlProblem('http://example.com:8787')).toMatch(/must be http:\/\/127\.0\.0\.1:PORT/);
    expect(companionUrlProblem('127.0.0.1:8787')).toMatch(/must be|is not a URL/);
  });
});
