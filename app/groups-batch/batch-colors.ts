/**
 * Colour scales of the Batch view: categorical for segments, binary for the response mask,
 * diverging (blue − white − red, symmetric around 0, exactly #ffffff at 0) for signed layers,
 * sequential for versions.
 */
import type { BatchLayer } from '../../worker/protocol';

type Scale =
  | { kind: 'categorical' }
  | { kind: 'binary' }
  | { kind: 'diverging'; max: number }
  /** `unit` names the values in the legend ("version 3", "2 versions behind", "IS weight 1.4"). */
  | { kind: 'sequential'; min: number; max: number; unit: (v: number) => string };

export const LAYER_INFO: Record<BatchLayer, { title: string; help: string }> = {
  segments: { title: 'Segments (chains)', help: 'each packed chain in its own colour; grey = padding' },
  responseMask: { title: 'Response mask', help: 'dark = sampled id the loss reads; light = prompt or padding' },
  advantage: {
    title: 'Advantage',
    help: "the advantage on each sampled id: the session's (outcome estimators), or each token's own under GAE (PPO, whitened); red > 0, blue < 0",
  },
  mismatch: {
    title: 'Old − behavior log-prob',
    help: 'raw model log-prob minus the sampling log-prob (temperature/top-k/top-p)',
  },
  dlogp: { title: 'Per-token gradient dlogp', help: '∂loss/∂logp seeding the backward pass (red > 0, blue < 0)' },
  version: {
    title: 'Policy version',
    help: 'the version (batches trained) of the weights that sampled each id; −1 = not sampled',
  },
  staleness: {
    title: 'Staleness',
    help:
      'versions between the weights that sampled each id and the weights it trained on (asynchronous rollouts: at ' +
      'most the staleness bound s)',
  },
  value: {
    title: 'Value (critic)',
    help: "the value head's estimate at rollout of the state each sampled id was drawn from (PPO)",
  },
  return: {
    title: 'Return (GAE target)',
    help: 'the value target of each sampled id: un-whitened GAE advantage + value (PPO)',
  },
  isWeight: {
    title: 'IS weight (applied)',
    help: 'the importance weight the policy term was multiplied by, after the TIS cap or IcePop band (corrections on)',
  },
  keep: {
    title: 'Rejection keep',
    help: 'dark = kept by every rejection option; light = rejected (no loss mass) or not sampled',
  },
};

export const BATCH_LAYERS = Object.keys(LAYER_INFO) as BatchLayer[];

/** A layer the batch has with at least one recorded value (an imported batch's NaN layers are not recorded: verl dumps no dlogp). */
export function recorded(values: Float32Array | undefined): values is Float32Array {
  return values !== undefined && values.some(Number.isFinite);
}

export function scaleFor(layer: BatchLayer, values: Float32Array): Scale {
  if (layer === 'segments') return { kind: 'categorical' };
  if (layer === 'responseMask' || layer === 'keep') return { kind: 'binary' };
  if (layer === 'isWeight') {
    let max = 0;
    for (const v of values) if (Number.isFinite(v)) max = Math.max(max, v);
    return { kind: 'sequential', min: 0, max, unit: (v) => `IS weight ${v.toPrecision(3)}` };
  }
  if (layer === 'version' || layer === 'staleness') {
    let min = Infinity,
      max = -Infinity;
    for (const v of values) if (v >= 0) [min, max] = [Math.min(min, v), Math.max(max, v)];
    const unit =
      layer === 'version' ? (v: number) => `version ${v}` : (v: number) => `${v} version${v === 1 ? '' : 's'} behind`;
    return { kind: 'sequential', min: Number.isFinite(min) ? min : 0, max: Number.isFinite(max) ? max : 0, unit };
  }
  let max = 0;
  for (const v of values) if (Number.isFinite(v)) max = Math.max(max, Math.abs(v));
  return { kind: 'diverging', max };
}

/** The diverging scale's ends (Tailwind red-700, blue-700) and its centre. */
const DIVERGING = { positive: [185, 28, 28], negative: [29, 78, 216], zero: '#ffffff' } as const;

const hex = (rgb: readonly number[]) => `#${rgb.map((c) => c.toString(16).padStart(2, '0')).join('')}`;

/** White mixed linearly (in sRGB) towards `end` by t ∈ (0, 1], rounded down so that only 0 is pure white. */
const fromWhite = (end: readonly number[], t: number) => hex(end.map((c) => Math.floor(255 + (c - 255) * t)));

export function colorOf(scale: Scale, v: number): string {
  switch (scale.kind) {
    case 'categorical':
      return v === 0 ? '#d4d4d8' : `hsl(${(v * 137.5) % 360} 65% 62%)`;
    case 'binary':
      return v ? '#1e3a8a' : '#e5e7eb';
    case 'sequential': {
      if (v < 0) return '#e5e7eb';
      const t = scale.max > scale.min ? (v - scale.min) / (scale.max - scale.min) : 1;
      return `hsl(150 60% ${85 - 50 * t}%)`;
    }
    case 'diverging': {
      if (!Number.isFinite(v)) return '#d4d4d8';
      const t = scale.max > 0 ? Math.max(-1, Math.min(1, v / scale.max)) : 0;
      if (t === 0) return DIVERGING.zero;
      return fromWhite(t > 0 ? DIVERGING.positive : DIVERGING.negative, Math.abs(t));
    }
  }
}

export function legendOf(scale: Scale): string {
  switch (scale.kind) {
    case 'categorical':
      return 'colour = chain (segment id); grey = padding';
    case 'binary':
      return 'dark = a response id the loss reads, light = prompt or padding';
    case 'sequential':
      return `light = ${scale.unit(scale.min)}, dark = ${scale.unit(scale.max)}; grey = not sampled`;
    case 'diverging':
      return `blue = −${scale.max.toPrecision(3)}, white = 0, red = +${scale.max.toPrecision(3)}`;
  }
}
