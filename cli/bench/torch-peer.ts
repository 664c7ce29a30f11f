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
      /** The BLAS shared objects torch had mapped (real paths). */
      blas: string[];
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
        `PyTorch is not importable by ${PYTHON} (${probe.error?.message ?? lastLines(probe.stderr, 1)}): ` +
        'on Debian, apt install python3-torch libopenblas0-pthread',
    };
  const script = fileURLToPath(new URL('./torch_step.py', import.meta.url));
  const blas = spawnSync(PYTHON, [script, '--blas'], { encoding: 'utf8' });
  if (blas.error || blas.status !== 0)
    return { ran: false, why: `torch_step.py --blas failed: ${blas.error?.message ?? lastLines(blas.stderr, 3)}` };
  const why = referenceBlasWhy((JSON.parse(blas.stdout.trim().split('\n').at(-1)!) as { blas: string[] }).blas);
  if (why) return { ran: false, why };
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
      why: `torch_step.py failed: ${run.error?.message ?? lastLines(run.stderr, 3)}`,
    };
  const out = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as {
    impl: string;
    threads: number;
    blas: string[];
    sample_s: number;
    train_s: number;
    step_s: number;
    peak_rss_mb: number;
  };
  return {
    ran: true,
    impl: out.impl,
    threads: out.threads,
    blas: out.blas,
    sampleS: out.sample_s,
    trainS: out.train_s,
    stepS: out.step_s,
    peakRssMb: out.peak_rss_mb,
  };
}

const lastLines = (text: string, n: number) => text.trim().split('\n').slice(-n).join(' ');

/**
 * Why a peer that multiplies with the reference BLAS (Debian's libblas3, a plain triple loop,
 * ~10× slower than OpenBLAS on this CPU) gives no ratio worth printing, or null. Debian's torch
 * links libblas.so.3 and takes whichever alternative is installed; the reference one lives in
 * `.../blas/`, OpenBLAS in `.../openblas-pthread/`.
 */
export function referenceBlasWhy(blas: string[]): string | null {
  const reference = blas.filter((path) => /\/blas\/libblas\.so/.test(path));
  if (reference.length === 0 || reference.length < blas.length) return null;
  return (
    `PyTorch multiplies with the reference BLAS (${reference.join(', ')}), ~10x slower than OpenBLAS, ` +
    'so its times would flatter Dewpoint: on Debian, apt install libopenblas0-pthread'
  );
}
