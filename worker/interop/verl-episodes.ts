/**
 * An imported verl run in the Replay view. Replay reads journal records through the run's
 * environment and tokenizer (worker/episodes/views.ts); a verl dump has neither, so no journal is
 * written for it. Instead each stored sample is shown as what it was, a one-turn episode: the task
 * (prompt and ground truth), the completion's text, its reward, and its sampled ids and log-probs
 * when the dump has them. Nothing is made up: no vocabulary (the texts come from the dump), no
 * timings (0), no environment to replay against (`importedReplay` says so). Read from the stored
 * groups and sessions; nothing here writes.
 */
import type { EpisodeDetail, EpisodeSummary, GroupRecord, ReplayResult, SessionRecord } from '../contract/records';

/** verl's synchronous trainer samples step s with the weights after s − 1 updates (the dump does not record it). */
const versionOf = (step: number) => Math.max(0, step - 1);

/** A step's samples as one-turn episodes, group-major (index g · G + s, as sessions are). */
export function importedEpisodeSummaries(groups: readonly GroupRecord[], step: number): EpisodeSummary[] {
  let index = 0;
  return groups.flatMap((g) =>
    g.samples.map((s): EpisodeSummary => ({
      step,
      index: index++,
      group: g.group,
      sample: s.sample,
      task: { id: g.group, prompt: g.prompt, answer: g.answer },
      status: s.truncated ? 'truncated' : 'completed',
      reward: s.reward,
      turns: 1,
      policyVersion: versionOf(step),
      // verl dumps the batch it has just updated on: every sample of it was trained on.
      trained: true,
      groupAborted: false,
      corrupt: false,
      detail: `imported from verl (one turn read from the dump${s.status === 'not recorded' ? '; whether it stopped or was truncated is not recorded' : ''})`,
      resumedTurns: 0,
      ms: 0,
    })),
  );
}

/** One sample as an episode with its one turn: the completion's text, its ids and log-probs when the dump has them; null past the step's samples. */
export function importedEpisodeDetail(
  groups: readonly GroupRecord[],
  sessions: readonly SessionRecord[] | null,
  step: number,
  index: number,
): EpisodeDetail | null {
  const summary = importedEpisodeSummaries(groups, step)[index];
  if (!summary) return null;
  const sample = groups.find((g) => g.group === summary.group)!.samples.find((s) => s.sample === summary.sample)!;
  const calls = sessions?.[index]?.calls ?? [];
  const cat = <T extends Int32Array | Float64Array>(
    make: (n: number) => T,
    part: (c: SessionRecord['calls'][number]) => ArrayLike<number>,
  ): T => {
    const out = make(calls.reduce((n, c) => n + part(c).length, 0));
    let at = 0;
    for (const c of calls) {
      out.set(part(c), at);
      at += part(c).length;
    }
    return out;
  };
  return {
    ...summary,
    initialIds: calls[0]?.promptIds.slice() ?? new Int32Array(0),
    vocab: [],
    turnViews: [
      {
        turn: 1,
        traceId: `verl/${step}/${index}`,
        parentTraceId: null,
        promptIds: null,
        inherited: 0,
        unresolved: 'an imported verl rollout keeps no trace chain; its prompt is the task above',
        action: {
          ids: cat(
            (n) => new Int32Array(n),
            (c) => c.sampledIds,
          ),
          text: sample.completion,
          rawLogProbs: calls.every((c) => c.rawLogProbs)
            ? cat(
                (n) => new Float64Array(n),
                (c) => c.rawLogProbs!,
              )
            : new Float64Array(0),
          behaviorLogProbs: cat(
            (n) => new Float64Array(n),
            (c) => c.behaviorLogProbs,
          ),
          terminated: !sample.truncated,
          policyStep: versionOf(step),
          temperature: NaN,
        },
        observation: { ids: new Int32Array(0), text: '', status: summary.status, reward: sample.reward },
        sampleMs: 0,
        envMs: 0,
        resumed: false,
        checksumOk: true,
      },
    ],
  };
}

/** Replay needs an environment to re-execute against; an imported rollout has none. */
export function importedReplay(): ReplayResult {
  return {
    identical: false,
    summary: 'not replayable: an imported verl rollout keeps no environment to re-execute its actions against',
    turns: [],
  };
}
