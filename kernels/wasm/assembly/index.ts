export { matmulNtColumnAlign, matmulNtRows, matmulRows, matmulTnPackBytes, matmulTnRows } from './matmul';
export { attentionBackward, attentionDecode, attentionForward, kvScatter } from './attention';
export {
  adamw, add, dropout, fillZero, embeddingBackward, embeddingForward, logprobBackward, logprobForward, rmsnormBackward,
  rmsnormForward, rope, sumSquares, swigluBackward, swigluForward, widenBf16,
} from './elementwise';
export { sampleRows, sampleWorkBytes } from './sample';
export { fdlibmExp, fdlibmExpInPlace, fdlibmLog } from './fdlibm';

/** First byte after the module's static data: the JS allocator hands out memory from here. */
export function heapBase(): usize {
  return __heap_base;
}

/** 1 in the builds with relaxed SIMD (their multiply-adds are fused, vec.ts `madd`), 0 in the plain ones. */
export function fusedMultiplyAdd(): bool {
  return ASC_FEATURE_RELAXED_SIMD;
}
