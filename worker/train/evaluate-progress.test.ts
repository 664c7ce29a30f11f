/**
 * An evaluation counts its completions as they finish (issue 40, item 2): the dashboard showed no
 * count through a minute-long evaluation. Through the shipped calc base on the CPU backend, greedy
 * then sampled (pass@k), in batches smaller than the task list.
 */
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { readCheckpointDir } from '../model/node-checkpoint-dir';
import { CALC } from '../episodes/calc';
import { charTokenizer, importCheckpoint } from '../model/checkpoint';
import { Model } from '../model/model';
import { evaluateEpisodes } from './evaluate';

describe('evaluation progress', () => {
  it('reports done / total as episodes finish, across batches and the sampled pass, ending at the total', async () => {
    const base = importCheckpoint(readCheckpointDir('public/checkpoints/calc-base'));
    const model = new Model(createCpuOps(), base.config);
    model.setWeights(base.weights);
    const tok = charTokenizer(base.tokenizer, 'test');
    const tasks = CALC.heldOut(4);
    const seen: [number, number][] = [];
    const sampled = { k: 2, sampling: { temperature: 0.3 } };
    await evaluateEpisodes(model, tok, CALC, tasks, 2, sampled, (done, total) => seen.push([done, total]));
    const total = 4 * (1 + 2);
    expect(seen.every(([, t]) => t === total)).toBe(true);
    expect(seen[0][0]).toBe(0);
    expect(seen.at(-1)![0]).toBe(total);
    // Never backwards, and counts between the start and the end: not 0 then all at once.
    expect(seen.every(([d], i) => i === 0 || d >= seen[i - 1][0])).toBe(true);
    const between = new Set(seen.map(([d]) => d).filter((d) => d > 0 && d < total));
    expect(between.size).toBeGreaterThanOrEqual(3);
  });
});
