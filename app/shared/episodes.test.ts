import { describe, expect, it } from 'vitest';
import type { EpisodeSummary, EpisodeTurnView } from '../../worker/protocol';
import {
  ALL_EPISODES,
  actionEndText,
  chainParts,
  countText,
  decodeId,
  filterChoices,
  filterEpisodes,
  formatEpisodeLink,
  heatColor,
  parseEpisodeLink,
  policyVersionText,
  replayTurnText,
  resetText,
  tokenLabel,
  trainedText,
  turnAfterKey,
} from './episodes';

describe('the deep link', () => {
  it('reads run, step and episode from the query after the route', () => {
    expect(parseEpisodeLink('#/episodes?run=r-1&step=12&episode=3')).toEqual({ run: 'r-1', step: 12, episode: 3 });
    expect(parseEpisodeLink('#/episodes?run=r-1&step=0')).toEqual({ run: 'r-1', step: 0, episode: null });
    expect(parseEpisodeLink('#/episodes')).toEqual({ run: null, step: null, episode: null });
    expect(parseEpisodeLink('')).toEqual({ run: null, step: null, episode: null });
  });

  it('drops what cannot be read, and a part whose parent is missing', () => {
    expect(parseEpisodeLink('#/episodes?run=a&step=-1&episode=2')).toEqual({ run: 'a', step: null, episode: null });
    expect(parseEpisodeLink('#/episodes?run=a&step=2.5')).toEqual({ run: 'a', step: null, episode: null });
    expect(parseEpisodeLink('#/episodes?run=a&step=x')).toEqual({ run: 'a', step: null, episode: null });
    expect(parseEpisodeLink('#/episodes?step=4&episode=1')).toEqual({ run: null, step: null, episode: null });
    expect(parseEpisodeLink('#/episodes?run=&step=4')).toEqual({ run: null, step: null, episode: null });
  });

  it('writes what it reads back, escaping the run id', () => {
    const link = { run: 'run 7/ä&b', step: 5, episode: 0 };
    const hash = formatEpisodeLink(link);
    expect(hash.startsWith('#/episodes?run=')).toBe(true);
    expect(hash).not.toContain(' ');
    expect(parseEpisodeLink(hash)).toEqual(link);
    expect(formatEpisodeLink({ run: 'r', step: 3, episode: 1 })).toBe('#/episodes?run=r&step=3&episode=1');
    expect(formatEpisodeLink({ run: 'r', step: null, episode: 1 })).toBe('#/episodes?run=r');
    expect(formatEpisodeLink({ run: null, step: 2 })).toBe('#/episodes');
  });
});

const ep = (index: number, over: Partial<EpisodeSummary>): EpisodeSummary => ({
  step: 1,
  index,
  group: `g${index >> 1}`,
  sample: index & 1,
  task: { id: `t${index}`, prompt: '2+2', answer: '4' },
  status: 'completed',
  termination: 'env_done',
  reward: 1,
  turns: 2,
  policyVersion: 0,
  trained: true,
  groupAborted: false,
  corrupt: false,
  resumedTurns: 0,
  ms: 5,
  ...over,
});

describe('filtering episodes', () => {
  const list = [
    ep(0, {}),
    ep(1, { reward: 0 }),
    ep(2, { status: 'truncated', termination: 'max_turns', reward: 0 }),
    ep(3, { status: 'error', termination: undefined, reward: null }),
    ep(4, { reward: 0.5 }),
  ];
  const indices = (f: Partial<typeof ALL_EPISODES>) =>
    filterEpisodes(list, { ...ALL_EPISODES, ...f }).map((e) => e.index);

  it('keeps everything with every filter at all', () => {
    expect(indices({})).toEqual([0, 1, 2, 3, 4]);
  });

  it('filters by reward exactly, unscored being null only', () => {
    expect(indices({ reward: 'one' })).toEqual([0]);
    expect(indices({ reward: 'zero' })).toEqual([1, 2]);
    expect(indices({ reward: 'unscored' })).toEqual([3]);
    expect(indices({ reward: 'other' })).toEqual([4]);
  });

  it('filters by status and termination, "" meaning none recorded, and combines filters', () => {
    expect(indices({ status: 'truncated' })).toEqual([2]);
    expect(indices({ termination: '' })).toEqual([3]);
    expect(indices({ termination: 'env_done', reward: 'zero' })).toEqual([1]);
    expect(indices({ status: 'cancelled' })).toEqual([]);
  });

  it('offers the statuses and terminations present, and counts', () => {
    expect(filterChoices(list)).toEqual({
      statuses: ['completed', 'error', 'truncated'],
      terminations: ['', 'env_done', 'max_turns'],
    });
    expect(countText(2, 5)).toBe('2 of 5 episodes');
    expect(countText(1, 1)).toBe('1 of 1 episode');
  });
});

describe('the heatmap scale', () => {
  it('is white only at log-prob 0 and red-700 at the floor and below', () => {
    expect(heatColor(0).background).toBe('#ffffff');
    expect(heatColor(-1e-6).background).toBe('#fefefe');
    expect(heatColor(-4).background).toBe('#b91c1c');
    expect(heatColor(-50).background).toBe('#b91c1c');
    expect(heatColor(-Infinity).background).toBe('#b91c1c');
    expect(heatColor(-2).background).toBe('#dc8d8d'); // halfway, rounded down
    expect(heatColor(0.3).background).toBe('#ffffff'); // a positive log-prob (rounding) clamps to 0
    expect(heatColor(Number.NaN).background).toBe('#d4d4d8');
  });

  it('darkens monotonically and keeps the text readable', () => {
    const red = (lp: number) => parseInt(heatColor(lp).background.slice(3, 5), 16);
    expect(red(-0.5)).toBeGreaterThan(red(-1));
    expect(red(-1)).toBeGreaterThan(red(-3));
    expect(heatColor(-0.5).color).toBe('#111111');
    expect(heatColor(-4).color).toBe('#ffffff');
  });

  it('labels a token with its text and both log-probs to 4 decimals', () => {
    expect(tokenLabel('7', -0.123456, -0.2)).toBe('token "7": raw log-prob -0.1235, behavior log-prob -0.2000');
    expect(tokenLabel('<eos>', undefined, -Infinity)).toBe(
      'token "<eos>": raw log-prob not recorded, behavior log-prob −∞',
    );
    expect(tokenLabel('x', -0.00001, -0.00001)).toBe('token "x": raw log-prob 0.0000, behavior log-prob 0.0000');
  });
});

describe('decoding, turn keys, chains and replays', () => {
  const vocab = ['<pad>', '<bos>', '<eos>', '1', ' ', '<', '>'];

  it('names specials, keeps "<" and ">" symbols, shows whitespace and unknown ids', () => {
    expect(decodeId(vocab, 2)).toEqual({ text: '<eos>', special: true, unknown: false });
    expect(decodeId(vocab, 5)).toEqual({ text: '<', special: false, unknown: false });
    expect(decodeId(vocab, 4).text).toBe('␣');
    expect(decodeId(vocab, 99)).toEqual({ text: '<id 99?>', special: false, unknown: true });
  });

  it('moves the selected turn by key, clamped at the ends', () => {
    expect(turnAfterKey('ArrowDown', 0, 3)).toBe(1);
    expect(turnAfterKey('ArrowRight', 2, 3)).toBe(2);
    expect(turnAfterKey('ArrowUp', 0, 3)).toBe(0);
    expect(turnAfterKey('ArrowLeft', 2, 3)).toBe(1);
    expect(turnAfterKey('Home', 2, 3)).toBe(0);
    expect(turnAfterKey('End', 0, 3)).toBe(2);
    expect(turnAfterKey('Enter', 0, 3)).toBeNull();
    expect(turnAfterKey('End', 0, 0)).toBeNull();
  });

  it('splits a prompt at the inherited length, and has no prompt for an unresolved chain', () => {
    const parts = chainParts({ promptIds: Int32Array.from([1, 3, 3, 4, 2]), inherited: 3 });
    expect(Array.from(parts!.inherited)).toEqual([1, 3, 3]);
    expect(Array.from(parts!.own)).toEqual([4, 2]);
    expect(Array.from(chainParts({ promptIds: Int32Array.from([1, 3]), inherited: 0 })!.own)).toEqual([1, 3]);
    expect(chainParts({ promptIds: null, inherited: 4 })).toBeNull();
  });

  it('puts resets and divergences in words', () => {
    expect(resetText({ reason: 'prefix_changed', index: 12 })).toBe('new chain: prefix changed at index 12');
    expect(resetText({ reason: 'empty_delta', index: 4 })).toBe('new chain: nothing new appended at index 4');
    expect(replayTurnText({ turn: 1, identical: true })).toBe('identical');
    expect(replayTurnText({ turn: 2, identical: false, firstDivergentToken: 3, expected: '12', got: '13' })).toBe(
      'diverged at token 3: expected "12", got "13"',
    );
    expect(replayTurnText({ turn: 2, identical: false })).toBe('diverged');
  });
});

describe("a turn's facts", () => {
  const turn = (terminated: boolean, status: EpisodeTurnView['observation']['status']) => ({
    action: { terminated } as EpisodeTurnView['action'],
    observation: { status } as EpisodeTurnView['observation'],
  });

  it('an action that stopped at <eos> says so; only the last turn of an ended episode ended it (grpo-guess: turns 1–4 of 5)', () => {
    for (const i of [0, 1, 2, 3])
      expect(actionEndText(turn(true, 'running'), i === 4)).toBe('(the action ended at <eos>)');
    expect(actionEndText(turn(true, 'completed'), true)).toBe('(the action ended at <eos> and ended the episode)');
    expect(actionEndText(turn(true, 'truncated'), true)).toBe('(the action ended at <eos> and ended the episode)');
    // A live episode's latest turn: still running, so it ended nothing.
    expect(actionEndText(turn(true, 'running'), true)).toBe('(the action ended at <eos>)');
    // Out of ids before <eos>: the observation says max_response_length.
    expect(actionEndText(turn(false, 'truncated'), true)).toBeNull();
  });

  it('an imported episode claims no policy version and no update of this workbench', () => {
    expect(policyVersionText(2, true)).toBe('not trained here');
    expect(trainedText(true, true)).toBe('not trained here');
    expect(policyVersionText(2, false)).toBe('2');
    expect(trainedText(true, false)).toBe('trained on');
    expect(trainedText(false, false)).toBe('not trained on');
  });
});
