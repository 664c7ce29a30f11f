/**
 * The session inspector: one stored GRPO session exactly as it was sampled and as the trainer saw
 * it. Its task, group, sample, status, reward and components, then per model call a token table:
 * the prompt ids (marked as prompt), then per sampled id its behavior log-prob (the sampling
 * distribution, after temperature / top-k / top-p), its raw log-prob (the unmodified model, the
 * trainer's old log-prob), raw − behavior (the Batch view's mismatch layer) and exp(behavior).
 * Token texts come from the run's tokenizer in the worker. A DPO pair's completion (`kind:
 * 'dpo-pair'`) reads as the chosen or rejected completion of its pair. A session of a step with
 * journaled multi-turn episodes links to its episode in the Replay view. With `onClose`, a Close
 * button and Escape (escape-close.ts) close it and give focus back to what opened it
 * (`returnFocusTo`). Not an editor, and not the packed batch; the call tables are SessionCalls.tsx.
 */
import { CaseTable } from './CodeCases';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useEffectEvent, useId, useRef } from 'react';
import type { GroupRecord, SessionRecord } from '../../worker/protocol';
import { episodeStepsQuery, episodesAtQuery } from '../queries/episodes';
import { sessionsAtQuery } from '../queries/groups';
import { formatEpisodeLink } from '../shared/episodes';
import { closesOnEscape } from './escape-close';
import { CallTable, callCritic } from './SessionCalls';

/** Which session of the step: its index in the step (the Batch view's session id − 1), or its group and sample. */
type SessionRef = { index: number } | { group: string; sample: number };

/** DPO sessions: sample 0 is the pair's chosen completion, 1 its rejected one. */
const ROLE = ['chosen', 'rejected'];

function findSession(sessions: SessionRecord[], at: SessionRef): number {
  return 'index' in at
    ? at.index >= 0 && at.index < sessions.length
      ? at.index
      : -1
    : sessions.findIndex((s) => s.group === at.group && s.sample === at.sample);
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
  onClose,
  returnFocusTo,
}: {
  runId: string;
  step: number;
  at: SessionRef;
  headingLevel?: 2 | 3;
  kind?: GroupRecord['kind'];
  /** Closes the inspector (the Close button, Escape); without it the panel has no Close. */
  onClose?: () => void;
  /** The element that opened it (an Inspect button, the batch canvas): focus goes back there on close. */
  returnFocusTo?: () => HTMLElement | null;
}) {
  const sessions = useQuery(sessionsAtQuery(runId, step));
  const headingId = useId();
  const panel = useRef<HTMLElement>(null);
  const closable = Boolean(onClose);
  const close = () => {
    const back = returnFocusTo?.() ?? null;
    onClose?.();
    if (back?.isConnected) back.focus();
  };
  // Escape closes from inside the panel or from where it was opened (escape-close.ts says when).
  const onKey = useEffectEvent((e: KeyboardEvent) => {
    const t = e.target instanceof HTMLElement ? e.target : null;
    const escape = {
      key: e.key,
      defaultPrevented: e.defaultPrevented,
      isComposing: e.isComposing,
      targetTag: t?.tagName ?? null,
      targetEditable: Boolean(t?.isContentEditable),
      insidePanel: Boolean(t && panel.current?.contains(t)),
    };
    if (!closesOnEscape(escape)) return;
    e.preventDefault();
    close();
  });
  useEffect(() => {
    if (!closable) return;
    const listener = (e: KeyboardEvent) => onKey(e);
    document.addEventListener('keydown', listener);
    return () => document.removeEventListener('keydown', listener);
  }, [closable]);
  const Heading = headingLevel === 2 ? 'h2' : 'h3';
  const index = sessions.data ? findSession(sessions.data, at) : -1;
  const s = index >= 0 ? sessions.data![index] : null;
  const pair = kind === 'dpo-pair';
  const of = (sample: number, group: string) =>
    pair ? `${ROLE[sample] ?? `sample ${sample}`} completion of ${group}` : `sample ${sample} of group ${group}`;
  const which = 'index' in at ? `session ${at.index + 1}` : of(at.sample, at.group);

  return (
    <section className="session-panel" data-testid="session-panel" aria-labelledby={headingId} ref={panel}>
      <div className="session-panel-head">
        <Heading id={headingId}>
          Inspector: step {step}, {s ? `session ${index + 1}, ${of(s.sample, s.group)}` : which}
        </Heading>
        {closable && (
          <button type="button" className="session-close" onClick={close} aria-keyshortcuts="Escape">
            Close inspector
          </button>
        )}
      </div>
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
