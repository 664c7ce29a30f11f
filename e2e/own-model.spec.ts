import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { writeTinyLlama } from './hf-folder';
import { exportedMetrics, fillFields, openPreset } from './helpers';

// A person's own model in the app: a random Llama with grouped-query attention and the
// 32000-piece tokenizer, written as a Hugging Face folder by e2e/hf-folder.ts (the same bytes as
// the unit tests' fixture, without importing worker/).
// A random model never writes EOS, so every completion is truncated: truncation 'score' trains on
// them, and the reward is the last lowercase letter against the ground truth (a regex).
const root = mkdtempSync(join(tmpdir(), 'dewpoint-own-model-'));
const dir = join(root, 'tiny-llama');
const { parameters } = writeTinyLlama(dir);
const bad = join(root, 'not-a-llama');
writeTinyLlama(bad);
writeFileSync(
  join(bad, 'config.json'),
  JSON.stringify({ ...JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')), architectures: ['GPT2LMHeadModel'] }),
);
const PROMPTS = ['e', 'a', 't', 'o', 'i', 'n'].map((_, i) => `Letter ${i + 1}:`);
const JSONL = ['e', 'a', 't', 'o', 'i', 'n']
  .map((l, i) => JSON.stringify({ prompt: PROMPTS[i], ground_truth: l }))
  .join('\n');
const PARAMETERS = parameters.toLocaleString('en-US');

/**
 * grpo-arith for a random model: 2 steps of 2 × 2 completions of 8 ids, truncation 'score' (it
 * never writes EOS), checkpoints every `checkpointEvery` steps; returns the Base model box.
 */
async function openSmallGrpo(page: Page, checkpointEvery: number): Promise<Locator> {
  await openPreset(page, 'grpo-arith', {
    Steps: 2,
    'Prompts per step': 2,
    'Group size': 2,
    'Max new tokens': 8,
    'Evaluate every': 0,
    'Checkpoint every': checkpointEvery,
  });
  await page.getByTestId('section-Advantage').getByRole('button', { expanded: false }).click();
  await page.getByTestId('field-truncation').selectOption('score');
  return page.getByRole('group', { name: 'Base model (optional)' });
}

test(
  'Base model: a bad folder is refused naming config.json and architectures; a Llama folder is ' +
    'inspected, used, and GRPO trains on it with a dataset',
  async ({ page }) => {
    const picker = await openSmallGrpo(page, 0);
    await expect(picker.getByTestId('model-now')).toContainText('The shipped arithmetic base');
    await expect(picker.getByTestId('model-drop')).toContainText(
      'From the keyboard, the Model folder button above picks it',
    );

    await picker.getByLabel('Model folder').setInputFiles(bad);
    await expect(picker.getByRole('alert')).toContainText('Not usable, nothing was loaded');
    await expect(picker.getByRole('alert')).toContainText('config.json: architectures:');
    await expect(picker.getByTestId('model-summary')).toHaveCount(0);

    await picker.getByLabel('Model folder').setInputFiles(dir);
    const summary = picker.getByTestId('model-summary');
    await expect(summary).toContainText(
      `tiny-llama: LlamaForCausalLM, ${PARAMETERS} parameters (F32; f32 once loaded) in model.safetensors.`,
    );
    await expect(summary).toContainText('2 layers, hidden size 64, 4 heads (2 kv heads), FFN 176, vocabulary 32,000');
    await expect(summary).toContainText('Training memory: about');
    await expect(summary).toContainText('for a 2 × 64 batch (rows × ids)');
    // The memory plan of a step of these options on wasm, before anything is loaded.
    const plan = summary.getByTestId('model-plan');
    await expect(plan).toContainText(/^Memory of a step of these options: \d+\.\d\d GiB on wasm, of its 4\.00 GiB: /);
    await expect(plan).toContainText(/trained model: weights, gradients, AdamW m and v 0\.\d\d GiB \+ .*; fits\.$/);
    await summary.getByRole('button', { name: 'Use this model' }).click();
    await expect(picker.getByRole('status')).toContainText(`Using tiny-llama: ${PARAMETERS} parameters`);
    await expect(picker.getByTestId('model-now')).toHaveText(
      `Training from tiny-llama: ${PARAMETERS} parameters, a Hugging Face model picked in this tab.`,
    );
    await expect(page.getByTestId('config-json')).toContainText('"kind": "hf"');

    // The dataset is checked against the picked model's tokenizer (letters are not in the arithmetic vocabulary).
    const data = page.getByRole('group', { name: 'Prompt dataset (optional)' });
    await data
      .getByLabel('File')
      .setInputFiles({ name: 'letters.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from(JSONL) });
    await data.getByLabel('Reward').selectOption('regex');
    await data.getByLabel('Pattern').fill('([a-z])[^a-z]*$');
    await data.getByLabel('Held out').fill('1');
    await data.getByRole('button', { name: 'Load dataset' }).click();
    await expect(data.getByRole('status')).toHaveText(
      'Loaded letters.jsonl: 6 records, 1 held out for evaluation, reward regex.',
    );

    await page.getByTestId('run-start').click();
    await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 150_000 });
    await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Groups' }).click();
    await expect(page.getByTestId('group')).toHaveCount(2);
    for (const group of await page.getByTestId('group').all()) {
      const text = (await group.textContent()) ?? '';
      expect(
        PROMPTS.some((p) => text.includes(p)),
        text.slice(0, 200),
      ).toBe(true);
    }
  },
);

test(
  "Base model: the folder's files dropped on the drop zone are inspected the same way; after a reload " +
    'the picked model is gone and the panel says so',
  async ({ page }) => {
    await openPreset(page, 'ppo-arith');
    const picker = page.getByRole('group', { name: 'Base model (optional)' });
    const files = readdirSync(dir).map((name) => ({ name, b64: readFileSync(join(dir, name)).toString('base64') }));
    const dropped = await page.evaluateHandle((list) => {
      const dt = new DataTransfer();
      for (const f of list) dt.items.add(new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.name));
      return dt;
    }, files);
    await picker.getByTestId('model-drop').dispatchEvent('drop', { dataTransfer: dropped });
    const summary = picker.getByTestId('model-summary');
    await expect(summary).toContainText(`model folder: LlamaForCausalLM, ${PARAMETERS} parameters`);
    await summary.getByRole('button', { name: 'Use this model' }).click();
    await expect(picker.getByTestId('model-now')).toContainText(`Training from model folder: ${PARAMETERS} parameters`);

    await page.reload();
    await expect(picker.getByTestId('model-gone')).toContainText(
      "This tab's worker no longer holds model folder (a reload drops a picked model)",
    );
    await picker.getByRole('button', { name: 'Use the shipped base' }).click();
    await expect(picker.getByTestId('model-now')).toContainText('The shipped arithmetic base');
    await expect(picker.getByTestId('model-gone')).toHaveCount(0);
  },
);

test(
  'Base model with LoRA: the plan of the model in use follows the options (the frozen base and the adapters), ' +
    'and GRPO trains the adapters on it with adapter dropout',
  async ({ page }) => {
    const picker = await openSmallGrpo(page, 1);
    await picker.getByLabel('Model folder').setInputFiles(dir);
    await picker.getByTestId('model-summary').getByRole('button', { name: 'Use this model' }).click();
    const plan = picker.getByTestId('model-plan-now');
    await expect(plan).toContainText(/^Memory of a step of these options: \d+\.\d\d GiB on wasm, of its 4\.00 GiB: /);
    await expect(plan).toContainText('trained model: weights, gradients, AdamW m and v');

    await fillFields(page, { 'LoRA rank': 4, 'LoRA alpha': 8, 'LoRA dropout': 0.1 });
    await page.getByTestId('field-loraTargets').selectOption('q_proj,v_proj');
    await expect(plan).toContainText(
      /base model \(frozen, also the reference\) 0\.\d\d GiB \+ LoRA adapters \(rank 4\)/,
    );
    await expect(plan).not.toContainText('trained model');
    await page.getByText('Config as JSON').click();
    await expect(page.getByTestId('config-json')).toContainText('"loraRank": 4');
    await expect(page.getByTestId('config-json')).toContainText('"loraTargets": "q_proj,v_proj"');
    await expect(page.getByTestId('config-json')).toContainText('"loraDropout": 0.1');

    await page.getByTestId('run-start').click();
    await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 150_000 });
    const { steps } = await exportedMetrics(page);
    expect(steps.map((s) => s.step)).toEqual([1, 2]);
    expect(steps.every((s) => Number.isFinite(s.metrics['opt/grad_norm']))).toBe(true);
    // The checkpoint: the merged model beside PEFT's adapter files, stored in IndexedDB and offered for download.
    await page.getByRole('button', { name: 'Prepare download' }).click();
    const files = page.getByRole('list', { name: 'Checkpoint files' });
    for (const name of ['model.safetensors', 'config.json', 'adapter_config.json', 'adapter_model.safetensors'])
      await expect(files.getByRole('link', { name, exact: true })).toBeVisible();
    const download = page.waitForEvent('download');
    await files.getByRole('link', { name: 'adapter_config.json', exact: true }).click();
    const adapterConfig = JSON.parse(readFileSync(await (await download).path(), 'utf8'));
    expect(adapterConfig).toMatchObject({
      peft_type: 'LORA',
      r: 4,
      lora_alpha: 8,
      lora_dropout: 0.1,
      target_modules: ['q_proj', 'v_proj'],
    });
  },
);
