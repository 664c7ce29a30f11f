/** Matmul operand layouts used by the training step: A·B, A·Bᵀ, Aᵀ·B. */
export type MatmulLayout = 'nn' | 'nt' | 'tn';

/** Kernel choice: `auto` picks by problem size (see matmul.ts). */
export type MatmulVariant = 'auto' | 'naive' | 'tiled' | 'register';

export const MATMUL_LAYOUTS: readonly MatmulLayout[] = ['nn', 'nt', 'tn'];
