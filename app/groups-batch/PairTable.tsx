/**
 * One DPO preference pair of the Groups view: prompt and ground truth, the margin (implicit reward
 * chosen − rejected), whether the pair is ranked correctly (margin > 0) and the loss variant's
 * value for the pair; then the chosen and the rejected completion, each with its reward and its
 * implicit reward β · Σ (log π − log π_ref), coloured by role (chosen / rejected, PairLegend), not
 * by sign. Not an advantage group (GroupTable).
 */
import type { GroupRecord } from '../../worker/protocol';
import type { InspectProps } from './GroupTable';
import { pairStats, signed } from '../shared/estimate-text';

const ROLES = ['chosen', 'rejected'] as const;

/** The key to the implicit-reward colours, shown once above the pairs. */
export function PairLegend() {
  return (
    <p className="pair-legend" data-testid="pair-legend">
      Implicit reward colours: <span className="implicit chosen">chosen completion</span>{' '}
      <span className="implicit rejected">rejected completion</span>
    </p>
  );
}

export function PairTable({ g, index, open, onInspect }: { g: GroupRecord; index: number } & InspectProps) {
  return (
    <table className="group pair" data-testid="group">
      <caption>
        Pair {index}: <code>{g.prompt}</code> → ground truth <strong>{g.answer}</strong> ·{' '}
        <span data-testid="pair-stats">
          {g.pair ? pairStats(g.pair) : 'margin and loss not recorded (stored before they were kept)'}
        </span>
      </caption>
      <thead>
        <tr>
          <th scope="col">Role</th>
          <th scope="col">Completion</th>
          <th scope="col">Reward</th>
          <th scope="col">Components</th>
          <th scope="col">Implicit reward β·Δlog π</th>
          <th scope="col">Length</th>
          <th scope="col">Session</th>
        </tr>
      </thead>
      <tbody>
        {g.samples.map((s) => {
          const role = ROLES[s.sample] ?? s.status;
          const isOpen = open === s.sample;
          return (
            <tr key={s.sample}>
              <th scope="row">{role}</th>
              <td>
                <code className="completion">{s.completion || '(empty)'}</code>
              </td>
              <td>{s.reward}</td>
              <td>
                {Object.entries(s.components)
                  .map(([k, v]) => `${k} ${v}`)
                  .join(', ')}
              </td>
              <td className={`implicit ${role}`}>{signed(s.advantage)}</td>
              <td>{s.length}</td>
              <td>
                <button
                  type="button"
                  aria-expanded={isOpen}
                  aria-label={`Inspect ${role} completion of pair ${index}: ${g.prompt}`}
                  onClick={(e) => onInspect(isOpen ? null : s.sample, e.currentTarget)}
                >
                  Inspect {role}
                </button>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
