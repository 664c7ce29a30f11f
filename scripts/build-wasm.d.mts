export { buildWasm } from '../kernels/wasm/node-build.mjs';
