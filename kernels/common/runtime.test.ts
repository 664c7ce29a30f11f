import { describe, expect, it } from 'vitest';
import { compareClose } from '../testing/expect-close';
import { Arena, planArena } from './arena';
import { acquireGpu, isSoftwareSummary } from './context';
import { Dispatcher } from './dispatcher';
import { nodeGpu } from './node-gpu';
import { createTensor, uploadTensor } from './tensor';

describe('planArena', () => {
  it('starts every tensor at a multiple of the alignment', () => {
    const plan = planArena(
      [
        { name: 'a', length: 3 },
        { name: 'b', length: 100 },
        { name: 'c', length: 0 },
        { name: 'd', length: 1 },
      ],
      256,
    );
    expect(plan.offsets).toEqual([0, 256, 768, 1024]);
    expect(plan.totalBytes).toBe(1040); // 1024 + 4 bytes, rounded up to 16
  });

  it('refuses duplicate names, bad lengths and bad alignments', () => {
    expect(() =>
      planArena(
        [
          { name: 'w', length: 1 },
          { name: 'w', length: 2 },
        ],
        256,
      ),
    ).toThrow(/duplicate tensor name 'w'/);
    expect(() => planArena([{ name: 'w', length: 1.5 }], 256)).toThrow(/'w' length must be a non-negative integer/);
    expect(() => planArena([], 100)).toThrow(/power of two/);
  });
});

describe('compareClose', () => {
  it('reports the max difference, the first bad index and pairs', () => {
    const r = compareClose([1, 2, 3.5, 4], [1, 2, 3, 5], { atol: 0.1, rtol: 0, label: 'x' });
    expect(r.ok).toBe(false);
    expect(r.firstBad).toBe(2);
    expect(r.maxAbsDiff).toBe(1);
    expect(r.message).toMatch(/2\/4 elements.*first bad index 2.*\[2\] 3.5 vs 3/);
    expect(compareClose([NaN], [0], { atol: 1, rtol: 1, label: 'nan' }).ok).toBe(false);
    expect(compareClose([Infinity], [Infinity], { atol: 0, rtol: 0, label: 'inf' }).ok).toBe(true);
  });
});

const acquired = await acquireGpu(await nodeGpu());
if (!acquired.ok && process.env.CI) throw new Error(`CI is set but no WebGPU adapter was found: ${acquired.reason}`);
const ctx = acquired.ok ? acquired.ctx : null;

describe.runIf(ctx)('GPU runtime', () => {
  it('arena views round-trip data at aligned offsets without overlapping', async () => {
    const rt = new Dispatcher(ctx!);
    const arena = new Arena(ctx!, 'test-arena', [
      { name: 'x', length: 5 },
      { name: 'y', length: 70 },
    ]);
    const x = arena.get('x');
    const y = arena.get('y');
    expect(y.offset % ctx!.adapter.limits.minStorageBufferOffsetAlignment).toBe(0);
    uploadTensor(ctx!, x, [1, 2, 3, 4, 5]);
    uploadTensor(
      ctx!,
      y,
      Array.from({ length: 70 }, (_, i) => -i),
    );
    expect([...(await rt.read(x))]).toEqual([1, 2, 3, 4, 5]);
    expect((await rt.read(y))[69]).toBe(-69);
    expect(() => arena.get('z')).toThrow(/has no tensor 'z' \(has: x, y\)/);
    arena.destroy();
  });

  it('reports a shader that does not compile with its label and the line', async () => {
    const rt = new Dispatcher(ctx!);
    const code =
      'struct P { n: u32 }\n@group(0) @binding(0) var<uniform> p: P;\n@compute @workgroup_size(1) fn broken_kernel() { let x: f32 = undefined_thing; }\n';
    await expect(rt.pipelines.compile({ label: 'broken_kernel', code })).rejects.toMatchObject({
      name: 'ShaderCompileError',
      message: expect.stringMatching(/shader 'broken_kernel'[\s\S]*broken_kernel\.wgsl:3:\d+ error: .*undefined_thing/),
    });
  });

  it('uses subgroup kernels where the device has subgroups and is hardware; refuses them without the feature', () => {
    const rt = new Dispatcher(ctx!);
    const has = ctx!.adapter.features.includes('subgroups');
    expect(rt.subgroups).toBe(has && !isSoftwareSummary(ctx!.adapter));
    rt.subgroups = false;
    expect(rt.subgroups).toBe(false);
    if (has) {
      rt.subgroups = true;
      expect(rt.subgroups).toBe(true);
    }
    const bare = new Dispatcher({ ...ctx!, adapter: { ...ctx!.adapter, features: [] } });
    expect(bare.subgroups).toBe(false);
    expect(() => (bare.subgroups = true)).toThrow(/lacks the 'subgroups' feature/);
  });

  it('collects uncaptured validation errors through the always-on listener', async () => {
    const seen: string[] = [];
    ctx!.onError = (e) => seen.push(e.name);
    const before = ctx!.errors.length;
    // Writing past the end of a buffer is a validation error outside any error scope.
    const t = createTensor(ctx!, 'tiny', 1);
    ctx!.device.queue.writeBuffer(t.buffer, 1024, new Float32Array(4));
    await ctx!.device.queue.onSubmittedWorkDone();
    await new Promise((r) => setTimeout(r, 50));
    expect(ctx!.errors.length).toBe(before + 1);
    expect(ctx!.errors.at(-1)!.name).toBe('GpuValidationError');
    expect(seen).toContain('GpuValidationError');
    ctx!.onError = null;
    t.buffer.destroy();
  });

  it('turns a lost device into a named error instead of hanging', async () => {
    const other = await acquireGpu(await nodeGpu());
    if (!other.ok) throw new Error(other.reason);
    const rt = new Dispatcher(other.ctx);
    const t = createTensor(other.ctx, 'doomed', 4);
    other.ctx.device.destroy();
    const lost = await other.ctx.lostPromise;
    expect(lost.name).toBe('GpuDeviceLost');
    await expect(rt.read(t)).rejects.toMatchObject({ name: 'GpuDeviceLost' });
    expect(() => createTensor(other.ctx, 'after', 1)).toThrow(/GPU device lost/);
  });
});
