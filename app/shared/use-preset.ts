/**
 * A preset's entry as the worker's preset table describes it (family, views, base, dataset,
 * companion): what the views switch on, never a preset's name. Undefined while the presets load
 * and for a run that has no preset (an imported verl run).
 */
import { useQuery } from '@tanstack/react-query';
import type { PresetInfo } from '../../worker/protocol';
import { presetsQuery } from '../queries/experiments';

export function usePreset(name: string | undefined): PresetInfo | undefined {
  const presets = useQuery(presetsQuery());
  return name === undefined ? undefined : presets.data?.find((p) => p.name === name);
}
