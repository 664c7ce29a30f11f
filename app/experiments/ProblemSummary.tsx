/**
 * The problems with the options, next to Start: how many, and each one (in the order of the form)
 * as a button that takes the person to its field (opens its section, scrolls to it, focuses it).
 * A problem no shown field holds (an unknown option) is listed as text. The count sentence is
 * `#run-start-note`, which Start names as its description. Not the check itself (the worker's,
 * through the view's query).
 */
import type { FieldSpec, OptionProblem, RunOptions } from '../../worker/protocol';
import { inFormOrder, shownField } from './objective-fields';

interface Props {
  fields: FieldSpec[];
  options: RunOptions;
  problems: OptionProblem[];
  /** The check failed (the worker could not answer): its message. */
  checkError: string | null;
  onReveal: (path: string) => void;
}

export function ProblemSummary({ fields, options, problems, checkError, onReveal }: Props) {
  const n = problems.length;
  return (
    <div className="problem-summary">
      <span id="run-start-note" className={n || checkError ? 'bad' : undefined}>
        {checkError
          ? ` Could not check the options: ${checkError}`
          : n
            ? ` ${n} problem${n > 1 ? 's' : ''} with the options: fix ${n > 1 ? 'them' : 'it'} to start.`
            : ''}
      </span>
      {n > 0 && !checkError && (
        <ul className="bad" aria-label="Problems with the options" data-testid="option-problems">
          {inFormOrder(fields, options, problems).map((p) => (
            <li key={`${p.path}: ${p.message}`}>
              {shownField(fields, options, p.path) ? (
                <button type="button" className="link-button" title="Go to the field" onClick={() => onReveal(p.path)}>
                  {p.message}
                </button>
              ) : (
                p.message
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
