/**
 * A code reward's test cases (grpo-code): `CaseChips`, one chip per case saying what became of it
 * ("case 1: passed", "case 2: wrong output", "case 3: timed out") with its input → the program's
 * output and the expected output beside it (the Groups view), and `CaseTable`, each case's result,
 * input, expected output, stdout, stderr and the companion's detail (the session inspector). The
 * companion graded them; the worker stored them with their input and expected output (runs stored
 * before that have neither, and say so). Words come from case-text.ts.
 */
import { useId } from 'react';
import type { CaseResult } from '../../worker/protocol';
import { caseChipText, caseDescription, caseIoText, caseResultWord } from './case-text';

function Chip({ c, i }: { c: CaseResult; i: number }) {
  const descriptionId = useId();
  const io = caseIoText(c);
  const description = caseDescription(c, i);
  return (
    <li className={`chip ${c.passed ? 'ok' : 'bad'}`} data-testid="case-chip" aria-describedby={descriptionId}>
      <span title={description}>
        <span data-testid="case-chip-result">{caseChipText(c, i)}</span>
        {io !== null && <span className="case-io"> · {io}</span>}
      </span>
      <span id={descriptionId} hidden>
        {description}
      </span>
    </li>
  );
}

export function CaseChips({ cases, label }: { cases: readonly CaseResult[]; label: string }) {
  return (
    <ul className="case-chips" aria-label={label} data-testid="case-chips">
      {cases.map((c, i) => (
        <Chip key={i} c={c} i={i} />
      ))}
    </ul>
  );
}

/** A program's input or output as written, or why it is not shown. */
function Text({
  text,
  testId,
  missing = 'not recorded',
}: {
  text: string | undefined;
  testId?: string;
  missing?: string;
}) {
  if (text === undefined)
    return (
      <span className="muted" data-testid={testId}>
        {missing}
      </span>
    );
  return <pre data-testid={testId}>{text || '(empty)'}</pre>;
}

export function CaseTable({ cases }: { cases: readonly CaseResult[] }) {
  return (
    <table className="case-table" data-testid="case-table">
      <caption>Test cases, as the companion ran them: input, expected output and what the program wrote</caption>
      <thead>
        <tr>
          <th scope="col">Case</th>
          <th scope="col">Result</th>
          <th scope="col">Input</th>
          <th scope="col">Expected output</th>
          <th scope="col">Program output (stdout)</th>
          <th scope="col">stderr</th>
          <th scope="col">Detail</th>
        </tr>
      </thead>
      <tbody>
        {cases.map((c, i) => (
          <tr key={i} data-testid="case-row">
            <th scope="row">{i + 1}</th>
            <td className={c.passed ? 'ok' : 'bad'}>{caseResultWord(c)}</td>
            <td>
              <Text text={c.input} testId="case-input" />
            </td>
            <td>
              <Text text={c.expected} testId="case-expected" />
            </td>
            <td>
              <Text text={c.verdict === null ? undefined : c.stdout} testId="case-stdout" missing="not run" />
            </td>
            <td>
              <Text text={c.verdict === null ? undefined : c.stderr} testId="case-stderr" missing="not run" />
            </td>
            <td>{c.detail}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
