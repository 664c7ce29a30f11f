/**
 * The run options' schemas as the worker validates them: the contract's schemas
 * (worker/contract/run-options/, each field's range, label and help, declared once) with the
 * checks that need the worker's own code, a person's dataset (its split, reward pattern and test
 * cases) and environment program (its hash, its task split). The form's fields (fields.ts) and a
 * form's problems come from these. Not the defaults (table.ts).
 */
import type { z } from 'zod';
import { dpoSchema as dpoOptions } from '../contract/run-options/dpo';
import { dataset as datasetField } from '../contract/run-options/fields';
import { flowSchema } from '../contract/run-options/flow';
import {
  envSchema as envOptions,
  environment as environmentField,
  episodeGrpoSchema,
  grpoSchema as grpoOptions,
  ppoEnvSchema as ppoEnvOptions,
  ppoEpisodeSchema,
  ppoSchema as ppoOptions,
} from '../contract/run-options/grpo';
import { sftSchema } from '../contract/run-options/sft';
import { sha256Hex } from '../data/sha256';
import { splitTasks } from '../episodes/program';
import { splitDataset } from '../data/dataset';
import { compileRewardPattern, parseCases } from '../rewards/dataset-reward';

/** The dataset's checks: a pattern that compiles, a held-out count that leaves records to train on and evaluates when asked, test cases for `code`. */
function datasetRefine(
  o: { evalEvery: number; dataset?: z.infer<typeof datasetField> },
  ctx: z.RefinementCtx,
  /** Why the preset takes no `code` reward (null: it does). */
  noCode: string | null,
): void {
  // zod runs refinements on objects with problems of their own: check only a well-formed dataset.
  const parsed = datasetField.safeParse(o.dataset);
  if (!parsed.success || !parsed.data) return;
  const d = parsed.data;
  const problem = (path: (string | number)[], message: string) =>
    ctx.addIssue({ code: 'custom', path: ['dataset', ...path], message });
  const pattern = d.reward.pattern;
  if (d.reward.kind === 'regex' && pattern === undefined)
    problem(
      ['reward', 'pattern'],
      'must be a regular expression (one capture group, the answer, or none for the whole match) when {dataset.reward.kind} is regex, got nothing',
    );
  if (d.reward.kind !== 'regex' && pattern !== undefined)
    problem(
      ['reward', 'pattern'],
      `applies only when {dataset.reward.kind} is regex, got ${JSON.stringify(pattern)} with ${d.reward.kind}`,
    );
  if (d.reward.kind === 'regex' && pattern !== undefined) {
    const p = compileRewardPattern(pattern);
    if (!p.ok) problem(['reward', 'pattern'], `${p.reason}, got ${JSON.stringify(pattern)}`);
  }
  if (d.reward.kind === 'code' && noCode !== null) problem(['reward', 'kind'], noCode);
  if (d.reward.kind === 'code') {
    const bad = d.records.findIndex((r) => !parseCases(r.answer).ok);
    if (bad >= 0) {
      const c = parseCases(d.records[bad].answer) as { expected: string; got: string };
      problem(['records', bad, 'answer'], `must be ${c.expected}; record ${bad + 1}'s ${c.got}`);
    }
  }
  if (d.heldOut >= d.records.length)
    problem(
      ['heldOut'],
      `must be an integer in 0..${d.records.length - 1} (at least one record left to train on), got ${d.heldOut}`,
    );
  else if (splitDataset(d.records, d.heldOut).train.length === 0)
    problem(
      ['heldOut'],
      `must leave a record to train on whose prompt is not held out (the records repeat the held-out prompts), got ${d.heldOut}`,
    );
  if (o.evalEvery > 0 && d.heldOut === 0)
    problem(
      ['heldOut'],
      'must be at least 1 when {evalEvery} > 0 (the evaluation runs on the held-out records), got 0',
    );
}

/** The checks across an environment program's fields: it is there, its hash is its text's, its task ids are unique, a task is left to train on. */
function environmentRefine(o: { environment?: z.infer<typeof environmentField> }, ctx: z.RefinementCtx): void {
  if (!o.environment) {
    ctx.addIssue({
      code: 'custom',
      path: ['environment'],
      message: 'is required: pick an environment program and a task file (or use the example)',
    });
    return;
  }
  const { program } = o.environment;
  const actual = sha256Hex(program.text);
  if (actual !== program.sha256)
    ctx.addIssue({
      code: 'custom',
      path: ['environment', 'program', 'sha256'],
      message:
        `must be the program's hash: the run recorded ${program.sha256}, the program given has ${actual} ` +
        '(a changed file: start a new run with it)',
    });
  const { records, heldOut } = o.environment.tasks;
  if (heldOut > records.length - 1)
    ctx.addIssue({
      code: 'custom',
      path: ['environment', 'tasks', 'heldOut'],
      message: `must leave a task to train on: 0..${records.length - 1}, got ${heldOut}`,
    });
  else if (splitTasks(records, heldOut).train.length === 0)
    ctx.addIssue({
      code: 'custom',
      path: ['environment', 'tasks', 'heldOut'],
      message: `must leave a task to train on: every task equals one of the ${heldOut} held out (same prompt and data)`,
    });
  const seen = new Set<string>();
  for (const [i, r] of records.entries()) {
    if (seen.has(r.id)) {
      ctx.addIssue({
        code: 'custom',
        path: ['environment', 'tasks', 'records', i, 'id'],
        message: `must be unique: ${JSON.stringify(r.id)} is used by an earlier task`,
      });
      break;
    }
    seen.add(r.id);
  }
}

export const grpoSchema = grpoOptions.superRefine((o, ctx) => datasetRefine(o, ctx, null));
export const ppoSchema = ppoOptions.superRefine((o, ctx) => datasetRefine(o, ctx, null));
export const envSchema = envOptions.superRefine(environmentRefine);
export const ppoEnvSchema = ppoEnvOptions.superRefine(environmentRefine);
export const dpoSchema = dpoOptions.superRefine((o, ctx) =>
  datasetRefine(
    o,
    ctx,
    `must be one of math, exact, regex for ${o.preset} (its pairs are chosen as they are sampled, without the companion), got 'code'`,
  ),
);
export { episodeGrpoSchema, flowSchema, ppoEpisodeSchema, sftSchema };
