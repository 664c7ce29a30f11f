export { matmulRows, transpose } from './matmul';
export { attentionBackward, attentionDecode, attentionForward } from './attention';
export {
  adamw, add, embeddingBackward, embeddingForward, logprobBackward, logprobForward, rmsnormBackward, rmsnormForward, rope, sumSquares, swigluBackward, swigluForward,
} from './elementwise';

/** First byte after the module's static data: the JS allocator hands out memory from here. */
export function heapBase(): usize {
  return __heap_base;
}
