/**
 * CompanionEnvironment: an `Environment` whose episode runs in a program of any language, in an
 * environment session of the companion (companion/subprocess-env.ts; the JSON-lines protocol is
 * documented in companion/protocol.ts "Environment sessions"). `reset` opens the session (the
 * program starts in a fresh job directory) and sends the task and the tokenizer's description, so
 * the program maps ids to text exactly as this worker does; `step` forwards each action's ids and
 * text; `close` ends the session (the companion kills its process group and deletes its directory).
 *
 * Failures are never a reward: the environment's own error, its deadline (the session's
 * `limits.wallSeconds` per request), its exit or a stray line come back as status `error`
 * (`env_error`); a request the companion refused (4xx/5xx) during a step is status `error` with
 * failure `sandbox_error`; at reset either one throws, which the rollout records as `env_error`
 * (the environment failed to start). Every one of them fails the episode and aborts its group
 * (rollout.ts). A companion that no longer answers at all (asked after the failure) is not an
 * episode's failure: EnvironmentUnavailable stops the collection before the round is committed, so
 * the run stops saying so, and a Continue with a companion that answers re-runs that round.
 *
 * Capacity: opening a session when the companion's places are all taken waits out its Retry-After
 * within `capacityWait` (client.ts `openSession`), then fails the reset with CompanionAtCapacity.
 *
 * State: a program that sends `state` with its replies (companion/protocol.ts "Optional state")
 * is recoverable: `getState` is the last state it sent (journaled with the turn), and `setState`
 * sends one to a fresh session after its reset, so a resumed episode re-runs no committed turn. A
 * program that sends none is resumed by replay instead (rollout.ts `restoreSlot`): a fresh session
 * is reset and sent the journaled actions in order, each answer checked against the journal; an
 * answer that differs (a program that is not deterministic in its task and actions) ends the
 * episode as `env_error`. A failed `set_state` ends it as `env_error` too.
 *
 * Deadline: the rollout's default step deadline (5 s) sits below the companion's wall (30 s by
 * default), so `inCompanion` gives its kind `stepTimeoutMs` from the program's limits
 * (`companionDeadlineMs`): the companion's own wall ends a slow step first and says why.
 * Reference: dew `SubprocessEnvironment` (docs/rl-core.md "Sandboxes").
 */
import type { CapacityWait, CompanionClient, SessionRequest } from '../companion-client/client';
import { COMPANION_DEFAULT_WALL_SECONDS, DEFAULT_CAPACITY_WAIT } from '../companion-client/client';
import type { CharTokenizer } from '../data/tokenizer';
import type { EnvAction, EnvStep, EnvTask, Environment, EnvironmentFactory, EnvironmentKind } from './environment';
import { EnvironmentUnavailable, appendStderr } from './environment';

export interface CompanionEnvOptions {
  client: CompanionClient;
  /** The environment's program: files (e.g. `guess_env.py`), argv, limits. */
  program: SessionRequest;
  /** The tokenizer the policy samples with; its description goes to the program at reset. */
  tok: CharTokenizer;
  /** How long opening a session waits for a place when the companion is at capacity. Default DEFAULT_CAPACITY_WAIT. */
  capacityWait?: CapacityWait;
}

/** What the rollout's deadline adds to the companion's wall: starting the program, HTTP, the companion killing it at the wall and answering. */
export const DEADLINE_MARGIN_MS = 5000;

/**
 * The rollout's deadline of one reset or step of `o`'s environments, ms: the companion's wall
 * (`program.limits.wallSeconds`, else its default) plus the margin plus the capacity wait (a
 * reset opens the session first). Above the wall, so the companion, which knows why (the
 * program's deadline, its exit), ends a slow request; the rollout's deadline only catches a
 * companion that stopped answering.
 */
export function companionDeadlineMs(o: Pick<CompanionEnvOptions, 'program' | 'capacityWait'>): number {
  const wall = o.program.limits?.wallSeconds ?? COMPANION_DEFAULT_WALL_SECONDS;
  return Math.ceil(wall * 1000) + DEADLINE_MARGIN_MS + (o.capacityWait ?? DEFAULT_CAPACITY_WAIT).totalMs;
}

export class CompanionEnvironment implements Environment {
  private opening: Promise<string> | null = null;
  private closed = false;
  /** The state the program sent with its last reply (undefined: it sends none). */
  private state: string | undefined = undefined;
  /** Aborted at close: a request still waiting (the rollout gave up on it) ends its session on the companion. */
  private readonly abort = new AbortController();
  /** What the program wrote to stderr, from the replies since the last `takeStderr` (its end). */
  private stderr = '';

  constructor(
    readonly task: EnvTask,
    private readonly o: CompanionEnvOptions,
  ) {}

  /**
   * `e` as the episode's failure, or EnvironmentUnavailable when the companion itself no longer
   * answers (asked once, after the failure): then the collection stops, as a closed tab does.
   */
  private async failure(e: unknown): Promise<Error> {
    if (this.closed) return e as Error;
    const status = await this.o.client.status();
    return status.connected ? (e as Error) : this.unavailable(`stopped answering (${status.error})`);
  }

  private unavailable(what: string): EnvironmentUnavailable {
    return new EnvironmentUnavailable(
      `the companion at ${this.o.client.url} ${what}: start one with npx dewpoint companion, connect it in System, ` +
        'then Continue the run (it goes on from its journal, losing no committed turn)',
    );
  }

  /** A session the companion closed while this episode still used it: the companion is stopping (shutdown or restart). */
  private closedUnder(r: { status: string; error?: string }): boolean {
    return r.status === 'error' && r.error === 'closed' && !this.closed;
  }

  async reset(): Promise<Int32Array> {
    if (this.opening)
      throw new Error(`companion environment (task ${this.task.id}): reset called twice; the rollout resets once`);
    this.opening = this.o.client.openSession(this.o.program, this.abort.signal, this.o.capacityWait).then((s) => s.id);
    let r: Awaited<ReturnType<CompanionClient['resetSession']>>;
    try {
      const id = await this.opening;
      if (this.closed) throw new Error('the episode was closed while its session opened');
      const { id: taskId, prompt, answer, data } = this.task;
      r = await this.o.client.resetSession(
        id,
        { task: { id: taskId, prompt, answer, data: { ...data } }, tokenizer: this.o.tok.describe() },
        this.abort.signal,
      );
    } catch (e) {
      throw await this.failure(e);
    }
    this.keepStderr(r);
    if (this.closedUnder(r))
      throw this.unavailable(`is stopping: it closed the session under this episode (${r.detail})`);
    if (r.status === 'error')
      throw new Error(
        `the environment could not start task ${this.task.id}: ${r.error ? `${r.error}: ` : ''}${r.detail}`,
      );
    this.state = r.state;
    return Int32Array.from(r.context);
  }

  getState(): string | undefined {
    return this.state;
  }

  async setState(state: string): Promise<void> {
    if (!this.opening) throw new Error(`companion environment (task ${this.task.id}): set_state before reset`);
    let r: Awaited<ReturnType<CompanionClient['setSessionState']>>;
    try {
      r = await this.o.client.setSessionState(await this.opening, { state }, this.abort.signal);
    } catch (e) {
      throw await this.failure(e);
    }
    this.keepStderr(r);
    if (this.closedUnder(r))
      throw this.unavailable(
        `is stopping: it closed the session under this episode (${r.status === 'error' ? r.detail : ''})`,
      );
    if (r.status === 'error')
      throw new Error(`the environment could not restore its state: ${r.error ? `${r.error}: ` : ''}${r.detail}`);
    this.state = state;
  }

  async step(action: EnvAction): Promise<EnvStep> {
    if (!this.opening) throw new Error(`companion environment (task ${this.task.id}): step before reset`);
    try {
      const id = await this.opening;
      const r = await this.o.client.stepSession(
        id,
        { action: { ids: Array.from(action.ids), text: action.text, terminated: action.terminated } },
        this.abort.signal,
      );
      this.keepStderr(r);
      if (this.closedUnder(r))
        throw this.unavailable(`is stopping: it closed the session under this episode (${r.detail})`);
      if (r.state !== undefined) this.state = r.state;
      const { state: _state, stderr: _stderr, ...step } = r;
      // A failed step names its kind first (deadline, exited, bad-reply, ...), as the companion does.
      return step.status === 'error' && step.error ? { ...step, detail: `${step.error}: ${step.detail ?? ''}` } : step;
    } catch (e) {
      if (e instanceof EnvironmentUnavailable) throw e;
      const failure = await this.failure(e);
      if (failure instanceof EnvironmentUnavailable) throw failure;
      return {
        observation: new Int32Array(0),
        status: 'error',
        failure: 'sandbox_error',
        detail: `the companion did not run the step: ${failure.message}`,
      };
    }
  }

  private keepStderr(r: { stderr?: string }): void {
    this.stderr = appendStderr(this.stderr, r.stderr);
  }

  takeStderr(): string | undefined {
    const s = this.stderr;
    this.stderr = '';
    return s || undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.abort.abort();
    if (!this.opening) return;
    let id: string;
    try {
      id = await this.opening;
    } catch {
      return; // No session was opened: the reset that failed reported why.
    }
    await this.o.client.closeSession(id);
  }
}

/** Environments of a task, each in its own companion session. */
function companionEnvironments(o: CompanionEnvOptions): EnvironmentFactory {
  return (task) => new CompanionEnvironment(task, o);
}

/**
 * `kind` (its tasks, verifier, budgets and demonstrations) with its environments run in the
 * companion by `o.program`, and the step deadline those need (`companionDeadlineMs`), which
 * collectEpisodes takes when its caller names none.
 */
export function inCompanion(kind: EnvironmentKind, o: CompanionEnvOptions): EnvironmentKind {
  return { ...kind, create: companionEnvironments(o), stepTimeoutMs: companionDeadlineMs(o) };
}
