/**
 * The CLI's progress on stderr (stdout keeps the metrics, so `--json` stays clean JSON lines): at
 * the start, what the run writes where (`outputsLine`); after each step, `step i/N, elapsed, ETA`
 * (`StepProgress`). On a terminal the step line is rewritten in place, and cleared before anything
 * else is written (`clear`, `note`); elsewhere (a pipe, a log file) it is one line per step. Not a
 * timing measurement: the ETA is the mean time of the steps so far, evaluations included.
 */

/** The part of a stream the progress writes to (process.stderr, or a test's). */
interface ProgressStream {
  isTTY?: boolean;
  write(text: string): boolean;
}

/** `s` seconds as a person reads them: 3.2 s, 42 s, 4 min 05 s, 1 h 02 min. */
export function duration(s: number): string {
  if (!Number.isFinite(s)) return '?';
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 60) return `${Math.round(s)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(Math.round(s - 60 * m)).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

/** The run's outputs at its start: its id (a journaled run's) and every place it writes. */
export function outputsLine(
  label: string,
  o: { runId?: string; journal?: string; save?: string; json: boolean },
): string {
  const writes = [`metrics to stdout (${o.json ? 'JSON lines' : 'text'})`];
  if (o.journal !== undefined) writes.push(`the journal to ${o.journal}`);
  if (o.save !== undefined) writes.push(`the run folder to ${o.save}`);
  return `${label}: ${o.runId ? `run ${o.runId}; ` : ''}writes ${writes.join(', ')}${writes.length === 1 ? ' only' : ''}\n`;
}

export class StepProgress {
  private readonly t0: number;
  private stepsFrom: number;
  /** A step line is on the terminal, without its newline. */
  private shown = false;

  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly stream: ProgressStream = process.stderr,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.t0 = this.stepsFrom = now();
  }

  /** The first step starts now: the time before it (the evaluation at step 0) counts as elapsed, not in the ETA. */
  begin(): void {
    this.stepsFrom = this.now();
  }

  /** Step `i` of the total has finished. */
  step(i: number): void {
    const t = this.now();
    const eta = (((t - this.stepsFrom) / i) * (this.total - i)) / 1000;
    const line = `${this.label}: step ${i}/${this.total}, ${duration((t - this.t0) / 1000)} elapsed, ETA ${duration(eta)}`;
    if (this.stream.isTTY) {
      this.stream.write(`\r\x1b[K${line}`);
      this.shown = true;
    } else this.stream.write(`${line}\n`);
  }

  /** Before other output on a terminal: takes the step line off, so the text does not run on after it. */
  clear(): void {
    if (!this.shown) return;
    this.stream.write('\r\x1b[K');
    this.shown = false;
  }

  /** A line of its own on the stream (a health flag), with the step line cleared first. */
  note(text: string): void {
    this.clear();
    this.stream.write(text);
  }

  /** The run is over (or failed): the last step line stays, ended. */
  end(): void {
    if (!this.shown) return;
    this.stream.write('\n');
    this.shown = false;
  }
}
