/**
 * Which runs some page is running now, across tabs: each running loop holds a lock named after its
 * run (the Web Locks API in the browser, shared by every page of the origin and released by the
 * browser when a tab closes). A run stored as running or paused is live in another tab when its
 * lock is held and no loop of this worker runs it, and interrupted (a closed tab) when nobody
 * holds it. Not the store (worker/store) and not the loop (run-manager.ts).
 */

export interface RunLocks {
  /** Takes `runId`'s lock when nobody holds it: resolves to the function that releases it, or null when it is held. */
  acquire(runId: string): Promise<(() => void) | null>;
  /** The runs whose lock is held now, by any page (this one included). */
  held(): Promise<Set<string>>;
}

const PREFIX = 'dewpoint-run:';

/**
 * Run locks over the Web Locks API (`navigator.locks`, also in dedicated workers). Where the API
 * refuses (an opaque origin), a run goes on without a lock and listings fall back to "interrupted".
 */
export function webRunLocks(locks: LockManager): RunLocks {
  return {
    acquire: (runId) =>
      new Promise((resolve) => {
        locks
          .request(`${PREFIX}${runId}`, { ifAvailable: true }, (lock) => {
            if (!lock) {
              resolve(null);
              return undefined;
            }
            // The lock is held until the returned promise settles: until the loop calls release.
            return new Promise<void>((release) => resolve(() => release()));
          })
          .catch((e: Error) => {
            console.error(
              `run ${runId}: no Web Lock (${e.message}); other tabs will list it as interrupted while it runs`,
            );
            resolve(() => {});
          });
      }),
    held: async () => {
      const { held = [] } = await locks.query().catch(() => ({ held: [] as LockInfo[] }));
      return new Set(held.flatMap((l) => (l.name?.startsWith(PREFIX) ? [l.name.slice(PREFIX.length)] : [])));
    },
  };
}

/**
 * Locks in memory, shared by the RunManagers given the same instance: where there are no Web Locks
 * (Node), or to stand for two pages of one origin in a test. A lock is taken once until released.
 */
export function memoryRunLocks(): RunLocks {
  const taken = new Set<string>();
  return {
    acquire: async (runId) => {
      if (taken.has(runId)) return null;
      taken.add(runId);
      return () => void taken.delete(runId);
    },
    held: async () => new Set(taken),
  };
}
