/**
 * The bundle (`dewpoint export RUN --to verl|skyrl`) end to end, from real short runs: its weights
 * load back into Dewpoint and score as the run's own model did.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parquetReadObjects } from 'hyparquet';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createCpuOps } from '../kernels/backends/cpu';
import { loadHfFolder } from '../worker/hf/folder';
import { fixtureFolder } from '../worker/hf/node-fixture';
import { hfDirReader, loadCheckpointDir, writeHfDir } from '../worker/hf/node-hf-dir';
import { checkpointFromHf, type LoadedCheckpoint } from '../worker/model/checkpoint';
import { Model } from '../worker/model/model';
import { rowPerSequence } from '../worker/model/packing';
import { BASE_CHECKPOINT_DIR } from '../worker/model/node-checkpoint-dir';
import { decodeSafetensors } from '../worker/model/safetensors';
import { findPreset } from '../worker/presets/table';
import { main } from './main';
import { capture } from './testing/capture';

afterEach(() => vi.restoreAllMocks());

type Row = Record<string, unknown> & { prompt_ids: number[]; response_ids: number[]; rollout_log_probs: number[] };

const readParquet = async (file: string) =>
  (await parquetReadObjects({ file: new Uint8Array(readFileSync(file)).buffer })) as Row[];

/** `train --preset P --save RUN` on the cpu backend (no evaluation); the run folder. */
async function train(preset: string, steps: number, extra: string[] = []): Promise<string> {
  const run = join(mkdtempSync(join(tmpdir(), 'dewpoint-bundle-')), 'run');
  const { err } = capture();
  const code = await main([
    'train',
    '--preset',
    preset,
    '--steps',
    String(steps),
    '--eval-every',
    '0',
    '--backend',
    'cpu',
    '--save',
    run,
    ...extra,
  ]);
  expect(code, err.join('')).toBe(0);
  vi.restoreAllMocks();
  return run;
}

/** Each sequence's log-probs of its response ids (from `prompt` on) under the checkpoint, on the cpu backend. */
async function responseLogProbs(ck: LoadedCheckpoint, seqs: readonly { prompt: number[]; response: number[] }[]) {
  const model = new Model(createCpuOps(), ck.config);
  model.setWeights(ck.weights);
  const batch = rowPerSequence(seqs.map((s) => [...s.prompt, ...s.response]));
  const { logp } = await model.score(batch);
  return seqs.map((s, r) =>
    logp.slice(r * batch.width + s.prompt.length, r * batch.width + s.prompt.length + s.response.length),
  );
}

/** `sql` over the parquet file through DuckDB's reader (C++, independent of the hyparquet that wrote it). */
async function duck(file: string, sql: (from: string) => string) {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    return (await c.runAndReadAll(sql(`read_parquet('${file}')`))).getRowObjectsJson();
  } finally {
    c.closeSync();
  }
}

/** The bundle's parity.json (reward.py over the run's rollouts, run by the export). */
const parity = (dir: string) => JSON.parse(readFileSync(join(dir, 'parity.json'), 'utf8')) as Record<string, unknown>;

/**
 * A FAKE of SkyRL's skyrl_gym API, not SkyRL: the few names skyrl_env.py imports, shaped as
 * NovaSky-AI/SkyRL @ a956457 skyrl-gym/skyrl_gym/envs (`register(id, entry_point)` into a registry,
 * `make(id, **kwargs)` calling the entry point with them, BaseTextEnv, BaseTextEnvStepOutput as a
 * TypedDict). It lets the bundle's environment run here, where SkyRL is not installed.
 */
const FAKE_SKYRL_GYM: Record<string, string> = {
  'skyrl_gym/__init__.py': '',
  'skyrl_gym/envs/__init__.py': [
    'registry = {}',
    'def register(id, entry_point=None, kwargs=None):',
    '    registry[id] = (entry_point, dict(kwargs or {}))',
    'def make(id, **kwargs):',
    '    entry_point, spec_kwargs = registry[id]',
    '    if isinstance(entry_point, str):',
    '        import importlib',
    '        module, attr = entry_point.split(":")',
    '        entry_point = getattr(importlib.import_module(module), attr)',
    '    return entry_point(**{**spec_kwargs, **kwargs})',
    '',
  ].join('\n'),
  'skyrl_gym/envs/base_text_env.py': [
    'from typing import Any, Dict, List, Optional, TypedDict',
    'class BaseTextEnvStepOutput(TypedDict):',
    '    observations: List[Dict[str, str]]',
    '    reward: float',
    '    done: bool',
    '    metadata: Dict[str, Any]',
    'class BaseTextEnv:',
    '    def __init__(self):',
    '        self.turns = 0',
    '        self.max_turns = 1',
    '',
  ].join('\n'),
};

/**
 * The bundle's skyrl_env.py under the fake skyrl_gym: registered, made as SkyRL's generator makes an
 * env (`make(env_class, env_config=..., extras=row)`), stepped once with each `actions[i]`; its outputs.
 */
function skyrlEnvSteps(bundle: string, extras: readonly Record<string, unknown>[], actions: readonly string[]) {
  const fake = mkdtempSync(join(tmpdir(), 'fake-skyrl-gym-'));
  for (const [name, text] of Object.entries(FAKE_SKYRL_GYM)) {
    mkdirSync(join(fake, name, '..'), { recursive: true });
    writeFileSync(join(fake, name), text);
  }
  const script = [
    'import json, sys',
    'import skyrl_env',
    'from skyrl_gym.envs import make',
    'skyrl_env.register_env()',
    'cases = json.load(sys.stdin)',
    'out = []',
    'for extras, action in cases:',
    '    try:',
    '        env = make("dewpoint_reward", env_config={}, extras=extras)',
    '        out.append(dict(env.step(action)))',
    '    except ValueError as e:',
    '        out.append({"error": str(e)})',
    'print(json.dumps(out))',
  ].join('\n');
  const p = spawnSync('python3', ['-c', script], {
    cwd: fake,
    input: JSON.stringify(extras.map((e, i) => [e, actions[i]])),
    env: { ...process.env, PYTHONPATH: `${fake}:${bundle}` },
    encoding: 'utf8',
  });
  expect(p.status, p.stderr).toBe(0);
  return JSON.parse(p.stdout) as { reward?: number; done?: boolean; observations?: unknown[]; error?: string }[];
}

const bits = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

describe('the bundle’s weights load back into Dewpoint', () => {
  it('grpo-arith: model/ scores every rollout bit for bit as the run’s saved model, and as the run’s sampler did under its last weights', async () => {
    // A 2-step run, bundled; and the same run taken one step further, whose step-3 rollouts were
    // sampled by the in-memory model the 2-step run ended with (constant lr: a prefix of it).
    const run = await train('grpo-arith', 2, ['--prompts', '2']);
    const longer = await train('grpo-arith', 3, ['--prompts', '2']);
    const { err } = capture();
    expect(await main(['export', run, '--to', 'verl']), err.join('')).toBe(1); // refused for vLLM (head_dim 16), written
    const bundled = await loadCheckpointDir(join(run, 'verl', 'model'));
    const saved = await loadCheckpointDir(join(run, 'model'));
    const base = await loadCheckpointDir(BASE_CHECKPOINT_DIR);
    expect(bundled.config).toEqual(saved.config);

    const rows = await readParquet(join(run, 'verl', 'rollouts.parquet'));
    // The prompts through DuckDB: verl's keys and SkyRL's, one row per distinct prompt sampled.
    const prompts = await duck(
      join(run, 'verl', 'train.parquet'),
      (f) =>
        `SELECT data_source, prompt[1].content AS content, reward_model.ground_truth AS gt, env_class, ` +
        `reward_spec.ground_truth AS spec_gt FROM ${f}`,
    );
    expect(prompts.map((p) => [p.data_source, p.content, p.gt, p.env_class, p.spec_gt]).sort()).toEqual(
      [...new Set(rows.map((r) => JSON.stringify(['lighteval/MATH', r.input, r.gts, 'dewpoint_reward', r.gts])))]
        .map((j) => JSON.parse(j))
        .sort(),
    );
    const seqs = rows.map((r) => ({ prompt: r.prompt_ids, response: r.response_ids }));
    const fromBundle = await responseLogProbs(bundled, seqs);
    const fromSaved = await responseLogProbs(saved, seqs);
    const fromBase = await responseLogProbs(base, seqs);
    fromBundle.forEach((lp, i) => expect(bits(lp).equals(bits(fromSaved[i])), `rollout ${i}`).toBe(true));
    // Not the base: training moved every sequence's log-probs.
    expect(fromBundle.every((lp, i) => !bits(lp).equals(bits(fromBase[i])))).toBe(true);

    // SkyRL: launch.sh starts skyrl_main, and skyrl_env.py's one step gives each rollout the run's own score.
    const { err: err3 } = capture();
    expect(await main(['export', run, '--to', 'skyrl']), err3.join('')).toBe(1); // head_dim 16, as above
    const sky = join(run, 'skyrl');
    const launch = readFileSync(join(sky, 'launch.sh'), 'utf8');
    expect(spawnSync('bash', ['-n', join(sky, 'launch.sh')]).status).toBe(0);
    expect(launch).toContain('export PYTHONPATH="$HERE${PYTHONPATH:+:$PYTHONPATH}"');
    expect(launch).toContain('-m skyrl_main \\\n    "data.train_data=[\'$TRAIN_FILES\']"');
    // launch.sh run with a stand-in for SkyRL's Python (several words, as `uv run … python` is) that prints what it got.
    const stand = join(mkdtempSync(join(tmpdir(), 'skyrl-python-')), 'argv.sh');
    writeFileSync(stand, 'printf "%s\\n" "$PYTHONPATH" "$@"\n');
    const ran = spawnSync('bash', [join(sky, 'launch.sh'), 'trainer.placement.policy_num_gpus_per_node=2'], {
      env: { ...process.env, MODEL_PATH: '/models/m', SKYRL_PYTHON: `bash ${stand}`, PYTHONPATH: '/x' },
      encoding: 'utf8',
    });
    expect(ran.status, ran.stderr).toBe(0);
    const argv = ran.stdout.trimEnd().split('\n');
    expect(argv.slice(0, 5)).toEqual([
      `${sky}:/x`,
      '-m',
      'skyrl_main',
      `data.train_data=['${sky}/train.parquet']`,
      `data.val_data=['${sky}/val.parquet']`,
    ]);
    expect(argv).toContain('trainer.policy.model.path=/models/m');
    expect(argv).toContain('trainer.train_batch_size=2');
    expect(argv.at(-1)).toBe('trainer.placement.policy_num_gpus_per_node=2');
    const rowsOf = (e: Row) => ({
      data_source: 'lighteval/MATH',
      reward_spec: { method: 'rule', ground_truth: e.gts },
      extra_info: { split: 'train', index: 0 },
    });
    const stepped = skyrlEnvSteps(
      sky,
      rows.map(rowsOf),
      rows.map((r) => r.output as string),
    );
    expect(stepped.map((s) => s.reward)).toEqual(rows.map((r) => r.score));
    expect(new Set(rows.map((r) => r.score)).size, 'the run scored both ways').toBe(2);
    for (const s of stepped) expect(s).toMatchObject({ done: true, observations: [] });
    expect(skyrlEnvSteps(sky, [{ data_source: 'x' }], ['\\boxed{1}'])[0].error).toMatch(
      /^env_class dewpoint_reward: the row needs reward_spec with ground_truth/,
    );

    // The longer run's first two steps are this run's; its third was sampled by this run's final weights.
    const { err: err2 } = capture();
    expect(await main(['export', longer, '--to', 'verl']), err2.join('')).toBe(1);
    const longerRows = await readParquet(join(longer, 'verl', 'rollouts.parquet'));
    const prefix = longerRows.filter((r) => (r.step as number) <= 2);
    expect(prefix.map((r) => [r.output, r.rollout_log_probs])).toEqual(
      rows.map((r) => [r.output, r.rollout_log_probs]),
    );
    const third = longerRows.filter((r) => r.step === 3);
    expect(third.length).toBeGreaterThan(0);
    const sampled = await responseLogProbs(
      bundled,
      third.map((r) => ({ prompt: r.prompt_ids, response: r.response_ids })),
    );
    // The sampler's f32 log-probs (generate.ts, incremental decoding) and score's full forward agree bit for bit on cpu.
    third.forEach((r, i) =>
      expect(bits(Float32Array.from(r.rollout_log_probs)).equals(bits(sampled[i])), `step 3 rollout ${i}`).toBe(true),
    );
  });
});

describe('grpo-calc (tool episodes) bundled', () => {
  it('reward.py gives the environment’s reward on every episode; the prompts carry agent_name and both key sets; README states the tool format', async () => {
    const run = await train('grpo-calc', 1, ['--prompts', '2']);
    const { err } = capture();
    expect(await main(['export', run, '--to', 'verl']), err.join('')).toBe(1); // the calc base: head_dim 16, char tokenizer
    const out = join(run, 'verl');
    const rows = await readParquet(join(out, 'rollouts.parquet'));
    // 2 tasks x the preset's 8 episodes, each scored by the environment (none failed).
    expect(rows).toHaveLength(16);
    expect(rows.every((r) => r.score === 0 || r.score === 1)).toBe(true);
    expect(rows.some((r) => (r.output as string).includes(' ⏎ '))).toBe(true); // several turns
    expect(parity(out)).toMatchObject({ ran: true, reward: 'calc', rows: 16, equal: 16, differ: [] });
    expect(err.join('')).toContain("reward.py gives Dewpoint's score on 16 of 16 rollouts");
    const lines = readFileSync(join(out, 'parity.jsonl'), 'utf8').trim().split('\n');
    expect(lines.map((l) => JSON.parse(l).finish_reason)).toEqual(rows.map((r) => r.finish_reason));

    const prompts = await duck(
      join(out, 'train.parquet'),
      (f) =>
        `SELECT agent_name, env_class, data_source, prompt[1].content AS content, reward_model.ground_truth AS gt, ` +
        `reward_spec.method AS method, reward_spec.ground_truth AS spec_gt FROM ${f}`,
    );
    expect(prompts).toHaveLength(2);
    for (const p of prompts) {
      expect(p).toMatchObject({ agent_name: 'tool_agent', method: 'rule' });
      expect(p.spec_gt).toBe(p.gt);
      expect(p.content).toMatch(/^\d+\+\d+\+\d+=$/);
      expect(String(Number(p.gt))).toBe(p.gt);
    }
    expect(new Set(prompts.map((p) => p.content))).toEqual(new Set(rows.map((r) => r.input)));
    const readme = readFileSync(join(out, 'README.md'), 'utf8');
    expect(readme).toContain('`agent_name` = `tool_agent`');
    expect(readme).toMatch(/Tool format: .*`calc\(X\+Y\)`.*`=R`.*`\\boxed\{N\}`/);

    // SkyRL: the same data and reward, a launch of one turn (skyrl_env.py's step ends the episode).
    const { err: err2 } = capture();
    expect(await main(['export', run, '--to', 'skyrl']), err2.join('')).toBe(1);
    expect(readFileSync(join(run, 'skyrl', 'README.md'), 'utf8')).toMatch(
      /- maxTurns = \d+ \[no equivalent\]: skyrl_env\.py's step/,
    );
    expect(parity(join(run, 'skyrl'))).toMatchObject({ rows: 16, equal: 16 });
    expect(readFileSync(join(run, 'skyrl', 'train.parquet')).equals(readFileSync(join(out, 'train.parquet')))).toBe(
      true,
    );
  });
});

describe('dpo-arith bundled', () => {
  it('verl refuses the launch by name; the weights, prompts and pairs go out, and reward.py scores both sides of every pair', async () => {
    const run = await train('dpo-arith', 1, ['--prompts', '3']);
    const { err } = capture();
    expect(await main(['export', run, '--to', 'verl']), err.join('')).toBe(1);
    expect(err.join('')).toMatch(
      /preflight refused \(launch\): dpo-arith is DPO: verl\.trainer\.main_ppo trains PPO-family/,
    );
    const out = join(run, 'verl');
    expect(existsSync(join(out, 'launch.sh'))).toBe(false);
    const pairs = await duck(
      join(out, 'pairs.parquet'),
      (f) => `SELECT prompt, chosen, rejected, ground_truth, chosen_score, rejected_score, step, source FROM ${f}`,
    );
    expect(pairs).toHaveLength(3);
    for (const p of pairs) expect(p).toMatchObject({ step: 1, source: 'dpo-pair' });
    // parity.jsonl: every pair's chosen and rejected completion, with the reward the pair was built by.
    const parityRows = readFileSync(join(out, 'parity.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { solution_str: string; ground_truth: string; score: number });
    const sides = pairs.flatMap((p) => [
      [p.chosen, p.ground_truth, p.chosen_score],
      [p.rejected, p.ground_truth, p.rejected_score],
    ]);
    expect(parityRows.map((r) => [r.solution_str, r.ground_truth, r.score]).sort()).toEqual(sides.sort());
    expect(parity(out)).toMatchObject({ ran: true, reward: 'math', rows: 6, equal: 6, differ: [] });
    const prompts = await duck(
      join(out, 'train.parquet'),
      (f) =>
        `SELECT prompt[1].content AS content, reward_model.ground_truth AS gt, reward_spec.ground_truth AS spec_gt, env_class FROM ${f}`,
    );
    expect(prompts.map((p) => [p.content, p.gt, p.spec_gt]).sort()).toEqual(
      pairs.map((p) => [p.prompt, p.ground_truth, p.ground_truth]).sort(),
    );
    const readme = readFileSync(join(out, 'README.md'), 'utf8');
    expect(readme).toContain("verl's PPO launcher (`verl.trainer.main_ppo`) has no DPO trainer");
    expect(readme).toContain("`pairs.parquet`: the run's 3 preference pairs");
    // The weights the DPO step ended with: RUN/model's, bit for bit, not the base's.
    const bundled = await loadCheckpointDir(join(out, 'model'));
    const saved = await loadCheckpointDir(join(run, 'model'));
    const base = await loadCheckpointDir(BASE_CHECKPOINT_DIR);
    const rows = await readParquet(join(out, 'rollouts.parquet'));
    const seqs = rows.map((r) => ({ prompt: r.prompt_ids, response: r.response_ids }));
    const [b, s, z] = await Promise.all([bundled, saved, base].map((ck) => responseLogProbs(ck, seqs)));
    b.forEach((lp, i) => expect(bits(lp).equals(bits(s[i])), `pair side ${i}`).toBe(true));
    expect(b.some((lp, i) => !bits(lp).equals(bits(z[i])))).toBe(true);
    // SkyRL: the same data and reward; no DPO trainer, so the launch is refused by name.
    const { err: err2 } = capture();
    expect(await main(['export', run, '--to', 'skyrl']), err2.join('')).toBe(1);
    expect(err2.join('')).toMatch(/preflight refused \(launch\): dpo-arith is DPO: SkyRL has no DPO trainer/);
    expect(existsSync(join(run, 'skyrl', 'launch.sh'))).toBe(false);
    expect(readFileSync(join(run, 'skyrl', 'pairs.parquet')).equals(readFileSync(join(out, 'pairs.parquet')))).toBe(
      true,
    );
  });
});

describe('a LoRA run on a Hugging Face folder, bundled', () => {
  it('model/ has PEFT’s adapter beside the merged weights, both load back and score as the run’s model; launch.sh sets verl’s LoRA keys', async () => {
    // The tests' tiny HF Llama (train-hf.test.ts) and letter prompts scored by a regex; rank 4, alpha 8 on q and v.
    const root = mkdtempSync(join(tmpdir(), 'dewpoint-bundle-hf-'));
    const folder = join(root, 'tiny-llama');
    writeHfDir(folder, fixtureFolder({ kvHeads: 2 }).files);
    const data = join(root, 'letters.jsonl');
    const letters = ['e', 'a', 't', 'o', 'i', 'n'];
    writeFileSync(
      data,
      letters.map((l, i) => JSON.stringify({ prompt: `Letter ${i + 1}:`, ground_truth: l })).join('\n'),
    );
    const config = join(root, 'run.json');
    const lora = { loraRank: 4, loraAlpha: 8, loraTargets: 'q_proj,v_proj' };
    writeFileSync(config, JSON.stringify({ ...findPreset('grpo-arith')!.defaults, truncation: 'score', ...lora }));
    const run = join(root, 'run');
    const { err } = capture();
    const code = await main([
      'train',
      '--config',
      config,
      '--checkpoint',
      folder,
      '--dataset',
      data,
      '--reward',
      'regex',
      '--reward-pattern',
      '([a-z])[^a-z]*$',
      '--held-out',
      '1',
      '--steps',
      '2',
      '--prompts',
      '2',
      '--eval-every',
      '0',
      '--backend',
      'wasm',
      '--save',
      run,
    ]);
    expect(code, err.join('')).toBe(0);
    expect(await main(['export', run, '--to', 'verl']), err.join('')).toBe(1); // head_dim 16, no chat_template
    const out = join(run, 'verl');
    expect(readdirSync(join(out, 'model')).sort()).toEqual([
      'adapter_config.json',
      'adapter_model.safetensors',
      'config.json',
      'dewpoint.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    const adapterConfig = JSON.parse(readFileSync(join(out, 'model', 'adapter_config.json'), 'utf8'));
    expect(adapterConfig).toMatchObject({
      peft_type: 'LORA',
      r: 4,
      lora_alpha: 8,
      target_modules: ['q_proj', 'v_proj'],
    });
    const { tensors } = decodeSafetensors(
      new Uint8Array(readFileSync(join(out, 'model', 'adapter_model.safetensors'))),
      'adapter_model.safetensors',
    );
    // PEFT's names: A (r, in) and B (out, r) on both layers' q and v (kv heads 2 of 4: v_proj is 32 wide).
    expect([...tensors.keys()].sort()).toEqual(
      [0, 1]
        .flatMap((l) => ['q_proj', 'v_proj'].flatMap((p) => ['A', 'B'].map((m) => `${l}.self_attn.${p}.lora_${m}`)))
        .map((n) => `base_model.model.model.layers.${n}.weight`)
        .sort(),
    );
    expect(tensors.get('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight')!.shape).toEqual([4, 64]);
    expect(tensors.get('base_model.model.model.layers.0.self_attn.v_proj.lora_B.weight')!.shape).toEqual([32, 4]);
    // Trained: B starts at zero (PEFT's init) and the run moved it.
    expect([...tensors].filter(([n]) => n.includes('lora_B')).every(([, t]) => t.data.some((x) => x !== 0))).toBe(true);

    const launch = readFileSync(join(out, 'launch.sh'), 'utf8');
    for (const line of [
      'actor_rollout_ref.model.lora_rank=4',
      'actor_rollout_ref.model.lora_alpha=8',
      "'actor_rollout_ref.model.target_modules=[q_proj,v_proj]'",
      'actor_rollout_ref.rollout.load_format=safetensors',
    ])
      expect(launch).toContain(`    ${line} \\\n`);
    expect(readFileSync(join(out, 'README.md'), 'utf8')).toContain(
      '`actor_rollout_ref.model.lora_adapter_path=$HERE/model`',
    );

    // The weights: the merged model read as a plain HF folder (what verl's model.path loads), the
    // checkpoint read as train --checkpoint reads it, and RUN/model, bit for bit; the fixture's base
    // with the PEFT adapter attached (what PeftModel.from_pretrained(base, model/) runs) to 1e-5: the
    // merged W + s·B·A is rounded to f32 once, the adapter branch s·(x·Aᵀ)·Bᵀ is summed apart, so the
    // two differ by rounding (measured 9.5e-7), far below what the adapters moved (7.9e-4).
    const rows = await readParquet(join(out, 'rollouts.parquet'));
    const seqs = rows.slice(0, 6).map((r) => ({ prompt: r.prompt_ids, response: r.response_ids }));
    const asHf = checkpointFromHf(await loadHfFolder(hfDirReader(join(out, 'model'))), 'model');
    const bundled = await loadCheckpointDir(join(out, 'model'));
    const saved = await loadCheckpointDir(join(run, 'model'));
    const base = await loadCheckpointDir(folder);
    const [h, b, s, z] = await Promise.all([asHf, bundled, saved, base].map((ck) => responseLogProbs(ck, seqs)));
    h.forEach((lp, i) => {
      expect(bits(lp).equals(bits(b[i])), `rollout ${i}`).toBe(true);
      expect(bits(lp).equals(bits(s[i])), `rollout ${i}`).toBe(true);
    });
    const peft = new Model(createCpuOps(), base.config, { lora: bundled.adapters!.lora });
    peft.setWeights(base.weights);
    peft.setWeights(bundled.adapters!.weights);
    const batch = rowPerSequence(seqs.map((q) => [...q.prompt, ...q.response]));
    const { logp } = await peft.score(batch);
    let worst = 0;
    let moved = 0;
    seqs.forEach((q, r) =>
      q.response.forEach((_, t) => {
        const x = logp[r * batch.width + q.prompt.length + t];
        worst = Math.max(worst, Math.abs(x - h[r][t]));
        moved = Math.max(moved, Math.abs(z[r][t] - h[r][t]));
      }),
    );
    expect(worst).toBeLessThan(1e-5);
    expect(moved).toBeGreaterThan(1e-4); // the adapters changed the model more than the tolerance
  });
});
