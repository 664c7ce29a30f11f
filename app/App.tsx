/**
 * The app shell: a skip link, the navigation the product grows into, and the current view.
 * Only views that work are listed; routing is the URL hash (`#/system`). A view may read a query
 * after its route (`#/episodes?run=…&step=…`): the router matches the part before `?`.
 */
import { useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useState, type ComponentType } from 'react';
import { companionQuery } from './queries/companion';
import { useRunStore } from './state/live-run';

/**
 * A view loaded on first visit (its own chunk: the build keeps every chunk under 500 kB, and a
 * page opened on System does not load the charts).
 */
const lazyView = <K extends string>(load: () => Promise<Record<K, ComponentType>>, name: K) =>
  lazy(() => load().then((m) => ({ default: m[name] })));

const ExperimentsView = lazyView(() => import('./experiments/ExperimentsView'), 'ExperimentsView');
const GroupsView = lazyView(() => import('./groups-batch/GroupsView'), 'GroupsView');
const BatchView = lazyView(() => import('./groups-batch/BatchView'), 'BatchView');
const EpisodesView = lazyView(() => import('./episodes/EpisodesView'), 'EpisodesView');
const FlowView = lazyView(() => import('./flow/FlowView'), 'FlowView');
const CompareView = lazyView(() => import('./compare/CompareView'), 'CompareView');
const SystemView = lazyView(() => import('./system/SystemView'), 'SystemView');

interface ViewDef {
  id: string;
  title: string;
  render: () => React.ReactNode;
  /** The view uses the page's width (a dashboard's grid of charts) instead of the reading width. */
  wide?: boolean;
}

const VIEWS: ViewDef[] = [
  { id: 'experiments', title: 'Experiments', render: () => <ExperimentsView />, wide: true },
  { id: 'groups', title: 'Groups', render: () => <GroupsView /> },
  { id: 'batch', title: 'Batch', render: () => <BatchView /> },
  { id: 'episodes', title: 'Episodes', render: () => <EpisodesView /> },
  { id: 'flow', title: 'Flow', render: () => <FlowView /> },
  { id: 'compare', title: 'Compare', render: () => <CompareView /> },
  { id: 'system', title: 'System', render: () => <SystemView /> },
];

function currentViewId(): string {
  const id = window.location.hash.replace(/^#\/?/, '').split('?')[0];
  return VIEWS.some((v) => v.id === id) ? id : VIEWS[0].id;
}

/**
 * While a run is live in this tab, leaving or reloading the page would end it mid-step: the
 * browser asks first (beforeunload). A run so ended is listed as interrupted and can continue
 * from its last checkpoint.
 */
function useWarnBeforeUnload(): void {
  const live = useRunStore((s) => s.status === 'running' || s.status === 'paused');
  useEffect(() => {
    if (!live) return;
    const warn = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = ''; // older Chrome needs a value set to show the dialog
    };
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [live]);
}

export function App() {
  useWarnBeforeUnload();
  // Reconnects the tab's companion after a reload, before a grpo-code run continues (queries/companion.ts).
  useQuery({ ...companionQuery(), staleTime: Infinity });
  const [viewId, setViewId] = useState(currentViewId);
  useEffect(() => {
    const onHash = () => setViewId(currentViewId());
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  const view = VIEWS.find((v) => v.id === viewId) ?? VIEWS[0];
  useEffect(() => {
    document.title = `${view.title} · Dewpoint`;
  }, [view]);

  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">Dewpoint</span>
        <nav aria-label="Views">
          <ul>
            {VIEWS.map((v) => (
              <li key={v.id}>
                <a href={`#/${v.id}`} data-testid={`nav-${v.id}`} aria-current={v.id === view.id ? 'page' : undefined}>
                  {v.title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
      </header>
      <main id="main" tabIndex={-1} className={view.wide ? 'wide' : undefined}>
        <Suspense fallback={<p role="status">Loading the {view.title} view…</p>}>{view.render()}</Suspense>
      </main>
    </div>
  );
}
