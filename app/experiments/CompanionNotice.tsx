/**
 * What the Experiments view says under a preset that needs the companion (grpo-code, grpo-env): connected,
 * with its runner and workers, or how to start and connect one. Reading it reconnects the tab's
 * last connection after a reload (queries/companion.ts).
 */
import { useQuery } from '@tanstack/react-query';
import { companionQuery } from '../queries/companion';

export function CompanionNotice() {
  const q = useQuery(companionQuery());
  if (q.isPending) return <p data-testid="companion-notice">Checking the companion…</p>;
  const s = q.data;
  if (s?.connected) {
    return (
      <p className="ok" data-testid="companion-notice">
        Companion connected at {s.url}: {s.health.runner} runner, {s.health.workers} workers; code rewards and
        environment programs run there.
      </p>
    );
  }
  return (
    <p role="status" className="bad" data-testid="companion-notice">
      {s
        ? `The companion at ${s.url} cannot be reached (${s.error}). `
        : q.isError
          ? `${q.error.message}. `
          : 'No companion is connected. '}
      This preset runs programs in it (the model&apos;s, or your environment): start one with{' '}
      <code>npx dewpoint companion</code> and open the link it prints, or paste the link in{' '}
      <a href="#/system">System</a>. Without one, every episode fails as an infrastructure failure (masked, never scored
      0).
    </p>
  );
}
