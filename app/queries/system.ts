/** Worker reads and actions of the System view, as TanStack Query options. */
import { queryOptions } from '@tanstack/react-query';
import type { BackendPreference } from '../../worker/protocol';
import { workbench } from '../worker-client';
import { keys } from './keys';

export const BACKEND_CHOICES: readonly BackendPreference[] = ['auto', 'webgpu', 'wasm', 'cpu'];
const STORAGE_KEY = 'dewpoint.backend';

/** The backend the person chose in the System view (kept across reloads), `auto` by default. */
export function storedBackendPreference(): BackendPreference {
  try {
    const v = localStorage.getItem(STORAGE_KEY);
    return BACKEND_CHOICES.includes(v as BackendPreference) ? (v as BackendPreference) : 'auto';
  } catch {
    return 'auto'; // storage blocked (privacy settings): the default
  }
}

export function storeBackendPreference(p: BackendPreference): void {
  try {
    localStorage.setItem(STORAGE_KEY, p);
  } catch {
    // storage blocked: the choice holds for this page only
  }
}

export const backendInfoQuery = () =>
  queryOptions({
    queryKey: keys.backend(),
    queryFn: () => workbench.init(storedBackendPreference()),
    staleTime: Infinity,
    retry: false,
  });

export const runSelfTest = () => workbench.selfTest();
