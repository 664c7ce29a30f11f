/**
 * CompanionClient.openSession within the companion's capacity, against a fake fetch (unit tests;
 * the real server's 503 + Retry-After is exercised in cli/companion-env*.test.ts): a companion at
 * capacity is waited out by its Retry-After and retried; one that never frees a place fails with
 * CompanionAtCapacity within the bounded wait; its own failure (infrastructure) is not retried.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CompanionAtCapacity, CompanionClient, DEFAULT_CAPACITY_WAIT, retryAfterMs } from './client';

const OPENED = { id: 's1', limits: { wallSeconds: 30, cpuSeconds: 10, memoryBytes: 1 << 28, messageBytes: 1 << 20 } };
const FULL = { error: 'all 1 environment sessions are open; close one or wait' };

/** A fake fetch for unit tests: answers each call with the next reply of `replies` (the last one repeats), recording the calls. */
function fakeFetch(replies: { status: number; body: unknown; retryAfter?: string }[]) {
  const calls: { url: string; init: RequestInit | undefined; at: number }[] = [];
  const f: typeof fetch = async (input, init) => {
    calls.push({ url: String(input), init, at: Date.now() });
    const r = replies[Math.min(calls.length - 1, replies.length - 1)];
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (r.retryAfter !== undefined) headers['retry-after'] = r.retryAfter;
    return new Response(JSON.stringify(r.body), { status: r.status, headers });
  };
  return Object.assign(f, { calls });
}

const program = { files: { 'env.py': 'pass' }, argv: ['python3', 'env.py'] };

describe('openSession within the companion capacity', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('503 twice with Retry-After, then 200: waits out each Retry-After and opens the session', async () => {
    const fetchFn = fakeFetch([
      { status: 503, body: FULL, retryAfter: '2' },
      { status: 503, body: FULL, retryAfter: '1' },
      { status: 200, body: OPENED },
    ]);
    const client = new CompanionClient('http://127.0.0.1:8787', 'tok', fetchFn);
    const opened = client.openSession(program);
    await vi.runAllTimersAsync();
    await expect(opened).resolves.toEqual(OPENED);
    expect(fetchFn.calls.map((c) => c.url)).toEqual(Array(3).fill('http://127.0.0.1:8787/v1/sessions'));
    const t0 = fetchFn.calls[0].at;
    expect(fetchFn.calls.map((c) => c.at - t0)).toEqual([0, 2000, 3000]);
    expect(JSON.parse(fetchFn.calls[2].init!.body as string)).toEqual(program);
    expect((fetchFn.calls[2].init!.headers as Record<string, string>).authorization).toBe('Bearer tok');
  });

  it('429 without Retry-After waits the default', async () => {
    const fetchFn = fakeFetch([
      { status: 429, body: {} },
      { status: 200, body: OPENED },
    ]);
    const opened = new CompanionClient('http://127.0.0.1:8787', 'tok', fetchFn).openSession(program);
    await vi.runAllTimersAsync();
    await expect(opened).resolves.toEqual(OPENED);
    expect(fetchFn.calls[1].at - fetchFn.calls[0].at).toBe(DEFAULT_CAPACITY_WAIT.defaultMs);
  });

  it('a companion that never frees a place: CompanionAtCapacity after the bounded wait, each wait capped', async () => {
    const fetchFn = fakeFetch([{ status: 503, body: FULL, retryAfter: '3600' }]);
    const client = new CompanionClient('http://127.0.0.1:8787', 'tok', fetchFn);
    const opened = client.openSession(program, undefined, { totalMs: 12_000, defaultMs: 1000, maxEachMs: 5000 });
    const outcome = expect(opened).rejects.toThrow(CompanionAtCapacity);
    await vi.runAllTimersAsync();
    await outcome;
    const e = await opened.catch((x: Error) => x);
    expect(e).toMatchObject({ name: 'CompanionAtCapacity' });
    expect((e as Error).message).toMatch(
      /the companion is at capacity: no environment session place came free in 4 tries over 12\.0 s/,
    );
    expect((e as Error).message).toMatch(/\(it answered HTTP 503: all 1 environment sessions are open/);
    const t0 = fetchFn.calls[0].at;
    // 5 s (capped), 5 s, then the 2 s left of the 12 s.
    expect(fetchFn.calls.map((c) => c.at - t0)).toEqual([0, 5000, 10_000, 12_000]);
  });

  it("the companion's own failure (503, infrastructure) and other errors are not capacity: thrown at once", async () => {
    const broken = fakeFetch([{ status: 503, body: { error: 'RunnerUnavailable: no python3', infrastructure: true } }]);
    await expect(new CompanionClient('http://127.0.0.1:8787', 'tok', broken).openSession(program)).rejects.toThrow(
      /the companion answered HTTP 503: RunnerUnavailable: no python3/,
    );
    expect(broken.calls).toHaveLength(1);
    const refused = fakeFetch([{ status: 401, body: { error: 'bad token' } }]);
    await expect(new CompanionClient('http://127.0.0.1:8787', 'tok', refused).openSession(program)).rejects.toThrow(
      /refused the token \(bad token\)/,
    );
  });

  it('an abort cancels the wait between tries', async () => {
    const fetchFn = fakeFetch([{ status: 503, body: FULL, retryAfter: '1' }]);
    const abort = new AbortController();
    const opened = new CompanionClient('http://127.0.0.1:8787', 'tok', fetchFn).openSession(program, abort.signal);
    const outcome = expect(opened).rejects.toThrow(/cancelled while the companion was at capacity/);
    await vi.advanceTimersByTimeAsync(1500);
    abort.abort();
    await outcome;
    expect(fetchFn.calls).toHaveLength(2);
  });
});

describe('retryAfterMs', () => {
  it('reads seconds and HTTP dates; absent or unreadable is null', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs('0.5')).toBe(500);
    expect(retryAfterMs('Thu, 01 Jan 1970 00:00:10 GMT', 4000)).toBe(6000);
    expect(retryAfterMs(null)).toBeNull();
    expect(retryAfterMs('soon')).toBeNull();
    expect(retryAfterMs('-1')).toBeNull();
  });
});
