/**
 * "Base model" for grpo-arith, ppo-arith and dpo-arith: a person's Hugging Face Llama-family
 * folder instead of the shipped arithmetic base, picked with a folder input (the keyboard path)
 * or dropped onto the drop zone. The worker inspects it first (`inspectModel`: config.json and the
 * safetensors headers only) and the panel shows what it is and what training it costs; "Use this
 * model" loads it into the worker (`useModel`) and sets the run options' `base`. A refused folder
 * is shown in an alert naming each file and field. Not the loader (worker/hf/models.ts).
 */
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import type { BaseModelRunOptions, InspectModelResult, ModelFolderProblem, RunOptions } from '../../worker/protocol';
import { keys } from '../queries/keys';
import {
  inspectModelFolder,
  loadModelFolder,
  modelPlanQuery,
  pickedModelQuery,
  type PickedFolder,
} from '../queries/models';
import { MemoryPlanLine } from './MemoryPlanLine';
import { MiB, filesOfDrop, filesOfInput, memoryText } from './model-files';

type Picked = { folder: PickedFolder; result: InspectModelResult };
type Outcome = { ok: boolean; message: string; problems?: ModelFolderProblem[] };

/** The rows a training batch of these options packs (GRPO, PPO: two completions a row; DPO: a row per completion of a pair). */
function batchRows(o: RunOptions): number {
  if ('pairs' in o) return 2 * o.pairs;
  return 'prompts' in o && 'group' in o ? Math.ceil((o.prompts * o.group) / 2) : 1;
}

/** The options without `base` and without a dataset (checked against the tokenizer of the model it was loaded for). */
function withBase(
  options: RunOptions,
  base: BaseModelRunOptions | undefined,
): { next: RunOptions; droppedDataset: boolean } {
  const { base: _base, dataset, ...rest } = options as RunOptions & { base?: unknown; dataset?: unknown };
  return { next: (base ? { ...rest, base } : rest) as RunOptions, droppedDataset: dataset !== undefined };
}

/** A refused folder: every problem (file, field, detail) listed, or the message when there are none. */
function refusal(what: string, r: { problems: ModelFolderProblem[]; message: string }): Outcome {
  const n = r.problems.length;
  return n
    ? { ok: false, message: `${what}: ${n} problem${n === 1 ? '' : 's'} in the folder.`, problems: r.problems }
    : { ok: false, message: `${what}: ${r.message}` };
}

const DATASET_AGAIN = ' The prompt dataset was removed: load it again, to check it against this tokenizer.';

export function ModelPicker({ options, onChange }: { options: RunOptions; onChange: (o: RunOptions) => void }) {
  const id = useId();
  const client = useQueryClient();
  const [picked, setPicked] = useState<Picked | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [over, setOver] = useState(false);
  const base = 'base' in options ? options.base : undefined;
  const held = useQuery({ ...pickedModelQuery(base?.id ?? ''), enabled: base !== undefined });
  // The model in use: the plan follows the options as they change (LoRA, idsPerPass, the batch).
  const livePlan = useQuery({ ...modelPlanQuery(base?.id ?? '', options), enabled: base !== undefined });

  const inspect = async (folder: PickedFolder) => {
    if (!folder.files.length) return;
    setBusy(`Reading the headers of ${folder.name ?? `${folder.files.length} files`}…`);
    setOutcome(null);
    try {
      const result = await inspectModelFolder(folder, batchRows(options), options);
      setPicked({ folder, result });
      if (!result.ok) setOutcome(refusal('Not usable, nothing was loaded', result));
    } catch (e) {
      setOutcome({ ok: false, message: `Not read: ${(e as Error).message}` });
    } finally {
      setBusy(null);
    }
  };

  const use = async () => {
    if (!picked?.result.ok) return;
    setBusy(`Loading ${picked.result.summary.name} (every tensor, converted to f32)…`);
    try {
      const r = await loadModelFolder(picked.folder);
      if (!r.ok) return setOutcome(refusal('Not loaded, the run keeps its base', r));
      const m = r.model;
      client.setQueryData(keys.pickedModel(m.id), m);
      const { next, droppedDataset } = withBase(options, {
        kind: 'hf',
        id: m.id,
        name: m.name,
        parameters: m.parameters,
      });
      onChange(next);
      setOutcome({
        ok: true,
        message:
          `Using ${m.name}: ${m.parameters.toLocaleString('en-US')} parameters, ${MiB(m.bytes)} held in this ` +
          `tab's worker.${droppedDataset ? DATASET_AGAIN : ''}`,
      });
    } catch (e) {
      setOutcome({ ok: false, message: `Not loaded: ${(e as Error).message}` });
    } finally {
      setBusy(null);
    }
  };

  const shipped = () => {
    const { next, droppedDataset } = withBase(options, undefined);
    onChange(next);
    setOutcome({
      ok: true,
      message: `The run starts from the shipped arithmetic base again.${droppedDataset ? DATASET_AGAIN : ''}`,
    });
  };

  const summary = picked?.result.ok ? picked.result.summary : null;
  return (
    <fieldset className="model-picker" aria-describedby={`${id}-now`}>
      <legend>Base model (optional)</legend>
      <p id={`${id}-now`} data-testid="model-now">
        {base
          ? `Training from ${base.name}: ${base.parameters.toLocaleString('en-US')} parameters, a Hugging Face model picked in this tab.`
          : 'The shipped arithmetic base (public/checkpoints/arith-base). A Hugging Face Llama or Mistral folder ' +
            '(config.json, model.safetensors or its shards, tokenizer.json) replaces it.'}
      </p>
      {base && livePlan.data && <MemoryPlanLine plan={livePlan.data} testId="model-plan-now" />}
      {base && held.isSuccess && held.data === null && (
        <p role="alert" className="bad" data-testid="model-gone">
          This tab&apos;s worker no longer holds {base.name} (a reload drops a picked model): pick its folder again and
          Use this model before starting a run. A stored run on it continues from its own checkpoints.
        </p>
      )}
      <label>
        Model folder{' '}
        <input
          type="file"
          multiple
          {...{ webkitdirectory: '' }}
          aria-describedby={`${id}-drop`}
          disabled={busy !== null}
          onChange={(e) => void inspect(filesOfInput(e.currentTarget.files ?? []))}
        />
      </label>
      <div
        id={`${id}-drop`}
        className={`drop-zone${over ? ' over' : ''}`}
        data-testid="model-drop"
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          void filesOfDrop(e.dataTransfer).then(inspect, (err: Error) =>
            setOutcome({ ok: false, message: `The drop could not be read: ${err.message}` }),
          );
        }}
      >
        Or drop the folder (or all its files) here. From the keyboard, the Model folder button above picks it.
      </div>
      {busy && <p role="status">{busy}</p>}
      {summary && (
        <div data-testid="model-summary" aria-label={`Inspection of ${summary.name}`} role="group">
          <p>
            {summary.name}: {summary.architecture}, {summary.parameters.toLocaleString('en-US')} parameters (
            {summary.dtypes.join(', ')}; f32 once loaded) in {summary.weightFiles.map((w) => w.file).join(', ')}.
          </p>
          <p>
            {summary.config.layers} layers, hidden size {summary.config.dModel}, {summary.config.heads} heads (
            {summary.config.kvHeads} kv heads), FFN {summary.config.ffn}, vocabulary{' '}
            {summary.config.vocab.toLocaleString('en-US')}, {summary.config.maxPositions.toLocaleString('en-US')}{' '}
            positions (trained here on up to {summary.trainedWidth}).
          </p>
          <p>Training memory: {memoryText(summary.training)}.</p>
          <p className="chart-note">Counts {summary.training.counts}.</p>
          {summary.plan && <MemoryPlanLine plan={summary.plan} testId="model-plan" />}
          {[...summary.notes, ...summary.ignoredTensors.map((t) => `ignored as transformers does: ${t}`)].map((n) => (
            <p key={n} className="chart-note">
              {n}
            </p>
          ))}
          <button type="button" onClick={() => void use()} disabled={busy !== null}>
            Use this model
          </button>
        </div>
      )}
      {base && (
        <button type="button" onClick={shipped} disabled={busy !== null}>
          Use the shipped base
        </button>
      )}
      {outcome && (
        <div
          role={outcome.ok ? 'status' : 'alert'}
          className={outcome.ok ? undefined : 'bad'}
          data-testid="model-outcome"
        >
          <p>{outcome.message}</p>
          {outcome.problems && (
            <ul>
              {outcome.problems.map((p) => (
                <li key={`${p.file}|${p.field}`}>
                  {p.file}: {p.field}: {p.detail}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      <p className="chart-note">
        A picked model stays in this tab&apos;s worker until a reload; a stored run keeps it in its checkpoints and
        continues from them.
      </p>
    </fieldset>
  );
}
