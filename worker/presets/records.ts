/**
 * The advantage groups of one GRPO step as the Groups view shows them: per (task, group) the
 * prompt, the ground truth and every completion with its reward, components, advantage, status
 * and length, and the estimator's working (its resolved settings, the baseline and the std it
 * divided by, as pack computed them: `PackedBatch.advantageDetails`); and the
 * packed batch's layers for the Batch view. Pure data from the step's sessions, packed batch, old
 * log-probs and dlogp. A DPO step's pairs as groups of two, with margin and per-pair loss, and as
 * sessions (`pairRecords`, `pairSessions`).
 */
import type { TextTokenizer } from '../data/tokenizer';
import type { BatchRecord, GroupRecord, GroupSample, SessionCritic } from '../contract/records';
import type { PackedAdvantageDetails } from '../rl/pack-types';
import type { Session } from '../rl/types';
import type { DpoRunOptions } from '../contract/options';
import type { DpoStep, Pair } from '../train/dpo';
import type { GrpoStep } from '../train/grpo';
import type { EpisodeStep } from '../train/grpo-episodes';
import { TURN_SEPARATOR } from '../episodes/environment';

/** A sample's completion as the Groups view shows it: one call's text (single-turn) or the episode's turns. */
function completionOf(
  s: GrpoStep | EpisodeStep,
  i: number,
  tok: TextTokenizer,
): Pick<GroupSample, 'completion' | 'length' | 'truncated' | 'turns' | 'episode'> {
  if ('episodes' in s) {
    const e = s.episodes[i];
    const turns = e.episode.transitions.map((t) => {
      const tokens = Array.from(t.action.tokens).slice(0, t.action.terminated ? -1 : undefined);
      const obs = Array.from(t.observation.context).slice(t.action.context.length + t.action.tokens.length);
      return {
        action: tok.decode(tokens),
        observation: tok.decode(obs),
        ...(t.observation.detail ? { detail: t.observation.detail } : {}),
        ...(t.observation.cases ? { cases: t.observation.cases.map((c) => ({ ...c })) } : {}),
      };
    });
    const length = e.episode.transitions.reduce((n, t) => n + t.action.tokens.length, 0);
    return {
      completion: e.transcript.replace(/\n/g, TURN_SEPARATOR),
      length,
      truncated: e.episode.status === 'truncated',
      turns,
      episode: e.index,
    };
  }
  const gen = s.generated[i];
  return {
    completion: tok.decode(gen.sampledIds),
    length: gen.sampledIds.length,
    truncated: gen.finishReason === 'length',
  };
}

export function groupRecords(s: GrpoStep | EpisodeStep, tok: TextTokenizer): GroupRecord[] {
  const byGroup = new Map<string, GroupRecord>();
  // Step `step` trains on version step − 1: a sample served under an older one trails it (sampled ahead).
  const lagging = s.sessions.some((x) => x.calls.some((c) => c.version < s.step - 1));
  s.sessions.forEach((session, i) => {
    const task = s.tasks.find((t) => t.id === session.task)!;
    let g = byGroup.get(session.group);
    if (!g) {
      g = {
        group: session.group,
        prompt: task.prompt,
        answer: task.answer,
        rewardMean: 0,
        rewardStd: 0,
        zeroStd: false,
        samples: [],
      };
      byGroup.set(session.group, g);
    }
    const critic = session.critic && session.critic.advantages.length > 0 ? criticSummary(session.critic) : null;
    const version = Math.min(...session.calls.map((c) => c.version));
    g.samples.push({
      sample: session.sample,
      reward: session.reward ?? 0,
      components: { ...(session.components ?? {}) },
      // PPO has no session advantage: its tokens' GAE advantages are summarised by their mean.
      advantage: critic ? critic.advantageMean : s.packed.sessionAdvantages[i],
      status: session.status,
      ...completionOf(s, i, tok),
      ...(critic ? { critic } : {}),
      ...(lagging ? { served: { version, staleness: s.step - 1 - version } } : {}),
    });
  });
  for (const g of byGroup.values()) {
    const r = g.samples.map((x) => x.reward);
    g.rewardMean = r.reduce((a, b) => a + b, 0) / r.length;
    g.rewardStd = Math.sqrt(r.reduce((a, b) => a + (b - g.rewardMean) ** 2, 0) / r.length);
    g.zeroStd = r.every((x) => x === r[0]);
  }
  // Under a critic (PPO) no outcome estimator ran: there is no group estimate to explain.
  if (s.packed.advantageDetails) explain(s.sessions, byGroup, s.packed.advantageDetails);
  return [...byGroup.values()];
}

function criticSummary(c: SessionCritic): NonNullable<GroupSample['critic']> {
  const a = c.advantages;
  return {
    value: c.values[0],
    return: c.returns[0],
    advantageMean: a.reduce((x, y) => x + y, 0) / a.length,
    advantageMin: Math.min(...a),
    advantageMax: Math.max(...a),
  };
}

/**
 * Fills each group's `estimate` and its trained samples' `baseline` from the estimator's working
 * as pack ran it (worker/rl/pack.ts `advantageDetails`: the trained sessions, keyed by (task,
 * group), with their sampled-id counts), so the view shows the σ the advantages were divided by.
 */
function explain(sessions: readonly Session[], byGroup: Map<string, GroupRecord>, d: PackedAdvantageDetails): void {
  for (const gd of d.groups) {
    const g = byGroup.get(sessions[gd.members[0]].group)!;
    g.estimate = {
      estimator: d.estimator,
      settings: d.settings,
      members: gd.members.length,
      baseline: gd.baseline,
      std: gd.std,
      divisor: gd.divisor,
      zero: gd.zero,
      batch: d.batch,
    };
    for (const i of gd.members) {
      const sample = g.samples.find((x) => x.sample === sessions[i].sample);
      if (sample) sample.baseline = d.baselines[i];
    }
  }
}

export function batchRecord(
  s: Pick<GrpoStep, 'step' | 'packed' | 'oldLogp' | 'dlogp' | 'corrections'> & {
    values?: Float64Array;
    returns?: Float64Array;
  },
  tok: TextTokenizer,
): BatchRecord {
  const p = s.packed;
  const n = p.rows * p.width;
  // Batch `step` trains on version step − 1: a sampled id's staleness is how many versions its call trails that.
  const staleness = Float32Array.from(p.versions, (v) => (v >= 0 ? s.step - 1 - v : -1));
  const tokens = Array.from(p.inputIds, (id, i) =>
    p.segmentIds[i] === 0 ? '' : tok.isSpecial(id) ? tok.decode([id], { specials: true }) : tok.decode([id]),
  );
  // Old: the trainer's rescoring before the first update when the step took several, else the sampler's raw log-probs.
  const old = s.oldLogp ?? p.oldLogProbs;
  const mismatch = new Float32Array(n);
  if (old) for (let i = 0; i < n; i++) if (p.responseMask[i]) mismatch[i] = old[i] - p.behaviorLogProbs[i];
  return {
    rows: p.rows,
    width: p.width,
    rowsNeeded: p.rowsNeeded,
    efficiency: p.efficiency,
    tokens,
    sessionIds: p.sessionIds.slice(),
    notPacked: p.metrics['sessions/not_packed'] ?? 0,
    layers: {
      segments: Float32Array.from(p.segmentIds),
      responseMask: Float32Array.from(p.responseMask),
      advantage: Float32Array.from(p.advantages, (a, i) => (p.responseMask[i] ? a : 0)),
      mismatch,
      dlogp: Float32Array.from(s.dlogp),
      version: Float32Array.from(p.versions),
      ...(s.values && s.returns
        ? { value: onMask(s.values, p.responseMask), return: onMask(s.returns, p.responseMask) }
        : {}),
      ...(s.corrections
        ? { isWeight: onMask(s.corrections.weights, p.responseMask), keep: onMask(s.corrections.keep, p.responseMask) }
        : {}),
      ...(staleness.some((v) => v > 0) ? { staleness } : {}),
    },
  };
}

const onMask = (a: ArrayLike<number>, mask: ArrayLike<number>) => Float32Array.from(a, (v, i) => (mask[i] ? v : 0));

/** The group key of a step's i-th pair (a problem may come twice in one step). */
const pairGroup = (p: Pair, i: number) => `pair ${i + 1}: ${p.task.id}`;

/**
 * A DPO step's pairs as the Groups view shows them: chosen (sample 0) and rejected (1), with their
 * implicit rewards, the margin (chosen − rejected; ranked correctly when > 0, TRL
 * `rewards/accuracies`), the loss variant's value for the pair (`dpoLoss` `pairLosses`) and the
 * reward each completion was chosen by, as the step carries it.
 */
export function pairRecords(
  s: DpoStep,
  tok: TextTokenizer,
  config: Pick<DpoRunOptions, 'loss' | 'beta'>,
): GroupRecord[] {
  return s.pairs.map((p, i) => {
    const samples = ([p.chosen, p.rejected] as const).map((ids, k) => {
      const r = k === 0 ? s.rewards[i].chosen : s.rewards[i].rejected;
      return {
        sample: k,
        completion: tok.decode(ids),
        reward: r.score,
        components: r.components,
        advantage: s.implicitRewards[2 * i + k],
        status: k === 0 ? 'chosen' : 'rejected',
        length: ids.length,
        truncated: false,
      };
    });
    const mean = (samples[0].reward + samples[1].reward) / 2;
    const std = Math.abs(samples[0].reward - samples[1].reward) / 2;
    const [chosen, rejected] = [s.implicitRewards[2 * i], s.implicitRewards[2 * i + 1]];
    const pair = {
      margin: chosen - rejected,
      rankedCorrectly: chosen > rejected,
      loss: s.pairLosses[i],
      lossType: config.loss.type,
      beta: config.beta,
    };
    return {
      kind: 'dpo-pair',
      group: pairGroup(p, i),
      prompt: p.task.prompt,
      answer: p.task.answer,
      rewardMean: mean,
      rewardStd: std,
      zeroStd: std === 0,
      samples,
      pair,
    };
  });
}

/**
 * A DPO step's pairs as sessions, with the rewards the step carries (those they were chosen by):
 * per pair the chosen (sample 0) and the rejected (sample 1) completion, each one call of the
 * frozen base's sampler (version 0) with its log-probs. Pairs a checkpoint kept without their
 * calls give none.
 */
export function pairSessions(s: DpoStep): Session[] {
  return s.pairs.flatMap((p, i) => {
    if (!p.calls) return [];
    return ([p.calls.chosen, p.calls.rejected] as const).map((g, k) => {
      const r = k === 0 ? s.rewards[i].chosen : s.rewards[i].rejected;
      return {
        task: p.task.id,
        group: pairGroup(p, i),
        sample: k,
        attempt: 0,
        calls: [
          {
            promptIds: g.promptIds,
            sampledIds: g.sampledIds,
            behaviorLogProbs: g.behaviorLogProbs,
            rawLogProbs: g.rawLogProbs,
            finishReason: g.finishReason,
            version: 0,
          },
        ],
        status: 'completed' as const,
        reward: r.score,
        components: r.components,
        detail: r.detail,
      };
    });
  });
}
