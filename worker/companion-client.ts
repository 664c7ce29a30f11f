/**
 * The worker's side of the companion (companion/server.ts): HTTP to 127.0.0.1 with the token the
 * companion printed. Every failure becomes a sentence a person can act on (not running, wrong
 * token, origin not allowed), never a reward: code rewards will treat it as an infrastructure
 * failure.
 */
import type { CompanionHealth, CompanionStatus } from './protocol';

/** `http://127.0.0.1:PORT` or `http://localhost:PORT`, nothing else (the companion binds loopback only). */
export function companionUrlProblem(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `companion address '${url}' is not a URL; expected http://127.0.0.1:PORT`;
  }
  if (u.protocol !== 'http:' || (u.hostname !== '127.0.0.1' && u.hostname !== 'localhost') || !u.port || u.pathname !== '/' || u.search || u.hash) {
    return `companion address '${url}' must be http://127.0.0.1:PORT (or localhost), with no path`;
  }
  return null;
}

export class CompanionClient {
  readonly url: string;

  constructor(url: string, private readonly token: string, private readonly fetchFn: typeof fetch = (...a) => fetch(...a)) {
    this.url = url.replace(/\/$/, '');
  }

  /** GET /v1/health, or the reason it failed. */
  async status(): Promise<CompanionStatus> {
    try {
      return { url: this.url, connected: true, health: await this.get<CompanionHealth>('/v1/health') };
    } catch (e) {
      return { url: this.url, connected: false, error: (e as Error).message };
    }
  }

  private async get<T>(path: string): Promise<T> {
    let res: Response;
    try {
      res = await this.fetchFn(`${this.url}${path}`, { headers: { authorization: `Bearer ${this.token}` } });
    } catch (e) {
      throw new Error(`no companion answers at ${this.url} (${(e as Error).message}): start one with npx dewpoint companion`);
    }
    const body = (await res.json().catch(() => ({}))) as { error?: string };
    if (res.status === 401) throw new Error(`the companion refused the token (${body.error ?? 'HTTP 401'}): paste the token it printed at start`);
    if (res.status === 403) throw new Error(`the companion refused this page (${body.error ?? 'HTTP 403'})`);
    if (!res.ok) throw new Error(`the companion answered HTTP ${res.status}: ${body.error ?? ''}`);
    return body as T;
  }
}
