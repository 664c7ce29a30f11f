import { expect, test } from '@playwright/test';

/** One step of verl's rollout dump as its legacy trainer writes it (`{step}.jsonl`: input, output, gts, score, step, extra reward keys): no uid, no ids. */
const DUMP = [
  { input: 'What is 2+2?', output: 'The answer is 4.', gts: '4', score: 1.0, step: 3, acc: true },
  { input: 'What is 2+2?', output: 'It is 5.', gts: '4', score: 0.0, step: 3, acc: false },
  { input: 'What is 3*3?', output: '9', gts: '9', score: 1.0, step: 3, acc: true },
  { input: 'What is 3*3?', output: '6', gts: '9', score: 0.5, step: 3, acc: false },
]
  .map((l) => JSON.stringify(l))
  .join('\n');

test(
  'Import verl rollouts: a bad dump is refused naming its line; a good one opens in Groups, Batch and ' +
    'Replay with what it lacks, claiming nothing that does not apply',
  async ({ page }) => {
    await page.goto('/#/experiments');
    const input = page.getByLabel('Import verl rollouts…');

    // A score that is not a number: refused whole, the alert names file, line and field.
    const bad = DUMP.split('\n')
      .map((l, i) => (i === 1 ? l.replace('"score":0', '"score":"zero"') : l))
      .join('\n');
    await input.setInputFiles({ name: '3.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(bad) });
    await expect(page.getByRole('alert')).toHaveText(
      'Not imported, nothing was stored: 3.jsonl line 2, field score: expected a finite number (verl writes token_level_scores.sum(-1)), got "zero".',
    );
    await expect(page.getByTestId('stored-runs')).toHaveCount(0);

    await input.setInputFiles({ name: '3.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(DUMP) });
    await expect(page.getByText(/^Imported 3\.jsonl: 1 step, 2 groups, 4 samples; \d+ fields missing/)).toBeVisible();
    await expect(page.getByRole('alert')).toHaveCount(0);
    await expect(page.getByTestId('stored-runs').getByRole('row', { name: /verl-import/ })).toContainText('imported');

    const views = page.getByRole('navigation', { name: 'Views' });
    await views.getByRole('link', { name: 'Groups' }).click();
    await expect(
      page.getByRole('heading', {
        name: /^Run verl-import · \S+ · step 3 of 3 \(a stored run, not the current one\)$/,
      }),
    ).toBeVisible();
    await expect(page.getByText('Step 3: 2 groups, 0 with zero variance.')).toBeVisible();
    await expect(page.getByTestId('group')).toHaveCount(2);
    await expect(page.getByTestId('group').first()).toContainText('The answer is 4.');
    await expect(page.getByTestId('group-estimate').first()).toContainText('recomputed by Dewpoint');
    const notice = page.getByRole('complementary', { name: 'Imported run' });
    await expect(notice).toContainText('by identical input within a step (the dump has no uid)');
    await expect(notice).toContainText('recomputed by Dewpoint’s GRPO estimator with verl’s defaults, not verl’s own');
    await expect(notice.getByRole('listitem').filter({ hasText: 'Groups · uid' })).toBeVisible();
    await expect(notice.getByRole('listitem').filter({ hasText: 'Groups · response_ids' })).toContainText(
      'no completion lengths',
    );
    // No token ids, so no sessions: no inspector to open (it could only say the step keeps none), the reason instead.
    await expect(page.getByRole('button', { name: /^Inspect sample/ })).toHaveCount(0);
    await expect(page.getByTestId('group-no-session')).toHaveCount(4);
    await expect(page.getByTestId('group-no-session').first()).toHaveText('none: the dump has no token ids');

    await views.getByRole('link', { name: 'Batch' }).click();
    await expect(
      page.getByText(
        'Step 3 has no stored batch: this imported verl dump has no token ids (response_ids), so there is nothing to pack.',
      ),
    ).toBeVisible();
    await expect(page.getByText('only GRPO steps are packed', { exact: false })).toHaveCount(0);
    await expect(notice.getByRole('listitem').filter({ hasText: 'Batch · response_ids' })).toContainText(
      'this dump has no token ids',
    );
    await expect(notice.getByRole('listitem').filter({ hasText: 'Batch · dlogp' })).toBeVisible();

    await views.getByRole('link', { name: 'Episodes' }).click();
    await expect(page.getByTestId('episode-count')).toContainText('4');
    await expect(notice.getByRole('listitem').filter({ hasText: 'Replay · environment' })).toContainText('no replay');
    // Trained by verl, not here: no policy version or update of this workbench is claimed.
    const row = page.getByTestId('episode-row').first();
    await expect(row).toContainText('not trained here');
    await expect(row.getByRole('cell', { name: 'yes', exact: true })).toHaveCount(0);
    await page.getByRole('button', { name: 'Open episode 0' }).click();
    const panel = page.getByTestId('episode-panel');
    await expect(panel.locator('dt:has-text("Policy version") + dd')).toHaveText('not trained here');
    await expect(panel.locator('dt:has-text("In the update") + dd')).toHaveText('not trained here');
    await expect(panel.getByTestId('episode-turn')).toContainText('policy version not trained here');
    await expect(panel.getByTestId('episode-turn')).toContainText('(the action ended at <eos> and ended the episode)');

    // Deleting it names what it holds, and no checkpoint: an imported run has none.
    await views.getByRole('link', { name: 'Experiments' }).click();
    await page.getByRole('button', { name: /^Details of verl-import · / }).click();
    await page.getByRole('button', { name: 'Delete…' }).click();
    const confirm = page.getByRole('group', { name: /^Confirm deleting verl-import · / });
    await expect(confirm).toContainText('(1 imported step with its groups)');
    await expect(confirm).not.toContainText('checkpoint');
  },
);
