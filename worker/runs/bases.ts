/**
 * Where a run's model and tokenizer come from: the shipped base checkpoint of its preset
 * (public/checkpoints/NAME, fetched once per name), a person's own model (`base`, kept in this
 * worker by worker/hf/models.ts, or after a reload the run's own checkpoint, which carries it),
 * or, for a preset without a base, its own vocabulary (SFT's task format) or none (Flow-GRPO).
 * Not the run's lifecycle (run-manager.ts) nor its steps (loop.ts).
 */
import type { TokenizerDescription } from '../data/tokenizer';
import { tokenizerFromDescription } from '../data/tokenizer';
import type { CheckpointFiles, CheckpointTokenizer, LoadedCheckpoint } from '../model/checkpoint';
import { checkpointTokenizer, importCheckpoint } from '../model/checkpoint';
import { InvalidConfigError } from '../contract/errors';
import type { BaseModelRunOptions, RunOptions } from '../contract/options';
import { ownTokenizerOf, presetOf, referenceOf, type BaseName } from '../presets/table';
import { modelCheckpointFiles } from '../presets/trainers';
import type { RunStore } from '../store/run-store';

/** A run's own model (`base`), when it has one. */
const pickedBase = (o: RunOptions): BaseModelRunOptions | undefined => ('base' in o ? o.base : undefined);

/** Why a run's own model is not here, in words. */
const notHeld = (b: BaseModelRunOptions) =>
  `the model '${b.name}' (${b.id}) is no longer in this tab's worker (a reload drops a picked model)`;

export class Bases {
  /** Each base checkpoint's tokenizer, read once (absent until asked, or after a failed read). */
  private readonly baseTokenizers = new Map<BaseName, Promise<CheckpointTokenizer>>();
  /** The same for a person's own models, by model id. */
  private readonly pickedTokenizers = new Map<string, Promise<CheckpointTokenizer>>();

  /**
   * `loadBase`: the files of a shipped base checkpoint (fetched by the page's origin in the
   * browser). `pickedModel`: the checkpoint files of a person's own model kept in this worker,
   * by the id a run's `base` names. `store`: for a run's own checkpoints.
   */
  constructor(
    private readonly loadBase: (name: BaseName) => Promise<CheckpointFiles>,
    private readonly pickedModel: (id: string) => CheckpointFiles | undefined,
    private readonly store: RunStore,
  ) {}

  /** Refuses a new run on a person's model this worker no longer holds (a stored one continues from its checkpoints instead). */
  requireHeld(o: RunOptions): void {
    const picked = pickedBase(o);
    if (picked && !this.pickedModel(picked.id))
      throw new InvalidConfigError(
        `base: ${notHeld(picked)}: pick the model folder again (Use this model), then start the run`,
      );
  }

  /**
   * The tokenizer a stored run encodes with, or null when it has none (no tokens: Flow-GRPO): a
   * person's own model's (its `base`) from this worker or the run's checkpoint, else the shipped
   * base checkpoint's (GRPO and DPO start from it and keep its vocabulary), else the preset's
   * own (SFT: its task format's vocabulary). Only the tokenizer files are parsed, not the weights.
   */
  async tokenizerOf(runId: string, o: RunOptions): Promise<CheckpointTokenizer | null> {
    const picked = pickedBase(o);
    if (picked) return this.pickedTokenizer(runId, picked);
    const spec = presetOf(o);
    if (spec.base === null) return ownTokenizerOf(o);
    const base = spec.base;
    let tok = this.baseTokenizers.get(base);
    if (!tok) {
      tok = this.loadBase(base).then((files) =>
        tokenizerFromDescription(JSON.parse(new TextDecoder().decode(files['tokenizer.json'])) as TokenizerDescription),
      );
      this.baseTokenizers.set(base, tok);
    }
    try {
      return await tok;
    } catch (e) {
      this.baseTokenizers.delete(base); // the next call tries again
      throw new Error(
        `could not read the base checkpoint's tokenizer.json (public/checkpoints/${base}): ${(e as Error).message}`,
      );
    }
  }

  /** The tokenizer of run `runId`'s own model: from this worker's copy, else from the run's checkpoint (each carries it). */
  private async pickedTokenizer(runId: string, picked: BaseModelRunOptions): Promise<CheckpointTokenizer> {
    let tok = this.pickedTokenizers.get(picked.id);
    if (!tok) {
      tok = (async () => {
        const files = this.pickedModel(picked.id) ?? (await this.store.latestCheckpoint(runId))?.files;
        if (!files)
          throw new Error(
            `${notHeld(picked)}, and run '${runId}' has no checkpoint of it: pick the model folder again (Use this model)`,
          );
        return checkpointTokenizer(modelCheckpointFiles(files, `run '${runId}'s checkpoint`)).tokenizer;
      })();
      this.pickedTokenizers.set(picked.id, tok);
    }
    try {
      return await tok;
    } catch (e) {
      this.pickedTokenizers.delete(picked.id); // the next call tries again
      throw e;
    }
  }

  /**
   * The checkpoint a run starts from (null for a preset without a base): the shipped one of its
   * preset, or a person's own model (its `base`): this worker's copy, else (after a reload) the
   * run's own checkpoint, which carries the model and its tokenizer. The latter is the base only
   * while it is the step-0 checkpoint or the run has no reference policy (the preset's
   * `reference`: KL β > 0, DPO's reference and pair sampler) and no LoRA: a later checkpoint holds
   * trained weights, and taking them as the reference (or as the base under the adapters) would
   * change the run silently.
   */
  async checkpoint(o: RunOptions, runId: string): Promise<LoadedCheckpoint | null> {
    const spec = presetOf(o);
    if (spec.base === null) return null;
    const picked = pickedBase(o);
    if (!picked) {
      try {
        return importCheckpoint(await this.loadBase(spec.base));
      } catch (e) {
        throw new Error(
          `could not load the base checkpoint (public/checkpoints/${spec.base}): ${(e as Error).message}`,
        );
      }
    }
    const held = this.pickedModel(picked.id);
    const own = held ? null : await this.store.latestCheckpoint(runId);
    if (!held && !own)
      throw new Error(`${notHeld(picked)}: pick the model folder again (Use this model), then start the run`);
    // A LoRA run's checkpoint holds the adapters merged into the base: the base itself is not in it either.
    const reference =
      referenceOf(o) ?? ('loraRank' in o && o.loraRank !== undefined ? 'LoRA trains adapters on the base' : null);
    if (own && own.step > 0 && reference) {
      throw new Error(
        `${notHeld(picked)}, and ${reference}, which the run's checkpoint at step ${own.step} no longer ` +
          `holds (it has the trained weights): pick the model folder again (Use this model), then continue`,
      );
    }
    try {
      return importCheckpoint(held ?? modelCheckpointFiles(own!.files, 'it'));
    } catch (e) {
      throw new Error(
        `could not read the model '${picked.name}' (${held ? "this worker's copy" : `the run's checkpoint at step ${own!.step}`}): ${(e as Error).message}`,
      );
    }
  }
}
