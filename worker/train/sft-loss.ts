/**
 * The SFT loss: token-mean negative log-likelihood over the completion ids,
 * L = −Σ_t m_t·logp_t / Σ_t m_t, and its seed for the model's backward pass,
 * ∂L/∂logp_t = −m_t / Σ m (docs/calibration.md "The SFT base": token-mean NLL over completion tokens).
 */
export function sftLoss(
  logp: ArrayLike<number>,
  mask: ArrayLike<number>,
): { loss: number; dlogp: Float32Array; tokens: number } {
  if (logp.length !== mask.length) throw new Error(`sftLoss: logp has ${logp.length} entries, mask ${mask.length}`);
  let tokens = 0;
  let sum = 0;
  for (let i = 0; i < mask.length; i++) {
    if (mask[i]) {
      tokens += mask[i];
      sum += mask[i] * logp[i];
    }
  }
  const dlogp = new Float32Array(mask.length);
  if (tokens === 0) return { loss: 0, dlogp, tokens };
  for (let i = 0; i < mask.length; i++) if (mask[i]) dlogp[i] = -mask[i] / tokens;
  return { loss: -sum / tokens, dlogp, tokens };
}
