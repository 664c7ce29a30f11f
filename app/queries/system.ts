/** Worker reads and actions of the System view, as TanStack Query options. */
import { queryOptions } from '@tanstack/react-query';
import { workbench } from '../worker-client';
import { keys } from './keys';

export const backendInfoQuery = () =>
  queryOptions({
    queryKey: keys.backend(),
    queryFn: () => workbench.init('auto'),
    staleTime: Infinity,
    retry: false,
  });

export const runSelfTest = () => workbench.selfTest();
