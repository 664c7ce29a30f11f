/**
 * The System view's companion section: connect the worker to a local companion (the link
 * `npx dewpoint companion` prints opens `#/system?companion=URL&token=T`, which connects and then
 * drops the token from the address bar; or paste the address and the token), and show its health
 * or why it cannot be reached. The connection is kept for the tab (sessionStorage), not on disk.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useState } from 'react';
import type { CompanionStatus } from '../../worker/protocol';
import { keys } from '../queries/keys';
import { parseCompanionLink, storeCompanion, storedCompanion as stored } from '../queries/companion';
import { workbench } from '../worker-client';

const DEFAULT_URL = 'http://127.0.0.1:8787';

const mib = (b: number) => `${(b / 1024 ** 2).toFixed(0)} MiB`;

function Health({ status }: { status: Extract<CompanionStatus, { connected: true }> }) {
  const h = status.health;
  return (
    <dl className="facts" data-testid="companion-health">
      <dt>Address</dt>
      <dd>{status.url}</dd>
      <dt>Version</dt>
      <dd>{h.version}</dd>
      <dt>Runner</dt>
      <dd>{h.runner}</dd>
      <dt>Workers</dt>
      <dd>
        {h.workers} ({h.running} running, {h.queue} of {h.queueLimit} queued)
      </dd>
      <dt>Default limits</dt>
      <dd>
        {h.limits.wallSeconds} s wall, {h.limits.cpuSeconds} s CPU, {mib(h.limits.memoryBytes)} memory,{' '}
        {mib(h.limits.messageBytes)} of output
      </dd>
      <dt>Network isolation</dt>
      <dd>
        {h.networkIsolation
          ? 'on'
          : 'off: programs can reach the network (this machine gives the runner no network namespace)'}
      </dd>
      {h.containment && (
        <>
          <dt>Programs run as</dt>
          <dd>{h.containment.user}</dd>
          <dt>Processes</dt>
          <dd>
            {h.containment.maxProcesses === null
              ? 'not bounded: a fork bomb is stopped only by the CPU limit'
              : `at most ${h.containment.maxProcesses} at once`}
          </dd>
          <dt>Containment</dt>
          <dd>
            <ul data-testid="companion-containment">
              {h.containment.notes.map((n, i) => (
                <li key={i}>{n}</li>
              ))}
            </ul>
          </dd>
        </>
      )}
    </dl>
  );
}

export function CompanionPanel() {
  const id = useId();
  const queryClient = useQueryClient();
  const [url, setUrl] = useState(() => stored()?.url ?? DEFAULT_URL);
  const [token, setToken] = useState(() => stored()?.token ?? '');
  const connect = useMutation({
    mutationFn: (c: { url: string; token: string }): Promise<CompanionStatus> =>
      workbench.connectCompanion(c.url, c.token),
    onSuccess: (status, c) => {
      storeCompanion(status.connected ? c : null);
      queryClient.setQueryData(keys.companion(), status);
    },
  });
  const { mutate } = connect;

  // A link from the companion connects at once (opened fresh, or followed while this view is
  // shown); its token then leaves the address bar and history. Else the tab's last connection.
  useEffect(() => {
    const use = (c: { url: string; token: string }) => {
      setUrl(c.url);
      setToken(c.token);
      mutate(c);
    };
    const fromHash = () => {
      const link = parseCompanionLink(window.location.hash);
      if (!link) return false;
      window.history.replaceState(window.history.state, '', '#/system');
      use(link);
      return true;
    };
    if (!fromHash()) {
      const last = stored();
      if (last) use(last);
    }
    window.addEventListener('hashchange', fromHash);
    return () => window.removeEventListener('hashchange', fromHash);
  }, [mutate]);

  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    // A pasted link fills both fields.
    const link = parseCompanionLink(url);
    const c = link ?? { url: url.trim(), token };
    setUrl(c.url);
    setToken(c.token);
    connect.mutate(c);
  };
  const status = connect.data;
  return (
    <section aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Companion</h2>
      <p data-testid="companion-purpose">
        The companion runs programs on this machine, each in a sandbox: the test cases that grade code rewards, and
        environment programs (yours, one session per episode). Start it with <code>npx dewpoint companion</code> and
        open the link it prints, or paste its address and token here.
      </p>
      <form onSubmit={submit} aria-label="Connect to the companion" className="companion-form">
        <label htmlFor={`${id}-url`}>Address (or the printed link)</label>
        <input id={`${id}-url`} value={url} onChange={(e) => setUrl(e.target.value)} spellCheck={false} />
        <label htmlFor={`${id}-token`}>Token</label>
        <input
          id={`${id}-token`}
          type="password"
          value={token}
          onChange={(e) => setToken(e.target.value)}
          autoComplete="off"
        />
        <button type="submit" disabled={connect.isPending}>
          Connect
        </button>
      </form>
      <div aria-live="polite">
        {connect.isPending && <p role="status">Connecting…</p>}
        {connect.isError && (
          <p role="alert" className="bad" data-testid="companion-status">
            Not connected: {connect.error.message}
          </p>
        )}
        {status && !status.connected && (
          <p role="alert" className="bad" data-testid="companion-status">
            Not connected: {status.error}
          </p>
        )}
        {status?.connected && (
          <>
            <p className="ok" data-testid="companion-status">
              Connected
            </p>
            <Health status={status} />
          </>
        )}
      </div>
    </section>
  );
}
