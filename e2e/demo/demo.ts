/**
 * The demo driver (`npm run demo` runs it through scripts/demo.mjs, which builds and serves the
 * app): drives a short grpo-arith run through the Experiments view the way a person would, then
 * writes to the output folder screenshots of every view, a video of the session and report.json
 * (the run's config, every step's metrics from the dashboard's "Export metrics (JSON)" button, the
 * final held-out accuracy and timings). Not a test: it asserts nothing beyond the run finishing
 * and the page's numbers agreeing (report.ts).
 *   npx tsx e2e/demo/demo.ts --url http://localhost:4173 [--out demo-out] [--steps 4] [--prompts 8]
 *     [--group 4] [--eval-every 2] [--eval-n 16]
 */
import { chromium, type BrowserContext, type Page } from '@playwright/test';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { MetricsFile } from '../../app/state/metrics-file';
import { CHROMIUM_ARGS } from '../../playwright.config';
import { buildReport } from './report';
import { encodeWebm, type Frame } from './webm';

const { values: args } = parseArgs({
  options: {
    url: { type: 'string' },
    out: { type: 'string', default: 'demo-out' },
    steps: { type: 'string', default: '4' },
    prompts: { type: 'string', default: '8' },
    group: { type: 'string', default: '4' },
    'eval-every': { type: 'string', default: '2' },
    'eval-n': { type: 'string', default: '16' },
  },
});
if (!args.url) throw new Error('demo.ts: --url of the served app is required (scripts/demo.mjs passes it)');
const url = args.url;
const out = args.out!;
const steps = Number(args.steps);
const SIZE = { width: 1280, height: 800 };
const executablePath = process.env.CHROME_PATH || '/usr/bin/chromium';
if (!existsSync(executablePath))
  throw new Error(`no browser at ${executablePath}: set CHROME_PATH to a Chromium or Chrome binary`);

/** Fills a run option: the form's `field-<name>` element (the input or its wrapper), else the control labelled `label`. */
async function fillField(page: Page, name: string, label: RegExp, value: string): Promise<void> {
  const byId = page.getByTestId(`field-${name}`);
  const target = (await byId.count()) > 0 ? byId.first() : page.getByLabel(label).first();
  const tag = await target.evaluate((el) => el.tagName.toLowerCase());
  const control = ['input', 'select', 'textarea'].includes(tag)
    ? target
    : target.locator('input, select, textarea').first();
  // Fields outside the common section sit in collapsed sections: open the one that holds it.
  if (!(await control.isVisible()))
    await page.getByRole('group').filter({ has: control }).getByRole('button', { expanded: false }).click();
  await control.fill(value);
}

const started = Date.now();
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS, headless: true });
const screenshots: string[] = [];
try {
  // Playwright's recordVideo needs its ffmpeg download; without it, screencast frames are encoded in the browser.
  let context: BrowserContext = await browser.newContext({
    viewport: SIZE,
    recordVideo: { dir: join(out, 'video-raw'), size: SIZE },
  });
  let page: Page;
  let frames: Frame[] | null = null;
  try {
    page = await context.newPage();
  } catch (e) {
    if (!/ffmpeg/.test((e as Error).message)) throw e;
    console.log(
      '[demo] Playwright ffmpeg not installed: recording screencast frames, encoding them in the browser (MediaRecorder)',
    );
    await context.close();
    context = await browser.newContext({ viewport: SIZE });
    page = await context.newPage();
    const captured: Frame[] = [];
    frames = captured;
    await page.screencast.start({
      size: SIZE,
      quality: 80,
      onFrame: (f) => void captured.push({ data: f.data, timestamp: f.timestamp }),
    });
  }
  const shot = async (name: string, fullPage = true) => {
    await page.screenshot({ path: join(out, name), fullPage });
    screenshots.push(name);
    console.log(`[demo] ${name}`);
  };

  const tLoad = Date.now();
  await page.goto(`${url}/#/experiments`);
  const backendLine = page.getByText(/^Training on /);
  await backendLine.waitFor({ timeout: 60_000 });
  const loadS = (Date.now() - tLoad) / 1000;
  const backend = (await backendLine.textContent())!.trim();
  console.log(`[demo] ${backend}`);

  await page.getByTestId('preset-grpo-arith').click();
  await page.getByTestId('run-start').waitFor();
  await fillField(page, 'steps', /^Steps/, String(steps));
  await fillField(page, 'prompts', /^Prompts per step/, args.prompts!);
  await fillField(page, 'group', /^Group size/, args.group!);
  await fillField(page, 'evalEvery', /^Evaluate every/, args['eval-every']!);
  await fillField(page, 'evalN', /^Held-out tasks/, args['eval-n']!);
  await page.getByText('Config as JSON').click();
  const configJson = (await page.getByTestId('config-json').textContent())!;
  await shot('01-experiments-form.png', false);

  const tRun = Date.now();
  await page.getByTestId('run-start').click();
  const status = page.getByTestId('run-status');
  await status.waitFor();
  await page.getByTestId('run-dashboard').evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await page.getByTestId('run-step').filter({ hasText: /^1$/ }).waitFor({ timeout: 300_000 });
  await shot('02-experiments-running.png', false);
  await status.filter({ hasText: /^(finished|failed|stopped)$/ }).waitFor({ timeout: steps * 300_000 });
  const runS = (Date.now() - tRun) / 1000;
  const finalStatus = (await status.textContent())!;
  if (finalStatus !== 'finished')
    throw new Error(`the run ended '${finalStatus}': ${await page.getByRole('alert').allTextContents()}`);
  console.log(`[demo] run finished in ${runS.toFixed(0)} s`);
  const dashboard = page.getByTestId('run-dashboard');
  // A chart draws once it has been on screen (app/charts/Chart.tsx): bring each into view before the shot.
  for (const chart of await dashboard.getByRole('img').all()) {
    await chart.scrollIntoViewIfNeeded();
    await page.waitForTimeout(200);
  }
  await dashboard.evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await dashboard.screenshot({ path: join(out, '03-experiments-dashboard.png') });
  screenshots.push('03-experiments-dashboard.png');
  console.log('[demo] 03-experiments-dashboard.png');

  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export metrics (JSON)' }).click();
  const metricsPath = join(out, 'metrics.json');
  await (await download).saveAs(metricsPath);
  const metrics = JSON.parse(readFileSync(metricsPath, 'utf8')) as MetricsFile;
  const accuracyText = (await page.getByTestId('metric-accuracy').textContent())!;

  const nav = page.getByRole('navigation', { name: 'Views' });
  await nav.getByRole('link', { name: 'Groups' }).click();
  await page.getByTestId('group').first().waitFor();
  await shot('04-groups.png');
  await nav.getByRole('link', { name: 'Batch' }).click();
  await page.getByTestId('batch-canvas').waitFor();
  await shot('05-batch.png');
  await nav.getByRole('link', { name: 'System' }).click();
  await page.getByTestId('adapter-info').waitFor();
  await shot('06-system.png');

  let videoMethod: string;
  if (frames) {
    await page.screencast.stop();
    await context.close();
    console.log(`[demo] encoding ${frames.length} frames to demo.webm`);
    writeFileSync(join(out, 'demo.webm'), await encodeWebm(browser, frames, SIZE));
    videoMethod = 'screencast frames encoded in the browser (MediaRecorder, VP8)';
  } else {
    const video = page.video()!;
    await context.close();
    await video.saveAs(join(out, 'demo.webm'));
    rmSync(join(out, 'video-raw'), { recursive: true, force: true });
    videoMethod = 'Playwright recordVideo';
  }

  const report = buildReport({
    createdAt: new Date(),
    backend,
    browser: `${executablePath} ${browser.version()}`,
    configJson,
    metrics,
    accuracyText,
    timings: {
      buildS: process.env.DEMO_BUILD_S ? Number(process.env.DEMO_BUILD_S) : null,
      loadS,
      runS,
      totalS: (Date.now() - started) / 1000,
    },
    outputs: { screenshots, video: 'demo.webm', videoMethod },
  });
  writeFileSync(join(out, 'report.json'), JSON.stringify(report, null, 2) + '\n');
  const acc = report.finalAccuracy;
  console.log(
    `[demo] ${report.steps.length} steps, final held-out accuracy ` +
      `${acc ? `${(acc.accuracy * 100).toFixed(1)}% (n=${acc.n})` : 'not evaluated'}; wrote ${out}/report.json`,
  );
} finally {
  await browser.close();
}
