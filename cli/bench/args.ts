/** The flags every bench gets (`dewpoint bench <name> [--json] [--runs N]`, parsed by index.ts). */
export interface BenchArgs {
  json: boolean;
  runs: number | null;
  /** `train --model gpt-ref`: the peer bench's GPT shape instead of the presets. */
  model: string | null;
  /** `grpo --model … --lora`: the LoRA training alone (rank 16, bf16 base), not full fine-tuning beside it. */
  lora: boolean;
}
