/**
 * The "All metrics" explorer across runs: a selection made on one run keeps only the keys the run
 * shown next has (falling back to the default choice when none remain), so it never plots an
 * empty chart in silence.
 */
import { expect, test } from '@playwright/test';
import { fillFields, openPreset, showRunForm } from './helpers';

test('All metrics: a selection from an earlier run keeps only the keys of the run shown', async ({ page }) => {
  await openPreset(page, 'sft-arith', { Steps: 2, 'Evaluate every': 0 });
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });
  const sftRun = ((await page.getByRole('heading', { level: 2, name: /^Run / }).textContent()) ?? '').replace(
    /^Run /,
    '',
  );
  expect(sftRun).not.toBe('');
  const select = page.getByRole('listbox', { name: /Metrics to plot/ });
  // The list's label sits above it, not beside its last line.
  const label = page.getByText('Metrics to plot (Ctrl/Shift to choose several)');
  const [labelBox, selectBox] = [await label.boundingBox(), await select.boundingBox()];
  expect(labelBox!.y + labelBox!.height).toBeLessThanOrEqual(selectBox!.y);
  await select.selectOption(['loss/sft']);
  await expect(page.getByRole('img', { name: 'Metrics by step: loss/sft' })).toBeVisible();

  // A GRPO run reports no loss/sft: the explorer falls back to its default key (rl/entropy).
  await showRunForm(page);
  await page.getByTestId('preset-grpo-arith').click();
  await fillFields(page, { Steps: 2, 'Prompts per step': 2, 'Group size': 2, 'Evaluate every': 0 });
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });
  await expect(page.getByRole('heading', { level: 2, name: `Run ${sftRun}` })).toHaveCount(0);
  await expect(select).toHaveValues(['rl/entropy']);
  await expect(page.getByRole('img', { name: 'Metrics by step: rl/entropy' })).toBeVisible();
  await expect(select.getByRole('option', { name: /^loss\/sft/ })).toHaveCount(0);
  await expect(page.getByText(/No data to draw for/)).toHaveCount(0);

  // Back on the SFT run, of the keys chosen on the GRPO run only opt/lr (which SFT reports too) stays.
  await select.selectOption(['opt/lr', 'rl/entropy']);
  await expect(page.getByRole('img', { name: 'Metrics by step: opt/lr, rl/entropy' })).toBeVisible();
  await page.getByRole('button', { name: `Open run ${sftRun}` }).click();
  await expect(page.getByRole('heading', { level: 2, name: `Run ${sftRun}` })).toBeVisible();
  await expect(select).toHaveValues(['opt/lr']);
  await expect(page.getByRole('img', { name: 'Metrics by step: opt/lr' })).toBeVisible();
});

test('Chart settings: smoothing, a log axis refused with its reason, zoom and its reset, all from labelled controls', async ({
  page,
}) => {
  await openPreset(page, 'grpo-arith', { Steps: 3, 'Prompts per step': 2, 'Group size': 2, 'Evaluate every': 0 });
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });
  const tokens = page.getByRole('img', { name: /^Tokens per second by step/ });

  // Smoothing: TensorBoard's default weight, shown beside the slider and in each chart's description.
  const smoothing = page.getByRole('slider', { name: 'Smoothing' });
  await expect(smoothing).toHaveValue('0.6');
  await expect(page.getByTestId('smoothing-value')).toHaveText('0.60');
  await expect(tokens).toHaveAccessibleDescription(/smoothed \(exponential moving average, weight 0\.60\)/);
  await smoothing.fill('0');
  await expect(page.getByTestId('smoothing-value')).toHaveText('0.00');
  await expect(tokens).toHaveAccessibleDescription(/^Raw values, not smoothed; linear y axis\.$/);

  // Log scale: taken where every value is > 0, refused with the reason where one is 0 (loss/kl without a reference model).
  await page.getByRole('listbox', { name: /Metrics to plot/ }).selectOption(['loss/kl']);
  await page.getByRole('checkbox', { name: 'Log scale (y axis)' }).check();
  await expect(page.getByRole('img', { name: /^Tokens per second by step.* \(log y axis\)$/ })).toBeVisible();
  await expect(page.getByRole('img', { name: 'Metrics by step: loss/kl' })).toBeVisible();
  await expect(page.getByText('Log scale not used: loss/kl has values ≤ 0 (lowest 0).')).toBeVisible();
  await page.getByRole('checkbox', { name: 'Log scale (y axis)' }).uncheck();
  await expect(page.getByText(/^Log scale not used/)).toHaveCount(0);

  // Zoom with the mouse wheel; the chart's own reset and the reset of all charts undo it.
  const panel = page.getByTestId('chart-tokens');
  const zoomIn = async () => {
    // Wheel only once the chart, on screen (charts off screen are not redrawn), shows its latest option:
    // a paced redraw may trail the log-scale change.
    await tokens.scrollIntoViewIfNeeded();
    await expect(tokens).toHaveAttribute('data-drawn', 'true');
    await tokens.hover();
    await page.mouse.wheel(0, -600);
    await expect(panel.getByRole('button', { name: 'Reset zoom' })).toBeVisible();
  };
  await zoomIn();
  await panel.getByRole('button', { name: 'Reset zoom' }).click();
  await expect(panel.getByRole('button', { name: 'Reset zoom' })).toHaveCount(0);
  await zoomIn();
  await page.getByRole('button', { name: 'Reset zoom on all charts' }).click();
  await expect(panel.getByRole('button', { name: 'Reset zoom' })).toHaveCount(0);
});
