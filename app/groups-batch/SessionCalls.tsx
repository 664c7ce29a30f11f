/**
 * The model calls of one stored session, each as a token table (SessionPanel): the prompt ids
 * (marked as prompt), then per sampled id its behavior log-prob, raw log-prob, raw − behavior and
 * exp(behavior), and for PPO the critic's value, return and GAE advantage. Token texts come from
 * the run's tokenizer in the worker. Not the packed batch.
 */
import { useQuery } from '@tanstack/react-query';
import type { SessionRecord, StoredCall } from '../../worker/protocol';
import { tokenTextsQuery } from '../queries/groups';

const fmt = (x: number) => x.toFixed(4);

/** PPO's figures of one call's sampled ids: the critic's value at rollout, the return target and the GAE advantage. */
type CallCritic = { values: number[]; returns: number[]; advantages: number[] };

export function CallTable({
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
export function callCritic(s: SessionRecord, k: number): CallCritic | null {
  if (!s.critic) return null;
  const from = s.calls.slice(0, k).reduce((n, c) => n + c.sampledIds.length, 0);
  const to = from + s.calls[k].sampledIds.length;
  return {
    values: s.critic.values.slice(from, to),
    returns: s.critic.returns.slice(from, to),
    advantages: s.critic.advantages.slice(from, to),
  };
}
