/**
 * PyTorch beside `bench grpo --model`: the same step (cli/bench/torch_step.py: random weights of
 * the same shape, the same prompts × samples, prompt length and new ids, KV-cache sampling, then
 * forward, backward, clip and AdamW over every parameter) on the same CPU with the same thread
 * count, run right after Dewpoint's rows in the same command, so that the ratio compares two
 * measurements of one moment of the machine. Runs when `/usr/bin/python3 -c "import torch"` works;
 * otherwise says why (the JSON's `peer.ran` false), never a figure from elsewhere.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ModelConfig } from '../../worker/model/config';

const PYTHON = '/usr/bin/python3';

export type TorchPeer =
  | {
      ran: true;
      impl: string;
      threads: number;
      sampleS: number;
      trainS: number;
      stepS: number;
      peakRssMb: number;
    }
  | { ran: false; why: string };

/** The step: the shape, the batch (sequences = prompts × group) and the timed steps after one warm-up. */
export interface PeerStep {
  prompts: number;
  group: number;
  promptLen: number;
  newTokens: number;
  threads: number;
  steps: number;
}

export function torchPeer(c: ModelConfig, s: PeerStep, timeoutMs = 3_600_000): TorchPeer {
  const probe = spawnSync(PYTHON, ['-c', 'import torch'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0)
    return {
      ran: false,
      why:
        `PyTorch is not importable by ${PYTHON} (${probe.error?.message ?? probe.stderr.trim().split('\n').at(-1)}): ` +
        'on Debian, apt install python3-torch libopenblas0-pthread',
    };
  const script = fileURLToPath(new URL('./torch_step.py', import.meta.url));
  const args = [
    ['--layers', c.layers],
    ['--hidden', c.dModel],
    ['--heads', c.heads],
    ['--kv-heads', c.kvHeads],
    ['--ffn', c.ffn],
    ['--vocab', c.vocab],
    ['--prompts', s.prompts],
    ['--group', s.group],
    ['--prompt-len', s.promptLen],
    ['--new-tokens', s.newTokens],
    ['--steps', s.steps],
    ['--threads', s.threads],
  ].flatMap(([k, v]) => [String(k), String(v)]);
  const run = spawnSync(PYTHON, [script, ...args], { encoding: 'utf8', timeout: timeoutMs });
  if (run.error || run.status !== 0)
    return {
      ran: false,
      why: `torch_step.py failed: ${run.error?.message ?? run.stderr.trim().split('\n').slice(-3).join(' ')}`,
    };
  const out = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as {
    impl: string;
    threads: number;
    sample_s: number;
    train_s: number;
    step_s: number;
    peak_rss_mb: number;
  };
  return {
    ran: true,
    impl: out.impl,
    threads: out.threads,
    sampleS: out.sample_s,
    trainS: out.train_s,
    stepS: out.step_s,
    peakRssMb: out.peak_rss_mb,
  };
}
