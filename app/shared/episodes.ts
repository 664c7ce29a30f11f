/**
 * Pure helpers of the Replay view (episodes/EpisodesView.tsx): the deep link `#/episodes?run=&step=&episode=`
 * parsed and written, the episode list's filters, the log-prob heatmap's colour scale, turn
 * selection by key, and the words for a chain reset or a replay's divergence. No React, no worker:
 * tested in episodes.test.ts.
 */
import type { EpisodeStatusName, EpisodeSummary, EpisodeTurnView, ReplayResult } from '../../worker/protocol';
import { fixed } from './format';

// ---- deep link ---------------------------------------------------------------------------------

/** What a `#/episodes?…` link opens; each part null when absent (a step needs a run, an episode a step). */
export interface EpisodeLink {
  run: string | null;
  step: number | null;
  episode: number | null;
}

export const EPISODES_ROUTE = 'episodes';

/** A non-negative integer parameter; null when absent or not one (`"3.5"`, `"-1"`, `"x"`). */
function intParam(params: URLSearchParams, name: string): number | null {
  const v = params.get(name)?.trim();
  if (!v || !/^\d+$/.test(v)) return null;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : null;
}

/** Reads `#/episodes?run=ID&step=N&episode=K` (any hash: only its query counts). */
export function parseEpisodeLink(hash: string): EpisodeLink {
  const q = hash.indexOf('?');
  const params = new URLSearchParams(q >= 0 ? hash.slice(q + 1) : '');
  const run = params.get('run') || null;
  const step = run === null ? null : intParam(params, 'step');
  const episode = step === null ? null : intParam(params, 'episode');
  return { run, step, episode };
}

/** The hash of a link; parts after the first absent one are left out. */
export function formatEpisodeLink(link: Partial<EpisodeLink>): string {
  const params = new URLSearchParams();
  if (link.run) {
    params.set('run', link.run);
    if (link.step !== null && link.step !== undefined) {
      params.set('step', String(link.step));
      if (link.episode !== null && link.episode !== undefined) params.set('episode', String(link.episode));
    }
  }
  const query = params.toString();
  return `#/${EPISODES_ROUTE}${query ? `?${query}` : ''}`;
}

// ---- the episode list's filters ------------------------------------------------------------------

export type RewardFilter = 'all' | 'one' | 'zero' | 'other' | 'unscored';

export const REWARD_FILTERS: Record<RewardFilter, string> = {
  all: 'all',
  one: '= 1',
  zero: '= 0',
  other: 'another value',
  unscored: 'unscored',
};

/** `termination`: 'all', '' (none recorded), or one reason. */
export interface EpisodeFilter {
  status: EpisodeStatusName | 'all';
  termination: string;
  reward: RewardFilter;
}

export const ALL_EPISODES: EpisodeFilter = { status: 'all', termination: 'all', reward: 'all' };

function rewardMatches(r: number | null, f: RewardFilter): boolean {
  switch (f) {
    case 'all':
      return true;
    case 'one':
      return r === 1;
    case 'zero':
      return r === 0;
    case 'other':
      return r !== null && r !== 0 && r !== 1;
    case 'unscored':
      return r === null;
  }
}

export function filterEpisodes(list: readonly EpisodeSummary[], f: EpisodeFilter): EpisodeSummary[] {
  return list.filter(
    (e) =>
      (f.status === 'all' || e.status === f.status) &&
      (f.termination === 'all' || (e.termination ?? '') === f.termination) &&
      rewardMatches(e.reward, f.reward),
  );
}

/** The statuses and terminations present, sorted, for the filters' options ('' = none recorded). */
export function filterChoices(list: readonly EpisodeSummary[]): {
  statuses: EpisodeStatusName[];
  terminations: string[];
} {
  return {
    statuses: [...new Set(list.map((e) => e.status))].sort(),
    terminations: [...new Set(list.map((e) => e.termination ?? ''))].sort(),
  };
}

export const countText = (shown: number, total: number) => `${shown} of ${total} episode${total === 1 ? '' : 's'}`;

// ---- the log-prob heatmap ------------------------------------------------------------------------

/** Log-probs at or below this are the darkest colour (p = e⁻⁴ ≈ 0.018). */
const HEAT_FLOOR = -4;
const HEAT_END = [185, 28, 28]; // Tailwind red-700, the Batch view's positive end

/**
 * A token's colours by its log-prob: white at 0 (certain), mixed linearly towards red-700 down to
 * `floor` and clamped below it (−∞ included); grey when not a number. Rounded down like the Batch
 * view's scale, so that only 0 is pure white; the text turns white on the dark half.
 */
export function heatColor(logp: number, floor = HEAT_FLOOR): { background: string; color: string } {
  if (Number.isNaN(logp)) return { background: '#d4d4d8', color: '#111111' };
  const t = Math.max(0, Math.min(1, logp / floor));
  const hex = HEAT_END.map((c) =>
    Math.floor(255 + (c - 255) * t)
      .toString(16)
      .padStart(2, '0'),
  ).join('');
  return { background: `#${hex}`, color: t > 0.55 ? '#ffffff' : '#111111' };
}

export const heatLegend = (floor = HEAT_FLOOR) =>
  `white = log-prob 0 (certain), dark red = ${fixed(floor, 1)} or lower (p ≤ ${fixed(Math.exp(floor), 3)})`;

/** A log-prob to 4 decimals ('-Infinity' kept as such; never '-0.0000'). */
const logp4 = (v: number) => (v === -Infinity ? '−∞' : fixed(v, 4));

/** The tooltip and accessible name of one action token. */
export const tokenLabel = (text: string, raw: number | undefined, behavior: number) =>
  `token ${JSON.stringify(text)}: raw log-prob ${raw === undefined ? 'not recorded' : logp4(raw)}, behavior log-prob ${logp4(behavior)}`;

// ---- a turn's facts -------------------------------------------------------------------------------

/**
 * What a turn says of how its action ended: `terminated` is the action stopping at `<eos>` (the
 * sampler's finish reason 'stop'), not the episode ending; only the last turn of an episode that is
 * no longer running ended it. null: the action ran out of ids (its observation says so).
 */
export function actionEndText(turn: Pick<EpisodeTurnView, 'action' | 'observation'>, last: boolean): string | null {
  if (!turn.action.terminated) return null;
  return last && turn.observation.status !== 'running'
    ? '(the action ended at <eos> and ended the episode)'
    : '(the action ended at <eos>)';
}

/** An imported run (verl rollouts) was trained elsewhere: no update or policy version of this workbench applies. */
export const NOT_TRAINED_HERE = 'not trained here';

/** A turn's or an episode's policy version as shown: the updates taken, or `not trained here` for an import. */
export const policyVersionText = (version: number, imported: boolean) =>
  imported ? NOT_TRAINED_HERE : String(version);

/** Whether an episode carried loss mass in its step's update, in words; `not trained here` for an import. */
export const trainedText = (trained: boolean, imported: boolean) =>
  imported ? NOT_TRAINED_HERE : trained ? 'trained on' : 'not trained on';

// ---- decoding --------------------------------------------------------------------------------------

/** A special's vocabulary entry is its name in angle brackets (`<eos>`), not a one-character symbol. */
const isSpecial = (sym: string) => sym.length > 2 && sym.startsWith('<') && sym.endsWith('>');

/** An id as shown: its symbol, whitespace made visible, or `<id N?>` when outside the vocabulary. */
export function decodeId(vocab: readonly string[], id: number): { text: string; special: boolean; unknown: boolean } {
  const sym = vocab[id];
  if (sym === undefined) return { text: `<id ${id}?>`, special: false, unknown: true };
  const visible: Record<string, string> = { ' ': '␣', '\n': '↵', '\t': '⇥' };
  return { text: visible[sym] ?? sym, special: isSpecial(sym), unknown: false };
}

// ---- turn selection --------------------------------------------------------------------------------

/** The turn index a key selects in a timeline of `count` turns; null when the key is not one of its keys. */
export function turnAfterKey(key: string, current: number, count: number): number | null {
  if (count === 0) return null;
  switch (key) {
    case 'ArrowDown':
    case 'ArrowRight':
      return Math.min(count - 1, current + 1);
    case 'ArrowUp':
    case 'ArrowLeft':
      return Math.max(0, current - 1);
    case 'Home':
      return 0;
    case 'End':
      return count - 1;
    default:
      return null;
  }
}

// ---- chains and replays ----------------------------------------------------------------------------

const RESET_WORDS: Record<NonNullable<EpisodeTurnView['reset']>['reason'], string> = {
  prefix_changed: 'prefix changed',
  duplicate: 'duplicate prompt',
  empty_delta: 'nothing new appended',
};

/** "new chain: prefix changed at index 12". */
export const resetText = (reset: NonNullable<EpisodeTurnView['reset']>) =>
  `new chain: ${RESET_WORDS[reset.reason] ?? reset.reason} at index ${reset.index}`;

/** A turn's prompt split into the inherited ids [0, inherited) and its own; null when the chain is unresolved. */
export function chainParts(
  turn: Pick<EpisodeTurnView, 'promptIds' | 'inherited'>,
): { inherited: Int32Array; own: Int32Array } | null {
  if (!turn.promptIds) return null;
  const k = Math.max(0, Math.min(turn.inherited, turn.promptIds.length));
  return { inherited: turn.promptIds.subarray(0, k), own: turn.promptIds.subarray(k) };
}

/** One turn of a replay in words: "identical", or where it diverged and what was expected and got. */
export function replayTurnText(t: ReplayResult['turns'][number]): string {
  if (t.identical) return 'identical';
  const at = t.firstDivergentToken === undefined ? '' : ` at token ${t.firstDivergentToken}`;
  const what =
    t.expected !== undefined || t.got !== undefined
      ? `: expected ${JSON.stringify(t.expected ?? '')}, got ${JSON.stringify(t.got ?? '')}`
      : '';
  return `diverged${at}${what}`;
}
