/**
 * The seeded generator that supplies a rollout's draws: one uniform per sampled id, handed to
 * `Ops.sample` (or to `sampleToken`, kernels/sample/sample.ref.ts, for one distribution).
 *
 * `Sampler` wraps the project's `mulberry32` (kernels/common/random.ts) with a checkpointable
 * state `{ algorithm, seed, draws }`: mulberry32's internal word after n draws is
 * seed + n·0x6d2b79f5 (mod 2³²), so a restored sampler resumes the stream exactly, in O(1).
 * Not the rollout loop (which decides how seeds map to prompts and samples) and not the logits.
 */
import { mulberry32 } from '../../kernels/common/random';
import type { SamplingDistribution } from '../../kernels/sample/distribution.ref';
import type { SampledToken } from '../../kernels/sample/sample.ref';
import { sampleToken } from '../../kernels/sample/sample.ref';

/** A sampler's checkpoint: plain JSON, enough to resume its stream exactly. */
interface SamplerState {
  algorithm: 'mulberry32';
  /** The seed the stream started from, an integer in [0, 2³²). */
  seed: number;
  /** Uniforms drawn so far (one per sampled token). */
  draws: number;
}

const MULBERRY32_INCREMENT = 0x6d2b79f5;
const UINT32_MAX = 0xffffffff;

/** A seeded stream of uniforms with a checkpointable position. Create with `createSampler(seed)`. */
export class Sampler {
  private readonly seed: number;
  private draws: number;
  private readonly rand: () => number;

  private constructor(seed: number, draws: number) {
    this.seed = seed;
    this.draws = draws;
    // mulberry32 adds the increment before each output, so starting from this word continues
    // the stream of `seed` after `draws` outputs (Math.imul is the product mod 2³²).
    this.rand = mulberry32((seed + Math.imul(draws, MULBERRY32_INCREMENT)) >>> 0);
  }

  /** A fresh stream; `seed` is an integer in [0, 2³²). */
  static create(seed: number): Sampler {
    if (!Number.isInteger(seed) || seed < 0 || seed > UINT32_MAX) {
      throw new Error(`createSampler: seed = ${seed}: expected an integer in [0, ${UINT32_MAX}]`);
    }
    return new Sampler(seed, 0);
  }

  /** Resumes the stream a `state()` checkpoint describes; refuses a malformed one. */
  static fromState(state: SamplerState): Sampler {
    if (state == null || state.algorithm !== 'mulberry32') {
      throw new Error(`Sampler.fromState: algorithm = ${state?.algorithm}: expected 'mulberry32'`);
    }
    if (!Number.isInteger(state.seed) || state.seed < 0 || state.seed > UINT32_MAX) {
      throw new Error(`Sampler.fromState: seed = ${state.seed}: expected an integer in [0, ${UINT32_MAX}]`);
    }
    if (!Number.isSafeInteger(state.draws) || state.draws < 0) {
      throw new Error(`Sampler.fromState: draws = ${state.draws}: expected a non-negative safe integer`);
    }
    return new Sampler(state.seed, state.draws);
  }

  /** The next uniform in [0, 1). */
  next(): number {
    this.draws++;
    return this.rand();
  }

  /** One id from `dist` (one draw). */
  sample(dist: Omit<SamplingDistribution, 'filtered'>): SampledToken {
    return sampleToken(dist, () => this.next());
  }

  /** A checkpoint of the current position (a new object each call). */
  state(): SamplerState {
    return { algorithm: 'mulberry32', seed: this.seed, draws: this.draws };
  }
}

/** A seeded sampler starting at the beginning of `seed`'s stream (`Sampler.create`). */
export function createSampler(seed: number): Sampler {
  return Sampler.create(seed);
}
