import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { loadConfig, openPreset } from './helpers';

// Two-digit sums below 90 (a right answer, \boxed{NN}, is 10 characters), each with the ground truth "\".
const RECORDS = readFileSync('examples/length-game.jsonl', 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as { prompt: string; ground_truth: string })
  .map((r) => ({ prompt: r.prompt, answer: r.ground_truth }));

test(
  'Reward-hacking audit: a dataset reward that pays any completion of 11 characters or more is found gaming length; ' +
    'the audit runs on demand and says it is an audit, not an early warning',
  async ({ page }) => {
    await openPreset(page, 'grpo-arith');
    // The regex's one group captures the completion's first character (its backslash) once it is 11 characters long.
    await loadConfig(page, {
      preset: 'grpo-arith',
      steps: 8,
      evalEvery: 0,
      temperature: 1.5,
      lr: 6e-4,
      dataset: {
        name: 'length-game.jsonl',
        format: 'jsonl',
        records: RECORDS,
        heldOut: 4,
        reward: { kind: 'regex', pattern: '^(?=[\\s\\S]{11})(\\\\)' },
      },
    });
    await page.getByTestId('run-start').click();
    await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 170_000 });
    const audit = page.getByRole('region', { name: 'Reward-hacking audit' });
    await expect(audit).toContainText('An audit read over every stored step of the run, not an early warning');
    await expect(audit.getByTestId('audit-length-reward')).toHaveCount(0);
    await audit.getByRole('button', { name: 'Audit the rewards' }).click();
    await expect(audit.getByTestId('reward-audit-summary')).toHaveText('Over 8 steps: 1 found.');
    const length = audit.getByTestId('audit-length-reward');
    await expect(length).toHaveAttribute('data-verdict', 'found');
    await expect(length).toContainText(
      /length-reward: found\. Within groups, longer completions scored higher \(r = 0\.\d+/,
    );
    // The other checks say why they do not apply to this run, or that it is clear of them.
    await expect(audit.getByTestId('audit-component-dominance')).toContainText(
      'not a sum of its components (correct, matched)',
    );
    await expect(audit.getByTestId('audit-group-collapse')).toHaveAttribute('data-verdict', 'clear');
    await expect(audit.getByTestId('audit-kl-acceleration')).toContainText('no KL to a reference (rl/kl)');
    await length.getByRole('link', { name: /Open step \d in Groups/ }).click();
    await expect(page).toHaveURL(/#\/groups\?run=[^&]+&step=\d$/);
  },
);
