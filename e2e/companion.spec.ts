import { spawn, type ChildProcess } from 'node:child_process';
import { expect, test } from '@playwright/test';

/** Starts the real `dewpoint companion` for `origin`; resolves with its printed link once it listens. */
function startCompanion(origin: string): Promise<{ child: ChildProcess; link: string; token: string }> {
  const child = spawn(process.execPath, ['bin/dewpoint.mjs', 'companion', '--port', '0', '--workers', '1', '--origin', origin], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const link = out.match(/open the app connected: (\S+)/)?.[1];
      const token = out.match(/token: (\S+)/)?.[1];
      if (link && token) resolve({ child, link, token });
    });
    child.once('exit', (code) => reject(new Error(`the companion exited (${code}) before it printed its link: ${out}`)));
  });
}

test('System view: the link the companion prints connects the worker, shows its health, and drops the token from the address bar; a wrong token says so', async ({ page }) => {
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
    await expect(health).toContainText(/Network isolation\s*off/);
    expect(page.url()).not.toContain(token);
    expect(new URL(page.url()).hash).toBe('#/system');

    const form = page.getByRole('form', { name: 'Connect to the companion' });
    await form.getByLabel('Token').fill('not-the-token');
    await form.getByRole('button', { name: 'Connect' }).click();
    await expect(page.getByTestId('companion-status')).toHaveText(/^Not connected: the companion refused the token \(wrong token\)/);
  } finally {
    child.kill('SIGTERM');
  }
});
