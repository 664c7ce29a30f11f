/**
 * The advantage groups of one GRPO step as the Groups view shows them: per (task, group) the
 * prompt, the ground truth and every completion with its reward, components, advantage, status
 * and length; and the packed batch's layers for the Batch view. Pure data from the step's
 * sessions, packed batch, old log-probs and dlogp.
 */
import type { CharTokenizer } from '../data/tokenizer';
import type { BatchRecord, GroupRecord } from '../protocol';
import type { GrpoStep } from '../train/grpo';

export function groupRecords(s: GrpoStep, tok: CharTokenizer): GroupRecord[] {
  const byGroup = new Map<string, GroupRecord>();
  s.sessions.forEach((session, i) => {
    const task = s.tasks.find((t) => t.id === session.task)!;
    let g = byGroup.get(session.group);
    if (!g) {
      g = { group: session.group, prompt: task.prompt, answer: task.answer, rewardMean: 0, rewardStd: 0, zeroStd: false, samples: [] };
      byGroup.set(session.group, g);
    }
    const gen = s.generated[i];
    g.samples.push({
      sample: session.sample,
      completion: tok.decode(gen.sampledIds),
      reward: session.reward ?? 0,
      components: { ...(session.components ?? {}) },
      advantage: s.packed.sessionAdvantages[i],
      status: session.status,
      length: gen.sampledIds.length,
      truncated: gen.finishReason === 'length',
    });
  });
  for (const g of byGroup.values()) {
    const r = g.samples.map((x) => x.reward);
    g.rewardMean = r.reduce((a, b) => a + b, 0) / r.length;
    g.rewardStd = Math.sqrt(r.reduce((a, b) => a + (b - g.rewardMean) ** 2, 0) / r.length);
    g.zeroStd = r.every((x) => x === r[0]);
  }
  return [...byGroup.values()];
}

export function batchRecord(s: GrpoStep, tok: CharTokenizer): BatchRecord {
  const p = s.packed;
  const n = p.rows * p.width;
  const tokens = Array.from(p.inputIds, (id, i) => (p.segmentIds[i] === 0 ? '' : tok.isSpecial(id) ? tok.decode([id], { specials: true }) : tok.decode([id])));
  // Old: the trainer's rescoring before the first update when the step took several, else the sampler's raw log-probs.
  const old = s.oldLogp ?? p.oldLogProbs;
  const mismatch = new Float32Array(n);
  if (old) for (let i = 0; i < n; i++) if (p.responseMask[i]) mismatch[i] = old[i] - p.behaviorLogProbs[i];
  return {
    rows: p.rows, width: p.width, rowsNeeded: p.rowsNeeded, efficiency: p.efficiency, tokens, sessionIds: p.sessionIds.slice(),
    layers: {
      segments: Float32Array.from(p.segmentIds),
      responseMask: Float32Array.from(p.responseMask),
      advantage: Float32Array.from(p.advantages, (a, i) => (p.responseMask[i] ? a : 0)),
      mismatch,
      dlogp: Float32Array.from(s.dlogp),
      version: Float32Array.from(p.versions),
    },
  };
}
