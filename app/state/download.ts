/**
 * Saves text (or bytes) as a file through a temporary object URL and a clicked `<a download>` (the URL is
 * revoked a while later, once the browser has started the download); several files as one .zip
 * (zip.ts), since a browser asks for permission before a page downloads more than one file. Not a
 * file picker.
 */
import { zipStore, type ZipEntry } from './zip';

export function downloadText(name: string, text: string | Uint8Array<ArrayBuffer>, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Saves `files` as one uncompressed archive `name` (a .zip); returns its size in bytes. */
export function downloadZip(name: string, files: readonly ZipEntry[]): number {
  const zip = zipStore(files);
  downloadText(name, zip, 'application/zip');
  return zip.byteLength;
}
