/** The labelled step picker of the views that browse a run's stored steps (Groups, Batch, Episodes, Flow). */
export function StepSelect({
  steps,
  value,
  onChange,
}: {
  steps: readonly number[];
  value: number | null;
  onChange: (step: number) => void;
}) {
  return (
    <label>
      Step{' '}
      <select value={value ?? ''} onChange={(e) => onChange(Number(e.target.value))}>
        {steps.map((s) => (
          <option key={s} value={s}>
            {s}
          </option>
        ))}
      </select>
    </label>
  );
}
