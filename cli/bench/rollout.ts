/**
 * Generated tokens/s of batched sampling with the KV cache and without it (re-scoring the whole
 * prefix every step), in the same run, on the active backend: the small model, `prompts` rows of
 * arithmetic prompts, up to 16 new ids each, temperature 1.
 */
import { encodeExample, heldOut } from '../../worker/data/arith';
import { arithTokenizer } from '../../worker/data/tokenizer';
import { modelPreset } from '../../worker/model/config';
import { Model } from '../../worker/model/model';
import { generate } from '../../worker/rollout/generate';
import { median } from '../../worker/selftest';
import { cliBackend, describeBackend } from '../backend';
import type { BenchArgs } from './args';

const ROWS = 64;
const MAX_NEW = 16;

export async function benchRollout(args: BenchArgs) {
  const runs = args.runs ?? 3;
  const { ops, info } = await cliBackend('auto');
  const tok = arithTokenizer('bare');
  const model = new Model(ops, modelPreset('small', tok.size));
  model.initWeights(1);
  const prompts = heldOut(ROWS).map((t) => encodeExample(tok, t).promptIds);
  const measure = async (useCache: boolean) => {
    await generate(model, prompts.slice(0, 2), { maxNew: 2, eos: tok.eos, seed: 0, useCache }); // warm-up
    const rates: number[] = [];
    for (let r = 0; r < runs; r++) {
      const t0 = performance.now();
      const gens = await generate(model, prompts, { maxNew: MAX_NEW, eos: tok.eos, seed: r, useCache });
      const ids = gens.reduce((n, g) => n + g.sampledIds.length, 0);
      rates.push(ids / ((performance.now() - t0) / 1000));
    }
    return median(rates);
  };
  process.stderr.write('rollout: with KV cache\n');
  const cached = await measure(true);
  process.stderr.write('rollout: without KV cache\n');
  const uncached = await measure(false);
  const json = {
    bench: 'rollout',
    backend: describeBackend(info),
    model: 'small',
    rows: ROWS,
    maxNew: MAX_NEW,
    runs,
    statistic: 'median generated tokens/s',
    kvCache: cached,
    noCache: uncached,
    speedup: cached / uncached,
  };
  const table = [
    `rollout (small model, ${ROWS} rows x up to ${MAX_NEW} new ids, median of ${runs}), ${json.backend}`,
    '| KV cache | tokens/s |',
    '|---|---|',
    `| yes | ${cached.toFixed(1)} |`,
    `| no | ${uncached.toFixed(1)} |`,
    `speed-up with the cache: ${(cached / uncached).toFixed(2)}x`,
  ].join('\n');
  return { table: `${table}\n`, json };
}
