import { describe, expect, it } from 'vitest';
import type { BatchRecord, ImportedRunOptions, RunSummary } from '../../worker/protocol';
import { describeCell } from './batch-cell';
import { noBatchText, noSessionsText } from './import-display';
import { recorded, scaleFor } from './batch-colors';
import { keyParams } from '../shared/runs-table';

/** An imported batch (worker/interop/verl-records.ts): one row, dlogp never recorded, mismatch on one id only. */
const B: BatchRecord = {
  rows: 1,
  width: 3,
  rowsNeeded: 1,
  efficiency: 1,
  tokens: ['#5', '#1', '#2'],
  sessionIds: Int32Array.of(1, 1, 1),
  notPacked: 0,
  layers: {
    segments: Float32Array.of(1, 1, 1),
    responseMask: Float32Array.of(0, 1, 1),
    advantage: Float32Array.of(0, 0.5, 0.5),
    mismatch: Float32Array.of(0, 0.25, NaN),
    dlogp: Float32Array.of(NaN, NaN, NaN),
    version: Float32Array.of(-1, 2, 2),
  },
};

describe('an imported run in the views', () => {
  it('the Batch view lists only layers with a recorded value, and scales over the recorded ones', () => {
    expect(recorded(B.layers.dlogp)).toBe(false);
    expect(recorded(B.layers.mismatch)).toBe(true);
    expect(recorded(undefined)).toBe(false);
    expect(scaleFor('mismatch', B.layers.mismatch)).toEqual({ kind: 'diverging', max: 0.25 });
  });

  it('a cell says "not recorded" for a NaN value, never NaN', () => {
    expect(describeCell(B, 2)).toContain('old − behavior log-prob not recorded · dlogp not recorded');
    expect(describeCell(B, 1)).toContain('old − behavior log-prob +0.25');
  });

  it("the runs table's hyperparameters line names the files, the grouping and where the advantages came from", () => {
    const options: ImportedRunOptions = {
      preset: 'verl-import',
      steps: 4,
      stepNumbers: [3, 4],
      files: [
        { name: '3.jsonl', rows: 4 },
        { name: '4.jsonl', rows: 4 },
      ],
      grouping: 'input',
      advantages: 'recomputed',
      present: ['gts'],
      missing: [],
      format: 'verl',
    };
    const r: RunSummary = { runId: 'verl-x-1', options, createdAt: 0, status: 'imported', lastStep: 4 };
    expect(keyParams(r)).toBe('verl rollouts · 3.jsonl, 4.jsonl · grouped by input · advantages recomputed');
  });
});

describe('what an imported run lacks, in the Groups and Batch views', () => {
  const withoutIds = { present: ['gts'], missing: [] };
  const withIds = { present: ['gts', 'response_ids'], missing: [] };

  it('a dump without token ids keeps no sessions: no inspector to open, and the reason instead', () => {
    expect(noSessionsText(withoutIds)).toBe('none: the dump has no token ids');
    expect(noSessionsText(withIds)).toBeNull();
    expect(noSessionsText(null)).toBeNull();
  });

  it("the Batch view's empty message names the dump's reason for an import, the objective's for a trained run", () => {
    expect(noBatchText(3, withoutIds)).toBe(
      'Step 3 has no stored batch: this imported verl dump has no token ids (response_ids), so there is nothing to pack.',
    );
    expect(noBatchText(3, withoutIds)).not.toContain('DPO');
    const large = {
      ...withIds,
      missing: [{ field: 'batch size', view: 'Batch' as const, cannot: 'no batch for step 3: more than 10 ids' }],
    };
    expect(noBatchText(3, large)).toBe('Step 3 has no stored batch: no batch for step 3: more than 10 ids.');
    expect(noBatchText(1, null)).toBe(
      'Step 1 has no stored batch (only GRPO steps are packed; DPO trains one row per sequence).',
    );
  });
});
