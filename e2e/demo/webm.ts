/**
 * A WebM from screencast frames without ffmpeg: Playwright's `recordVideo` needs its own ffmpeg
 * download (`npx playwright install ffmpeg`), which Debian's chromium setup does not have. This
 * replays the JPEG frames onto a canvas in a blank page of the same browser and records the canvas
 * with MediaRecorder (VP8), each frame held for its entry of `frameSchedule`. The result has no
 * duration header (Chrome's MediaRecorder writes none): players show it, seeking may be coarse.
 */
import type { Browser } from '@playwright/test';
import { frameSchedule } from './report';

export interface Frame {
  data: Buffer;
  /** ms */
  timestamp: number;
}

export async function encodeWebm(
  browser: Browser,
  frames: Frame[],
  size: { width: number; height: number },
): Promise<Buffer> {
  if (frames.length === 0) throw new Error('encodeWebm: no screencast frames were captured');
  const durations = frameSchedule(frames.map((f) => f.timestamp));
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.exposeFunction('demoFrame', (i: number) =>
      i < frames.length ? { jpeg: frames[i].data.toString('base64'), ms: durations[i] } : null,
    );
    const webm = await page.evaluate(async ({ width, height }) => {
      const next = (window as unknown as { demoFrame: (i: number) => Promise<{ jpeg: string; ms: number } | null> })
        .demoFrame;
      const canvas = document.createElement('canvas');
      canvas.width = width;
      canvas.height = height;
      document.body.append(canvas);
      const g = canvas.getContext('2d')!;
      const recorder = new MediaRecorder(canvas.captureStream(25), {
        mimeType: 'video/webm;codecs=vp8',
        videoBitsPerSecond: 2_500_000,
      });
      const chunks: Blob[] = [];
      recorder.ondataavailable = (e) => chunks.push(e.data);
      const stopped = new Promise((resolve) => (recorder.onstop = resolve));
      recorder.start(1000);
      for (let i = 0; ; i++) {
        const f = await next(i);
        if (!f) break;
        const bytes = Uint8Array.from(atob(f.jpeg), (c) => c.charCodeAt(0));
        const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/jpeg' }));
        g.drawImage(bitmap, 0, 0, width, height);
        bitmap.close();
        await new Promise((resolve) => setTimeout(resolve, f.ms));
      }
      recorder.stop();
      await stopped;
      const out = new Uint8Array(await new Blob(chunks).arrayBuffer());
      let s = '';
      for (let i = 0; i < out.length; i += 0x8000) s += String.fromCharCode(...out.subarray(i, i + 0x8000));
      return btoa(s);
    }, size);
    const bytes = Buffer.from(webm, 'base64');
    // A WebM opens with the EBML magic; MediaRecorder gives an empty or cut file when it fails.
    if (bytes.length < 1024 || bytes.readUInt32BE(0) !== 0x1a45dfa3)
      throw new Error(`encodeWebm: MediaRecorder gave ${bytes.length} bytes that are not a WebM`);
    return bytes;
  } finally {
    await context.close();
  }
}
