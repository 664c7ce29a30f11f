import { expect, test } from '@playwright/test';

test('System view: auto picks wasm over the software adapter, the self-test passes on wasm and on a forced WebGPU', async ({
  page,
}) => {
  const consoleErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  await page.goto('/#/system');
  await expect(page.getByRole('heading', { level: 1, name: 'System' })).toBeVisible();
  await expect(page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'System' })).toHaveAttribute(
    'aria-current',
    'page',
  );

  // Chromium here has SwiftShader only: auto says so and takes the wasm backend.
  await expect(page.getByTestId('backend-name')).toHaveText('wasm');
  await expect(page.getByTestId('backend-reason')).toContainText(/software one \(google\/swiftshader\)/);
  await expect(page.getByTestId('software-adapter')).toBeVisible();
  // COOP/COEP from the server: SharedArrayBuffer, so the wasm kernels run on every core.
  expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  await expect(page.getByTestId('backend-threads')).toHaveText(
    cores > 1 ? ` on ${Math.min(8, cores)} threads` : /on 1 thread/,
  );
  // Chromium has relaxed SIMD (since 114): the worker runs the kernels' fused multiply-add build.
  await expect(page.getByTestId('backend-simd')).toHaveText(', relaxed SIMD (fused multiply-add)');

  await page.getByRole('button', { name: 'Run kernel self-test' }).click();
  await expect(page.getByTestId('selftest-result')).toHaveText(/^passed: 12 matmul cases on wasm/, { timeout: 60_000 });

  // Forcing WebGPU: the choice is kept across a reload, and the GPU kernels pass too.
  await page.getByRole('combobox', { name: 'Backend' }).selectOption('webgpu');
  await expect(page.getByTestId('backend-name')).toHaveText('webgpu');
  await page.reload();
  await expect(page.getByTestId('backend-name')).toHaveText('webgpu');
  await expect(page.getByTestId('backend-reason')).toHaveText('Why: the WebGPU backend was requested.');
  await expect(page.getByTestId('adapter-info')).toContainText(/maxStorageBufferBindingSize/);
  await page.getByRole('button', { name: 'Run kernel self-test' }).click();
  await expect(page.getByTestId('selftest-result')).toHaveText(/^passed/, { timeout: 150_000 });
  await page.getByText('Cases', { exact: true }).click();
  await expect(page.getByRole('row', { name: /matmul_tiled tn 65x17x130/ })).toContainText('passed');
  expect(consoleErrors).toEqual([]);
});
