/**
 * The companion's shared request and response types: zod schemas and the types inferred from
 * them. The companion validates every request body with these; the worker may `import type` the
 * inferred types (it talks to the companion over HTTP, never by import).
 *
 * Contract: ../shared/rl-spec.md "Sandboxes (companion)"; the ported library's `Program`,
 * `SandboxLimits`, `Verdict` and `Outcome` (../shared/reference/dew-objectives-rl.txt). Deviations:
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
    else if (typeof key === 'string' && !RECORDS.has(path[i - 1]) && /^[A-Za-z_$][\w$]*$/.test(key)) out += out ? `.${key}` : key;
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
  const dirs = new Set(names.flatMap((n) => n.split('/').slice(0, -1).map((_, i, s) => s.slice(0, i + 1).join('/'))));
  for (const name of names) {
    const problem = fileNameProblem(name) ?? (dirs.has(name) ? 'this name is both a file and the directory of another file' : null);
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
export const LIMIT_RANGES = {
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

export const VERDICTS = ['COMPLETED', 'FAILED', 'TIMEOUT', 'CRASHED', 'OUTPUT_LIMIT'] as const;
export const verdictSchema = z.enum(VERDICTS);
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
export type CodeRewardRequest = z.input<typeof codeRewardRequestSchema>;

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

export type Parsed<T> = { ok: true; value: T } | { ok: false; problems: string[] };

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
      if (issue.code === 'unrecognized_keys') return issue.keys.map((k) => `${fieldName([...issue.path, k], root)}: unknown field`).join('; ');
      return `${fieldName(issue.path, root)}: ${issue.message}`;
    }),
  };
}
