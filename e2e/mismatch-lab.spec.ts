import { expect, test } from '@playwright/test';

test(
  'Mismatch lab in Compare: a bad temperature is refused naming the form it takes; a sampler at 1.5 runs on-policy and ' +
    'then under every correction, the runs are stored, named and picked, and the table shows the gap',
  async ({ page }) => {
    test.setTimeout(300_000);
    await page.addInitScript(() => localStorage.setItem('dewpoint.backend', 'auto'));
    await page.goto('/#/compare');
    const lab = page.getByTestId('mismatch-lab');
    await lab.getByText('Mismatch lab: one injected gap, every correction, the same seed').click();
    await lab.getByRole('textbox', { name: 'Sampler temperature' }).fill('0');
    await expect(lab.getByTestId('mismatch-lab-problem')).toContainText(
      'injection "temperature:0" needs T, a number in (0, 10]; expected one of bf16, stale:K (K in 1..8), temperature:T',
    );
    await lab.getByRole('textbox', { name: 'Sampler temperature' }).fill('1.5');
    await lab.getByRole('spinbutton', { name: 'Steps per run' }).fill('2');
    await expect(lab).toContainText(
      'sampler at temperature 1.5, uncorrected: 11 runs of 2 steps (on-policy, none, tis,',
    );
    await lab.getByRole('button', { name: 'Run the lab' }).click();
    await expect(lab.getByTestId('mismatch-lab-progress')).toContainText(/Run \d+ of 11: lab temperature:1\.5: /);
    const table = lab.getByTestId('mismatch-lab-table');
    await expect(table).toBeVisible({ timeout: 280_000 });
    const rows = table.locator('tbody tr');
    await expect(rows).toHaveCount(11);
    // On-policy reads exactly 0 and its weights are all 1; the injected runs show the gap.
    await expect(rows.nth(0).locator('th')).toHaveText('on-policy reference (nothing injected)');
    await expect(rows.nth(0).locator('td').nth(2)).toHaveText('0');
    await expect(rows.nth(0).locator('td').nth(3)).toHaveText('1');
    expect(Number(await rows.nth(1).locator('td').nth(2).textContent())).toBeGreaterThan(0.001);
    await expect(rows.nth(10)).toContainText(/TRL sequence_mask, cap 3 \(its default\).*% masked/);
    // The lab's runs are stored under their names and picked for the panels.
    const pick = page.getByRole('group', { name: 'Runs to compare' });
    await expect(pick.getByRole('checkbox', { checked: true })).toHaveCount(11);
    await expect(pick).toContainText('lab temperature:1.5: trl-token-mask');
    await expect(page.getByRole('heading', { name: 'Panels' })).toBeVisible();
  },
);
