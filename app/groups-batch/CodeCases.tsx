/**
 * A code reward's test cases (grpo-code): `CaseChips`, one chip per case with its verdict and
 * whether the output matched (the Groups view), and `CaseTable`, each case's verdict, detail,
 * stdout and stderr (the session inspector). The companion graded them; the worker stored them.
 */
import type { CaseResult } from '../../worker/protocol';

const mark = (c: CaseResult) => (c.passed ? '✓' : '✗');
const verdictOf = (c: CaseResult) => c.verdict ?? 'NOT RUN';

export function CaseChips({ cases, label }: { cases: readonly CaseResult[]; label: string }) {
  return (
    <ul className="case-chips" aria-label={label} data-testid="case-chips">
      {cases.map((c, i) => (
        <li key={i} className={`chip ${c.passed ? 'ok' : 'bad'}`} title={c.detail} data-testid="case-chip">
          case {i + 1}: {verdictOf(c)} {mark(c)}
          <span className="visually-hidden">{c.passed ? ' passed' : ' failed'}</span>
        </li>
      ))}
    </ul>
  );
}

export function CaseTable({ cases }: { cases: readonly CaseResult[] }) {
  return (
    <table className="case-table" data-testid="case-table">
      <caption>Test cases, as the companion ran them</caption>
      <thead>
        <tr>
          <th scope="col">Case</th>
          <th scope="col">Verdict</th>
          <th scope="col">Passed</th>
          <th scope="col">Detail</th>
          <th scope="col">stdout</th>
          <th scope="col">stderr</th>
        </tr>
      </thead>
      <tbody>
        {cases.map((c, i) => (
          <tr key={i}>
            <th scope="row">{i + 1}</th>
            <td>{verdictOf(c)}</td>
            <td className={c.passed ? 'ok' : 'bad'}>{c.passed ? 'yes' : 'no'}</td>
            <td>{c.detail}</td>
            <td>
              <pre data-testid="case-stdout">{c.stdout || '(empty)'}</pre>
            </td>
            <td>
              <pre data-testid="case-stderr">{c.stderr || '(empty)'}</pre>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
