/**
 * The worker's one connection to a companion (`npx dewpoint companion` prints its address and
 * token): made from the app's System view, it answers the companion's health and grades code
 * for the runs (worker/rewards/code-grader.ts), with a cache of graded programs that a new
 * connection starts afresh. Not the HTTP calls themselves (client.ts).
 */
import { InvalidConfigError } from '../contract/errors';
import type { CompanionStatus } from '../contract/system';
import { cachedGrader, type CodeGrader } from '../rewards/code-grader';
import { CompanionClient, companionUrlProblem } from './client';

export class CompanionConnection {
  private client: CompanionClient | null = null;
  private workers = 1;
  // Graded repeats (a group's identical programs, SFT-like repeats) are answered from the cache.
  private grader: CodeGrader | null = null;

  /**
   * Connects to the companion at `url` with `token` and reports its health, or why not
   * (unreachable, wrong token, origin not allowed). A bad address or an empty token is refused
   * with InvalidConfig naming it. The token stays here for later requests.
   */
  async connect(url: string, token: string): Promise<CompanionStatus> {
    const problem = companionUrlProblem(url);
    if (problem) throw new InvalidConfigError(problem);
    if (!token.trim())
      throw new InvalidConfigError('the companion token is empty: paste the token the companion printed at start');
    const client = new CompanionClient(url, token.trim());
    this.client = client;
    const status = await client.status();
    if (status.connected) this.workers = status.health.workers;
    this.grader = cachedGrader((request) => client.gradeCode(request, this.workers));
    return status;
  }

  /** The connected companion's health now (null when none was connected). */
  async status(): Promise<CompanionStatus | null> {
    return this.client ? this.client.status() : null;
  }

  /** What environments and rewards need of the companion (worker/episodes/kinds.ts `KindServices`), read when a run starts. */
  services(): { codeGrader: CodeGrader | null; companion: CompanionClient | null } {
    return { codeGrader: this.grader, companion: this.client };
  }
}
