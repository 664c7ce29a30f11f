/**
 * One input of the options form, rendered from the worker's FieldSpec: its label, the input (a
 * number, a checkbox or a select), its help with the allowed range, and the problems the worker
 * reports for it (named by `aria-describedby`, with `aria-invalid`). The input's id is
 * `opt-<path>`, which the form uses to take a person to the field. Not the validator (the worker is).
 */
import type { FieldSpec } from '../../worker/protocol';

type Value = string | number | boolean | undefined;

function Input({
  field,
  value,
  describedBy,
  invalid,
  onValue,
}: {
  field: FieldSpec;
  value: unknown;
  describedBy: string;
  invalid: boolean;
  onValue: (v: Value) => void;
}) {
  const common = {
    id: `opt-${field.path}`,
    'data-testid': `field-${field.path}`,
    'aria-describedby': describedBy,
    'aria-invalid': invalid || undefined,
  };
  if (field.kind === 'boolean')
    return <input type="checkbox" {...common} checked={value === true} onChange={(e) => onValue(e.target.checked)} />;
  if (field.kind === 'select') {
    // A value that is not one of the choices (e.g. from an imported config) shows as "choose", next to its problem.
    const known = typeof value === 'string' && field.values!.includes(value);
    return (
      <select
        {...common}
        value={known ? value : ''}
        onChange={(e) => onValue(e.target.value === '' ? undefined : e.target.value)}
      >
        {(field.optional || !known) && <option value="">{field.optional ? 'default' : 'choose'}</option>}
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

export function OptionField({
  field,
  value,
  messages,
  onValue,
}: {
  field: FieldSpec;
  value: unknown;
  messages: string[] | undefined;
  onValue: (v: Value) => void;
}) {
  const id = `opt-${field.path}`;
  return (
    <div className={`field field-${field.kind}`}>
      <label htmlFor={id}>{field.label}</label>
      <Input
        field={field}
        value={value}
        invalid={!!messages}
        describedBy={messages ? `${id}-problem ${id}-help` : `${id}-help`}
        onValue={onValue}
      />
      <small id={`${id}-help`}>
        {field.help}{' '}
        <span className="allowed">
          Allowed: {field.allowed}
          {field.optional ? ', or empty' : ''}.
        </span>
      </small>
      {messages && (
        <small id={`${id}-problem`} className="bad field-problem" data-testid={`problem-${field.path}`}>
          {messages.join('; ')}
        </small>
      )}
    </div>
  );
}
