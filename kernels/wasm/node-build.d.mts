/** Compiles kernels/wasm/assembly into kernels/wasm/build/ops.wasm and ops-mt.wasm when stale. */
export function buildWasm(options?: { force?: boolean; quiet?: boolean }): Promise<void>;
