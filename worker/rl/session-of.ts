/**
 * `sessionOf`: read a multi-turn episode as an engine-style Session, one Call per action.
 *
 * Not a credit-assignment rule: the episode's single reward stays on the session, and pack shares
 * the group advantage across all its actions. Reference: dew `session_of` (docs/rl-core.md "Data
 * model"): an action's context is the prompt, its tokens the sampled ids with their behavior
 * likelihoods, `stop` when it ended on EOS and `length` otherwise; an environment-reported error
 * is an infrastructure failure.
 */
import type { Episode, EpisodeStatus, Session, Status } from './types';
import { validateSession } from './validate';

const STATUS_OF_EPISODE: Record<Exclude<EpisodeStatus, 'running'>, Status> = {
  completed: 'completed',
  truncated: 'truncated',
  cancelled: 'cancelled',
  error: 'failed',
};

/**
 * The Session of `episode` in advantage group `group`. `task` defaults to the episode's
 * submission serial (`identity.task`) as a string. The termination reason is the episode's, else
 * its last observation's. Throws for a running episode, and for anything `validateSession`
 * refuses, naming the episode and the action.
 */
export function sessionOf(episode: Episode, group: string, task: string = String(episode.identity.task)): Session {
  const { identity } = episode;
  const label = `episode (task ${identity.task}, attempt ${identity.attempt}, sample ${identity.sample})`;
  if (episode.status === 'running')
    throw new Error(`${label}: status is "running"; only a finished episode reads as a session`);
  const status = STATUS_OF_EPISODE[episode.status];
  if (status === undefined)
    throw new Error(`${label}: status = ${JSON.stringify(episode.status)}: not an episode status`);
  const last = episode.transitions.at(-1);
  const termination = episode.termination ?? last?.observation.termination;
  const session: Session = {
    task,
    group,
    sample: identity.sample,
    attempt: identity.attempt,
    calls: episode.transitions.map(({ action }) => ({
      promptIds: action.context,
      sampledIds: action.tokens,
      behaviorLogProbs: action.behaviorLogProbs,
      rawLogProbs: action.rawLogProbs,
      finishReason: action.terminated ? 'stop' : 'length',
      version: action.policyStep,
      ...(action.support !== undefined ? { support: action.support } : {}),
    })),
    status,
    ...(termination !== undefined ? { termination } : {}),
    reward: episode.reward,
    detail: episode.detail ?? last?.observation.detail ?? '',
  };
  // A graded program's cases: on the session, and each one's pass (1/0) as a reward component.
  const cases = last?.observation.cases;
  if (cases) {
    session.cases = cases.map((c) => ({ ...c }));
    session.components = Object.fromEntries(cases.map((c, i) => [`case_${i + 1}`, c.passed ? 1 : 0]));
  }
  validateSession(session, 0, label, 'action');
  return session;
}
