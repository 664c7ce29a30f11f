#!/usr/bin/env node
// `npm run demo`: builds the app (vite build), serves it (vite preview on a free port) and runs the
// demo driver e2e/demo/demo.ts in Chromium with WebGPU (CHROME_PATH, else /usr/bin/chromium): a
// short grpo-arith run driven through the UI, written to demo-out/ as screenshots of every view,
// demo.webm, metrics.json and report.json. Options after `--` go to the driver:
//   npm run demo -- --steps 6 --prompts 16 --group 8 --eval-every 3 --eval-n 64 --out demo-out
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, 'localhost', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function waitForHttp(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const r = await globalThis.fetch(url);
      if (r.ok) return;
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs / 1000} s: ${e.message}`);
    }
    await sleep(250);
  }
}

const t0 = Date.now();
console.log('[demo] vite build');
const build = spawnSync('npx', ['vite', 'build', '--logLevel', 'warn'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
const buildS = (Date.now() - t0) / 1000;

const port = await freePort();
const url = `http://localhost:${port}`;
// Its own process group, so that stopping it also stops the node process npx starts.
const server = spawn('npx', ['vite', 'preview', '--port', String(port), '--strictPort', '--host', 'localhost'], {
  stdio: ['ignore', 'ignore', 'inherit'],
  detached: true,
});
const stopServer = () => {
  try {
    process.kill(-server.pid, 'SIGTERM');
  } catch (e) {
    if (e.code !== 'ESRCH') console.error(`[demo] could not stop vite preview (pid ${server.pid}): ${e.message}`);
  }
};
process.on('SIGINT', () => {
  stopServer();
  process.exit(130);
});

let status = 1;
try {
  await waitForHttp(url, 60_000);
  console.log(`[demo] serving ${url}`);
  const driver = spawn('npx', ['tsx', 'e2e/demo/demo.ts', '--url', url, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, DEMO_BUILD_S: String(buildS) },
  });
  status = await new Promise((resolve) => driver.on('exit', (code) => resolve(code ?? 1)));
} finally {
  stopServer();
}
process.exit(status);
