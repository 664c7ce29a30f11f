/**
 * The live run's timing (issue 40, items 2 and 3): paused time counts neither in the elapsed time
 * nor in the time per step (a run paused at step 13 read 1.3 s a step after Resume where its steps
 * took 0.45 s), and the progress line counts an evaluation's problems as they finish.
 */
import { expect, test, type Page } from '@playwright/test';
import { openPreset } from './helpers';

const timingText = async (page: Page) => (await page.getByTestId('run-timing').textContent()) ?? '';
const perStep = async (page: Page) => Number((await timingText(page)).match(/([\d.]+) s per step/)?.[1] ?? NaN);
const elapsed = async (page: Page) => (await timingText(page)).match(/Elapsed ([^·]+)/)?.[1].trim();
const runStep = async (page: Page) => Number(await page.getByTestId('run-step').textContent());

/** How long the run stays paused (ms): ten times a step or more, so counting it would show in the pace of ten steps. */
const PAUSE_MS = 8_000;

test('a paused run counts no paused time in its elapsed time or its time per step', async ({ page }) => {
  await openPreset(page, 'grpo-arith', { Steps: 150, 'Evaluate every': 0 });
  await page.getByTestId('run-start').click();
  await expect.poll(() => runStep(page), { timeout: 120_000 }).toBeGreaterThanOrEqual(4);

  await page.getByRole('button', { name: 'Pause' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('paused');
  // The clock ticks once a second: a second on, the elapsed time it shows is the one it keeps.
  await page.waitForTimeout(1_500);
  const before = { elapsed: await elapsed(page), perStep: await perStep(page) };
  await page.waitForTimeout(PAUSE_MS);
  expect(await elapsed(page)).toBe(before.elapsed);

  const pausedAt = await runStep(page);
  await page.getByRole('button', { name: 'Resume' }).click();
  await expect.poll(() => runStep(page), { timeout: 60_000 }).toBeGreaterThanOrEqual(pausedAt + 2);
  // Counted, the pause would add PAUSE_MS / 10 (0.8 s) to the mean of the last ten steps.
  expect(await perStep(page)).toBeLessThanOrEqual(before.perStep + 0.4);
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('stopped', { timeout: 60_000 });
});

test('the progress line counts the evaluation before training as its completions finish', async ({ page }) => {
  await openPreset(page, 'grpo-arith', { Steps: 2 });
  // Every text the progress line shows, recorded as it changes: the evaluation can pass between two polls.
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { phases: string[] }).phases = seen;
    new MutationObserver(() => {
      const text = document.querySelector('[data-testid="run-phase"]')?.textContent;
      if (text && seen[seen.length - 1] !== text) seen.push(text);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 120_000 });
  const phases = await page.evaluate(() => (window as unknown as { phases: string[] }).phases);
  // A count above 0 while it runs: before, the evaluation said only "evaluating on 100 held-out problems" until it ended.
  expect(phases.filter((p) => /^Before training/.test(p))).toContainEqual(
    expect.stringMatching(/Before training: evaluating on held-out problems: [1-9]\d* \/ \d+ completions finished/),
  );
});
