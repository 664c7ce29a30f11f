/**
 * grpo-env in Chrome: a person's environment program trained on through a real companion. The
 * picker shows the example, previews its first reset in a companion session, refuses a bad task
 * file naming its line (keeping the environment), loads a task file of one's own; the run's
 * episodes are the program's (its observations, no infrastructure errors), and one replays
 * identically through a fresh session.
 */
import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { fillFields, startCompanion } from './helpers';

const TASKS = readFileSync('examples/calc-tasks.jsonl', 'utf8').trim().split('\n').slice(0, 30).join('\n');

test(
  "grpo-env: the example program's first reset is previewed in the companion, a bad task file is refused naming " +
    'its line, a task file of one’s own is loaded, and a run trains on the program’s episodes, one replaying identically',
  async ({ page }) => {
    test.setTimeout(300_000);
    await page.goto('/#/system');
    const { child, link } = await startCompanion(new URL(page.url()).origin);
    try {
      await page.goto(link);
      await expect(page.getByTestId('companion-status')).toHaveText('Connected');
      await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Experiments' }).click();
      await page.getByTestId('preset-grpo-env').click();
      await expect(page.getByTestId('companion-notice')).toContainText('environment programs run there');
      const picker = page.getByTestId('environment-picker');
      await expect(picker.getByTestId('environment-now')).toContainText(
        /calc_env\.py \(python3 -I calc_env\.py, sha256 [0-9a-f]{12}…\) on calc-tasks\.jsonl: 2000 tasks, 200 held out — the example/,
      );

      // The first task's reset, run by the program in a companion session.
      await picker.getByTestId('environment-preview-button').click();
      const preview = picker.getByTestId('environment-preview');
      await expect(preview).toContainText(/Task calc\/67\/61\/55 \(67\+61\+55=\): the model starts from 10 ids/);
      await expect(preview.locator('pre')).toHaveText('<bos>67+61+55=');

      // A bad task file: refused, naming its line and field; the run keeps the example.
      await picker.getByTestId('environment-tasks-file').setInputFiles({
        name: 'bad.jsonl',
        mimeType: 'application/jsonl',
        buffer: Buffer.from('{"id": "a", "prompt": "1+2+3="}\n{"id": "b"}\n'),
      });
      await picker.getByRole('button', { name: 'Load environment' }).click();
      await expect(picker.getByRole('alert')).toContainText(
        "Not loaded, the run keeps its environment: bad.jsonl line 2: 'prompt' is missing (expected a string)",
      );
      await expect(picker.getByTestId('environment-now')).toContainText('the example');

      // A task file of one's own, with the example program kept.
      await picker.getByTestId('environment-tasks-file').setInputFiles({
        name: 'mine.jsonl',
        mimeType: 'application/jsonl',
        buffer: Buffer.from(TASKS),
      });
      await picker.getByRole('button', { name: 'Load environment' }).click();
      await expect(picker.getByTestId('environment-now')).toContainText(/on mine\.jsonl: 30 tasks, 3 held out\.$/);

      await fillFields(page, { Steps: 1, 'Prompts per step': 2, 'Group size': 2, 'Evaluate every': 0 });
      await page.getByTestId('run-start').click();
      await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 200_000 });

      await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Episodes' }).click();
      await expect(page.getByTestId('episodes-view')).toBeVisible();
      const rows = page.getByTestId('episode-row');
      await expect(rows.first()).toBeVisible();
      // The program answered every episode: none ended in an infrastructure error.
      await expect(page.getByRole('group', { name: 'Outcome' }).getByText(/^error \(0\)$/)).toBeVisible();
      await rows.first().getByRole('button').first().click();
      await expect(page.getByTestId('episode-turn').first()).toBeVisible();
      // Replayed through a fresh session of the program: the same observations, turn for turn.
      await page.getByTestId('replay-button').click();
      await expect(page.getByTestId('replay-result')).toContainText('identical', { timeout: 60_000 });
    } finally {
      child.kill('SIGTERM');
    }
  },
);
