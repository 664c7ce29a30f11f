import { expect, test, type Page } from '@playwright/test';

// The options form: the common fields first, the other sections collapsed until opened or until a
// field of theirs has a problem, every option checked by the worker as it is edited, each problem
// named by its field's label and path and one click away from its field. No run is started here.

const SECTIONS = ['Objective', 'Advantage', 'KL', 'Corrections', 'Mismatch lab', 'Sampling', 'Optimizer', 'Run'];

/** The disclosure button of a collapsible section: its name, then its count of problems if any. */
const toggle = (page: Page, section: string) =>
  page.getByRole('button', { name: new RegExp(`^${section}( · \\d+ problems?)?$`) });

async function open(page: Page, ...sections: string[]) {
  for (const s of sections) {
    await toggle(page, s).click();
    await expect(toggle(page, s)).toHaveAttribute('aria-expanded', 'true');
  }
}

test.beforeEach(async ({ page }) => {
  // A returning person's page: the first-visit guide (guide.spec.ts) sits above the form and is hidden here.
  await page.addInitScript(() => localStorage.setItem('dewpoint.guide.hidden', '1'));
  await page.goto('/#/experiments');
  await expect(page.getByText(/Training on wasm/)).toBeVisible();
});

test('grpo-arith: the common fields come first with Start in view; the other sections are collapsed until opened', async ({
  page,
}) => {
  await page.getByTestId('preset-grpo-arith').click();
  // The chosen preset's description is shown once, beneath the buttons, as its accessible description.
  await expect(page.getByTestId('preset-grpo-arith')).toHaveAccessibleDescription(/^GRPO on 2-digit addition/);
  const common = page.getByRole('group', { name: 'Common', exact: true });
  for (const label of ['Steps', 'Learning rate', 'Prompts per step', 'Group size', 'Seed']) {
    await expect(common.getByRole('spinbutton', { name: label, exact: true })).toBeVisible();
  }
  await expect(common.getByRole('button')).toHaveCount(0); // always open
  const start = page.getByRole('button', { name: 'Start run' });
  await expect(start).toHaveAttribute('data-testid', 'run-start');
  await expect(start).toBeInViewport();
  await expect(start).toBeEnabled();
  for (const section of SECTIONS) {
    await expect(page.getByRole('group', { name: section, exact: true })).toBeVisible();
    await expect(toggle(page, section)).toHaveAttribute('aria-expanded', 'false');
  }
  await expect(page.getByTestId('field-temperature')).toBeHidden();
  await open(page, 'Sampling');
  await expect(page.getByRole('spinbutton', { name: 'Temperature' })).toBeVisible();
  await toggle(page, 'Sampling').click();
  await expect(toggle(page, 'Sampling')).toHaveAttribute('aria-expanded', 'false');
  await expect(page.getByTestId('field-temperature')).toBeHidden();
});

test('grpo-arith: a bad value names the field by label and path with its range and blocks Start; fixing it unblocks', async ({
  page,
}) => {
  await page.getByTestId('preset-grpo-arith').click();
  const start = page.getByTestId('run-start');
  await open(page, 'Objective', 'Sampling');

  const clipHigh = page.getByTestId('field-policyLoss.clipHigh');
  await expect(clipHigh).toHaveAccessibleName('Clip ε high');
  await clipHigh.fill('-1');
  const clipMessage = 'Clip ε high (policyLoss.clipHigh) must be a number in [0, 10], got -1';
  await expect(page.getByTestId('problem-policyLoss.clipHigh')).toHaveText(clipMessage);
  await expect(clipHigh).toHaveAttribute('aria-invalid', 'true');
  await expect(clipHigh).toHaveAccessibleDescription(new RegExp(`^${clipMessage.replace(/[()[\]]/g, '\\$&')}`));
  await expect(start).toBeDisabled();
  await expect(toggle(page, 'Objective')).toHaveAccessibleName('Objective · 1 problem');

  const temperature = page.getByRole('spinbutton', { name: 'Temperature' });
  await temperature.fill('0');
  await expect(page.getByTestId('problem-temperature')).toHaveText(
    'Temperature (temperature) must be a number in (0, 10], got 0',
  );
  await expect(page.getByText('2 problems with the options: fix them to start.')).toBeVisible();
  await expect(start).toHaveAccessibleDescription('2 problems with the options: fix them to start.');
  await expect(page.getByRole('list', { name: 'Problems with the options' }).getByRole('button')).toHaveText([
    clipMessage,
    'Temperature (temperature) must be a number in (0, 10], got 0',
  ]);

  await clipHigh.fill('0.28');
  await temperature.fill('0.9');
  await expect(page.getByTestId('problem-policyLoss.clipHigh')).toHaveCount(0);
  await expect(page.getByTestId('problem-temperature')).toHaveCount(0);
  await expect(page.getByRole('list', { name: 'Problems with the options' })).toHaveCount(0);
  await expect(clipHigh).not.toHaveAttribute('aria-invalid', 'true');
  await expect(start).toBeEnabled();
  await page.getByText('Config as JSON').click();
  await expect(page.getByTestId('config-json')).toContainText('"clipHigh": 0.28');
  await expect(page.getByTestId('config-json')).toContainText('"temperature": 0.9');
});

test('grpo-arith: a problem opens its section, and its entry next to Start takes the person to the field', async ({
  page,
}) => {
  await page.getByTestId('preset-grpo-arith').click();
  await open(page, 'Optimizer');
  await page.getByRole('spinbutton', { name: 'Mini-batches' }).fill('2');
  await toggle(page, 'Optimizer').click();
  await expect(page.getByTestId('field-miniBatches')).toBeHidden();

  // One prompt of a group of two packs into one row: two mini-batches no longer fit.
  const common = page.getByRole('group', { name: 'Common', exact: true });
  await common.getByRole('spinbutton', { name: 'Prompts per step' }).fill('1');
  await common.getByRole('spinbutton', { name: 'Group size' }).fill('2');
  const message =
    'Mini-batches (miniBatches) must be at most ⌈Prompts per step (prompts) × Group size (group) / 2⌉ = ' +
    '1 (the packed rows; one row per mini-batch at least), got 2';
  await expect(toggle(page, 'Optimizer')).toHaveAttribute('aria-expanded', 'true');
  await expect(page.getByTestId('problem-miniBatches')).toHaveText(message);
  await expect(page.getByTestId('field-miniBatches')).toBeVisible();
  await expect(page.getByTestId('run-start')).toBeDisabled();

  // Closed again by hand, the section stays closed, its count on its button; the summary's entry reopens it.
  await toggle(page, 'Optimizer').click();
  await expect(page.getByTestId('field-miniBatches')).toBeHidden();
  await expect(toggle(page, 'Optimizer')).toHaveAccessibleName('Optimizer · 1 problem');
  await page.getByRole('list', { name: 'Problems with the options' }).getByRole('button', { name: message }).click();
  await expect(toggle(page, 'Optimizer')).toHaveAttribute('aria-expanded', 'true');
  const miniBatches = page.getByRole('spinbutton', { name: 'Mini-batches' });
  await expect(miniBatches).toBeFocused();
  await expect(miniBatches).toBeInViewport();
  await page.keyboard.press('Control+A');
  await page.keyboard.type('1');
  await expect(page.getByTestId('problem-miniBatches')).toHaveCount(0);
  await expect(page.getByTestId('run-start')).toBeEnabled();
  await expect(toggle(page, 'Optimizer')).toHaveAttribute('aria-expanded', 'true'); // fixed: still open, the field keeps its focus
  await expect(miniBatches).toBeFocused();
});

test('grpo-arith: choosing a loss, an IS kind or an estimator shows its own options', async ({ page }) => {
  await page.getByTestId('preset-grpo-arith').click();
  await open(page, 'Objective', 'Advantage', 'Corrections');
  await page.getByText('Config as JSON').click();
  const json = page.getByTestId('config-json');
  await expect(page.getByTestId('field-policyLoss.dualClip')).toBeVisible();

  await page.getByTestId('field-policyLoss.name').selectOption('cispo');
  await expect(page.getByTestId('field-policyLoss.cap')).toBeVisible();
  await expect(page.getByTestId('field-policyLoss.dualClip')).toHaveCount(0);
  await page.getByTestId('field-policyLoss.clipLow').fill('0.1');
  await page.getByTestId('field-policyLoss.name').selectOption('reinforce_kl');
  await expect(page.getByTestId('field-policyLoss.clipLow')).toHaveCount(0);
  await expect(page.getByTestId('field-policyLoss.klApprox')).not.toBeChecked();
  await expect(json).toContainText('"klApprox": false');
  await expect(json).not.toContainText('clipLow');

  await page.getByTestId('field-importance.kind').selectOption('band');
  await expect(page.getByTestId('field-importance.low')).toHaveValue('0.5');
  await expect(page.getByTestId('field-importance.high')).toHaveValue('5');
  await page.getByTestId('field-importance.low').fill('6');
  await expect(page.getByTestId('problem-importance.low')).toHaveText(
    'Band low (importance.low) must be at most Band high (importance.high) = 5, got 6',
  );
  await expect(page.getByTestId('run-start')).toBeDisabled();
  await page.getByTestId('field-importance.kind').selectOption('off');
  await expect(page.getByTestId('field-importance.low')).toHaveCount(0);
  await expect(page.getByTestId('run-start')).toBeEnabled();

  await page.getByTestId('field-advantage.estimator').selectOption('reinforce++-baseline');
  await expect(page.getByTestId('field-advantage.compat').locator('option')).toHaveText(['default', 'verl', 'rllm']);
  await expect(page.getByTestId('field-advantage.scale')).toHaveCount(0);
  // verl's optimal-token baseline: its one option, the zero tail.
  await page.getByTestId('field-advantage.estimator').selectOption('otb');
  await expect(page.getByTestId('field-advantage.handleZeroTail')).toBeVisible();
  await expect(page.getByTestId('field-advantage.compat')).toHaveCount(0);

  // The entropy bonus: off by default; static with verl's aggregation; adaptive with TRL's defaults and its check.
  await expect(page.getByTestId('field-entropyBonus.kind')).toHaveValue('off');
  await expect(page.getByTestId('field-entropyBonus.coef')).toHaveCount(0);
  await page.getByTestId('field-entropyBonus.kind').selectOption('static');
  await expect(page.getByTestId('field-entropyBonus.aggregation')).toHaveValue('loss');
  await page.getByTestId('field-entropyBonus.kind').selectOption('adaptive');
  await expect(page.getByTestId('field-entropyBonus.aggregation')).toHaveCount(0);
  await expect(page.getByTestId('field-entropyBonus.target')).toHaveValue('0.2');
  await expect(page.getByTestId('field-entropyBonus.delta')).toHaveValue('0.005');
  await page.getByTestId('field-entropyBonus.min').fill('0.5');
  await page.getByTestId('field-entropyBonus.max').fill('0.1');
  await expect(page.getByTestId('problem-entropyBonus.min')).toHaveText(
    'Entropy coefficient min (entropyBonus.min) must be at most Entropy coefficient max (entropyBonus.max) = 0.1, got 0.5',
  );
  await expect(page.getByTestId('run-start')).toBeDisabled();
  await expect(json).toContainText('"kind": "adaptive"');
});

test('dpo-arith: pairs per step is a common field; the loss variant decides whether label smoothing applies', async ({
  page,
}) => {
  await page.getByTestId('preset-dpo-arith').click();
  await expect(
    page.getByRole('group', { name: 'Common', exact: true }).getByRole('spinbutton', { name: 'Pairs per step' }),
  ).toBeVisible();
  await open(page, 'Objective');
  await page.getByText('Config as JSON').click();
  const smoothing = page.getByTestId('field-loss.labelSmoothing');
  await smoothing.fill('0.6');
  await expect(page.getByTestId('problem-loss.labelSmoothing')).toHaveText(
    'Label smoothing (loss.labelSmoothing) must be a number in [0, 0.5], got 0.6',
  );
  await page.getByTestId('field-loss.type').selectOption('ipo');
  await expect(smoothing).toHaveCount(0);
  await expect(page.getByTestId('config-json')).toContainText('"type": "ipo"');
  await expect(page.getByTestId('config-json')).not.toContainText('labelSmoothing');
  await expect(page.getByTestId('run-start')).toBeEnabled();
});
