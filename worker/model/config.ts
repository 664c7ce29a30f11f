/**
 * Model configuration of the Llama-style decoder (RMSNorm, RoPE, SwiGLU, no biases, optional tied
 * embeddings) and the size presets. Sizes follow docs/calibration.md "Model sizes": a ~100k-parameter model
 * learns 2-digit addition on a CPU adapter in minutes.
 */

export interface ModelConfig {
  /** Number of decoder layers (L). */
  layers: number;
  /** Hidden size (C = d_model). */
  dModel: number;
  /** Attention heads (NH); head size hs = dModel / heads. */
  heads: number;
  /**
   * Key/value heads (NKV, num_key_value_heads): a divisor of `heads`. Each group of heads/kvHeads
   * query heads shares one k/v head (grouped-query attention); kvHeads = heads is multi-head.
   */
  kvHeads: number;
  /** SwiGLU inner size (F), ≈ 8/3 · dModel in Llama. */
  ffn: number;
  /** Vocabulary size (V). */
  vocab: number;
  /** Longest sequence (chain) the model is trained or sampled on (max_position_embeddings). */
  maxSeq: number;
  /** Share the token embedding with the LM head (tie_word_embeddings). */
  tiedEmbeddings: boolean;
  /** RoPE base θ (rope_theta). */
  ropeTheta: number;
  /** RMSNorm epsilon (rms_norm_eps). */
  normEps: number;
}

export type ModelPresetName = 'tiny' | 'small' | 'medium';

/** `tiny`: tests and gradient checks. `small`: the default (d64/2L, docs/calibration.md "Model sizes"). `medium`: a bigger run. */
export function modelPreset(name: ModelPresetName, vocab: number): ModelConfig {
  const base = { vocab, tiedEmbeddings: true, ropeTheta: 10000, normEps: 1e-5 };
  switch (name) {
    case 'tiny':
      return { ...base, layers: 1, dModel: 8, heads: 2, kvHeads: 2, ffn: 12, maxSeq: 32 };
    case 'small':
      return { ...base, layers: 2, dModel: 64, heads: 4, kvHeads: 4, ffn: 176, maxSeq: 64 };
    case 'medium':
      return { ...base, layers: 4, dModel: 128, heads: 4, kvHeads: 4, ffn: 352, maxSeq: 128 };
  }
}

/** Problems with a config, each naming the field and the allowed values; empty when valid. */
export function validateModelConfig(c: ModelConfig): string[] {
  const problems: string[] = [];
  const positiveInt = (field: keyof ModelConfig, v: unknown) => {
    if (!Number.isInteger(v) || (v as number) < 1)
      problems.push(`${field} must be a positive integer, got ${String(v)}`);
  };
  positiveInt('layers', c.layers);
  positiveInt('dModel', c.dModel);
  positiveInt('heads', c.heads);
  positiveInt('kvHeads', c.kvHeads);
  positiveInt('ffn', c.ffn);
  positiveInt('vocab', c.vocab);
  positiveInt('maxSeq', c.maxSeq);
  if (Number.isInteger(c.dModel) && Number.isInteger(c.heads) && c.heads > 0 && c.dModel % c.heads !== 0) {
    problems.push(`dModel (${c.dModel}) must be a multiple of heads (${c.heads})`);
  } else if (c.heads > 0 && (c.dModel / c.heads) % 2 !== 0) {
    problems.push(`head size dModel/heads = ${c.dModel / c.heads} must be even for RoPE`);
  }
  if (
    Number.isInteger(c.heads) &&
    Number.isInteger(c.kvHeads) &&
    c.heads > 0 &&
    c.kvHeads > 0 &&
    c.heads % c.kvHeads !== 0
  ) {
    problems.push(
      `kvHeads (${c.kvHeads}) must divide heads (${c.heads}): each group of heads/kvHeads query heads shares one key/value head`,
    );
  }
  if (!(c.ropeTheta > 0)) problems.push(`ropeTheta must be > 0, got ${c.ropeTheta}`);
  if (!(c.normEps > 0 && c.normEps < 1)) problems.push(`normEps must be in (0, 1), got ${c.normEps}`);
  return problems;
}

export function headSize(c: ModelConfig): number {
  return c.dModel / c.heads;
}

/** Width of the key and value projections: kvHeads · headSize (= dModel without GQA). */
export function kvDim(c: ModelConfig): number {
  return c.kvHeads * headSize(c);
}
