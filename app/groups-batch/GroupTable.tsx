/**
 * One GRPO advantage group of the Groups view: prompt and ground truth, the statistics the
 * estimator used (baseline, the std it divided by) with its settings and formula, then each
 * completion with reward, components, advantage, status and length (and, for a step sampled
 * ahead, the version that served it and how far it trailed), and a button opening its
 * session (or why there is none: an imported dump without token ids). A completion keeps its line
 * breaks (a program); an episode's turns are a numbered list when there are several. A
 * leave-one-out estimator (RLOO) adds each completion's own baseline. Not a DPO pair (PairTable).
 */
import type { GroupRecord } from '../../worker/protocol';
import { CaseChips } from './CodeCases';
import { estimateFormula, estimateSettings, groupStats, signed } from '../shared/estimate-text';

export interface InspectProps {
  /** The sample whose inspector is open in this group, or null. */
  open: number | null;
  /** Opens (or, with null, closes) a sample's inspector; `opener` is the button, which gets focus back when it closes. */
  onInspect: (sample: number | null, opener: HTMLElement) => void;
}

/** One turn of an episode: its action, the environment's answer and a code task's verdicts. */
function TurnCells({ t, label }: { t: NonNullable<GroupRecord['samples'][number]['turns']>[number]; label: string }) {
  return (
    <>
      <code className="completion">{t.action || '(empty)'}</code>
      {t.observation && <code className="observation"> {t.observation}</code>}
      {t.cases && <CaseChips cases={t.cases} label={label} />}
    </>
  );
}

export function GroupTable({
  g,
  open,
  onInspect,
  noSessions = null,
}: { g: GroupRecord; noSessions?: string | null } & InspectProps) {
  const e = g.estimate;
  const perSampleBaseline = e?.baseline === null;
  const critic = g.samples.some((s) => s.critic);
  const served = g.samples.some((s) => s.served);
  return (
    <table className={`group ${g.zeroStd ? 'zero-std' : ''}`} data-testid="group">
      <caption>
        <code>{g.prompt}</code> → ground truth <strong>{g.answer}</strong> ·{' '}
        <span data-testid="group-stats">{groupStats(g)}</span>
        {g.zeroStd && <span className="flag"> · zero variance: no learning signal</span>}
        {e && (
          <small className="estimate" data-testid="group-estimate">
            {estimateSettings(e)}: {estimateFormula(e, e.members)}.
          </small>
        )}
      </caption>
      <thead>
        <tr>
          <th scope="col">#</th>
          <th scope="col">Completion</th>
          <th scope="col">Reward</th>
          <th scope="col">Components</th>
          {perSampleBaseline && <th scope="col">Baseline</th>}
          {critic && <th scope="col">Critic (first id)</th>}
          <th scope="col">{critic ? 'GAE advantage (mean, range)' : 'Advantage'}</th>
          <th scope="col">Status</th>
          <th scope="col">Length</th>
          {served && <th scope="col">Sampled by</th>}
          <th scope="col">Session</th>
        </tr>
      </thead>
      <tbody>
        {g.samples.map((s) => {
          const isOpen = open === s.sample;
          return (
            <tr key={s.sample}>
              <th scope="row">{s.sample}</th>
              <td>
                {s.turns && s.turns.length === 1 ? (
                  <TurnCells t={s.turns[0]} label={`Test cases of sample ${s.sample}`} />
                ) : s.turns ? (
                  <ol className="episode-turns" aria-label={`Turns of sample ${s.sample}`} data-testid="group-turns">
                    {s.turns.map((t, k) => (
                      <li key={k}>
                        <TurnCells t={t} label={`Test cases of sample ${s.sample}, turn ${k + 1}`} />
                      </li>
                    ))}
                  </ol>
                ) : (
                  <code className="completion">{s.completion || '(empty)'}</code>
                )}
              </td>
              <td>{s.reward}</td>
              <td>
                {Object.entries(s.components)
                  .map(([k, v]) => `${k} ${v}`)
                  .join(', ')}
              </td>
              {perSampleBaseline && <td>{s.baseline === undefined ? 'not trained' : s.baseline.toFixed(3)}</td>}
              {critic && (
                <td data-testid="group-critic">
                  {s.critic ? `V ${s.critic.value.toFixed(3)} · R ${s.critic.return.toFixed(3)}` : 'not trained'}
                </td>
              )}
              <td className={s.advantage > 0 ? 'ok' : s.advantage < 0 ? 'bad' : ''}>
                {signed(s.advantage)}
                {s.critic && ` (${signed(s.critic.advantageMin)} … ${signed(s.critic.advantageMax)})`}
              </td>
              <td>{s.status}</td>
              <td>
                {Number.isNaN(s.length) ? 'not recorded' : s.length}
                {s.truncated ? ' (truncated)' : ''}
              </td>
              {served && (
                <td data-testid="group-served">
                  {s.served ? `version ${s.served.version}, ${s.served.staleness} behind` : 'not recorded'}
                </td>
              )}
              <td>
                {noSessions !== null ? (
                  <span className="muted" data-testid="group-no-session">
                    {noSessions}
                  </span>
                ) : (
                  <button
                    type="button"
                    aria-expanded={isOpen}
                    aria-label={`Inspect sample ${s.sample} of group ${g.prompt}`}
                    onClick={(e) => onInspect(isOpen ? null : s.sample, e.currentTarget)}
                  >
                    Inspect sample {s.sample}
                  </button>
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
