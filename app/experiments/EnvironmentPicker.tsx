/**
 * "Environment program" for the presets that run a person's environment (grpo-env): what the run
 * trains on now (the example until replaced), the program file and its task file, the command
 * that starts it and the tasks held out, and a preview of the first task's reset through the
 * connected companion. The worker reads and checks the files (`loadEnvironment`); a bad file is
 * refused with its first bad line named and the run keeps its environment. The program rides in
 * the run options (`environment`, with its SHA-256), so a stored run continues after a reload
 * with the same program.
 */
import { useId, useState } from 'react';
import type { EnvironmentPreview, EnvProgramRunOptions, RunOptions } from '../../worker/protocol';
import { workbench } from '../worker-client';
import { environmentFiles, environmentSummary } from './environment-text';

type Picked = { name: string; bytes: Uint8Array } | null;
const bytesOf = async (f: File | null): Promise<Picked> =>
  f ? { name: f.name, bytes: new Uint8Array(await f.arrayBuffer()) } : null;

export function EnvironmentPicker({
  options,
  example,
  onChange,
}: {
  options: RunOptions;
  /** The preset's own environment (its defaults'): "Use the example" puts it back. */
  example: EnvProgramRunOptions | undefined;
  onChange: (o: RunOptions) => void;
}) {
  const id = useId();
  const [programFile, setProgramFile] = useState<File | null>(null);
  const [tasksFile, setTasksFile] = useState<File | null>(null);
  const [command, setCommand] = useState('');
  const [heldOut, setHeldOut] = useState('');
  const [outcome, setOutcome] = useState<{ ok: boolean; message: string } | null>(null);
  const [preview, setPreview] = useState<EnvironmentPreview | null>(null);
  const [busy, setBusy] = useState<'load' | 'preview' | null>(null);
  const env = 'environment' in options ? options.environment : undefined;
  const stepSeconds = 'stepSeconds' in options ? options.stepSeconds : 10;

  const set = (environment: EnvProgramRunOptions | undefined) => {
    setPreview(null);
    onChange({ ...options, environment } as RunOptions);
  };
  const load = async () => {
    if (!env && (!programFile || !tasksFile)) return;
    setBusy('load');
    try {
      const picked = { program: await bytesOf(programFile), tasks: await bytesOf(tasksFile) };
      const files = env ? environmentFiles(picked, env) : { program: picked.program!, tasks: picked.tasks! };
      const argv = command.trim() ? command.trim().split(/\s+/) : undefined;
      const r = await workbench.loadEnvironment(files, {
        ...(argv ? { argv } : !programFile && env ? { argv: env.program.argv } : {}),
        ...(heldOut.trim() ? { heldOut: Number(heldOut) } : !tasksFile && env ? { heldOut: env.tasks.heldOut } : {}),
      });
      if (!r.ok) return setOutcome({ ok: false, message: `Not loaded, the run keeps its environment: ${r.message}` });
      set(r.environment);
      setOutcome({ ok: true, message: `Loaded: ${environmentSummary(r.environment, example)}.` });
    } catch (e) {
      setOutcome({ ok: false, message: `Not loaded: ${(e as Error).message}` });
    } finally {
      setBusy(null);
    }
  };
  const runPreview = async () => {
    // An environment program's options always carry the action length the preview's step uses.
    if (!env || !('maxNew' in options)) return;
    setBusy('preview');
    try {
      setPreview(await workbench.previewEnvironment(env, stepSeconds, options.maxNew));
    } catch (e) {
      setPreview({ ok: false, message: (e as Error).message });
    } finally {
      setBusy(null);
    }
  };
  const canLoad = (programFile || tasksFile || command.trim() || heldOut.trim()) && (env || (programFile && tasksFile));

  return (
    <fieldset className="dataset-picker" aria-describedby={`${id}-now`} data-testid="environment-picker">
      <legend>Environment program</legend>
      <p id={`${id}-now`} data-testid="environment-now">
        {env
          ? `Training on ${environmentSummary(env, example)}.`
          : 'None: pick a program (it reads JSON requests on stdin and answers JSON lines) and a task file.'}
      </p>
      <p className="muted">
        The program runs in the companion, one sandboxed session per episode; the README&apos;s &quot;Write your own
        environment&quot; shows the protocol. Tasks: one JSON object per line, {'{id, prompt, answer?, data?}'}.
      </p>
      <label>
        Program{' '}
        <input
          type="file"
          accept=".py,.js,.mjs,.cjs,.sh"
          data-testid="environment-program-file"
          onChange={(e) => setProgramFile(e.target.files?.[0] ?? null)}
        />
      </label>{' '}
      <label>
        Tasks{' '}
        <input
          type="file"
          accept=".jsonl,.ndjson"
          data-testid="environment-tasks-file"
          onChange={(e) => setTasksFile(e.target.files?.[0] ?? null)}
        />
      </label>{' '}
      <label>
        Command{' '}
        <input
          type="text"
          value={command}
          onChange={(e) => setCommand(e.target.value)}
          placeholder={env && !programFile ? env.program.argv.join(' ') : 'by extension: python3 -I NAME'}
          aria-describedby={`${id}-command`}
        />
      </label>
      <span id={`${id}-command`} className="muted">
        {' '}
        (words split on spaces; the file is in the working directory)
      </span>{' '}
      <label>
        Held out{' '}
        <input
          type="number"
          min={0}
          step={1}
          value={heldOut}
          onChange={(e) => setHeldOut(e.target.value)}
          placeholder={env && !tasksFile ? String(env.tasks.heldOut) : 'a tenth'}
        />
      </label>{' '}
      <button type="button" onClick={() => void load()} disabled={!canLoad || busy !== null}>
        {busy === 'load' ? 'Reading…' : 'Load environment'}
      </button>{' '}
      <button
        type="button"
        onClick={() => void runPreview()}
        disabled={!env || busy !== null}
        data-testid="environment-preview-button"
      >
        {busy === 'preview' ? 'Starting it…' : 'Preview the first reset and step'}
      </button>{' '}
      {example && env?.program.sha256 !== example.program.sha256 && (
        <button
          type="button"
          onClick={() => {
            set(example);
            setOutcome({
              ok: true,
              message: `The run trains on the example again: ${environmentSummary(example, example)}.`,
            });
          }}
        >
          Use the example
        </button>
      )}
      {outcome && (
        <p role={outcome.ok ? 'status' : 'alert'} className={outcome.ok ? undefined : 'bad'}>
          {outcome.message}
        </p>
      )}
      {preview &&
        (preview.ok ? (
          <div role="status" data-testid="environment-preview">
            <p>
              Task {preview.task.id} ({preview.task.prompt}): the model starts from {preview.context.length} ids, in{' '}
              {Math.round(preview.ms)} ms:
            </p>
            <pre data-testid="environment-preview-context">{preview.text}</pre>
            <p data-testid="environment-preview-step">
              The base&apos;s greedy first action <code>{preview.action}</code>: {preview.reply.said}
            </p>
            {preview.stderr && (
              <>
                <p>Its stderr:</p>
                <pre className="stderr">{preview.stderr}</pre>
              </>
            )}
          </div>
        ) : (
          <div role="alert" className="bad" data-testid="environment-preview">
            <p>The preview failed; a run would stop with the same words:</p>
            <pre className="stderr">{preview.message}</pre>
          </div>
        ))}
    </fieldset>
  );
}
