/** Test-only: a journal that fails (as a closed tab does) on its (n + 1)-th commit, the first n landing in `journal`. */
import type { JournalRecord } from '../journal';
import { MemoryJournal } from '../journal';

export function failingAfter(journal: MemoryJournal, n: number): MemoryJournal {
  let commits = 0;
  const j = Object.create(journal) as MemoryJournal;
  j.commit = async (records: readonly JournalRecord[]) => {
    if (++commits > n) throw new Error('the tab closed');
    return journal.commit(records);
  };
  return j;
}
