/**
 * A Vite plugin that fails the build when a JavaScript file of its output passes a size limit
 * (500 kB by default, Vite's own warning threshold, in kB of 1000 bytes of minified code). Vite only
 * warns, and a warning is easy to miss; this makes a chunk that grows past the limit an error in
 * `vite build` (so in `npm test` and `npm start`). It checks the app's chunks and the files the
 * worker bundles emit into it (the workers are JavaScript assets of the main build). Not a budget
 * for CSS, wasm or source maps. The fix for a chunk over the limit is a split (vite.config.ts), never
 * a higher limit.
 */
import { Buffer } from 'node:buffer';

/** `'name 512.34 kB'` for each JavaScript chunk or asset in `bundle` over `limitKb` kB. */
export function oversizedFiles(bundle, limitKb) {
  return Object.values(bundle).flatMap((f) => {
    if (!f.fileName.endsWith('.js')) return [];
    const bytes = f.type === 'chunk' ? Buffer.byteLength(f.code) : Buffer.byteLength(f.source);
    return bytes / 1000 > limitKb ? [`${f.fileName} ${(bytes / 1000).toFixed(2)} kB`] : [];
  });
}

export function chunkLimit(limitKb = 500) {
  return {
    name: 'dewpoint-chunk-limit',
    apply: 'build',
    // After every plugin (minification included) has run: the sizes the browser downloads.
    enforce: 'post',
    generateBundle(_options, bundle) {
      const over = oversizedFiles(bundle, limitKb);
      if (over.length > 0)
        this.error(
          `JavaScript over ${limitKb} kB: ${over.join(', ')}. Split it (lazy views, output.codeSplitting groups in ` +
            'vite.config.ts) rather than raising the limit.',
        );
    },
  };
}
