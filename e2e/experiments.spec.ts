import { expect, test } from '@playwright/test';
import { exportedMetrics, openPreset } from './helpers';

test('Experiments: sft-arith trains in the worker on WebGPU and the loss falls, live', async ({ page }) => {
  await openPreset(
    page,
    'sft-arith',
    { Steps: 6, 'Learning rate': 0.005, 'Evaluate every': 6, 'Held-out tasks': 8 },
    'webgpu',
  );
  await expect(page.getByRole('heading', { level: 1, name: 'Experiments' })).toBeVisible();
  await page.getByTestId('run-start').click();
  // Start takes you to the run: the form collapses into its disclosure and the dashboard, now at the top, has the focus.
  const newRun = page.getByRole('button', { name: /^New run/ });
  await expect(newRun).toHaveAttribute('aria-expanded', 'false');
  await expect(newRun).toHaveAccessibleName('New run: sft-arith, presets and options');
  await expect(page.getByRole('form', { name: 'Run options' })).toBeHidden();
  await expect(page.getByRole('heading', { level: 2, name: /^Run / })).toBeFocused();
  await expect(page.getByTestId('run-status')).toHaveText('running');
  // Live: steps arrive while it runs (a fast step may be past 1 when the page is read; redraws are paced).
  await expect(page.getByTestId('run-step')).toHaveText(/^[1-6]$/, { timeout: 120_000 });
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });
  // The first step's loss from the run's own metrics export, the last as the dashboard shows it.
  const first = (await exportedMetrics(page)).steps.find((st) => st.step === 1)!.metrics['loss/sft'];
  const last = Number(await page.getByTestId('metric-loss').textContent());
  expect(first).toBeGreaterThan(3);
  expect(last).toBeLessThan(first - 0.1);
  await expect(page.getByTestId('metric-accuracy')).toContainText(/% \(step 6, n=8\)/);
  await expect(page.getByRole('img', { name: /SFT loss by step/ })).toBeVisible();
  // An SFT run has no panel flat by construction.
  await expect(page.getByTestId('flat-note')).toHaveCount(0);
  await expect(page.getByText(/Latest checkpoint: step 6/)).toBeVisible();
  await page.getByRole('button', { name: 'Prepare download' }).click();
  const download = page.waitForEvent('download');
  await page.getByRole('list', { name: 'Checkpoint files' }).getByRole('link', { name: 'config.json' }).click();
  const config = JSON.parse(
    await (await (await download).createReadStream()).toArray().then((c) => Buffer.concat(c).toString('utf8')),
  );
  expect(config).toMatchObject({ architectures: ['LlamaForCausalLM'], hidden_size: 64, num_hidden_layers: 2 });

  // The disclosure opens the form again, from the keyboard, with the options as they were.
  await newRun.focus();
  await page.keyboard.press('Enter');
  await expect(newRun).toHaveAttribute('aria-expanded', 'true');
  await expect(page.getByRole('spinbutton', { name: /^Learning rate/ })).toHaveValue('0.005');
  await expect(page.getByTestId('run-start')).toBeEnabled();
});

test('Experiments: an invalid option shows the field and its range, and nothing can start', async ({ page }) => {
  await page.goto('/#/experiments');
  await page.getByTestId('preset-sft-arith').click();
  await expect(page.getByText(/Training on wasm/)).toBeVisible();
  await expect(page.getByTestId('run-start')).toBeEnabled();
  const lr = page.getByRole('spinbutton', { name: /Learning rate/ });
  await lr.fill('5');
  await expect(lr).toHaveAttribute('aria-invalid', 'true');
  await expect(lr).toHaveAccessibleDescription(/^Learning rate \(lr\) must be a number in \(0, 0\.1\], got 5/);
  await expect(page.getByTestId('problem-lr')).toHaveText('Learning rate (lr) must be a number in (0, 0.1], got 5');
  await expect(page.getByTestId('run-start')).toBeDisabled();
  await page.getByTestId('run-start').click({ force: true });
  await expect(page.getByTestId('run-status')).toHaveCount(0);
});
