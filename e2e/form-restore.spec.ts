import { expect, test } from '@playwright/test';

// The form comes back as the person left it: each preset's edits are kept in localStorage
// (app/state/form-store.ts) across a reload and a switch of preset, until "Reset to the preset's
// defaults". A config JSON (the "Config as JSON" shape) can be imported into the form, checked by
// the worker first: text that is not JSON, an unknown preset or an unknown option changes nothing.

test.beforeEach(async ({ page }) => {
  await page.goto('/#/experiments');
  await expect(page.getByText(/Training on wasm/)).toBeVisible();
  await page.getByTestId('preset-grpo-arith').click();
});

test("grpo-arith's edited learning rate survives a reload and a switch to dpo-arith and back; Reset restores the default", async ({
  page,
}) => {
  const lr = page.getByRole('spinbutton', { name: 'Learning rate', exact: true });
  await expect(lr).toHaveValue('0.0001');
  await lr.fill('0.0003');
  await expect(page.getByTestId('config-json')).toContainText('"lr": 0.0003');

  await page.reload();
  await expect(page.getByTestId('preset-grpo-arith')).toHaveAttribute('aria-pressed', 'true');
  await expect(lr).toHaveValue('0.0003');

  await page.getByTestId('preset-dpo-arith').click();
  await expect(page.getByRole('spinbutton', { name: 'Pairs per step' })).toBeVisible();
  await expect(lr).toHaveValue('0.0001'); // dpo-arith's own default: the edit was grpo's
  await page.getByTestId('preset-grpo-arith').click();
  await expect(lr).toHaveValue('0.0003');

  await page.getByRole('button', { name: "Reset to the preset's defaults" }).click();
  await expect(lr).toHaveValue('0.0001');
  await page.reload();
  await expect(lr).toHaveValue('0.0001');
});

test('an imported config JSON fills the form; text that is not JSON, an unknown preset or option is refused and the form keeps its values', async ({
  page,
}) => {
  const steps = page.getByRole('spinbutton', { name: 'Steps', exact: true });
  const lr = page.getByRole('spinbutton', { name: 'Learning rate', exact: true });
  await steps.fill('7');
  await lr.fill('0.0005');
  await expect(page.getByTestId('config-json')).toContainText('"steps": 7');
  const config = JSON.parse((await page.getByTestId('config-json').textContent())!) as Record<string, unknown>;
  await page.getByRole('button', { name: "Reset to the preset's defaults" }).click();
  await expect(steps).toHaveValue('150');

  await page.getByText('Import config JSON').click();
  const box = page.getByRole('textbox', { name: 'Config JSON to load into the form' });
  const load = page.getByRole('button', { name: 'Load into the form' });
  const refused = async (text: string, reason: string | RegExp) => {
    await box.fill(text);
    await load.click();
    await expect(page.getByRole('alert')).toContainText(reason);
    await expect(box).toHaveAccessibleDescription(/^Not loaded, the form is unchanged: /);
    await expect(page.getByTestId('preset-grpo-arith')).toHaveAttribute('aria-pressed', 'true');
    await expect(steps).toHaveValue('150');
    await expect(lr).toHaveValue('0.0001');
  };
  await refused(
    '{ "preset": "grpo-arith", "steps": 7,',
    /^Not loaded, the form is unchanged: the pasted text is not JSON: /,
  );
  await refused(
    JSON.stringify({ ...config, preset: 'sac-arith' }),
    'preset must be one of sft-arith, grpo-arith, grpo-calc, grpo-guess, grpo-code, grpo-env, ppo-arith, ' +
      "ppo-calc, ppo-env, dpo-arith, flowgrpo-2d, got 'sac-arith'",
  );
  await refused(JSON.stringify({ ...config, lrr: 0.1 }), 'lrr is not an option of grpo-arith');

  await box.fill(JSON.stringify(config, null, 2));
  await load.click();
  await expect(page.getByRole('status').filter({ hasText: 'Loaded' })).toHaveText(
    'Loaded the pasted text into the form (grpo-arith).',
  );
  await expect(page.getByRole('alert')).toHaveCount(0);
  await expect(steps).toHaveValue('7');
  await expect(lr).toHaveValue('0.0005');
  await expect(page.getByTestId('run-start')).toBeEnabled();

  // Out of range only: it loads, from a chosen file, and its field's section opens with the problem.
  await page.getByLabel('Or choose a .json file').setInputFiles({
    name: 'hot.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify({ ...config, steps: 9, temperature: 0 })),
  });
  await expect(page.getByRole('status').filter({ hasText: 'Loaded' })).toHaveText(
    'Loaded hot.json into the form (grpo-arith): 1 problem to fix, listed next to Start.',
  );
  await expect(steps).toHaveValue('9');
  await expect(page.getByRole('button', { name: /^Sampling/ })).toHaveAttribute('aria-expanded', 'true');
  await expect(page.getByTestId('problem-temperature')).toHaveText(
    'Temperature (temperature) must be a number in (0, 10], got 0',
  );
  await expect(page.getByTestId('run-start')).toBeDisabled();

  // Loaded options are the form's: kept for their preset across a reload.
  await page.reload();
  await expect(steps).toHaveValue('9');
});

test("a partial config JSON takes the preset's defaults for the rest; a bad value is named as the form names it (issue 27)", async ({
  page,
}) => {
  const steps = page.getByRole('spinbutton', { name: 'Steps', exact: true });
  const lr = page.getByRole('spinbutton', { name: 'Learning rate', exact: true });
  const shown = async () =>
    JSON.parse((await page.getByTestId('config-json').textContent())!) as Record<string, unknown>;
  const defaults = await shown();
  await page.getByText('Import config JSON').click();
  const box = page.getByRole('textbox', { name: 'Config JSON to load into the form' });
  const load = page.getByRole('button', { name: 'Load into the form' });
  const loaded = page.getByRole('status').filter({ hasText: 'Loaded' });
  const partial =
    "Loaded the pasted text into the form (grpo-arith; the options it leaves out are the preset's defaults)";

  await box.fill('{"preset": "grpo-arith", "steps": 7}');
  await load.click();
  await expect(loaded).toHaveText(`${partial}.`);
  await expect(steps).toHaveValue('7');
  await expect(lr).toHaveValue('0.0001');
  expect(await shown()).toEqual({ ...defaults, steps: 7 });
  await expect(page.getByTestId('run-start')).toBeEnabled();

  // A new IS variant: its given options and its required ones' initial values, on the defaults.
  await box.fill(JSON.stringify({ preset: 'grpo-arith', importance: { kind: 'tis', cap: 3 } }));
  await load.click();
  await expect
    .poll(shown)
    .toEqual({ ...defaults, importance: { kind: 'tis', level: 'token', cap: 3, batchNormalize: false } });

  // An option of the default's variant under a new one is refused: nothing changes.
  await box.fill(JSON.stringify({ preset: 'grpo-arith', steps: 9, policyLoss: { name: 'gspo', dualClip: 3 } }));
  await load.click();
  await expect(page.getByRole('alert')).toContainText(
    'Dual clip c (policyLoss.dualClip) is not an option of grpo-arith; it applies only when Policy loss (policyLoss.name) is ppo',
  );
  await expect(steps).toHaveValue('150');

  await box.fill('{"preset": "grpo-arith", "steps": "ten"}');
  await load.click();
  await expect(loaded).toHaveText(`${partial}: 1 problem to fix, listed next to Start.`);
  await expect(page.getByTestId('problem-steps')).toHaveText("Steps (steps) must be an integer in 1..5000, got 'ten'");
  await expect(page.getByTestId('option-problems')).toHaveText(
    "Steps (steps) must be an integer in 1..5000, got 'ten'",
  );
  await expect(page.getByTestId('run-start')).toBeDisabled();
});
