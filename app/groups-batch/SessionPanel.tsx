/**
 * The session inspector: one stored GRPO session exactly as it was sampled and as the trainer saw
 * it. Its task, group, sample, status, reward and components, then per model call a token table:
 * the prompt ids (marked as prompt), then per sampled id its behavior log-prob (the sampling
 * distribution, after temperature / top-k / top-p), its raw log-prob (the unmodified model, the
 * trainer's old log-prob), raw − behavior (the Batch view's mismatch layer) and exp(behavior).
 * Token texts come from the run's tokenizer in the worker. A DPO pair's completion (`kind:
 * 'dpo-pair'`) reads as the chosen or rejected completion of its pair. A session of a step with
 * journaled multi-turn episodes links to its episode in the Replay view. Not an editor, and not
 * the packed batch.
 */
import { CaseTable } from './CodeCases';
import { useQuery } from '@tanstack/react-query';
import { useId } from 'react';
import type { GroupRecord, SessionRecord, StoredCall } from '../../worker/protocol';
import { episodeStepsQuery, episodesAtQuery } from '../queries/episodes';
import { sessionsAtQuery, tokenTextsQuery } from '../queries/groups';
import { formatEpisodeLink } from '../shared/episodes';

/** Which session of the step: its index in the step (the Batch view's session id − 1), or its group and sample. */
export type SessionRef = { index: number } | { group: string; sample: number };

const fmt = (x: number) => x.toFixed(4);

/** DPO sessions: sample 0 is the pair's chosen completion, 1 its rejected one. */
const ROLE = ['chosen', 'rejected'];

function findSession(sessions: SessionRecord[], at: SessionRef): number {
  return 'index' in at
    ? at.index >= 0 && at.index < sessions.length
      ? at.index
      : -1
    : sessions.findIndex((s) => s.group === at.group && s.sample === at.sample);
}

/** PPO's figures of one call's sampled ids: the critic's value at rollout, the return target and the GAE advantage. */
type CallCritic = { values: number[]; returns: number[]; advantages: number[] };

function CallTable({
  runId,
  call,
  n,
  of,
  critic,
}: {
  runId: string;
  call: StoredCall;
  n: number;
  of: number;
  critic: CallCritic | null;
}) {
  const ids = new Int32Array(call.promptIds.length + call.sampledIds.length);
  ids.set(call.promptIds);
  ids.set(call.sampledIds, call.promptIds.length);
  const texts = useQuery(tokenTextsQuery(runId, ids));
  const P = call.promptIds.length;
  const text = (i: number) => (texts.data ? JSON.stringify(texts.data[i]) : texts.isError ? '?' : '…');
  const raw = call.rawLogProbs;
  let sumBehavior = 0,
    sumRaw = 0;
  for (let j = 0; j < call.sampledIds.length; j++) {
    sumBehavior += call.behaviorLogProbs[j];
    if (raw) sumRaw += raw[j];
  }
  return (
    <table className="session-tokens">
      <caption>
        Call {n} of {of}: {P} prompt ids, {call.sampledIds.length} sampled ids; finish reason {call.finishReason};
        policy version {call.version}
        {texts.isError && <span className="bad"> · token texts unavailable: {texts.error.message}</span>}
      </caption>
      <thead>
        <tr>
          <th scope="col">Position</th>
          <th scope="col">Id</th>
          <th scope="col">Token</th>
          <th scope="col">Kind</th>
          <th scope="col" className="num">
            Behavior log-prob
          </th>
          <th scope="col" className="num">
            Raw log-prob
          </th>
          <th scope="col" className="num">
            Raw − behavior
          </th>
          <th scope="col" className="num">
            Probability exp(behavior)
          </th>
          {critic && (
            <>
              <th scope="col" className="num">
                Value
              </th>
              <th scope="col" className="num">
                Return
              </th>
              <th scope="col" className="num">
                GAE advantage
              </th>
            </>
          )}
        </tr>
      </thead>
      <tbody>
        {Array.from(ids, (id, i) => {
          const j = i - P;
          const b = j >= 0 ? call.behaviorLogProbs[j] : null;
          return (
            <tr
              key={i}
              data-testid="session-token-row"
              data-kind={j >= 0 ? 'sampled' : 'prompt'}
              className={j >= 0 ? undefined : 'prompt-token'}
            >
              <th scope="row">{i}</th>
              <td>{id}</td>
              <td>
                <code className="token">{text(i)}</code>
              </td>
              <td>{j >= 0 ? 'sampled' : 'prompt'}</td>
              <td className="num">{b === null ? '' : fmt(b)}</td>
              <td className="num">{b === null ? '' : raw ? fmt(raw[j]) : 'not recorded'}</td>
              <td className="num">{b === null || !raw ? '' : fmt(raw[j] - b)}</td>
              <td className="num">{b === null ? '' : fmt(Math.exp(b))}</td>
              {critic && (
                <>
                  <td className="num" data-testid="token-value">
                    {b === null ? '' : fmt(critic.values[j])}
                  </td>
                  <td className="num">{b === null ? '' : fmt(critic.returns[j])}</td>
                  <td className="num">{b === null ? '' : fmt(critic.advantages[j])}</td>
                </>
              )}
            </tr>
          );
        })}
      </tbody>
      <tfoot>
        <tr>
          <th scope="row" colSpan={4}>
            Sum over sampled ids
          </th>
          <td className="num">{fmt(sumBehavior)}</td>
          <td className="num">{raw ? fmt(sumRaw) : ''}</td>
          <td className="num">{raw ? fmt(sumRaw - sumBehavior) : ''}</td>
          <td className="num">{fmt(Math.exp(sumBehavior))}</td>
          {critic && <td colSpan={3} />}
        </tr>
      </tfoot>
    </table>
  );
}

/** Call k's slice of a PPO session's per-sampled-id critic figures (calls in order), or null without them. */
function callCritic(s: SessionRecord, k: number): CallCritic | null {
  if (!s.critic) return null;
  const from = s.calls.slice(0, k).reduce((n, c) => n + c.sampledIds.length, 0);
  const to = from + s.calls[k].sampledIds.length;
  return {
    values: s.critic.values.slice(from, to),
    returns: s.critic.returns.slice(from, to),
    advantages: s.critic.advantages.slice(from, to),
  };
}

/**
 * "Replay this episode" when the step journaled episodes: the episode of the same group and sample,
 * else the session's index in the step (episodes are indexed group-major like sessions). The step
 * keys the steps query (the panel knows no latest step).
 */
function ReplayLink({
  runId,
  step,
  session,
}: {
  runId: string;
  step: number;
  session: { index: number; group: string; sample: number };
}) {
  const steps = useQuery(episodeStepsQuery(runId, step));
  const journaled = Boolean(steps.data?.includes(step));
  const episodes = useQuery({ ...episodesAtQuery(runId, step), enabled: journaled });
  if (!journaled) return null;
  const match = episodes.data?.find((e) => e.group === session.group && e.sample === session.sample);
  return (
    <p>
      <a
        href={formatEpisodeLink({ run: runId, step, episode: match ? match.index : session.index })}
        data-testid="session-replay-link"
      >
        Replay this episode
      </a>
    </p>
  );
}

export function SessionPanel({
  runId,
  step,
  at,
  headingLevel = 2,
  kind = 'advantage',
}: {
  runId: string;
  step: number;
  at: SessionRef;
  headingLevel?: 2 | 3;
  kind?: GroupRecord['kind'];
}) {
  const sessions = useQuery(sessionsAtQuery(runId, step));
  const headingId = useId();
  const Heading = headingLevel === 2 ? 'h2' : 'h3';
  const index = sessions.data ? findSession(sessions.data, at) : -1;
  const s = index >= 0 ? sessions.data![index] : null;
  const pair = kind === 'dpo-pair';
  const of = (sample: number, group: string) =>
    pair ? `${ROLE[sample] ?? `sample ${sample}`} completion of ${group}` : `sample ${sample} of group ${group}`;
  const which = 'index' in at ? `session ${at.index + 1}` : of(at.sample, at.group);

  return (
    <section className="session-panel" data-testid="session-panel" aria-labelledby={headingId}>
      <Heading id={headingId}>
        Inspector: step {step}, {s ? `session ${index + 1}, ${of(s.sample, s.group)}` : which}
      </Heading>
      {sessions.isPending ? (
        <p>Loading the sessions of step {step}…</p>
      ) : sessions.isError ? (
        <p className="bad">
          Could not read the sessions of step {step}: {sessions.error.message}
        </p>
      ) : sessions.data === null ? (
        <p>Step {step} keeps no sessions.</p>
      ) : !s ? (
        <p>
          Step {step} has no {which}.
        </p>
      ) : (
        <>
          <dl className="facts">
            <dt>Task</dt>
            <dd>{s.task}</dd>
            <dt>{pair ? 'Pair' : 'Group'}</dt>
            <dd>{s.group}</dd>
            <dt>{pair ? 'Completion' : 'Sample'}</dt>
            <dd>
              {pair ? (ROLE[s.sample] ?? s.sample) : s.sample}
              {s.attempt > 0 ? ` (attempt ${s.attempt})` : ''}
            </dd>
            <dt>Status</dt>
            <dd>
              {s.status}
              {s.termination ? ` (${s.termination})` : ''}
            </dd>
            <dt>Finish reason</dt>
            <dd>{s.calls.map((c) => c.finishReason).join(', ') || 'no call'}</dd>
            <dt>Policy version</dt>
            <dd>{s.calls.map((c) => c.version).join(', ') || 'no call'}</dd>
            <dt>Reward</dt>
            <dd>{s.reward ?? 'none'}</dd>
            <dt>Components</dt>
            <dd>
              {Object.entries(s.components)
                .map(([k, v]) => `${k} ${v}`)
                .join(', ') || 'none'}
            </dd>
            {s.detail !== undefined && (
              <>
                <dt>Detail</dt>
                <dd>{s.detail}</dd>
              </>
            )}
          </dl>
          {s.cases && <CaseTable cases={s.cases} />}
          <ReplayLink runId={runId} step={step} session={{ index, group: s.group, sample: s.sample }} />
          {s.calls.map((c, k) => (
            <CallTable key={k} runId={runId} call={c} n={k + 1} of={s.calls.length} critic={callCritic(s, k)} />
          ))}
        </>
      )}
    </section>
  );
}
