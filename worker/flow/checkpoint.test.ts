import { describe, expect, it } from 'vitest';
import { randomArray } from '../../kernels/common/random';
import { flowCheckpointFiles, importFlowCheckpoint } from './checkpoint';
import { FLOW_2D, flowParamSpecs, type FlowModelConfig } from './config';

const SMALL: FlowModelConfig = { dim: 2, width: 8, hidden: 2, timeFeatures: 4, maxFrequency: 16 };

const weights = (c: FlowModelConfig, seed: number) =>
  new Map(
    flowParamSpecs(c).map((s, i) => [
      s.name,
      randomArray(
        s.shape.reduce((a, b) => a * b, 1),
        seed + i,
      ),
    ]),
  );

describe('flow checkpoint files', () => {
  it('export then import is exact, with and without the reference', () => {
    const [w, ref] = [weights(SMALL, 1), weights(SMALL, 100)];
    const files = flowCheckpointFiles(SMALL, w, ref, { step: 3 });
    expect(Object.keys(files).sort()).toEqual([
      'config.json',
      'dewpoint.json',
      'model.safetensors',
      'reference.safetensors',
    ]);
    const loaded = importFlowCheckpoint(files, SMALL);
    expect(loaded.config).toEqual(SMALL);
    expect(loaded.weights).toEqual(w);
    expect(loaded.reference).toEqual(ref);
    expect(loaded.info).toEqual({ step: 3 });

    const plain = flowCheckpointFiles(SMALL, w, null, {});
    expect(plain['reference.safetensors']).toBeUndefined();
    expect(importFlowCheckpoint(plain).reference).toBeNull();
  });

  it('names the file and the field of what is wrong', () => {
    const files = flowCheckpointFiles(SMALL, weights(SMALL, 1), null, {});
    expect(() => importFlowCheckpoint(files, FLOW_2D)).toThrow(
      "config.json: width = 8, but this run's model has width = 64",
    );
    const other = flowCheckpointFiles(FLOW_2D, weights(FLOW_2D, 1), null, {});
    expect(() => importFlowCheckpoint({ ...files, 'model.safetensors': other['model.safetensors'] })).toThrow(
      /^model\.safetensors: 'layers\.0\.weight' has shape \[64,18\], config\.json implies \[8,6\]$/,
    );
    const lm = new TextEncoder().encode(JSON.stringify({ model_type: 'llama' }));
    expect(() => importFlowCheckpoint({ ...files, 'config.json': lm })).toThrow(
      'config.json: model_type = "llama"; expected "dewpoint-velocity-field" (a flow checkpoint)',
    );
    const partial = new Map(weights(SMALL, 1));
    partial.delete('layers.2.bias');
    expect(() => flowCheckpointFiles(SMALL, partial, null, {})).toThrow(/no tensor 'layers\.2\.bias'/);
  });
});
