/**
 * Views of a live run keep showing it (issue 40, item 1): a grpo-arith run on wasm stores a step
 * every fraction of a second, faster than the worker answered the views' reads keyed by the latest
 * step, so Groups said "This run keeps no advantage groups …" and Batch lost its Step and Layer
 * controls until the run ended; Flow said "Loading the run's steps…" through a flowgrpo-2d run.
 * Here each view, open while its run trains, names a later stored step again and again, each time
 * with its controls and its data; "Follow the latest step" unchecked pins the step on screen.
 */
import { expect, test, type Page } from '@playwright/test';
import { openPreset } from './helpers';

/** The step the view's heading names ("Run … · step 12 of 80"). */
const shownStep = async (page: Page) =>
  Number((await page.getByRole('heading', { level: 2 }).textContent())?.match(/step (\d+) of/)?.[1] ?? -1);

/** Three times: a later step than the last one seen, with `check` holding on each. */
async function followsTheRun(page: Page, check: () => Promise<void>) {
  let last = -1;
  for (let k = 0; k < 3; k++) {
    await expect.poll(() => shownStep(page), { timeout: 60_000 }).toBeGreaterThan(last);
    await check();
    last = await shownStep(page);
  }
}

/** Stops the run from the Experiments dashboard (the views have no run controls). */
async function stop(page: Page) {
  await view(page, 'Experiments');
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('stopped', { timeout: 60_000 });
}

const view = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name }).click();

test('a live grpo-arith run: Groups and Batch follow its latest stored step with their controls, and a step can be pinned', async ({
  page,
}) => {
  await openPreset(page, 'grpo-arith', { Steps: 150, 'Evaluate every': 0 });
  await page.getByTestId('run-start').click();
  await expect.poll(async () => Number(await page.getByTestId('run-step').textContent())).toBeGreaterThanOrEqual(2);

  await view(page, 'Groups');
  const steps = page.getByRole('group', { name: 'Step' });
  await followsTheRun(page, async () => {
    await expect(page.getByText(/keeps no advantage groups/)).toHaveCount(0);
    await expect(steps.getByRole('combobox', { name: 'Step' })).toBeVisible();
    await expect(page.getByText(/^Step \d+: 16 groups/)).toBeVisible();
  });

  // Pinned: the step on screen stays while the run goes on; following again moves on.
  const follow = page.getByRole('checkbox', { name: 'Follow the latest step' });
  await follow.uncheck();
  const pinned = await shownStep(page);
  // The newest stored step the Step select offers.
  const stored = async () =>
    Number(await steps.getByRole('combobox', { name: 'Step' }).locator('option').last().textContent());
  const at = await stored();
  await expect.poll(stored, { timeout: 60_000 }).toBeGreaterThan(at + 2);
  expect(await shownStep(page)).toBe(pinned);
  await expect(steps.getByRole('combobox', { name: 'Step' })).toHaveValue(String(pinned));
  await follow.check();
  await expect.poll(() => shownStep(page), { timeout: 60_000 }).toBeGreaterThan(pinned);

  await view(page, 'Batch');
  await followsTheRun(page, async () => {
    await expect(page.getByText(/keeps no packed batches/)).toHaveCount(0);
    await expect(page.getByRole('combobox', { name: 'Step' })).toBeVisible();
    await expect(page.getByRole('combobox', { name: 'Layer' })).toBeVisible();
    await expect(page.getByTestId('batch-canvas')).toBeVisible();
  });
  await stop(page);
});

test('a live flowgrpo-2d run: Flow follows its latest step with the cloud on screen', async ({ page }) => {
  await openPreset(page, 'flowgrpo-2d', { Steps: 500, 'Pretraining steps': 100, 'Evaluate every': 0 });
  await page.getByTestId('run-start').click();
  await expect
    .poll(async () => Number(await page.getByTestId('run-step').textContent()), { timeout: 120_000 })
    .toBeGreaterThanOrEqual(1);
  await view(page, 'Flow');
  await followsTheRun(page, async () => {
    await expect(page.getByText(/Loading the run’s steps/)).toHaveCount(0);
    await expect(page.getByRole('group', { name: 'Step' }).getByRole('combobox', { name: 'Step' })).toBeVisible();
    await expect(page.getByRole('img', { name: /^Sample cloud of step \d+/ })).toBeVisible();
  });
  await stop(page);
});
