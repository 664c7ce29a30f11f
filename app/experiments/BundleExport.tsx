/**
 * A stored run bundled for a cluster: Bundle for verl and Bundle for SkyRL download one .zip of
 * what `dewpoint export RUN --to verl|skyrl` writes (the latest checkpoint as model/, prompts,
 * rollouts, reward.py with parity.jsonl, launch.sh for verl, preflight.json, README.md), and the
 * preflight's checks are listed under the buttons: each rule passed, refused (what fails on
 * arrival, and why) or a note. The bundle is the worker's (worker/interop/stored-bundle.ts); this
 * component only asks for it and shows the checks.
 */
import { useState } from 'react';
import type { BundleCheck, RunSummary } from '../../worker/protocol';

export type BundleTarget = 'verl' | 'skyrl';

/** What a bundle request gave: the sentence to announce, and the preflight's checks (none when refused). */
export interface BundleOutcome {
  said: string;
  preflight: readonly BundleCheck[];
}

interface Props {
  r: RunSummary;
  title: string;
  busy: boolean;
  bundle: (r: RunSummary, to: BundleTarget) => Promise<BundleOutcome>;
  announce: (text: string) => void;
}

const NAMES: Record<BundleTarget, string> = { verl: 'verl', skyrl: 'SkyRL' };

const TITLE =
  'One .zip: the latest checkpoint as a Hugging Face folder (model/), the prompts with verl’s and SkyRL’s keys, ' +
  'the rollouts, reward.py (the reward in plain Python) with parity.jsonl, launch.sh (verl; for SkyRL with skyrl_env.py and ' +
  'skyrl_main.py), preflight.json and README.md';

export function BundleExport({ r, title, busy, bundle, announce }: Props) {
  const [shown, setShown] = useState<{ to: BundleTarget; preflight: readonly BundleCheck[] } | null>(null);
  const run = async (to: BundleTarget) => {
    const out = await bundle(r, to);
    setShown(out.preflight.length ? { to, preflight: out.preflight } : null);
    announce(out.said);
  };
  return (
    <>
      <p role="group" aria-label={`Bundle ${title}`}>
        {(['verl', 'skyrl'] as const).map((to) => (
          <button
            key={to}
            type="button"
            onClick={() => void run(to)}
            disabled={busy}
            title={busy ? 'Stop the run first' : TITLE}
          >
            Bundle for {NAMES[to]}
          </button>
        ))}
      </p>
      {shown && (
        <section aria-label={`Preflight of the ${NAMES[shown.to]} bundle`}>
          <h4>Preflight of the {NAMES[shown.to]} bundle</h4>
          <ul>
            {shown.preflight.map((c) => (
              <li key={c.rule} className={c.status === 'refused' ? 'bad' : undefined}>
                <strong>{c.rule}</strong>: {c.status}. {c.detail}
              </li>
            ))}
          </ul>
        </section>
      )}
    </>
  );
}
