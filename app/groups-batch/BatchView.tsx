/**
 * Batch: the packed [rows, width] batch of any stored step on a canvas, with switchable layers
 * (chains, response mask, advantage, old − behavior log-prob, dlogp, version), a legend and
 * colour scale, every value of a cell on hover (or with the arrow keys), and the session under
 * a cell on click (or Enter), with its inspector (SessionPanel: Close or Escape gives focus back
 * to the grid); packing efficiency and rows needed above.
 * The run is picked as in Groups (shared, default the live run); the heading names run and step.
 * The view follows a live run's latest stored step until a step is picked or a session opened.
 */
import { FollowLatest, StepSelect } from '../shared/StepSelect';
import { useFollowedStep, useGrowingList, useStepData } from '../shared/use-follow-step';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState } from 'react';
import type { BatchLayer, GroupSample } from '../../worker/protocol';
import { describeCell } from './batch-cell';
import { BATCH_LAYERS, LAYER_INFO, colorOf, legendOf, recorded, scaleFor } from './batch-colors';
import { signed } from '../shared/estimate-text';
import { SessionPanel } from './SessionPanel';
import { RunStepHeading, ViewTitle, useShownRun } from '../shared/ViewedRun';
import { ImportNotice } from '../shared/ImportNotice';
import { importedOf } from '../shared/runs-table';
import { noBatchText } from './import-display';
import { batchAtQuery, groupStepsQuery, groupsAtQuery } from '../queries/groups';

const CELL_W = 14;
const CELL_H = 14;

export function BatchView() {
  const shown = useShownRun();
  const { runId } = shown;
  const steps = useGrowingList({ ...groupStepsQuery(runId ?? '', shown.latestStep), enabled: Boolean(runId) });
  const followed = useFollowedStep(runId, steps.data ?? []);
  const [picked, setLayer] = useState<BatchLayer>('segments');
  const [cursor, setCursor] = useState<number | null>(null);
  const [session, setSession] = useState<number | null>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  // While the followed step loads, the newest batch read stays on screen: `step` is the step shown.
  const batch = useStepData(
    { ...batchAtQuery(runId ?? '', followed.step ?? 0), enabled: Boolean(runId) && followed.step !== null },
    followed.following,
  );
  const step = batch?.step ?? followed.step;
  // The cell under the cursor stays as a live run moves on (the next batch is as wide); an open session holds its step.
  useEffect(() => {
    setSession(null);
    setCursor(null);
  }, [runId]);
  const groups = useQuery({
    ...groupsAtQuery(runId ?? '', step ?? 0),
    enabled: Boolean(runId) && step !== null && session !== null,
  });
  const b = batch?.data ?? null;
  const run = shown.runs.find((r) => r.runId === runId);
  const imported = run ? importedOf(run) : null;
  // A critic layer picked on a PPO batch falls back to the advantage on a batch without one.
  const layer: BatchLayer = b && !recorded(b.layers[picked]) ? 'advantage' : picked;
  const scale = useMemo(() => (b ? scaleFor(layer, b.layers[layer]!) : null), [b, layer]);

  useEffect(() => {
    const ctx = canvas.current?.getContext('2d');
    if (!ctx || !b || !scale) return;
    const values = b.layers[layer]!;
    // Grey 1-px gaps outline every cell, so white (zero) cells stay visible.
    ctx.fillStyle = '#a1a1aa';
    ctx.fillRect(0, 0, b.width * CELL_W, b.rows * CELL_H);
    for (let i = 0; i < b.rows * b.width; i++) {
      ctx.fillStyle = colorOf(scale, values[i]);
      ctx.fillRect((i % b.width) * CELL_W, Math.floor(i / b.width) * CELL_H, CELL_W - 1, CELL_H - 1);
    }
    if (cursor !== null && cursor < b.rows * b.width) {
      ctx.strokeStyle = '#000';
      ctx.lineWidth = 2;
      ctx.strokeRect(
        (cursor % b.width) * CELL_W + 1,
        Math.floor(cursor / b.width) * CELL_H + 1,
        CELL_W - 3,
        CELL_H - 3,
      );
    }
  }, [b, layer, scale, cursor]);

  const title = <ViewTitle id="batch-title" title="Packed batch" shown={shown} />;
  if (!runId) {
    return (
      <section aria-labelledby="batch-title" data-testid="batch-view">
        {title}
        <p>No run yet: start a GRPO run in Experiments, or pick a stored run.</p>
      </section>
    );
  }
  const cellAt = (e: React.MouseEvent<HTMLCanvasElement>) => {
    if (!b) return null;
    const r = e.currentTarget.getBoundingClientRect();
    const col = Math.floor((e.clientX - r.left) / CELL_W),
      row = Math.floor((e.clientY - r.top) / CELL_H);
    return row >= 0 && row < b.rows && col >= 0 && col < b.width ? row * b.width + col : null;
  };
  const open = (i: number | null) => {
    const id = i !== null && b && b.sessionIds[i] ? b.sessionIds[i] : null;
    // An open session holds its step: the view stops following a live run.
    if (id !== null && followed.following && step !== null) followed.pin(step);
    setSession(id);
  };
  const onKey = (e: React.KeyboardEvent) => {
    if (!b) return;
    const at = cursor ?? 0;
    const moves: Record<string, number> = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: b.width, ArrowUp: -b.width };
    if (e.key in moves) {
      e.preventDefault();
      const next = at + moves[e.key];
      if (next >= 0 && next < b.rows * b.width) setCursor(next);
    } else if (e.key === 'Enter') open(at);
  };
  // A live run's next batch may be smaller than the cell the cursor was on.
  const cell = b && cursor !== null && cursor < b.rows * b.width ? cursor : null;
  const sample: GroupSample | null =
    session !== null && groups.data ? (groups.data.flatMap((g) => g.samples)[session - 1] ?? null) : null;

  return (
    <section aria-labelledby="batch-title" data-testid="batch-view">
      {title}
      <RunStepHeading shown={shown} step={step} />
      <ImportNotice shown={shown} view="Batch" />
      {!steps.data?.length ? (
        <p>This run keeps no packed batches (only GRPO runs have them), or no step has finished yet.</p>
      ) : (
        <div className="controls">
          <StepSelect steps={steps.data} value={step} onChange={followed.pin} />
          <FollowLatest
            following={followed.following}
            onChange={(f) => (f ? followed.follow() : followed.pin(step!))}
          />
          <label>
            Layer{' '}
            <select value={layer} onChange={(e) => setLayer(e.target.value as BatchLayer)}>
              {BATCH_LAYERS.filter((l) => !b || recorded(b.layers[l])).map((l) => (
                <option key={l} value={l}>
                  {LAYER_INFO[l].title}
                </option>
              ))}
            </select>
          </label>
        </div>
      )}
      {step !== null && batch?.data === null && <p>{noBatchText(step, imported)}</p>}
      {b && scale && (
        <>
          <p data-testid="batch-summary">
            {b.rows} rows × {b.width} ids; {b.rowsNeeded} rows needed; packing efficiency{' '}
            {(b.efficiency * 100).toFixed(1)}%.
            {!!b.notPacked &&
              ` ${b.notPacked} ${b.notPacked === 1 ? 'session' : 'sessions'} of zero-advantage groups not packed: masked, they carry no loss.`}
          </p>
          <p>
            <strong>{LAYER_INFO[layer].title}</strong>: {LAYER_INFO[layer].help}. Scale:{' '}
            <span data-testid="batch-legend">{legendOf(scale)}</span>.
          </p>
          <canvas
            ref={canvas}
            data-testid="batch-canvas"
            width={b.width * CELL_W}
            height={b.rows * CELL_H}
            tabIndex={0}
            role="img"
            aria-label={`Packed batch of step ${step}, layer ${LAYER_INFO[layer].title}. Arrow keys move over cells, Enter opens the session.`}
            title={cell !== null ? describeCell(b, cell) : undefined}
            onMouseMove={(e) => setCursor(cellAt(e))}
            onClick={(e) => open(cellAt(e))}
            onKeyDown={onKey}
          />
          <p aria-live="polite" data-testid="batch-cell">
            {cell !== null ? describeCell(b, cell) : 'Hover over a cell, or focus the grid and use the arrow keys.'}
          </p>
          {session !== null && step !== null && (
            <div data-testid="batch-session" className="session">
              <h2>Session {session}</h2>
              {sample && (
                <p>
                  Completion <code className="completion">{sample.completion}</code>; reward {sample.reward}; advantage{' '}
                  {signed(sample.advantage)}; {sample.status}, {sample.length} ids
                  {sample.truncated ? ' (truncated)' : ''}.
                </p>
              )}
              <SessionPanel
                runId={runId}
                step={step}
                at={{ index: session - 1 }}
                headingLevel={3}
                onClose={() => setSession(null)}
                returnFocusTo={() => canvas.current}
              />
            </div>
          )}
        </>
      )}
    </section>
  );
}
