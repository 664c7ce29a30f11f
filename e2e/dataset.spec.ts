import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { openPreset } from './helpers';

const EXAMPLE = 'examples/arith-dataset.jsonl';
const prompts = readFileSync(EXAMPLE, 'utf8')
  .trim()
  .split('\n')
  .map((l) => (JSON.parse(l) as { prompt: string }).prompt);

test('Prompt dataset: a bad file is refused naming its line; the example file trains grpo-arith and its prompts are the groups', async ({
  page,
}) => {
  await openPreset(page, 'grpo-arith', {
    Steps: 2,
    'Prompts per step': 4,
    'Group size': 4,
    'Evaluate every': 0,
    'Checkpoint every': 0,
  });
  const picker = page.getByRole('group', { name: 'Prompt dataset (optional)' });
  await expect(picker.getByTestId('dataset-now')).toContainText('None: the run draws 2-digit addition problems');

  await picker.getByLabel('File').setInputFiles({
    name: 'bad.jsonl',
    mimeType: 'application/jsonl',
    buffer: Buffer.from('{"prompt": "1+2=", "ground_truth": "3"}\n{"ground_truth": "4"}\n'),
  });
  await picker.getByRole('button', { name: 'Load dataset' }).click();
  await expect(picker.getByRole('alert')).toContainText(
    /Not loaded, the run keeps its prompts: bad\.jsonl line 2: 'prompt'/,
  );
  await expect(picker.getByTestId('dataset-now')).toContainText('None');

  await picker.getByLabel('File').setInputFiles(EXAMPLE);
  await picker.getByLabel('Held out').fill('4');
  await picker.getByRole('button', { name: 'Load dataset' }).click();
  await expect(picker.getByRole('status')).toHaveText(
    'Loaded arith-dataset.jsonl: 20 records, 4 held out for evaluation, reward math.',
  );
  await expect(picker.getByTestId('dataset-now')).toContainText(
    'Training on arith-dataset.jsonl: 20 records (4 held out), reward math.',
  );
  await expect(page.getByTestId('config-json')).toContainText('"name": "arith-dataset.jsonl"');

  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 120_000 });
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Groups' }).click();
  await expect(page.getByTestId('group')).toHaveCount(4);
  for (const group of await page.getByTestId('group').all()) {
    const text = (await group.textContent()) ?? '';
    expect(prompts.some((p) => text.includes(p))).toBe(true);
  }
});
