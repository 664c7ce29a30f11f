/**
 * The options of a run, grouped in sections (Objective, Advantage, KL, Corrections, Sampling,
 * Optimizer, Run), rendered from the worker's form description of the preset (FieldSpec). Each
 * input shows its allowed range; each problem the worker reports sits next to its field (named by
 * `aria-describedby`, with `aria-invalid`). Problems without a visible field are listed below.
 * Not the validator (the worker is) and not the Start button (the view owns it).
 */
import type { FieldSpec, OptionProblem, RunOptions } from '../../worker/protocol';
import { isActive, sectionsOf, valueAt, withField } from './objective-fields';

interface Props {
  fields: FieldSpec[];
  options: RunOptions;
  problems: OptionProblem[];
  onChange: (options: RunOptions) => void;
}

function Input({ field, value, describedBy, invalid, onValue }: { field: FieldSpec; value: unknown; describedBy: string; invalid: boolean; onValue: (v: string | number | boolean | undefined) => void }) {
  const common = {
    id: `opt-${field.path}`,
    'data-testid': `field-${field.path}`,
    'aria-describedby': describedBy,
    'aria-invalid': invalid || undefined,
  };
  if (field.kind === 'boolean') return <input type="checkbox" {...common} checked={value === true} onChange={(e) => onValue(e.target.checked)} />;
  if (field.kind === 'select') {
    return (
      <select {...common} value={typeof value === 'string' ? value : ''} onChange={(e) => onValue(e.target.value === '' ? undefined : e.target.value)}>
        {(field.optional || value === undefined) && <option value="">{field.optional ? 'default' : 'choose'}</option>}
        {field.values!.map((v) => (
          <option key={v} value={v}>
            {v}
          </option>
        ))}
      </select>
    );
  }
  return (
    <input
      type="number"
      {...common}
      step={field.kind === 'integer' ? 1 : 'any'}
      min={field.min}
      max={field.max}
      placeholder={field.optional ? 'default' : undefined}
      value={typeof value === 'number' && !Number.isNaN(value) ? value : ''}
      onChange={(e) => onValue(e.target.value === '' ? undefined : Number(e.target.value))}
    />
  );
}

export function ObjectiveForm({ fields, options, problems, onChange }: Props) {
  const problemAt = new Map<string, string[]>();
  for (const p of problems) problemAt.set(p.path, [...(problemAt.get(p.path) ?? []), p.message]);
  const shown = new Set(fields.filter((f) => isActive(f, options)).map((f) => f.path));
  const elsewhere = problems.filter((p) => !shown.has(p.path));
  return (
    <div className="objective-form">
      {sectionsOf(fields, options).map(([section, list]) => (
        <fieldset key={section} data-testid={`section-${section}`}>
          <legend>{section}</legend>
          {list.map((f) => {
            const id = `opt-${f.path}`;
            const messages = problemAt.get(f.path);
            return (
              <div key={f.path} className={`field field-${f.kind}`}>
                <label htmlFor={id}>{f.label}</label>
                <Input
                  field={f}
                  value={valueAt(options, f.path)}
                  invalid={!!messages}
                  describedBy={messages ? `${id}-problem ${id}-help` : `${id}-help`}
                  onValue={(v) => onChange(withField(options, fields, f.path, v))}
                />
                <small id={`${id}-help`}>
                  {f.help} <span className="allowed">Allowed: {f.allowed}{f.optional ? ', or empty' : ''}.</span>
                </small>
                {messages && (
                  <small id={`${id}-problem`} className="bad field-problem" data-testid={`problem-${f.path}`}>
                    {messages.join('; ')}
                  </small>
                )}
              </div>
            );
          })}
        </fieldset>
      ))}
      {elsewhere.length > 0 && (
        <ul className="bad" aria-label="Other problems with the options" data-testid="option-problems">
          {elsewhere.map((p) => (
            <li key={`${p.path}: ${p.message}`}>{p.message}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
