/**
 * What would fail when a bundle (bundle.ts) arrives on a verl or SkyRL cluster, checked before it
 * leaves: each rule by name, passed, refused with the reason, or a note. A refusal is a check
 * the cluster's own software makes on loading, or a file the bundle cannot carry. Pure: the
 * checkpoint's JSON files in, results out.
 *
 * head-dim-multiple-of-32, its sources: vLLM's FlashAttention backend, its default on the CUDA GPUs
 * verl runs on, listed 32, 64, 96, 128, 160, 192, 224 and 256 (vllm-project/vllm @ 0084b78
 * vllm/v1/attention/backends/flash_attn.py `get_supported_head_sizes`, whose error names
 * FLEX_ATTENTION as the backend that takes every size). Later vLLM declares any multiple of 8 up
 * to 256 (@ 5704f34, `supports_head_size`), but a FlashAttention build compiled without uneven
 * head dims (FLASHATTENTION_DISABLE_UNEVEN_K, which vllm-project/vllm pull request 8910 found in
 * vLLM's own build) stops at run time with "This flash attention build does not support headdim
 * not being a multiple of 32" (reported on vLLM's main branch in modelscope/ms-swift issue 6617).
 * verl b178a3c pins vllm>=0.8.5,<=0.12.0 (setup.py). So head_dim 24 is refused: it fails on
 * arrival with the default backend, unless the cluster sets VLLM_ATTENTION_BACKEND=FLEX_ATTENTION
 * (slower), which the detail says. Not run on a cluster here.
 *
 * What SkyRL refuses besides (NovaSky-AI/SkyRL @ a9564572eb8e91076be43c1bd5e4615e3de17265):
 * skyrl-env, an env_class that nothing registered: `skyrl_gym.make` raises for an id outside its
 * registry (skyrl-gym/skyrl_gym/envs/registration.py), and the bundle's rows name `dewpoint_reward`,
 * which skyrl_env.py registers only where reward.py exists; train-rows, a train file with fewer rows
 * than train_batch_size, which `BasePPOExp.get_train_dataset` asserts against
 * (skyrl/train/entrypoints/main_base.py). verl's own launch is refused by its rules alone.
 */
import type { RunOptions } from '../contract/options';
import type { BundleCheck } from '../contract/records';
import { exportRun } from './index';
import { skyrlCommand, SKYRL_ENV } from './skyrl';
import { twinRewardOf } from './reward-twin';

/** One check (the API's type: contract/records.ts). */
export type PreflightResult = BundleCheck;

/** The JSON files of the bundle's model folder that the rules read (absent: the run saved no model). */
export interface ModelJson {
  config: Record<string, unknown>;
  tokenizer: Record<string, unknown>;
  tokenizerConfig?: Record<string, unknown>;
}

export const PREFLIGHT_RULES = [
  'model-saved',
  'head-dim-multiple-of-32',
  'hf-tokenizer',
  'chat-template',
  'reward-twin',
  'launch',
  'skyrl-env',
  'train-rows',
  'optimizer-state',
  'model-step',
] as const;

/** head_dim of a Hugging Face config: its own field, else hidden_size / num_attention_heads (as transformers derives it). */
export function headDimOf(config: Record<string, unknown>): number {
  const own = config.head_dim;
  if (typeof own === 'number') return own;
  return (config.hidden_size as number) / (config.num_attention_heads as number);
}

export function preflight(
  options: RunOptions,
  model: ModelJson | null,
  to: 'verl' | 'skyrl',
  /** The rows of the bundle's train.parquet, which SkyRL checks against its train_batch_size (absent: not checked). */
  trainRows?: number,
): PreflightResult[] {
  const out: PreflightResult[] = [];
  const put = (rule: (typeof PREFLIGHT_RULES)[number], status: PreflightResult['status'], detail: string) =>
    out.push({ rule, status, detail });
  if (!model) {
    put(
      'model-saved',
      'refused',
      'the run folder has no model/ (runs saved by dewpoint train --save before bundles existed, or a run that ended in an error): ' +
        'set MODEL_PATH to the weights to start from',
    );
  } else {
    put('model-saved', 'pass', 'model/ holds the weights the run ended with, as a Hugging Face folder');
    const h = headDimOf(model.config);
    const fits = h % 32 === 0 && h >= 32 && h <= 256;
    put(
      'head-dim-multiple-of-32',
      fits ? 'pass' : 'refused',
      `head_dim = ${h} (config.json); vLLM's and FlashAttention's attention kernels take 32, 64, 96, 128, 160, 192, 224 or 256, ` +
        (fits
          ? 'and this is one'
          : 'so the rollout engine refuses this model on load (VLLM_ATTENTION_BACKEND=FLEX_ATTENTION takes any size, slower)'),
    );
    const char = model.tokenizer.type === 'char';
    put(
      'hf-tokenizer',
      char ? 'refused' : 'pass',
      char
        ? "tokenizer.json is Dewpoint's character tokenizer, which transformers' AutoTokenizer and vLLM cannot read"
        : 'tokenizer.json is a Hugging Face tokenizer',
    );
    if (!char) {
      const template = model.tokenizerConfig?.chat_template;
      put(
        'chat-template',
        typeof template === 'string' && template.length > 0 ? 'pass' : 'refused',
        typeof template === 'string' && template.length > 0
          ? 'tokenizer_config.json has a chat_template: the prompts (chat lists) are rendered by it there'
          : "tokenizer_config.json has no chat_template: verl's RLHFDataset and SkyRL apply the tokenizer's chat template to every " +
              'prompt (a chat list), and fail without one',
      );
    }
  }
  const twin = twinRewardOf(options);
  put(
    'reward-twin',
    twin.ok ? 'pass' : 'refused',
    twin.ok ? `reward.py is the ${twin.reward.kind} reward's standard-library twin` : twin.reason,
  );
  if (to === 'verl') {
    const e = exportRun(options, 'verl');
    put('launch', e.ok ? 'pass' : 'refused', e.ok ? 'launch.sh: verl main_ppo with the run’s options' : e.reason);
  } else {
    const e = skyrlCommand(options);
    put(
      'launch',
      e.ok ? 'pass' : 'refused',
      e.ok ? 'launch.sh: SkyRL main_base (skyrl_main.py) with the run’s options' : e.reason,
    );
    put(
      'skyrl-env',
      twin.ok ? 'pass' : 'refused',
      twin.ok
        ? `skyrl_env.py registers env_class ${SKYRL_ENV} (the parquet rows' env_class), scoring with reward.py`
        : `the parquet rows name env_class ${SKYRL_ENV}, which skyrl_env.py would register over reward.py; without reward.py ` +
            "nothing registers it and skyrl_gym.make refuses the id: register an environment of that name that scores the run's task",
    );
    if (e.ok && trainRows !== undefined) {
      const P = 'prompts' in options ? options.prompts : 0;
      put(
        'train-rows',
        trainRows >= P ? 'pass' : 'refused',
        `train.parquet has ${trainRows} prompts; SkyRL asserts at least trainer.train_batch_size (${P}) rows before it starts` +
          (trainRows >= P ? '' : ': add prompts to TRAIN_FILES or lower train_batch_size'),
      );
    }
  }
  put(
    'optimizer-state',
    'note',
    "AdamW's moments do not carry over: the cluster's optimizer starts fresh from the bundle's weights",
  );
  return out;
}
