/**
 * A Batch view cell in words, for its tooltip and the live line under the grid: where it is, its
 * token, its session and chain, and each layer's value as a person reads it ("response mask: yes",
 * "advantage +1.500", "padding"), never a raw layer key. Text only: the values are the stored
 * BatchRecord's.
 */
import type { BatchRecord } from '../../worker/protocol';
import { signed } from '../shared/estimate-text';
import { significant } from '../shared/format';

/** 4 significant digits with a sign: +0.0123, −2.5e-5, 0. */
const signedSig = (v: number) =>
  Number.isNaN(v) ? 'not recorded' : v > 0 ? `+${significant(v)}` : v < 0 ? `−${significant(-v)}` : '0';

export function describeCell(b: BatchRecord, i: number): string {
  const row = Math.floor(i / b.width),
    col = i % b.width;
  const at = `row ${row}, column ${col}`;
  if (b.tokens[i] === '' || !b.sessionIds[i]) return `${at}: padding`;
  const L = b.layers;
  const behind = L.staleness && L.staleness[i] >= 0 ? `, ${L.staleness[i]} behind the weights it trained on` : '';
  const version = L.version[i] >= 0 ? `sampled by policy version ${L.version[i]}${behind}` : 'not sampled (prompt)';
  const parts = [`${at}: ${JSON.stringify(b.tokens[i])}`, `session ${b.sessionIds[i]}, chain ${L.segments[i]}`];
  if (L.responseMask[i]) {
    parts.push(
      'response mask: yes (the loss reads it)',
      `advantage ${signed(L.advantage[i])}`,
      `old − behavior log-prob ${signedSig(L.mismatch[i])}`,
      `dlogp ${signedSig(L.dlogp[i])}`,
    );
    if (L.value && L.return) parts.push(`value ${signedSig(L.value[i])}`, `return ${signedSig(L.return[i])}`);
    if (L.isWeight && L.keep) parts.push(`IS weight ${significant(L.isWeight[i])}`, L.keep[i] ? 'kept' : 'rejected');
  } else parts.push('response mask: no (the loss skips it)');
  parts.push(version);
  return parts.join(' · ');
}
