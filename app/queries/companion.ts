/**
 * The companion connection as TanStack Query options. The tab keeps its last successful
 * connection (address and token) in sessionStorage, not on disk; `companionQuery` answers the
 * worker's connection, or reconnects the tab's stored one when the worker has none (after a
 * reload), or null when there is neither.
 */
import { queryOptions } from '@tanstack/react-query';
import type { CompanionStatus } from '../../worker/protocol';
import { workbench } from '../worker-client';
import { keys } from './keys';

const STORAGE_KEY = 'dewpoint.companion';

/** `#/system?companion=URL&token=T` (what the companion prints), or null. */
export function parseCompanionLink(text: string): { url: string; token: string } | null {
  const at = text.indexOf('?');
  if (at < 0) return null;
  const params = new URLSearchParams(text.slice(at + 1));
  const url = params.get('companion');
  const token = params.get('token');
  return url && token ? { url, token } : null;
}

export function storedCompanion(): { url: string; token: string } | null {
  try {
    const v = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as { url?: unknown; token?: unknown } | null;
    return v && typeof v.url === 'string' && typeof v.token === 'string' ? { url: v.url, token: v.token } : null;
  } catch {
    return null;
  }
}

/** Remembers a connection that worked for this tab, or forgets it. */
export function storeCompanion(c: { url: string; token: string } | null): void {
  try {
    if (c) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(c));
    else sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // storage blocked: the connection holds until the page reloads
  }
}

export const companionQuery = () =>
  queryOptions({
    queryKey: keys.companion(),
    queryFn: async (): Promise<CompanionStatus | null> => {
      const now = await workbench.companionStatus();
      if (now) return now;
      // A companion link in the address is the System view's to connect (a newer token than the stored one).
      const last = parseCompanionLink(window.location.hash) ? null : storedCompanion();
      return last ? workbench.connectCompanion(last.url, last.token) : null;
    },
    retry: false,
  });
