// matmul_f16_native: the f16 operands of matmul_register_f16 as WGSL f16 storage, for devices with
// the `shader-f16` feature (first of the three files the wrapper joins: this, matmul_f16_loads.wgsl
// and matmul_register.wgsl). Storage only: each element is widened to f32 when loaded, so the
// kernel multiplies and accumulates in f32 (f16 halves the operands' memory and bandwidth).
// Formula: a_at(i) = f32(a[i]), b_at(i) = f32(b[i]) (exact).
// Reference: f16Value in kernels/f16/f16.ref.ts.
// Bindings (an array<f16> has the bytes of two-f16-per-word packing, element 2j the low half):
//   a: (M, K) f16, or (K, M) when TRANS_A
//   b: (K, N) f16, or (N, K) when TRANS_B

enable f16;

@group(0) @binding(1) var<storage, read> a: array<f16>;
@group(0) @binding(2) var<storage, read> b: array<f16>;

fn a_at(i: u32) -> f32 {
  return f32(a[i]);
}

fn b_at(i: u32) -> f32 {
  return f32(b[i]);
}
