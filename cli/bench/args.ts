/** The flags every bench gets (`dewpoint bench <name> [--json] [--runs N]`, parsed by index.ts). */
export interface BenchArgs {
  json: boolean;
  runs: number | null;
  /** `train --model gpt-ref`: the peer bench's GPT shape instead of the presets. */
  model: string | null;
  /** `grpo --model … --lora`: the LoRA training alone (rank 16, bf16 base), not full fine-tuning beside it. */
  lora: boolean;
  /** `gpu --quick`: sizes small enough for a software adapter. */
  quick: boolean;
  /** `grpo`: the wasm thread counts to measure, in order ('auto': this machine's cores, as `--backend wasm` gets); null: auto, then 1. */
  threads: (number | 'auto')[] | null;
}
