/**
 * The options of a run, rendered from the worker's form description of the preset (FieldSpec):
 * the common fields (steps, learning rate, prompts or pairs, group size, seed: `common` in the
 * schema) in an always-open first section, then the sections (Objective, Advantage, KL,
 * Corrections, Sampling, Optimizer, Run), each a disclosure (a button with `aria-expanded`),
 * collapsed until opened or until one of its fields has a problem. `reveal(path)` (through `ref`)
 * opens a field's section, scrolls to it and focuses it: the problem summary next to Start uses it.
 * Not the validator (the worker is), not the Start button nor the problem summary (the view's).
 */
import { useImperativeHandle, useState, type Ref } from 'react';
import { flushSync } from 'react-dom';
import type { FieldSpec, OptionProblem, RunOptions } from '../../worker/protocol';
import {
  COMMON_SECTION,
  problemsBySection,
  sectionOf,
  sectionsOf,
  shownField,
  valueAt,
  withField,
  type FormSection,
} from './objective-fields';
import { OptionField } from './OptionField';

export interface ObjectiveFormHandle {
  /** Opens the section of the field shown at `path`, scrolls it into view and focuses it. */
  reveal: (path: string) => void;
}

interface Props {
  fields: FieldSpec[];
  options: RunOptions;
  problems: OptionProblem[];
  onChange: (options: RunOptions) => void;
  ref?: Ref<ObjectiveFormHandle>;
}

const idOf = (section: FormSection) => `section-${section.toLowerCase()}`;

export function ObjectiveForm({ fields, options, problems, onChange, ref }: Props) {
  const [open, setOpen] = useState<ReadonlySet<FormSection>>(() => new Set());
  // The sections that have had a problem since they last had none.
  const [flagged, setFlagged] = useState<ReadonlySet<FormSection>>(() => new Set());
  const counts = problemsBySection(fields, options, problems);
  // A section opens when one of its fields gets a problem, and stays open once it is fixed (the
  // field being edited keeps its focus); a person may close it again. State adjusted while
  // rendering, as React's docs show for state that follows props.
  const fresh = [...counts.keys()].filter((s) => !flagged.has(s));
  if (fresh.length || [...flagged].some((s) => !counts.has(s))) {
    setFlagged(new Set(counts.keys()));
    if (fresh.length) setOpen(new Set([...open, ...fresh]));
  }

  useImperativeHandle(
    ref,
    () => ({
      reveal(path) {
        const field = shownField(fields, options, path);
        if (!field) return;
        flushSync(() => setOpen((s) => new Set(s).add(sectionOf(field))));
        const input = document.getElementById(`opt-${path}`);
        input?.scrollIntoView({ block: 'center' });
        input?.focus({ preventScroll: true });
      },
    }),
    [fields, options],
  );

  const problemAt = new Map<string, string[]>();
  for (const p of problems) problemAt.set(p.path, [...(problemAt.get(p.path) ?? []), p.message]);
  const toggle = (section: FormSection) =>
    setOpen((s) => {
      const next = new Set(s);
      if (!next.delete(section)) next.add(section);
      return next;
    });

  return (
    <div className="objective-form">
      {sectionsOf(fields, options).map(([section, list]) => {
        const always = section === COMMON_SECTION;
        const expanded = always || open.has(section);
        const n = counts.get(section) ?? 0;
        const id = idOf(section);
        return (
          <fieldset
            key={section}
            data-testid={`section-${section}`}
            aria-labelledby={`${id}-name`}
            className={`form-section${always ? ' common' : ''}${expanded ? '' : ' collapsed'}`}
          >
            <legend>
              {always ? (
                <span id={`${id}-name`}>{section}</span>
              ) : (
                <button
                  type="button"
                  className="section-toggle"
                  aria-expanded={expanded}
                  aria-controls={`${id}-fields`}
                  onClick={() => toggle(section)}
                >
                  <span className="section-marker" aria-hidden="true">
                    {expanded ? '▾' : '▸'}
                  </span>
                  <span id={`${id}-name`}>{section}</span>
                  {n > 0 && (
                    <span className="section-problems bad">
                      {' '}
                      · {n} problem{n > 1 ? 's' : ''}
                    </span>
                  )}
                </button>
              )}
            </legend>
            <div id={`${id}-fields`} className="section-fields" hidden={!expanded}>
              {list.map((f) => (
                <OptionField
                  key={f.path}
                  field={f}
                  value={valueAt(options, f.path)}
                  messages={problemAt.get(f.path)}
                  onValue={(v) => onChange(withField(options, fields, f.path, v))}
                />
              ))}
            </div>
          </fieldset>
        );
      })}
    </div>
  );
}
