import { describe, expect, it } from 'vitest';
import { randomArray } from '../common/random';
import { expectClose } from '../testing/expect-close';
import type { AdamWHyper } from './adamw.ref';
import { adamwRef } from './adamw.ref';

const HP: Omit<AdamWHyper, 'step'> = { lr: 0.1, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01 };

describe('adamwRef', () => {
  it('follows a hand-computed two-step trajectory (PyTorch AdamW order: decay, then Adam)', () => {
    // Element 0: param 1, grads 0.5 then −0.25. Element 1: param −2, grad 0 (decay only).
    const param = Float64Array.of(1, -2);
    const m = new Float64Array(2);
    const v = new Float64Array(2);

    adamwRef(param, [0.5, 0], m, v, 2, { ...HP, step: 1 });
    // decay: 1·(1 − 0.1·0.01) = 0.999;  m = 0 + 0.1·(0.5 − 0) = 0.05;  v = 0.001·0.25 = 0.00025
    // step size 0.1 / (1 − 0.9) = 1;  denom = sqrt(0.00025) / sqrt(0.001) + 1e-8 = 0.5 + 1e-8
    // param = 0.999 − 1·0.05 / (0.5 + 1e-8) = 0.999 − 0.099999998 = 0.899000002
    expect(m[0]).toBeCloseTo(0.05, 15);
    expect(v[0]).toBeCloseTo(0.00025, 15);
    expect(param[0]).toBeCloseTo(0.899000002, 12);
    expect(param[1]).toBeCloseTo(-1.998, 15); // −2·0.999; m = v = 0 so the Adam term is 0/eps = 0
    expect([m[1], v[1]]).toEqual([0, 0]);

    adamwRef(param, [-0.25, 0], m, v, 2, { ...HP, step: 2 });
    // decay: 0.899000002·0.999 = 0.898101001998;  m = 0.05 + 0.1·(−0.25 − 0.05) = 0.02
    // v = 0.999·0.00025 + 0.001·0.0625 = 0.00031225
    // step size 0.1 / (1 − 0.81) = 0.526315789473684;  sqrt(0.00031225 / 0.001999) = 0.395225380701667
    // param = 0.898101001998 − 0.526315789473684·0.02 / (0.395225380701667 + 1e-8) = 0.871467298705846
    expect(m[0]).toBeCloseTo(0.02, 15);
    expect(v[0]).toBeCloseTo(0.00031225, 15);
    expect(param[0]).toBeCloseTo(0.871467298705846, 12);
    expect(param[1]).toBeCloseTo(-1.996002, 15); // −1.998·0.999
  });

  it('scales the gradient by a number or by a one-element array, before both moments', () => {
    const n = 9;
    const grad = randomArray(n, 1);
    const run = (g: ArrayLike<number>, scale: number | ArrayLike<number>) => {
      const param = randomArray(n, 2),
        m = randomArray(n, 3, -0.1, 0.1),
        v = randomArray(n, 4, 0, 0.01);
      adamwRef(param, g, m, v, n, { ...HP, step: 3 }, scale);
      return [param, m, v];
    };
    const plain = run(
      grad.map((x) => x * 0.25),
      1,
    );
    for (const [got, label] of [
      [run(grad, 0.25), 'number'],
      [run(grad, [0.25]), 'array'],
    ] as const) {
      got.forEach((x, i) =>
        expectClose(x, plain[i], { atol: 1e-7, rtol: 1e-6, label: `gradScale as ${label}, tensor ${i}` }),
      );
    }
  });

  it('with large t the bias corrections vanish: the step is lr·m/(sqrt(v)+eps) after decay', () => {
    const param = Float64Array.of(3),
      m = Float64Array.of(0.2),
      v = Float64Array.of(0.04);
    adamwRef(param, [0.2], m, v, 1, { ...HP, step: 100000 });
    // m and v are fixed points for g = 0.2; 0.9^1e5 and 0.999^1e5 underflow to 0.
    expect(param[0]).toBeCloseTo(3 * 0.999 - 0.1 * (0.2 / (0.2 + 1e-8)), 12);
  });

  it('refuses bad hyperparameters, naming the field and its range, and short buffers', () => {
    const a = () => new Float32Array(2);
    expect(() => adamwRef(a(), a(), a(), a(), 2, { ...HP, step: 0 })).toThrow(/step must be an integer ≥ 1/);
    expect(() => adamwRef(a(), a(), a(), a(), 2, { ...HP, step: 1, beta2: 1 })).toThrow(/beta2 must be in \[0, 1\)/);
    expect(() => adamwRef(a(), a(), a(), a(), 2, { ...HP, step: 1, lr: -1 })).toThrow(/lr must be a finite number ≥ 0/);
    expect(() => adamwRef(a(), a(), a(), a(), 2, { ...HP, step: 1 }, NaN)).toThrow(/gradScale must be a finite number/);
    expect(() => adamwRef(a(), new Float32Array(1), a(), a(), 2, { ...HP, step: 1 })).toThrow(
      /grad has 1 elements, needs n = 2/,
    );
  });
});
