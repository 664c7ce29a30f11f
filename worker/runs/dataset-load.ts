/**
 * `loadDataset` (worker/api.ts): a person's prompt file checked against the base it will train
 * from, a model picked in this worker (`modelId`) or the shipped arithmetic base: its vocabulary
 * and positions bound the prompts (worker/data/dataset.ts `parseDataset`).
 */
import { parseDataset } from '../data/dataset';
import type { TextTokenizer } from '../data/tokenizer';
import type { PickedModels } from '../hf/models';
import type { CheckpointFiles } from '../model/checkpoint';
import { checkpointTokenizer } from '../model/checkpoint';
import type { DatasetLoadResult } from '../contract/models';
import type { DatasetRewardOptions } from '../contract/options';
import type { BaseName } from '../presets/table';

export async function loadDatasetFor(
  file: { name: string; bytes: Uint8Array },
  choice: { reward: DatasetRewardOptions; heldOut?: number; modelId?: string },
  models: PickedModels,
  loadBase: (name: BaseName) => Promise<CheckpointFiles>,
): Promise<DatasetLoadResult> {
  let base: { tokenizer: TextTokenizer; maxSeq: number };
  if (choice.modelId !== undefined) {
    const picked = models.tokenizer(choice.modelId);
    if (!picked) {
      const expected = `a model picked in this tab (Use this model); '${choice.modelId}' is no longer in this tab's worker (a reload drops a picked model)`;
      return {
        ok: false,
        problem: { file: file.name, line: null, unit: 'line', field: null, expected },
        message: `${file.name}: not checked against the run's model: ${expected}: pick the model folder again, then load the dataset`,
      };
    }
    base = picked;
  } else {
    const arith = checkpointTokenizer(await loadBase('arith-base'));
    base = { tokenizer: arith.tokenizer, maxSeq: arith.config.maxSeq };
  }
  return parseDataset(file.name, file.bytes, {
    tokenizer: base.tokenizer,
    maxPromptIds: base.maxSeq - 1,
    reward: choice.reward,
    ...(choice.heldOut !== undefined ? { heldOut: choice.heldOut } : {}),
  });
}
