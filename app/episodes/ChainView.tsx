/**
 * The delta chain of an episode's prompts: for the selected turn (or every turn) the prompt the
 * model saw, decoded with the episode's vocabulary (specials by name), its inherited part (ids
 * [0, inherited), carried from earlier turns) set apart from the ids this turn added; where a
 * chain was reset and why, an identical resend (`replayOf`), and a chain that could not be rebuilt
 * (`unresolved`: flagged with the reason, no prompt shown, none made up). Reads the detail the
 * worker rebuilt (EpisodeTurnView); rebuilds nothing itself.
 */
import { useId, useState } from 'react';
import type { EpisodeTurnView } from '../../worker/protocol';
import { chainParts, decodeId, resetText } from '../shared/episodes';

function Ids({ ids, vocab }: { ids: Int32Array; vocab: readonly string[] }) {
  return (
    <>
      {Array.from(ids, (id, i) => {
        const t = decodeId(vocab, id);
        return (
          <span
            key={i}
            className={t.special ? 'tok tok-special' : t.unknown ? 'tok tok-unknown' : 'tok'}
            title={`id ${id}`}
          >
            {t.text}
          </span>
        );
      })}
    </>
  );
}

function ChainTurn({ turn, vocab }: { turn: EpisodeTurnView; vocab: readonly string[] }) {
  const parts = chainParts(turn);
  return (
    <li data-testid="chain-turn">
      <p className="chain-head">
        <strong>Turn {turn.turn}</strong> · trace <code>{turn.traceId}</code> ·{' '}
        {turn.parentTraceId ? (
          <>
            extends <code>{turn.parentTraceId}</code>
          </>
        ) : (
          'chain root'
        )}
      </p>
      {turn.reset && (
        <p className="mark-line" data-testid="chain-reset">
          {resetText(turn.reset)}
        </p>
      )}
      {turn.replayOf && (
        <p className="mark-line" data-testid="chain-replay">
          identical resend of trace <code>{turn.replayOf}</code>
        </p>
      )}
      {turn.unresolved !== undefined || !parts ? (
        <p className="flag" data-testid="chain-unresolved">
          Unresolved chain: {turn.unresolved ?? 'the prompt could not be rebuilt'}. The prompt is not shown.
        </p>
      ) : (
        <>
          <p className="chain-counts">
            {parts.inherited.length} ids inherited from earlier turns, {parts.own.length} new in this turn
          </p>
          <p className="chain-prompt">
            {parts.inherited.length > 0 && (
              <span className="chain-inherited" data-testid="chain-inherited">
                <span className="visually-hidden">Inherited: </span>
                <Ids ids={parts.inherited} vocab={vocab} />
              </span>
            )}
            <span className="chain-own" data-testid="chain-own">
              <span className="visually-hidden">New in this turn: </span>
              <Ids ids={parts.own} vocab={vocab} />
            </span>
          </p>
        </>
      )}
    </li>
  );
}

export function ChainView({
  turns,
  vocab,
  selected,
}: {
  turns: readonly EpisodeTurnView[];
  vocab: readonly string[];
  selected: number;
}) {
  const [all, setAll] = useState(false);
  const headingId = useId();
  const shown = all ? turns : turns.slice(selected, selected + 1);
  return (
    <section className="chain-view" data-testid="chain-view" aria-labelledby={headingId}>
      <h3 id={headingId}>Prompt chain {all ? 'of every turn' : `of turn ${turns[selected]?.turn ?? selected + 1}`}</h3>
      <div className="controls">
        <label>
          <input type="checkbox" checked={all} onChange={(e) => setAll(e.target.checked)} /> Show every turn
        </label>
      </div>
      <p className="chart-note">
        <span className="chain-inherited">Inherited ids</span> came from earlier turns' prompts and actions;{' '}
        <span className="chain-own">new ids</span> are what this turn appended.
      </p>
      <ol className="chain-turns">
        {shown.map((t) => (
          <ChainTurn key={t.turn} turn={t} vocab={vocab} />
        ))}
      </ol>
    </section>
  );
}
