#!/usr/bin/env node
// `npm test`: the whole suite. Finds a browser (CHROME_PATH, /usr/bin/chromium, google-chrome;
// on Debian/Ubuntu as root it installs Debian's chromium with apt when none is found), makes sure
// the Vulkan loader and the SwiftShader ICD are there for Dawn in Node on machines without a GPU,
// then runs: typecheck, lint, format, imports (no cycles, worker/ layered), docs (every citation
// in the repository), unit + GPU tests (Vitest, Node), the app build, end-to-end tests
// (Playwright, Chromium with WebGPU). Every step runs; the exit code is non-zero if any failed.
//   node scripts/test.mjs [--only unit|e2e|static]
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { clearTimeout, setTimeout } from 'node:timers';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';

const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';
const isRoot = process.getuid?.() === 0;
const isDebian = existsSync('/etc/debian_version');

function which(cmd) {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

function aptInstall(packages, why) {
  if (!(isDebian && isRoot)) {
    console.error(
      `\n${why}\nInstall ${packages.join(' ')} (Debian/Ubuntu: sudo apt-get install ${packages.join(' ')}), or set CHROME_PATH to a Chromium/Chrome binary.`,
    );
    process.exit(1);
  }
  console.log(`[setup] ${why}: apt-get install ${packages.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '--no-install-recommends', ...packages], { stdio: 'inherit', env });
}

function hasGpuDeviceNode() {
  if (existsSync('/dev/nvidia0')) return true;
  return existsSync('/dev/dri') && spawnSync('sh', ['-c', 'ls /dev/dri | grep -q renderD']).status === 0;
}

function hasVulkanLoader() {
  return spawnSync('sh', ['-c', 'ldconfig -p | grep -q "libvulkan.so.1 "']).status === 0;
}

function findBrowser() {
  if (process.env.CHROME_PATH) {
    if (!existsSync(process.env.CHROME_PATH)) {
      console.error(`CHROME_PATH=${process.env.CHROME_PATH} does not exist`);
      process.exit(1);
    }
    return process.env.CHROME_PATH;
  }
  if (existsSync('/usr/bin/chromium')) return '/usr/bin/chromium';
  const chrome = which('google-chrome') ?? which('google-chrome-stable');
  if (chrome) return chrome;
  aptInstall(['chromium'], 'no Chromium or Chrome found (CHROME_PATH, /usr/bin/chromium, google-chrome)');
  return '/usr/bin/chromium';
}

function setup() {
  const browser = findBrowser();
  const missing = [];
  if (!hasGpuDeviceNode() && !existsSync(SWIFTSHADER_ICD)) missing.push('chromium');
  if (!hasVulkanLoader()) missing.push('libvulkan1');
  if (missing.length)
    aptInstall(
      missing,
      "WebGPU in Node (Dawn) needs the Vulkan loader and, without a GPU, the SwiftShader ICD from Debian's chromium",
    );
  console.log(`[setup] browser: ${browser}`);
  console.log(
    `[setup] GPU device node: ${hasGpuDeviceNode() ? 'yes' : `no (Dawn will use SwiftShader: ${SWIFTSHADER_ICD})`}`,
  );
  return browser;
}

const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;
const ALLOWED = ['static', 'unit', 'e2e'];
if (only !== null && !ALLOWED.includes(only)) {
  console.error(`--only must be one of ${ALLOWED.join(', ')}, got '${only}'`);
  process.exit(2);
}

const browser = setup();
const env = { ...process.env, CHROME_PATH: browser };
rmSync('test-reports', { recursive: true, force: true });
mkdirSync('test-reports', { recursive: true });

const steps = [
  { group: 'static', name: 'wasm kernels (AssemblyScript)', cmd: ['node', 'scripts/build-wasm.mjs'] },
  { group: 'static', name: 'typecheck', cmd: ['npx', 'tsc', '-b'] },
  { group: 'static', name: 'lint', cmd: ['npx', 'eslint', '.'] },
  { group: 'static', name: 'format (Prettier)', cmd: ['npx', 'prettier', '--check', '.'] },
  { group: 'static', name: 'imports (cycles, layers)', cmd: ['node', 'scripts/check-imports.mjs'] },
  { group: 'static', name: 'docs (citations, paths)', cmd: ['node', 'scripts/check-docs.mjs'] },
  {
    group: 'unit',
    name: 'unit + GPU tests (Vitest, Node)',
    limitS: 25 * 60,
    onTimeout: reportUnfinishedTests,
    cmd: [
      'npx',
      'vitest',
      'run',
      '--reporter=default',
      '--reporter=./scripts/vitest-progress-reporter.mjs',
      '--reporter=json',
      '--outputFile.json=test-reports/vitest.json',
    ],
  },
  { group: 'e2e', name: 'build', cmd: ['npx', 'vite', 'build'] },
  {
    group: 'e2e',
    name: 'end-to-end (Playwright, Chromium + WebGPU)',
    limitS: 35 * 60,
    cmd: ['npx', 'playwright', 'test', '--reporter=list,json'],
    env: { PLAYWRIGHT_JSON_OUTPUT_NAME: 'test-reports/playwright.json' },
  },
];

/**
 * Runs a step in its own process group; past its limit (`limitS`, 15 min by default) the whole
 * group is killed, so a hung test cannot hold the suite until CI's own limit, and the step fails
 * saying so.
 */
function runStep(step) {
  return new Promise((resolve) => {
    const child = spawn(step.cmd[0], step.cmd.slice(1), {
      stdio: 'inherit',
      env: { ...env, ...step.env },
      detached: true,
    });
    const limitS = step.limitS ?? 15 * 60;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      console.log(`\n=== ${step.name}: still running after ${limitS} s; stopping it`);
      step.onTimeout?.();
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }, limitS * 1000);
    child.on('exit', (status, signal) => {
      clearTimeout(timer);
      resolve({ ok: status === 0 && !timedOut, why: timedOut ? `over its ${limitS} s` : `exit ${status ?? signal}` });
    });
  });
}

/** The test files the progress reporter saw start and not end, each with the last test it began. */
function reportUnfinishedTests() {
  let lines = [];
  try {
    lines = readFileSync('test-reports/vitest-progress.log', 'utf8').trim().split('\n');
  } catch {
    console.log('(no test-reports/vitest-progress.log)');
    return;
  }
  const running = new Map();
  for (const line of lines) {
    const [time, kind, file, test] = line.split('\t');
    if (kind === 'start') running.set(file, { time, test: '(no test begun)' });
    else if (kind === 'test' && running.has(file)) running.set(file, { time, test });
    else if (kind === 'end') running.delete(file);
  }
  if (running.size === 0) console.log('every test file had ended (the runner itself did not exit)');
  for (const [file, { time, test }] of running) console.log(`still running: ${file}: ${test} (since ${time})`);
}

const results = [];
for (const step of steps) {
  if (only && step.group !== only && step.name !== 'wasm kernels (AssemblyScript)') continue;
  console.log(`\n=== ${step.name}: ${step.cmd.join(' ')}`);
  const t0 = Date.now();
  const { ok, why } = await runStep(step);
  results.push({ name: step.name, ok, seconds: (Date.now() - t0) / 1000 });
  console.log(`=== ${step.name}: ${ok ? 'ok' : `FAILED (${why})`} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

// Test counts from the runners' JSON reports.
let passed = 0,
  failed = 0,
  skipped = 0;
try {
  const v = JSON.parse(readFileSync('test-reports/vitest.json', 'utf8'));
  passed += v.numPassedTests;
  failed += v.numFailedTests;
  skipped += v.numPendingTests + (v.numTodoTests ?? 0);
} catch (e) {
  if (!only || only === 'unit') console.log(`(no Vitest report: ${e.message})`);
}
try {
  const p = JSON.parse(readFileSync('test-reports/playwright.json', 'utf8'));
  passed += p.stats.expected;
  failed += p.stats.unexpected + (p.stats.flaky ?? 0);
  skipped += p.stats.skipped;
} catch (e) {
  if (!only || only === 'e2e') console.log(`(no Playwright report: ${e.message})`);
}

console.log('\n=== summary');
for (const r of results) console.log(`${r.ok ? 'ok    ' : 'FAILED'} ${r.name} (${r.seconds.toFixed(1)} s)`);
const stepsFailed = results.filter((r) => !r.ok).length;
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(stepsFailed > 0 || failed > 0 ? 1 : 0);
