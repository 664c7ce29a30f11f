import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../kernels/common/random';
import { samplingDistribution } from '../../kernels/sample/distribution.ref';
import { createSampler, Sampler } from './sample';

const logitsOf = (probs: number[]) => probs.map(Math.log);

describe('Sampler: seeded, checkpointable, resumable', () => {
  const dist = samplingDistribution(logitsOf([0.05, 0.15, 0.3, 0.1, 0.4]), { temperature: 0.9, topP: 0.95 });
  const draw = (s: Sampler, n: number) => Array.from({ length: n }, () => s.sample(dist).id);

  it('its uniforms are the mulberry32 stream of the seed', () => {
    const s = createSampler(42);
    const ref = mulberry32(42);
    for (let i = 0; i < 100; i++) expect(s.next()).toBe(ref());
  });

  it('the same seed gives the same ids; another seed gives others', () => {
    const a = draw(createSampler(7), 500);
    expect(draw(createSampler(7), 500)).toEqual(a);
    expect(draw(createSampler(8), 500)).not.toEqual(a);
    expect(new Set(a).size).toBeGreaterThan(1);
  });

  it('state() counts draws, one per token, greedy included', () => {
    const s = createSampler(3);
    expect(s.state()).toEqual({ algorithm: 'mulberry32', seed: 3, draws: 0 });
    draw(s, 10);
    s.sample(samplingDistribution([0, 1], { temperature: 0 }));
    expect(s.state()).toEqual({ algorithm: 'mulberry32', seed: 3, draws: 11 });
  });

  it('fromState resumes exactly where the checkpoint was taken (through JSON)', () => {
    const s = createSampler(1234);
    draw(s, 317);
    const saved = JSON.parse(JSON.stringify(s.state()));
    const rest = draw(s, 400);
    const resumed = Sampler.fromState(saved);
    expect(draw(resumed, 400)).toEqual(rest);
    expect(resumed.state()).toEqual(s.state());
  });

  it('fromState jumps far ahead in O(1) and matches stepping one draw at a time', () => {
    const draws = 123_457;
    const ref = mulberry32(0xdeadbeef);
    for (let i = 0; i < draws; i++) ref();
    const jumped = Sampler.fromState({ algorithm: 'mulberry32', seed: 0xdeadbeef, draws });
    for (let i = 0; i < 20; i++) expect(jumped.next()).toBe(ref());
  });

  it('refuses bad seeds and malformed states, naming the field', () => {
    for (const seed of [-1, 1.5, 2 ** 32, NaN])
      expect(() => createSampler(seed)).toThrow(/seed = .*: expected an integer in \[0, 4294967295\]/);
    expect(() => Sampler.fromState({ algorithm: 'xorshift' as 'mulberry32', seed: 1, draws: 0 })).toThrow(
      /algorithm = xorshift/,
    );
    expect(() => Sampler.fromState({ algorithm: 'mulberry32', seed: -3, draws: 0 })).toThrow(/seed = -3/);
    expect(() => Sampler.fromState({ algorithm: 'mulberry32', seed: 1, draws: -1 })).toThrow(/draws = -1/);
    expect(() => Sampler.fromState({ algorithm: 'mulberry32', seed: 1, draws: 2.5 })).toThrow(/draws = 2\.5/);
  });
});
