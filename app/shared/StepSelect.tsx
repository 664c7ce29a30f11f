/** The labelled step picker of the views that browse a run's stored steps (Groups, Batch, Episodes, Flow), and the follow toggle. */
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

/**
 * "Follow the latest step": checked, the view moves on with a live run; unchecking (or picking a
 * step) pins the step on screen. A checkbox, so a keyboard and a screen reader reach and read it.
 */
export function FollowLatest({ following, onChange }: { following: boolean; onChange: (follow: boolean) => void }) {
  return (
    <label>
      <input type="checkbox" checked={following} onChange={(e) => onChange(e.target.checked)} /> Follow the latest step
    </label>
  );
}
