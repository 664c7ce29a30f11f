/**
 * A Hugging Face `config.json` of the Llama family as a ModelConfig, or every reason it is not one
 * we can run exactly. `LlamaForCausalLM` (model_type `llama`) maps through hf-config.ts
 * `fromHfConfig`; `MistralForCausalLM` (model_type `mistral`) is the same network (transformers'
 * modeling_mistral.py differs from modeling_llama.py only by sliding-window attention), so it is
 * accepted when its window never applies: `sliding_window` null or at least
 * `max_position_embeddings`. Not a general config reader: other architectures are refused by name.
 */
import type { ModelConfig } from '../model/config';
import { fromHfConfig } from '../model/hf-config';
import type { HfProblem } from '../model/hf-errors';
import { HfFolderError } from '../model/hf-errors';

const HF_ARCHITECTURES = { LlamaForCausalLM: 'llama', MistralForCausalLM: 'mistral' } as const;
export type HfArchitecture = keyof typeof HF_ARCHITECTURES;

interface MappedHfConfig {
  config: ModelConfig;
  architecture: HfArchitecture;
  /** What was assumed for an absent field (stated, so the app can show it). */
  notes: string[];
}

/** ModelConfig field → the config.json key it comes from, to name the key in problems. */
const HF_FIELD: Record<string, string> = {
  layers: 'num_hidden_layers',
  dModel: 'hidden_size',
  heads: 'num_attention_heads',
  kvHeads: 'num_key_value_heads',
  ffn: 'intermediate_size',
  vocab: 'vocab_size',
  maxSeq: 'max_position_embeddings',
  ropeTheta: 'rope_theta',
  normEps: 'rms_norm_eps',
};

/** The config as a ModelConfig; throws an HfFolderError listing every problem, each naming its key. */
export function mapHfConfig(json: Record<string, unknown>, file = 'config.json'): MappedHfConfig {
  const problems: HfProblem[] = [];
  const problem = (field: string, detail: string) => problems.push({ file, field, detail });
  const notes: string[] = [];
  const allowed = Object.keys(HF_ARCHITECTURES).join(' or ');
  const archs = json.architectures;
  const architecture =
    Array.isArray(archs) && archs.length === 1 && Object.hasOwn(HF_ARCHITECTURES, archs[0])
      ? (archs[0] as HfArchitecture)
      : null;
  if (architecture === null)
    problem(
      'architectures',
      `got ${JSON.stringify(archs)}; expected exactly one of ${allowed} (other architectures are not this network)`,
    );
  const modelType = architecture ? HF_ARCHITECTURES[architecture] : null;
  if (modelType !== null && json.model_type !== modelType)
    problem('model_type', `got ${JSON.stringify(json.model_type)}; expected '${modelType}' for ${architecture}`);
  if (architecture === 'MistralForCausalLM') {
    const window = json.sliding_window;
    const maxSeq = json.max_position_embeddings;
    if (window != null && !(typeof window === 'number' && typeof maxSeq === 'number' && window >= maxSeq)) {
      problem(
        'sliding_window',
        `got ${JSON.stringify(window)}; expected null or at least max_position_embeddings ` +
          `(${JSON.stringify(maxSeq)}): sliding-window attention is not implemented`,
      );
    }
  }
  if (json.quantization_config != null)
    problem(
      'quantization_config',
      `got ${JSON.stringify(json.quantization_config)}; expected none (quantized weights are not read)`,
    );
  // LlamaConfig and MistralConfig default tie_word_embeddings to false; fromHfConfig (written for
  // this project's own configs, which always carry it) would read an absent key as true.
  let tied = json.tie_word_embeddings;
  if (tied === undefined) {
    tied = false;
    notes.push(
      'tie_word_embeddings is absent: read as false, the LlamaConfig default (lm_head.weight is then required)',
    );
  } else if (typeof tied !== 'boolean')
    problem('tie_word_embeddings', `got ${JSON.stringify(tied)}; expected true or false`);
  for (const [key, fallback] of [
    ['rope_theta', 10000],
    ['rms_norm_eps', 1e-6],
  ] as const) {
    if (json[key] === undefined) notes.push(`${key} is absent: read as ${fallback}, the LlamaConfig default`);
  }
  if (json.num_key_value_heads === undefined) notes.push('num_key_value_heads is absent: read as num_attention_heads');
  const mapped = fromHfConfig({ ...json, architectures: ['LlamaForCausalLM'], tie_word_embeddings: tied === true });
  if (!mapped.ok) for (const p of mapped.problems) problems.push(fromHfProblem(p, file));
  if (problems.length || !mapped.ok) throw new HfFolderError(problems);
  return { config: mapped.config, architecture: architecture!, notes };
}

/** A fromHfConfig/validateModelConfig problem string with the config.json key it is about as the field. */
function fromHfProblem(text: string, file: string): HfProblem {
  const first = /^[A-Za-z_]+/.exec(text)?.[0] ?? '';
  if (text.startsWith('head size')) return { file, field: 'hidden_size / num_attention_heads', detail: text };
  const hf = HF_FIELD[first];
  if (hf) return { file, field: hf, detail: `${text} (ModelConfig.${first} is ${hf})` };
  return { file, field: first || '(config)', detail: text };
}
