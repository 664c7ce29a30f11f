/** Advantage groups for the reads' and the audit's tests: samples with only what those read (reward, length, components). */
import type { GroupRecord, GroupSample } from '../../contract/records';

/** A completed sample of a group with its reward, its length in ids and its reward's components. */
export const groupSample = (
  reward: number,
  length: number,
  components: Record<string, number> = {},
  i = 0,
): GroupSample => ({
  sample: i,
  completion: '',
  reward,
  components,
  advantage: 0,
  status: 'completed',
  length,
  truncated: false,
});

/** A group of `samples` (of `kind`: absent, an advantage group). */
export const groupOf = (samples: GroupSample[], kind?: GroupRecord['kind']): GroupRecord => ({
  ...(kind ? { kind } : {}),
  group: 'g',
  prompt: '1+2=',
  answer: '3',
  rewardMean: 0,
  rewardStd: 0,
  zeroStd: false,
  samples,
});
