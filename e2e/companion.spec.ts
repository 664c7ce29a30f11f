import { expect, test } from '@playwright/test';
import { fillFields, openPreset, startCompanion } from './helpers';

test(
  'System view: the link the companion prints connects the worker, shows its health, and drops the ' +
    'token from the address bar; a wrong token says so',
  async ({ page }) => {
    await page.goto('/#/system');
    const origin = new URL(page.url()).origin;
    const { child, link, token } = await startCompanion(origin);
    try {
      await page.goto(link);
      await expect(page.getByTestId('companion-status')).toHaveText('Connected');
      const health = page.getByTestId('companion-health');
      await expect(health).toContainText('process');
      await expect(health).toContainText(/1 \(0 running, 0 of 4 queued\)/);
      await expect(health).toContainText('30 s wall, 10 s CPU, 256 MiB memory, 1 MiB of output');
      await expect(health).toContainText(/Network isolation\s*on/);
      await expect(health).toContainText(/Processesat most 64 at once/);
      expect(page.url()).not.toContain(token);
      expect(new URL(page.url()).hash).toBe('#/system');

      const form = page.getByRole('form', { name: 'Connect to the companion' });
      await form.getByLabel('Token').fill('not-the-token');
      await form.getByRole('button', { name: 'Connect' }).click();
      await expect(page.getByTestId('companion-status')).toHaveText(
        /^Not connected: the companion refused the token \(wrong token\)/,
      );
    } finally {
      child.kill('SIGTERM');
    }
  },
);

test(
  'grpo-code: without a companion the preset says how to start one; connected, a run grades its ' +
    'programs there and Groups shows each program with its line breaks and what became of each case, the ' +
    "inspector each case's input and expected output beside its stdout",
  async ({ page }) => {
    await openPreset(page, 'grpo-code', { Steps: 1, 'Prompts per step': 2, 'Group size': 2, 'Evaluate every': 0 });
    await expect(page.getByTestId('companion-notice')).toContainText('No companion is connected');
    await expect(page.getByTestId('companion-notice')).toContainText('npx dewpoint companion');

    const origin = new URL(page.url()).origin;
    const { child, link } = await startCompanion(origin);
    try {
      await page.goto(link);
      await expect(page.getByTestId('companion-status')).toHaveText('Connected');
      await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Experiments' }).click();
      await page.getByTestId('preset-grpo-code').click();
      await fillFields(page, { Steps: 1, 'Prompts per step': 2, 'Group size': 2, 'Evaluate every': 0 });
      await expect(page.getByTestId('companion-notice')).toContainText(
        /Companion connected at http:\/\/127\.0\.0\.1:\d+: process runner, 1 workers/,
      );
      await page.getByTestId('run-start').click();
      await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });

      await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Groups' }).click();
      const chips = page.getByTestId('case-chip');
      // 2 tasks × 2 samples, three cases each: every sample was graded (none failed for want of a sandbox).
      await expect(chips).toHaveCount(12);
      // Each chip says what became of its case, a failure as the failure it was (never "COMPLETED ✗").
      for (const text of await chips.getByTestId('case-chip-result').allTextContents())
        expect(text).toMatch(/^case [123]: (passed|wrong output|error|timed out|crashed|too much output|not run)$/);
      for (const chip of await chips.all()) {
        const passed = (await chip.getByTestId('case-chip-result').textContent())!.endsWith('passed');
        await expect(chip).toHaveClass(passed ? /\bok\b/ : /\bbad\b/);
      }
      // A one-turn episode's program keeps its line breaks, with no list marker ("1.") before it.
      await expect(page.getByRole('list', { name: /^Turns of sample/ })).toHaveCount(0);
      await expect(
        page.getByTestId('group').locator('code.completion').filter({ hasText: 'x=int(input())' }).first(),
      ).toHaveText(/x=int\(input\(\)\)\n/, { useInnerText: true });
      await page
        .getByRole('button', { name: /^Inspect sample 0 of group/ })
        .first()
        .click();
      await expect(page.getByTestId('case-table')).toBeVisible();
      await expect(page.getByTestId('case-stdout')).toHaveCount(3);
      // Each case's input (x = −3, 2, 11) and expected output beside what the program wrote.
      await expect(page.getByTestId('case-input')).toHaveText(['-3', '2', '11']);
      await expect(page.getByTestId('case-expected')).toHaveCount(3);
      for (const text of await page.getByTestId('case-expected').allTextContents()) expect(text).toMatch(/^-?\d+\s*$/);
    } finally {
      child.kill('SIGTERM');
    }
  },
);
