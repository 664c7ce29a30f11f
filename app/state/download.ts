/**
 * Saves text (or bytes) as a file through a temporary object URL and a clicked `<a download>` (the URL is
 * revoked a while later, once the browser has started the download). Not a file picker.
 */
export function downloadText(name: string, text: string | Uint8Array<ArrayBuffer>, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
