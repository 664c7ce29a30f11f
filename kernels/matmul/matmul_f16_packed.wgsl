// matmul_f16_packed: the f16 operands of matmul_register_f16 as two f16 to a u32, for devices
// without `shader-f16` (first of the three files the wrapper joins: this, matmul_f16_loads.wgsl
// and matmul_register.wgsl). Core WGSL's unpack2x16float widens a word's two halves to f32
// exactly, so this computes the same products and sums as matmul_f16_native, on any device.
// Formula: a_at(i) = unpack2x16float(a[i / 2])[i % 2] (element 2j the low half of word j), same for b.
// Reference: f16Value and unpackF16 in kernels/f16/f16.ref.ts.
// Bindings:
//   a: (⌈M·K / 2⌉) u32: op(A)'s (M, K), or (K, M) when TRANS_A, f16 values two to a word
//   b: (⌈K·N / 2⌉) u32: op(B)'s (K, N), or (N, K) when TRANS_B, f16 values two to a word

@group(0) @binding(1) var<storage, read> a: array<u32>;
@group(0) @binding(2) var<storage, read> b: array<u32>;

fn a_at(i: u32) -> f32 {
  return unpack2x16float(a[i >> 1u])[i & 1u];
}

fn b_at(i: u32) -> f32 {
  return unpack2x16float(b[i >> 1u])[i & 1u];
}
