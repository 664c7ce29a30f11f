/**
 * The companion's shared request and response types: zod schemas and the types inferred from
 * them. The companion validates every request body with these; the worker may `import type` the
 * inferred types (it talks to the companion over HTTP, never by import).
 *
 * Contract: docs/rl-core.md "Sandboxes"; the ported library's (dew's) `Program`,
 * `SandboxLimits`, `Verdict` and `Outcome`. Deviations:
 * `Program.command` is `argv` and optional (each runner knows how it runs `main.py`), and
 * `Outcome` adds `signal`, `cpuSeconds`, `detail` and `truncated`.
 *
 * Not the HTTP routes or the runners: those live beside this file.
 */
import { z } from 'zod';

const MiB = 1024 ** 2;

/** Records whose keys are data (file names), so always written quoted: `files["a"]`. */
const RECORDS = new Set<PropertyKey>(['files']);

/** A JavaScript path to a field, as a person reads it: `files["../x"]`, `limits.wallSeconds`. */
export function fieldName(path: readonly PropertyKey[], root = ''): string {
  let out = root;
  path.forEach((key, i) => {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && !RECORDS.has(path[i - 1]) && /^[A-Za-z_$][\w$]*$/.test(key))
      out += out ? `.${key}` : key;
    else out += `[${JSON.stringify(String(key))}]`;
  });
  return out || '(body)';
}

/** Why a file name in `Program.files` is refused, or null when it is acceptable. */
export function fileNameProblem(name: string): string | null {
  if (name === '') return 'a file name must not be empty';
  if (name.includes('\0')) return 'a file name must not contain NUL';
  if (name.includes('\\')) return 'a file name must not contain a backslash (use /)';
  if (name.startsWith('/')) return 'a file name must be relative to the job directory, not absolute';
  for (const segment of name.split('/')) {
    if (segment === '') return 'a file name must not have an empty segment (// or a trailing /)';
    if (segment === '..') return 'a file name must not contain a .. segment';
    if (segment === '.') return 'a file name must not contain a . segment';
    if (Buffer.byteLength(segment) > 255) return 'each segment of a file name must be at most 255 bytes';
  }
  return null;
}

/** Files keyed by relative path, checked one by one and against each other ("a" vs "a/b"). */
const filesSchema = z.record(z.string(), z.string()).superRefine((files, ctx) => {
  const names = Object.keys(files);
  const dirs = new Set(
    names.flatMap((n) =>
      n
        .split('/')
        .slice(0, -1)
        .map((_, i, s) => s.slice(0, i + 1).join('/')),
    ),
  );
  for (const name of names) {
    const problem =
      fileNameProblem(name) ?? (dirs.has(name) ? 'this name is both a file and the directory of another file' : null);
    if (problem) ctx.addIssue({ code: 'custom', path: [name], message: problem });
  }
});

export const programSchema = z.strictObject({
  /** File contents keyed by path relative to the job directory (`main.py`, `lib/util.py`). */
  files: filesSchema,
  /** The command, without a shell. Default: the runner's Python on `main.py`. */
  argv: z
    .array(z.string().refine((a) => !a.includes('\0'), 'an argument must not contain NUL'))
    .min(1, 'must name a program: at least one element')
    .optional(),
  /** Written to the program's stdin, then stdin is closed. Default: empty. */
  stdin: z.string().optional(),
});
/** Files to write, the argv to run beside them, and its stdin. */
export type Program = z.infer<typeof programSchema>;

/** The accepted range of each limit, inclusive (wallSeconds excludes its 0). */
const LIMIT_RANGES = {
  wallSeconds: { min: 0, max: 3600, integer: false },
  cpuSeconds: { min: 1, max: 3600, integer: true },
  memoryBytes: { min: 16 * MiB, max: 64 * 1024 * MiB, integer: true },
  messageBytes: { min: 1, max: 64 * MiB, integer: true },
} as const;

function limit(name: keyof typeof LIMIT_RANGES, initial: number) {
  const { min, max, integer } = LIMIT_RANGES[name];
  const allowed = integer ? `an integer in ${min}..${max}` : `a number in (${min}, ${max}]`;
  const error = (issue: { input?: unknown }) => `must be ${allowed}, got ${JSON.stringify(issue.input)}`;
  const base = integer ? z.int({ error }).min(min, { error }) : z.number({ error }).gt(min, { error });
  return base.max(max, { error }).default(initial);
}

export const sandboxLimitsSchema = z.strictObject({
  /** Wall-clock deadline from start, seconds; the runner kills the program then. */
  wallSeconds: limit('wallSeconds', 30),
  /** CPU time, whole seconds (RLIMIT_CPU, soft = hard). */
  cpuSeconds: limit('cpuSeconds', 10),
  /** Address space, bytes (RLIMIT_AS, soft = hard); Python raises MemoryError past it. */
  memoryBytes: limit('memoryBytes', 256 * MiB),
  /** stdout + stderr together, bytes; the runner kills the program past it. */
  messageBytes: limit('messageBytes', MiB),
});
/**
 * Bound one program by RLIMIT_CPU and RLIMIT_AS, plus a wall deadline and an output budget that
 * the runner enforces. Forked children inherit the resource limits each on its own: this is not a
 * cgroup aggregate limit.
 */
export type SandboxLimits = z.output<typeof sandboxLimitsSchema>;
/** What a request may send: every field optional, unknown fields refused. */
export type SandboxLimitsInput = z.input<typeof sandboxLimitsSchema>;

const VERDICTS = ['COMPLETED', 'FAILED', 'TIMEOUT', 'CRASHED', 'OUTPUT_LIMIT'] as const;
const verdictSchema = z.enum(VERDICTS);
/**
 * How a program ended. COMPLETED: exit status 0. FAILED: nonzero exit status (an uncaught
 * exception or MemoryError included). TIMEOUT: past the wall deadline or the CPU-time limit, and
 * killed. CRASHED: killed by a signal it did not ask for. OUTPUT_LIMIT: stdout + stderr passed
 * `messageBytes`, and killed. A runner that cannot start a program throws instead: that is an
 * infrastructure error, never a verdict.
 */
export type Verdict = z.infer<typeof verdictSchema>;

export const outcomeSchema = z.object({
  verdict: verdictSchema,
  /** The exit status, or null when a signal ended the program. */
  exitCode: z.int().nullable(),
  /** The signal that ended the program (`SIGKILL`, `SIGSEGV`), or null when it exited. */
  signal: z.string().nullable(),
  /** Decoded as UTF-8 over the whole stream; invalid bytes become U+FFFD. */
  stdout: z.string(),
  stderr: z.string(),
  /** Wall time from start to exit. */
  seconds: z.number(),
  /**
   * CPU time the program used, or null where the runner cannot measure it. ProcessRunner always
   * gives null: Node does not expose a child's rusage.
   */
  cpuSeconds: z.number().nullable(),
  /** Who ended it: `exit code 3`, `killed by the runner at the 2 s wall deadline`, ... */
  detail: z.string(),
  /** Whether stdout/stderr were cut at `messageBytes` (always with OUTPUT_LIMIT). */
  truncated: z.boolean(),
});
/** How one program ended, and what it wrote. */
export type Outcome = z.infer<typeof outcomeSchema>;

/** One test case of a code reward: the program's stdin and the stdout it must print. */
export const codeCaseSchema = z.strictObject({ stdin: z.string(), stdout: z.string() });
export type CodeCase = z.infer<typeof codeCaseSchema>;

export const codeRewardRequestSchema = z.strictObject({
  /** The model's completion; its last ```python block (else its last untagged block) is the program. */
  completion: z.string(),
  /** The cases, as dew's ground truth: a JSON text of a list of {stdin, stdout}, or the list itself. */
  groundTruth: z.union([z.string(), z.array(codeCaseSchema)]),
  /** Score 1 only when every case passes (else the fraction that pass). Default false. */
  allOrNothing: z.boolean().optional(),
  limits: sandboxLimitsSchema.optional(),
});

/** How one case went: the verdict (null when there was no program to run), whether it passed, and what the program wrote. */
export interface CodeCaseResult {
  verdict: Verdict | null;
  passed: boolean;
  stdout: string;
  stderr: string;
  detail: string;
}

export interface CodeRewardResult {
  /** The fraction of cases that pass (or 0/1 with allOrNothing); 0 without a code block. */
  reward: number;
  /** The program that ran, or null when the completion has no code block. */
  program: string | null;
  cases: CodeCaseResult[];
}

type Parsed<T> = { ok: true; value: T } | { ok: false; problems: string[] };

/**
 * Validate `input` against `schema`: the value with defaults applied, or one problem per bad
 * field, each naming it from `root` (`limits.cpuSeconds: must be an integer in 1..3600, got 0`).
 */
export function parseWith<S extends z.ZodType>(schema: S, input: unknown, root = ''): Parsed<z.output<S>> {
  const result = schema.safeParse(input);
  if (result.success) return { ok: true, value: result.data };
  return {
    ok: false,
    problems: result.error.issues.map((issue) => {
      if (issue.code === 'unrecognized_keys')
        return issue.keys.map((k) => `${fieldName([...issue.path, k], root)}: unknown field`).join('; ');
      return `${fieldName(issue.path, root)}: ${issue.message}`;
    }),
  };
}

/*
 * Environment sessions: SubprocessEnvironment (companion/subprocess-env.ts) and its HTTP routes
 * (`/v1/sessions`, companion/server.ts). Contract: dew `SubprocessEnvironment`, `Environment`,
 * `Observation` (docs/rl-core.md "Data model") and the worker's Environment interface
 * (worker/episodes/environment.ts), whose shapes these are.
 *
 * The environment is a program in any language that reads one JSON request per line on stdin and
 * writes one JSON reply per line on stdout (UTF-8, `\n`-terminated, nothing else on stdout:
 * diagnostics go to stderr). Requests, in order: one `reset`, then `step`s, then `close`:
 *
 *   {"op":"reset","task":{"id":"guess/20","prompt":"1-63?","answer":"20","data":{"secret":20}},
 *    "tokenizer":{"type":"char","vocab":["<pad>","<bos>","<eos>","0",...],"specials":{"pad":0,"bos":1,"eos":2}}}
 *     → {"context":[1,4,14,9,6,32]}                    the first model context (BOS included)
 *     → {"status":"error","detail":"..."}              it cannot start this task
 *   {"op":"step","action":{"ids":[6,5],"text":"32","terminated":true}}
 *     → {"observation":[30],"status":"running","detail":"32: the secret is lower"}
 *     → {"observation":[],"status":"done","reward":1}  the episode ended (reward optional: else the verifier's)
 *     → {"context":[...],"status":"running"}          the whole next context instead of an append (compaction)
 *     → {"status":"error","detail":"..."}              it failed: an infrastructure failure, never a reward 0
 *   {"op":"close"}                                       no reply: exit (the process group is killed soon after anyway)
 *
 * Optional state (dew `RecoverableEnvironment`): a reply to reset or step may carry `"state"`, an
 * opaque string (JSON text, say) that is everything the program needs to go on from that point.
 * The worker journals it with the turn. To resume an episode after a closed tab, it resets a fresh
 * session on the same task and sends the last committed turn's state:
 *
 *   {"op":"set_state","state":"..."}
 *     → {"status":"running"}                           restored: the next step continues from there
 *     → {"status":"error","detail":"..."}              it cannot (the episode ends as an error)
 *
 * A program that never sends `state` is resumed by replaying the journaled actions from reset
 * instead, each answer checked against the journal.
 *
 * stderr: every HTTP reply carries `stderr`, what the program wrote there since the previous reply
 * (its last STDERR_REPLY_BYTES bytes), when it wrote anything; a failure's reply waits for the
 * program's end, so a crash's traceback is in it. The failure's `detail` says why in the
 * companion's words and does not repeat stderr.
 *
 * Ids are the model's token ids; `tokenizer` maps them to text (a char tokenizer: `vocab[id]` is
 * the symbol of `id`, specials are names such as `<eos>`), so an environment needs no copy of the
 * vocabulary. `action.ids` exclude EOS and `action.text` is their decoding (specials skipped).
 * Replies are checked: unknown fields, a line that is not JSON, or a reply without a request
 * end the session as `error`, quoting the line.
 *
 * Deviations from dew: status is the worker's `running | done | error` (dew's completed,
 * truncated and cancelled are the rollout's to decide); reset gets the task (dew: the episode
 * identity) and the tokenizer; a step may answer the ids it appends (`observation`) instead of the
 * whole next context.
 */

/** A token id: a non-negative integer (the upper bound is the model's vocabulary, which the caller checks). */
const idsSchema = z.array(z.int().min(0, 'must be a non-negative integer id'));

/** POST /v1/sessions: the environment's program (files and argv, as in `Program`, no stdin) and its limits. */
export const envSessionRequestSchema = z.strictObject({
  files: programSchema.shape.files,
  /** The environment's command, without a shell. Default: Python on `main.py`, as for `/v1/run`. */
  argv: programSchema.shape.argv,
  /**
   * `wallSeconds` is the deadline of each request (reset, step), not of the session; `cpuSeconds`
   * and `memoryBytes` bound the process over its whole life; `messageBytes` bounds one reply line.
   */
  limits: sandboxLimitsSchema.optional(),
});
export type EnvSessionRequest = z.input<typeof envSessionRequestSchema>;
/** The answer to POST /v1/sessions: the session's id and the limits it runs under (defaults applied). */
export interface EnvSessionOpened {
  id: string;
  limits: SandboxLimits;
}

/** A char tokenizer's description (worker/data/tokenizer.ts `TokenizerDescription`): `vocab[id]` is the symbol of `id`. */
const envTokenizerSchema = z.strictObject({
  type: z.literal('char'),
  vocab: z.array(z.string()).min(3, 'must hold at least the three specials'),
  specials: z.strictObject({ pad: z.int().min(0), bos: z.int().min(0), eos: z.int().min(0) }),
});

/** The task of the episode (worker/episodes/environment.ts `EnvTask`). */
const envTaskSchema = z.strictObject({
  id: z.string(),
  prompt: z.string(),
  answer: z.string(),
  data: z.record(z.string(), z.unknown()),
});

/** POST /v1/sessions/:id/reset, and the `reset` line without its `op`. */
export const envResetRequestSchema = z.strictObject({ task: envTaskSchema, tokenizer: envTokenizerSchema });
export type EnvResetRequest = z.infer<typeof envResetRequestSchema>;

/** One model action (worker `EnvAction`): sampled ids without EOS, their text, whether it ended on EOS. */
const envActionSchema = z.strictObject({ ids: idsSchema, text: z.string(), terminated: z.boolean() });
/** POST /v1/sessions/:id/step, and the `step` line without its `op`. */
export const envStepRequestSchema = z.strictObject({ action: envActionSchema });
export type EnvStepRequest = z.infer<typeof envStepRequestSchema>;

/** POST /v1/sessions/:id/set_state, and the `set_state` line without its `op`: a state the program sent in a reply. */
export const envSetStateRequestSchema = z.strictObject({ state: z.string() });
export type EnvSetStateRequest = z.infer<typeof envSetStateRequestSchema>;

/** A line on the environment's stdin. */
export type EnvRequestLine =
  | ({ op: 'reset' } & EnvResetRequest)
  | ({ op: 'step' } & EnvStepRequest)
  | ({ op: 'set_state' } & EnvSetStateRequest)
  | { op: 'close' };

const ENV_STATUSES = ['running', 'done', 'error'] as const;

/** The environment's reply to `reset` on its stdout. */
export const envResetLineSchema = z
  .strictObject({
    context: idsSchema.optional(),
    status: z.enum(['running', 'error']).optional(),
    detail: z.string().optional(),
    state: z.string().optional(),
  })
  .superRefine((r, ctx) => {
    if (r.status !== 'error' && r.context === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['context'],
        message: 'a reply to reset needs context (the first model context) unless its status is error',
      });
  });

/** The environment's reply to `step` on its stdout. */
export const envStepLineSchema = z
  .strictObject({
    observation: idsSchema.optional(),
    context: idsSchema.optional(),
    status: z.enum(ENV_STATUSES),
    reward: z.number().optional(),
    detail: z.string().optional(),
    state: z.string().optional(),
  })
  .superRefine((r, ctx) => {
    if (r.observation !== undefined && r.context !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['context'],
        message: 'give observation (ids appended) or context (the whole next context), not both',
      });
    if (r.status === 'running' && r.observation === undefined && r.context === undefined)
      ctx.addIssue({ code: 'custom', path: ['observation'], message: 'a running reply needs observation or context' });
  });

/** The environment's reply to `set_state` on its stdout. */
export const envSetStateLineSchema = z.strictObject({
  status: z.enum(['running', 'error']),
  detail: z.string().optional(),
});

/**
 * Why a session request answered `status: 'error'`, by name (`detail` says more, in words). All
 * but `environment` end the session: its process group is killed and its directory deleted.
 * - `environment`: the environment's own `{"status":"error"}` reply.
 * - `deadline`: no reply within `limits.wallSeconds`.
 * - `exited`: the program exited or was killed (RLIMIT_CPU, a signal) before it answered.
 * - `bad-reply`: a line on its stdout that is not JSON, not a valid reply, or answers no request.
 * - `message-limit`: a line on its stdout longer than `limits.messageBytes`.
 * - `cancelled`: the request's client went away.
 * - `closed`: the session was closed while the request waited.
 * - `io`: reading its stdout or stderr, or writing its stdin, failed.
 */
export const ENV_ERROR_KINDS = [
  'environment',
  'deadline',
  'exited',
  'bad-reply',
  'message-limit',
  'cancelled',
  'closed',
  'io',
] as const;
export type EnvErrorKind = (typeof ENV_ERROR_KINDS)[number];

/**
 * What POST /v1/sessions/:id/reset answers: the first context, or an error (the environment's own,
 * or the companion's: deadline, exit, a stray line; the process is then dead). The companion
 * always names an error's kind (`error`); optional in the type only so that clients that do not
 * read it yet agree with it.
 */
export type EnvResetReply =
  | { status: 'running'; context: number[]; detail?: string; state?: string; stderr?: string }
  | { status: 'error'; context: []; detail: string; error?: EnvErrorKind; stderr?: string };
/**
 * What POST /v1/sessions/:id/step answers: the worker's `EnvStep` (observation is `[]` when the
 * reply gave `context` or none), or an error as for reset.
 */
export interface EnvStepReply {
  observation: number[];
  context?: number[];
  status: (typeof ENV_STATUSES)[number];
  reward?: number;
  detail?: string;
  /** The program's state after this step, when it sends one. */
  state?: string;
  /** With status error, its kind (always set by the companion). */
  error?: EnvErrorKind;
  /** What the program wrote to stderr since the previous reply (its last STDERR_REPLY_BYTES bytes); absent when nothing. */
  stderr?: string;
}

/** What POST /v1/sessions/:id/set_state answers: restored, or an error as for reset. */
export type EnvSetStateReply =
  { status: 'running'; stderr?: string } | { status: 'error'; detail: string; error?: EnvErrorKind; stderr?: string };

/**
 * How much of what a program wrote to stderr between two replies a reply carries (its end): the
 * worker keeps an episode's stderr (the same bound, its end) in the journal for the Episodes view.
 */
export const STDERR_REPLY_BYTES = 4096;
