/**
 * An episode's turns as a timeline: per turn the model's action as tokens coloured by their
 * behavior log-prob (each token's tooltip and accessible name: its text, raw and behavior
 * log-prob) and whether it stopped at <eos> (the last turn: and ended the episode), the environment's
 * observation with its status, detail and reward, the sampling and environment milliseconds, the
 * policy version (`not trained here` for an import), a mark when the turn was restored from the
 * journal and a warning when its record failed its checksum. The list is one tab stop: arrow keys,
 * Home and End move the selected turn (aria-current, scrolled into view), which the chain view
 * follows. The selection is the caller's state; colours are episodes.ts `heatColor`.
 */
import { useEffect, useRef } from 'react';
import type { EpisodeTurnView } from '../../worker/protocol';
import {
  actionEndText,
  decodeId,
  heatColor,
  heatLegend,
  policyVersionText,
  tokenLabel,
  turnAfterKey,
} from '../shared/episodes';
import { fixed } from '../shared/format';

function ActionTokens({ turn, vocab }: { turn: EpisodeTurnView; vocab: readonly string[] }) {
  const { ids, behaviorLogProbs: behavior, rawLogProbs: raw } = turn.action;
  // No vocabulary (an imported verl rollout): the action's text as recorded, its ids unnamed.
  if (!vocab.length) return <code className="completion">{turn.action.text || '(empty)'}</code>;
  return (
    <ol
      className="heat-tokens"
      aria-label={`Action of turn ${turn.turn}: ${ids.length} tokens coloured by behavior log-prob`}
    >
      {Array.from(ids, (id, j) => {
        const tok = decodeId(vocab, id);
        const label = tokenLabel(vocab[id] ?? tok.text, raw[j], behavior[j]);
        return (
          <li
            key={j}
            className={tok.special ? 'heat-token tok-special' : 'heat-token'}
            style={heatColor(behavior[j])}
            title={label}
            aria-label={label}
          >
            {tok.text}
          </li>
        );
      })}
    </ol>
  );
}

function Turn({
  turn,
  vocab,
  last,
  imported,
  selected,
  onSelect,
  itemRef,
}: {
  turn: EpisodeTurnView;
  vocab: readonly string[];
  /** The episode's last turn (only it can have ended the episode). */
  last: boolean;
  /** Of an imported run: no policy version of this workbench applies. */
  imported: boolean;
  selected: boolean;
  onSelect: () => void;
  itemRef: (el: HTMLLIElement | null) => void;
}) {
  const o = turn.observation;
  const ended = actionEndText(turn, last);
  return (
    <li
      ref={itemRef}
      className="turn"
      data-testid="episode-turn"
      aria-current={selected ? 'true' : undefined}
      onClick={onSelect}
    >
      <h4>
        Turn {turn.turn}
        <small>
          {' '}
          · policy version {policyVersionText(turn.action.policyStep, imported)} · temperature{' '}
          {Number.isNaN(turn.action.temperature) ? 'not recorded' : turn.action.temperature} · sample{' '}
          {fixed(turn.sampleMs, 1)} ms · env {fixed(turn.envMs, 1)} ms
        </small>
        {turn.resumed && (
          <span className="mark" data-testid="turn-resumed">
            restored from journal
          </span>
        )}
      </h4>
      {!turn.checksumOk && (
        <p className="flag" data-testid="turn-checksum">
          Warning: this turn's journal record failed its checksum; it is shown as stored and never trained on.
        </p>
      )}
      <div className="turn-part">
        <span className="turn-label">Action</span>
        <ActionTokens turn={turn} vocab={vocab} />
        {ended && <small> {ended}</small>}
      </div>
      <div className="turn-part">
        <span className="turn-label">Observation</span>
        <code className="observation">{o.text || '(empty)'}</code>
        <small>
          {' '}
          {o.status}
          {o.termination ? ` (${o.termination})` : ''}
          {o.reward !== undefined ? ` · reward ${o.reward}` : ''}
          {o.detail ? ` · ${o.detail}` : ''}
        </small>
      </div>
    </li>
  );
}

export function EpisodeTimeline({
  turns,
  vocab,
  selected,
  onSelect,
  label,
  imported = false,
}: {
  turns: readonly EpisodeTurnView[];
  vocab: readonly string[];
  selected: number;
  onSelect: (i: number) => void;
  label: string;
  /** The episode is of an imported run (verl rollouts). */
  imported?: boolean;
}) {
  const items = useRef<(HTMLLIElement | null)[]>([]);
  useEffect(() => {
    items.current[selected]?.scrollIntoView?.({ block: 'nearest' });
  }, [selected]);
  const onKey = (e: React.KeyboardEvent) => {
    const next = turnAfterKey(e.key, selected, turns.length);
    if (next === null) return;
    e.preventDefault();
    onSelect(next);
  };
  if (!turns.length) return <p>This episode has no turns.</p>;
  return (
    <>
      <p className="chart-note">Action tokens: {heatLegend()}; hover a token for its log-probs.</p>
      <ol
        className="turns"
        tabIndex={0}
        aria-label={`${label}: turn ${selected + 1} of ${turns.length} selected; arrow keys select the next or previous turn, Home and End the first and last`}
        onKeyDown={onKey}
      >
        {turns.map((t, i) => (
          <Turn
            key={i}
            turn={t}
            vocab={vocab}
            last={i === turns.length - 1}
            imported={imported}
            selected={i === selected}
            onSelect={() => onSelect(i)}
            itemRef={(el) => {
              items.current[i] = el;
            }}
          />
        ))}
      </ol>
    </>
  );
}
