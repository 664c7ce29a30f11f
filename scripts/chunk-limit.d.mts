import type { Plugin } from 'vite';

export function oversizedFiles(
  bundle: Record<string, { fileName: string; type: 'chunk' | 'asset'; code?: string; source?: string | Uint8Array }>,
  limitKb: number,
): string[];
export function chunkLimit(limitKb?: number): Plugin;
