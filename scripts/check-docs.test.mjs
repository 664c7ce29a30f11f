import { describe, expect, it } from 'vitest';
import { checkDocs, sectionsOf } from './check-docs.mjs';

const FORMULAS = [
  '# RL formulas',
  '## 3. Advantages',
  '### 3.1 GRPO advantage',
  '## 11. Disagreements',
  '1. std',
  '2. RF++',
].join('\n');
const CALIBRATION = ['# Calibration', '## Task', '## GRPO'].join('\n');
const ARCHITECTURE = [
  '# Map',
  'A preset: `worker/presets/table.ts`; a kernel: copy `kernels/rmsnorm/` (`<op>.ref.ts`); a loss: `losses/ppo.ts`.',
  'Metric keys such as `loss/policy` and repositories such as `huggingface/trl` are not paths.',
].join('\n');

const TRACKED = [
  'docs/ARCHITECTURE.md',
  'docs/rl-formulas.md',
  'docs/calibration.md',
  'worker/presets/table.ts',
  'worker/rl/losses/ppo.ts',
  'worker/rl/grpo.ts',
  'kernels/rmsnorm/rmsnorm.ts',
  'app/shared/format.ts',
  'app/charts/Chart.tsx',
  'companion/protocol.ts',
  'README.md',
];

/** The problems of a small repository holding the docs above plus `extra` files. */
function run(extra) {
  const files = [
    { path: 'docs/ARCHITECTURE.md', text: ARCHITECTURE },
    { path: 'docs/rl-formulas.md', text: FORMULAS },
    { path: 'docs/calibration.md', text: CALIBRATION },
    ...extra,
  ];
  const tracked = new Set([...TRACKED, ...extra.map((f) => f.path)]);
  return checkDocs(files, tracked).map((p) => `${p.path}:${p.line}: ${p.message}`);
}

describe('checkDocs', () => {
  it('passes citations into docs/ with sections that exist, and imports of app/shared/', () => {
    const good = [
      {
        path: 'worker/rl/grpo.ts',
        text: [
          '/**',
          ' * GRPO (docs/rl-formulas.md §3.1, §11.2; docs/calibration.md "GRPO").',
          ' */',
          "import { x } from '../rl/losses/ppo';",
        ].join('\n'),
      },
      { path: 'app/charts/Chart.tsx', text: "import { fixed } from '../shared/format';\n// paced (shared/format.ts)" },
    ];
    expect(run(good)).toEqual([]);
  });

  it('fails on a planted citation of a document outside the repository, naming file and line', () => {
    const bad = [
      {
        path: 'companion/protocol.ts',
        text: ['/**', ' * Contract: ../shared/rl-spec.md "Sandboxes"; limits from calibration.md.', ' */'].join('\n'),
      },
    ];
    const problems = run(bad);
    expect(problems).toContain(
      'companion/protocol.ts:2: cites ../shared/rl-spec.md, a document outside the repository: cite docs/ instead',
    );
    expect(problems).toContain(
      'companion/protocol.ts:2: cites calibration.md, a document outside the repository: cite docs/ instead',
    );
    expect(problems.some((p) => p.startsWith('companion/protocol.ts:2: names ../shared/rl-spec.md'))).toBe(true);
  });

  it('fails on a docs/ file, a section or a heading that does not exist', () => {
    const bad = [
      {
        path: 'README.md',
        text: ['See docs/missing.md.', 'Formulas: docs/rl-formulas.md §4 and docs/calibration.md "DPO".'].join('\n'),
      },
    ];
    expect(run(bad)).toEqual([
      'README.md:1: cites docs/missing.md, which does not exist',
      'README.md:2: cites docs/rl-formulas.md §4, which has no such section',
      'README.md:2: cites docs/calibration.md "DPO", which has no such heading',
    ]);
  });

  it('fails when docs/ARCHITECTURE.md names a path that does not exist', () => {
    const files = [
      {
        path: 'docs/ARCHITECTURE.md',
        text: ARCHITECTURE + '\nA view: copy `app/flow/` and `worker/presets/tables.ts`.',
      },
      { path: 'docs/rl-formulas.md', text: FORMULAS },
      { path: 'docs/calibration.md', text: CALIBRATION },
    ];
    const problems = checkDocs(files, new Set(TRACKED)).map((p) => `${p.path}:${p.line}: ${p.message}`);
    expect(problems).toEqual([
      'docs/ARCHITECTURE.md:4: names `app/flow/`, which is not in the repository',
      'docs/ARCHITECTURE.md:4: names `worker/presets/tables.ts`, which is not in the repository',
    ]);
  });
});

describe('sectionsOf', () => {
  it('reads numbered headings, numbered items under a numbered heading, and titles', () => {
    const { numbers, titles } = sectionsOf(FORMULAS);
    expect([...numbers].sort()).toEqual(['11', '11.1', '11.2', '3', '3.1']);
    expect(titles).toContain('GRPO advantage');
  });
});
