/**
 * "Prompt dataset" for the presets that take one (grpo-arith, ppo-arith, dpo-arith): a person's JSONL or parquet file of
 * prompts and ground truths instead of the arithmetic generator, with the reward that scores it
 * (math, exact, regex — with its pattern — or code) and how many records are held out. The worker
 * reads and checks the file (`loadDataset`, worker/data/dataset.ts); a bad file is refused with
 * its first bad line named and the form keeps its options. A loaded dataset rides in the run
 * options (`dataset`), so a stored run continues with it after a reload.
 */
import { useId, useState } from 'react';
import type { DatasetRewardOptions, RunOptions } from '../../worker/protocol';
import { workbench } from '../worker-client';

const REWARDS: { kind: DatasetRewardOptions['kind']; label: string }[] = [
  { kind: 'math', label: 'math: MathReward on the last \\boxed{}' },
  { kind: 'exact', label: 'exact: the trimmed completion equals the ground truth' },
  { kind: 'regex', label: 'regex: the last match (its capture group) equals the ground truth' },
  { kind: 'code', label: "code: the companion runs the program on the ground truth's test cases" },
];

/** `rewards`: the rewards the preset takes (its table entry's `dataset`); the others are offered disabled. */
export function DatasetPicker({
  options,
  rewards,
  onChange,
}: {
  options: RunOptions;
  rewards: DatasetRewardOptions['kind'][];
  onChange: (o: RunOptions) => void;
}) {
  const id = useId();
  const [file, setFile] = useState<File | null>(null);
  const [kind, setKind] = useState<DatasetRewardOptions['kind']>('math');
  const [pattern, setPattern] = useState('');
  const [heldOut, setHeldOut] = useState('');
  const [outcome, setOutcome] = useState<{ ok: boolean; message: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const dataset = 'dataset' in options ? options.dataset : undefined;
  const base = 'base' in options ? options.base : undefined;

  const load = async () => {
    if (!file) return;
    setBusy(true);
    try {
      const reward: DatasetRewardOptions = kind === 'regex' ? { kind, pattern } : { kind };
      const bytes = new Uint8Array(await file.arrayBuffer());
      // Checked against the run's base: a picked model's tokenizer and positions, else the shipped base's.
      const r = await workbench.loadDataset(
        { name: file.name, bytes },
        { reward, ...(heldOut.trim() ? { heldOut: Number(heldOut) } : {}), ...(base ? { modelId: base.id } : {}) },
      );
      if (!r.ok) return setOutcome({ ok: false, message: `Not loaded, the run keeps its prompts: ${r.message}` });
      onChange({ ...options, dataset: r.dataset } as RunOptions);
      setOutcome({
        ok: true,
        message:
          `Loaded ${r.dataset.name}: ${r.dataset.records.length} records, ${r.dataset.heldOut} held out for ` +
          `evaluation, reward ${r.dataset.reward.kind}.`,
      });
    } catch (e) {
      setOutcome({ ok: false, message: `Not loaded: ${(e as Error).message}` });
    } finally {
      setBusy(false);
    }
  };
  const remove = () => {
    const { dataset: _dropped, ...rest } = options as RunOptions & { dataset?: unknown };
    onChange(rest as RunOptions);
    setOutcome({ ok: true, message: 'The run draws the arithmetic problems again.' });
  };

  return (
    <fieldset className="dataset-picker" aria-describedby={`${id}-now`}>
      <legend>Prompt dataset (optional)</legend>
      <p id={`${id}-now`} data-testid="dataset-now">
        {dataset
          ? `Training on ${dataset.name}: ${dataset.records.length} records (${dataset.heldOut} held out), reward ${dataset.reward.kind}${dataset.reward.kind === 'regex' ? ` /${dataset.reward.pattern}/` : ''}.`
          : 'None: the run draws 2-digit addition problems. A .jsonl or .parquet file with prompt and ' +
            'ground_truth (or solution, answer, reward_model.ground_truth) per record replaces them.'}
      </p>
      <label>
        File{' '}
        <input type="file" accept=".jsonl,.ndjson,.parquet" onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
      </label>{' '}
      <label>
        Reward{' '}
        <select value={kind} onChange={(e) => setKind(e.target.value as DatasetRewardOptions['kind'])}>
          {REWARDS.map((r) => (
            <option key={r.kind} value={r.kind} disabled={!rewards.includes(r.kind)}>
              {r.label}
            </option>
          ))}
        </select>
      </label>{' '}
      {kind === 'regex' && (
        <label>
          Pattern{' '}
          <input type="text" value={pattern} onChange={(e) => setPattern(e.target.value)} placeholder="answer: (\d+)" />
        </label>
      )}{' '}
      <label>
        Held out{' '}
        <input
          type="number"
          min={0}
          step={1}
          value={heldOut}
          onChange={(e) => setHeldOut(e.target.value)}
          placeholder="a tenth"
        />
      </label>{' '}
      <button type="button" onClick={() => void load()} disabled={!file || busy}>
        {busy ? 'Reading…' : 'Load dataset'}
      </button>{' '}
      {dataset && (
        <button type="button" onClick={remove}>
          Remove dataset
        </button>
      )}
      {outcome && (
        <p role={outcome.ok ? 'status' : 'alert'} className={outcome.ok ? undefined : 'bad'}>
          {outcome.message}
        </p>
      )}
    </fieldset>
  );
}
