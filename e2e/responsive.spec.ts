/**
 * The page stays responsive while a run streams events (issue 27, bug 8): a grpo-arith run on wasm
 * sends several events a step (phases, the step, evaluations) at a few steps a second, with the
 * Experiments view's dashboard charts on screen and the metric explorer's few metrics chosen, at
 * 1400×900, then with Groups open for a while (issue 40). Chromium's long-task entries (main-thread tasks over 50 ms) during the run must each stay
 * within 400 ms (MAX_STREAMING_TASK_MS says why not 200), the Stop click must be answered (input to
 * the next paint, its Event Timing entry) within 200 ms, INP's "good" bound, and the run must stop within a few steps. Before the
 * fix every step redrew every chart in one task: tasks of up to 0.5 s here, 1.3 s in the report.
 */
import { expect, test } from '@playwright/test';
import { openPreset } from './helpers';

/** The longest wait for a click's answer (INP's "good" bound). */
const MAX_TASK_MS = 200;
/**
 * The longest main-thread task allowed while a run streams. On the 2-core VM of 2026-12-06 the
 * build then on main read 196–295 ms (4 of 5 runs over 200), as did one whose trainer left the page
 * a core (267–324 ms): the VM's speed, not the page. Unfixed, every step redrew every chart in one
 * task of up to 0.5 s on a faster machine, so this bound still catches that.
 */
const MAX_STREAMING_TASK_MS = 400;

declare global {
  interface Window {
    __longTasks: number[];
    /** The clicks' Event Timing: input delay (until the handler ran) and duration (until the next paint). */
    __clicks: { delay: number; duration: number }[];
  }
}

test.use({ viewport: { width: 1400, height: 900 } });

test('Experiments: a streaming GRPO run never blocks the page, and Stop answers at once', async ({ page }) => {
  await page.addInitScript(() => {
    window.__longTasks = [];
    window.__clicks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push(e.duration);
    }).observe({ type: 'longtask', buffered: true });
    new PerformanceObserver((list) => {
      for (const e of list.getEntries() as PerformanceEventTiming[])
        if (e.name === 'click') window.__clicks.push({ delay: e.processingStart - e.startTime, duration: e.duration });
    }).observe({ type: 'event', durationThreshold: 16, buffered: true } as PerformanceObserverInit);
  });
  // The preset's defaults (16 prompts × 8 samples, an evaluation every 10 steps): steps of a fraction
  // of a second on wasm, each with several phase events. More steps than the test waits through
  // (Stop ends the run): 150 steps could finish in the 23 s it watches on an idle machine.
  await openPreset(page, 'grpo-arith', { Steps: 1000 });
  await page.getByTestId('run-start').click();
  // Only the run's tasks and the Stop click count, not loading the page or the Start click.
  await page.evaluate(() => {
    window.__longTasks = [];
    window.__clicks = [];
  });
  const step = page.getByTestId('run-step');
  await expect.poll(async () => Number(await step.textContent()), { timeout: 120_000 }).toBeGreaterThanOrEqual(2);
  // The explorer with a few metrics, as a person watching the run would have it.
  await page
    .getByRole('listbox', { name: /Metrics to plot/ })
    .selectOption(['rl/entropy', 'mismatch/kl', 'rl/pg_clipfrac', 'perf/tokens_per_s']);
  // The dashboard's charts on screen (two columns at this width, three rows and more in view).
  await page.getByTestId('chart-reward').evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await page.waitForTimeout(15_000);
  // Groups open while the run trains (issue 40): it follows the latest stored step, redrawing every group each step.
  const nav = page.getByRole('navigation', { name: 'Views' });
  await nav.getByRole('link', { name: 'Groups' }).click();
  await expect(page.getByRole('checkbox', { name: 'Follow the latest step' })).toBeChecked();
  await page.waitForTimeout(8_000);
  await nav.getByRole('link', { name: 'Experiments' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('running');

  const clicked = Date.now();
  await page.getByRole('button', { name: 'Stop' }).click({ timeout: 1_000 });
  // "stopping…" until the step under way ends (a fast step may end first: then "stopped" is the effect seen).
  const stopping = page.getByTestId('run-phase').getByText('stopping…');
  await expect(stopping.or(page.getByTestId('run-status').getByText('stopped'))).toBeVisible({ timeout: 1_000 });
  const shown = Date.now();
  await expect(page.getByTestId('run-status')).toHaveText('stopped', { timeout: 5_000 });
  const stopped = Date.now();

  const { tasks, clicks } = await page.evaluate(() => ({ tasks: window.__longTasks, clicks: window.__clicks }));
  const total = tasks.reduce((a, b) => a + b, 0);
  const max = Math.max(0, ...tasks);
  // No entry: the click was answered within 16 ms (Event Timing's least threshold).
  const click = clicks.at(-1) ?? { delay: 0, duration: 0 };
  const measured =
    `${tasks.length} long tasks, ${Math.round(total)} ms in all, longest ${Math.round(max)} ms; ` +
    `Stop click: input delay ${Math.round(click.delay)} ms, next paint after ${Math.round(click.duration)} ms; ` +
    `"stopping…" seen ${shown - clicked} ms and "stopped" ${stopped - clicked} ms after the click began; ` +
    `${await step.textContent()} steps`;
  test.info().annotations.push({ type: 'measured', description: measured });
  console.log(measured);
  expect(click.duration, measured).toBeLessThanOrEqual(MAX_TASK_MS);
  expect(max, measured).toBeLessThanOrEqual(MAX_STREAMING_TASK_MS);
});
