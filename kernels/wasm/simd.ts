/**
 * Which build of the wasm kernels an engine runs (kernels/wasm/node-build.mjs builds both): the
 * relaxed-SIMD one (fused multiply-adds, about a quarter faster on this project's matmuls) where
 * the engine validates relaxed SIMD (Chrome ≥ 114; Node 20 only behind V8's
 * --experimental-wasm-relaxed-simd, which bin/dewpoint.mjs turns on), else the plain one.
 * No host imports: the browser workers and Node use it alike.
 */
import type { WasmSimd } from '../backends/info';

/** `(func (result v128) (f32x4.relaxed_madd (v128.const 0) (v128.const 0) (v128.const 0)))`, a module's bytes. */
function probe(): Uint8Array {
  const v128Const = [0xfd, 0x0c, ...new Array<number>(16).fill(0)];
  const body = [0x00, ...v128Const, ...v128Const, ...v128Const, 0xfd, 0x85, 0x02, 0x0b];
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...[0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b], // type: () → v128
    ...[0x03, 0x02, 0x01, 0x00], // function 0 of type 0
    ...[0x0a, body.length + 2, 0x01, body.length, ...body], // its code
  ]);
}

/** Whether this engine has relaxed SIMD (f32x4.relaxed_madd validates). */
export function relaxedSimdAvailable(): boolean {
  // kernels/ is built without DOM or Node types (see backends/wasm.ts WA).
  const api = (globalThis as unknown as { WebAssembly?: { validate(bytes: Uint8Array): boolean } }).WebAssembly;
  return !!api && api.validate(probe());
}

/** The build to run here: relaxed where the engine has it. */
export function defaultWasmSimd(): WasmSimd {
  return relaxedSimdAvailable() ? 'relaxed' : 'plain';
}
