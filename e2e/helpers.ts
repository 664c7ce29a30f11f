/**
 * Steps the specs share: open Experiments with the worker ready, pick a preset and fill its form.
 * Fields are named by their label (the form's spinbuttons are labelled by the schema's titles); a
 * field outside the always-open common section is in a collapsed section, which is opened first.
 * The form itself sits in the "New run" disclosure, which Start collapses: it is opened first too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { crc32 } from 'node:zlib';
import { expect, type Page } from '@playwright/test';

/**
 * Opens Experiments, waits for the worker's backend (`auto` picks wasm over Chromium's SwiftShader
 * adapter; `backend` forces one, as the System view's choice does), clicks `preset-<name>` and
 * fills `fields` (label → value).
 */
export async function openPreset(
  page: Page,
  preset:
    | 'sft-arith'
    | 'grpo-arith'
    | 'grpo-calc'
    | 'grpo-guess'
    | 'grpo-code'
    | 'grpo-env'
    | 'ppo-arith'
    | 'dpo-arith'
    | 'flowgrpo-2d',
  fields: Record<string, string | number> = {},
  backend: 'wasm' | 'webgpu' = 'wasm',
): Promise<void> {
  // The System view's stored choice, set before the page loads (auto for wasm: the default path).
  await page.addInitScript((b) => localStorage.setItem('dewpoint.backend', b), backend === 'wasm' ? 'auto' : backend);
  await page.goto('/#/experiments');
  await expect(page.getByText(new RegExp(`Training on ${backend}`))).toBeVisible();
  await showRunForm(page);
  await page.getByTestId(`preset-${preset}`).click();
  await expect(page.getByRole('form', { name: 'Run options' })).toBeVisible();
  await fillFields(page, fields);
}

/** Opens the "New run" disclosure (presets and options) when a started run collapsed it. */
export async function showRunForm(page: Page): Promise<void> {
  const toggle = page.getByRole('button', { name: /^New run/ });
  if ((await toggle.getAttribute('aria-expanded')) === 'false') await toggle.click();
  await expect(toggle).toHaveAttribute('aria-expanded', 'true');
}

/** Fills form fields by label (label → value), opening the form and each collapsed section that holds one first. */
export async function fillFields(page: Page, fields: Record<string, string | number>): Promise<void> {
  await showRunForm(page);
  for (const [label, value] of Object.entries(fields)) {
    const name = new RegExp(`^${label}`);
    const section = page
      .getByRole('group')
      .filter({ has: page.getByRole('spinbutton', { name, includeHidden: true }) });
    const collapsed = section.getByRole('button', { expanded: false });
    if ((await collapsed.count()) > 0) await collapsed.click();
    await page.getByRole('spinbutton', { name }).fill(String(value));
  }
}

/**
 * Loads a (partial) config JSON into the form through "Import config JSON": the preset's defaults
 * with `config` laid over them (a null empties an option the preset sets), as a person pastes one.
 */
export async function loadConfig(page: Page, config: Record<string, unknown>): Promise<void> {
  await showRunForm(page);
  const box = page.getByRole('textbox', { name: 'Config JSON to load into the form' });
  // The import is a disclosure: open it unless an earlier load left it open.
  if (!(await box.isVisible())) await page.getByText('Import config JSON').click();
  await box.fill(JSON.stringify(config));
  await page.getByRole('button', { name: 'Load into the form' }).click();
  await expect(page.getByTestId(`preset-${String(config.preset)}`)).toHaveAttribute('aria-pressed', 'true');
  for (const [key, value] of Object.entries(config))
    if (typeof value === 'number') await expect(page.getByTestId('config-json')).toContainText(`"${key}": ${value}`);
}

/** The dashboard's "Export metrics (JSON)" file, parsed (app/state/metrics-file.ts). */
export async function exportedMetrics(page: Page): Promise<{
  steps: { step: number; metrics: Record<string, number> }[];
  evals: { step: number; accuracy: number }[];
}> {
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export metrics (JSON)' }).click();
  const chunks = await (await (await download).createReadStream()).toArray();
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/** Starts the real `dewpoint companion` for `origin`; resolves with its printed link once it listens. */
export function startCompanion(origin: string): Promise<{ child: ChildProcess; link: string; token: string }> {
  const child = spawn(
    process.execPath,
    ['bin/dewpoint.mjs', 'companion', '--port', '0', '--workers', '1', '--origin', origin],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const link = out.match(/open the app connected: (\S+)/)?.[1];
      const token = out.match(/token: (\S+)/)?.[1];
      if (link && token) resolve({ child, link, token });
    });
    child.once('exit', (code) =>
      reject(new Error(`the companion exited (${code}) before it printed its link: ${out}`)),
    );
  });
}

/** The files of a stored (method 0) .zip, read by its central directory (PKWARE APPNOTE.TXT 4.3.12, 4.3.16). */
export function unzipStored(zip: Buffer): Map<string, Buffer> {
  const end = zip.length - 22;
  expect(zip.readUInt32LE(end)).toBe(0x06054b50);
  const files = new Map<string, Buffer>();
  let at = zip.readUInt32LE(end + 16);
  for (let i = 0; i < zip.readUInt16LE(end + 10); i++) {
    expect(zip.readUInt32LE(at)).toBe(0x02014b50);
    expect(zip.readUInt16LE(at + 10)).toBe(0); // STORE
    const size = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const bytes = zip.subarray(start, start + size);
    expect(crc32(bytes) >>> 0).toBe(zip.readUInt32LE(at + 16));
    files.set(name, bytes);
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return files;
}
