import { expect, test } from '@playwright/test';

test('System view: the worker runs on WebGPU and the kernel self-test passes', async ({ page }) => {
  const consoleErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  await page.goto('/#/system');
  await expect(page.getByRole('heading', { level: 1, name: 'System' })).toBeVisible();
  await expect(page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'System' })).toHaveAttribute('aria-current', 'page');

  await expect(page.getByTestId('backend-name')).toHaveText('webgpu');
  await expect(page.getByTestId('adapter-info')).toContainText(/maxStorageBufferBindingSize/);

  await page.getByRole('button', { name: 'Run kernel self-test' }).click();
  await expect(page.getByTestId('selftest-result')).toHaveText(/^passed/, { timeout: 150_000 });
  await page.getByText('Cases', { exact: true }).click();
  await expect(page.getByRole('row', { name: /matmul_tiled tn 65x17x130/ })).toContainText('passed');
  expect(consoleErrors).toEqual([]);
});
