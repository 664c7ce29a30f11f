/**
 * grpo-env in Chrome: a person's environment program trained on through a real companion. The
 * picker shows the example, previews its first reset in a companion session, refuses a bad task
 * file naming its line (keeping the environment), loads a task file of one's own; the run's
 * episodes are the program's (its observations, no infrastructure errors), and one replays
 * identically through a fresh session.
 */
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { fillFields, loadConfig, startCompanion } from './helpers';

const TASKS = readFileSync('examples/calc-tasks.jsonl', 'utf8').trim().split('\n').slice(0, 30).join('\n');

/** Starts a real companion for the page's origin and connects the page to it through the link it printed. */
async function connectCompanion(page: Page): Promise<{ child: ChildProcess; link: string }> {
  await page.goto('/#/system');
  const companion = await startCompanion(new URL(page.url()).origin);
  await page.goto(companion.link);
  await expect(page.getByTestId('companion-status')).toHaveText('Connected');
  return companion;
}

/** A run's `environment` option: the Python program `name` of `text`, on TASKS with 3 held out. */
function environmentOf(name: string, text: string) {
  return {
    program: { name, text, sha256: createHash('sha256').update(text).digest('hex'), argv: ['python3', '-I', name] },
    tasks: {
      name: 'mine.jsonl',
      records: TASKS.split('\n').map((l) => ({ data: {}, answer: '', ...JSON.parse(l) })),
      heldOut: 3,
    },
  };
}

test(
  "grpo-env: the example program's first reset is previewed in the companion, a bad task file is refused naming " +
    'its line, a task file of one’s own is loaded, and a run trains on the program’s episodes, one replaying identically',
  async ({ page }) => {
    test.setTimeout(300_000);
    const { child } = await connectCompanion(page);
    try {
      await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Experiments' }).click();
      await page.getByTestId('preset-grpo-env').click();
      await expect(page.getByTestId('companion-notice')).toContainText('environment programs run there');
      const picker = page.getByTestId('environment-picker');
      await expect(picker.getByTestId('environment-now')).toContainText(
        /calc_env\.py \(python3 -I calc_env\.py, sha256 [0-9a-f]{12}…\) on calc-tasks\.jsonl: 2000 tasks, 200 held out — the example/,
      );

      // The first task's reset, run by the program in a companion session.
      await picker.getByTestId('environment-preview-button').click();
      const preview = picker.getByTestId('environment-preview');
      await expect(preview).toContainText(/Task calc\/67\/61\/55 \(67\+61\+55=\): the model starts from 10 ids/);
      await expect(preview.getByTestId('environment-preview-context')).toHaveText('<bos>67+61+55=');
      // And one step: the base's greedy first action, answered by the program.
      await expect(preview.getByTestId('environment-preview-step')).toContainText(
        /the program answered (running|done)/,
      );

      // A bad task file: refused, naming its line and field; the run keeps the example.
      await picker.getByTestId('environment-tasks-file').setInputFiles({
        name: 'bad.jsonl',
        mimeType: 'application/jsonl',
        buffer: Buffer.from('{"id": "a", "prompt": "1+2+3="}\n{"id": "b"}\n'),
      });
      await picker.getByRole('button', { name: 'Load environment' }).click();
      await expect(picker.getByRole('alert')).toContainText(
        "Not loaded, the run keeps its environment: bad.jsonl line 2: 'prompt' is missing (expected a string)",
      );
      await expect(picker.getByTestId('environment-now')).toContainText('the example');

      // A task file of one's own, with the example program kept.
      await picker.getByTestId('environment-tasks-file').setInputFiles({
        name: 'mine.jsonl',
        mimeType: 'application/jsonl',
        buffer: Buffer.from(TASKS),
      });
      await picker.getByRole('button', { name: 'Load environment' }).click();
      await expect(picker.getByTestId('environment-now')).toContainText(/on mine\.jsonl: 30 tasks, 3 held out\.$/);

      await fillFields(page, { Steps: 1, 'Prompts per step': 2, 'Group size': 2, 'Evaluate every': 0 });
      await page.getByTestId('run-start').click();
      await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 200_000 });

      await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Episodes' }).click();
      await expect(page.getByTestId('episodes-view')).toBeVisible();
      const rows = page.getByTestId('episode-row');
      await expect(rows.first()).toBeVisible();
      // The program answered every episode: none ended in an infrastructure error.
      await expect(page.getByRole('group', { name: 'Outcome' }).getByText(/^error \(0\)$/)).toBeVisible();
      await rows.first().getByRole('button').first().click();
      await expect(page.getByTestId('episode-turn').first()).toBeVisible();
      // Replayed through a fresh session of the program: the same observations, turn for turn.
      await page.getByTestId('replay-button').click();
      await expect(page.getByTestId('replay-result')).toContainText('identical', { timeout: 60_000 });
    } finally {
      child.kill('SIGTERM');
    }
  },
);

/** A program that logs each step and each restore as a file of its own in `dir` (sessions run as different uids), and sends its state. */
const loggingEnv = (dir: string) => `
import json, os, sys, time, uuid
LOG = ${JSON.stringify(dir)}
def log(kind, nonce, turn):
    open(os.path.join(LOG, f"{kind}-{nonce}-{turn}-{time.time_ns()}"), "w").close()
nonce, turns, ids = None, 0, {}
for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "close":
        break
    if req["op"] == "reset":
        spec = req["tokenizer"]
        ids = {s: i for i, s in enumerate(spec["vocab"])}
        nonce, turns = uuid.uuid4().hex, 0
        reply = {"context": [spec["specials"]["bos"]] + [ids[c] for c in req["task"]["prompt"]], "state": json.dumps([nonce, 0])}
    elif req["op"] == "set_state":
        nonce, turns = json.loads(req["state"])
        log("restore", nonce, turns)
        reply = {"status": "running"}
    else:
        turns += 1
        log("step", nonce, turns)
        time.sleep(1)
        reply = {"observation": [ids["?"]], "status": "running", "state": json.dumps([nonce, turns])}
    print(json.dumps(reply), flush=True)
`;

/**
 * Starts a one-step grpo-env run of `loggingEnv(dir)` on 2 tasks × 2 episodes (one batch, no
 * evaluation) from the Experiments view, and waits until turn 2 is being stepped (every episode's
 * turn 1 committed); its run id.
 */
async function startLoggingRun(page: Page, dir: string): Promise<string> {
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Experiments' }).click();
  await loadConfig(page, {
    preset: 'grpo-env',
    steps: 1,
    prompts: 2,
    group: 2,
    evalEvery: 0,
    filterGroups: null,
    environment: environmentOf('logging_env.py', loggingEnv(dir)),
  });
  await page.getByTestId('run-start').click();
  const runId = (await page.getByRole('heading', { name: /^Run / }).textContent())!.replace('Run ', '');
  await expect.poll(() => readdirSync(dir).some((f) => /^step-\w+-2-/.test(f)), { timeout: 120_000 }).toBe(true);
  return runId;
}

test(
  'grpo-env: a tab closed mid-episode continues from the journal, each episode restored from its state in a fresh ' +
    'session: the program’s own log shows no committed turn run again, and the Episodes view says how it came back',
  async ({ context }) => {
    test.setTimeout(300_000);
    const dir = mkdtempSync(join(tmpdir(), 'dewpoint-e2e-env-'));
    chmodSync(dir, 0o777); // the program's sessions run as uids of their own
    let page = await context.newPage();
    page.on('dialog', (d) => void d.accept());
    const { child, link } = await connectCompanion(page);
    try {
      const runId = await startLoggingRun(page, dir);
      // Turn 2 is being stepped: every episode's turn 1 is committed. Close the tab now.
      await page.close({ runBeforeUnload: false });

      page = await context.newPage();
      page.on('dialog', (d) => void d.accept());
      await page.goto(link); // a new tab: connect it to the companion again
      await expect(page.getByTestId('companion-status')).toHaveText('Connected');
      await page.goto('/#/experiments');
      const row = page.getByTestId('stored-runs').getByRole('row', { name: new RegExp(runId) });
      await expect(row).toContainText('interrupted');
      await row.getByRole('button', { name: new RegExp(`^Continue run ${runId} from step \\d+$`) }).click();
      await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 200_000 });

      // The program's log: each episode came back by set_state at its last committed turn, and no
      // step of a turn at or before that one ran after it.
      const events = readdirSync(dir).map((f) => {
        const [kind, nonce, turn, ns] = f.split('-');
        return { kind, nonce, turn: Number(turn), ns: BigInt(ns) };
      });
      const restores = events.filter((e) => e.kind === 'restore');
      expect(restores.length).toBeGreaterThan(0);
      for (const r of restores) {
        expect(r.turn).toBeGreaterThanOrEqual(1);
        const again = events.filter((e) => e.kind === 'step' && e.nonce === r.nonce && e.turn <= r.turn && e.ns > r.ns);
        expect(again, `episode ${r.nonce} restored at turn ${r.turn}`).toEqual([]);
      }

      await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Episodes' }).click();
      await expect(page.getByTestId('episode-row').first()).toBeVisible();
      await expect(page.getByTestId('episodes-view')).toContainText(/turns? restored \(by state\)/);
    } finally {
      child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'grpo-env: the companion stopped mid-run stops the run saying why; with a new companion connected, Continue ' +
    'finishes it from the journal, no episode lost to the outage',
  async ({ page }) => {
    test.setTimeout(300_000);
    const dir = mkdtempSync(join(tmpdir(), 'dewpoint-e2e-env-'));
    chmodSync(dir, 0o777);
    page.on('dialog', (d) => void d.accept());
    await page.goto('/#/system');
    const origin = new URL(page.url()).origin;
    let companion = await startCompanion(origin);
    try {
      await page.goto(companion.link);
      await expect(page.getByTestId('companion-status')).toHaveText('Connected');
      const runId = await startLoggingRun(page, dir);
      companion.child.kill('SIGTERM');
      await expect(page.getByTestId('run-status')).toHaveText('failed', { timeout: 60_000 });
      await expect(
        page.getByRole('alert').filter({
          hasText:
            /^EnvironmentUnavailable: the companion at http:\/\/127\.0\.0\.1:\d+ (stopped answering|is stopping)/,
        }),
      ).toBeVisible();

      companion = await startCompanion(origin);
      await page.goto(companion.link);
      await expect(page.getByTestId('companion-status')).toHaveText('Connected');
      await page.goto('/#/experiments');
      const row = page.getByTestId('stored-runs').getByRole('row', { name: new RegExp(runId) });
      await row.getByRole('button', { name: new RegExp(`^Continue run ${runId} from step \\d+$`) }).click();
      await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 200_000 });
      await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Episodes' }).click();
      await expect(page.getByTestId('episode-row').first()).toBeVisible();
      await expect(page.getByRole('group', { name: 'Outcome' }).getByText(/^error \(0\)$/)).toBeVisible();
      await expect(page.getByTestId('episodes-view')).toContainText(/turns? restored \(by state\)/);
    } finally {
      companion.child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

/** An environment program that starts, then fails every step with its own error, saying why on stderr. */
const FAILING_ENV = `
import json, sys
for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "close":
        break
    if req["op"] == "reset":
        spec = req["tokenizer"]
        ids = {s: i for i, s in enumerate(spec["vocab"])}
        context = [spec["specials"]["bos"]] + [ids[c] for c in req["task"]["prompt"]]
        print(json.dumps({"context": context}), flush=True)
    else:
        print("Traceback: the step handler is not written yet", file=sys.stderr, flush=True)
        print(json.dumps({"status": "error", "detail": "step is not implemented"}), flush=True)
`;

test(
  'grpo-env: a broken program is caught by the preview, and a run of it fails at once on the dashboard naming the ' +
    'cause and its stderr, with a link to the failing episode, whose stderr the Episodes view shows',
  async ({ page }) => {
    test.setTimeout(240_000);
    const { child } = await connectCompanion(page);
    try {
      await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Experiments' }).click();
      await loadConfig(page, {
        preset: 'grpo-env',
        steps: 2,
        prompts: 2,
        group: 2,
        evalEvery: 0,
        environment: environmentOf('failing_env.py', FAILING_ENV),
      });
      // The preview runs the reset and one step, and fails with the words a run would use.
      const picker = page.getByTestId('environment-picker');
      await picker.getByTestId('environment-preview-button').click();
      const preview = picker.getByTestId('environment-preview');
      await expect(preview).toHaveAttribute('role', 'alert');
      await expect(preview).toContainText('environment: step is not implemented');
      await expect(preview).toContainText('Traceback: the step handler is not written yet');

      await page.getByTestId('run-start').click();
      await expect(page.getByTestId('run-status')).toHaveText('failed', { timeout: 120_000 });
      const alert = page.getByRole('alert').filter({ hasText: /^EnvironmentBroken: / });
      await expect(alert).toContainText(
        /the environment failed on \d+ of 4 episodes of step 1|all 4 episodes of step 1/,
      );
      await expect(alert).toContainText('environment: step is not implemented');
      await expect(alert).toContainText("the program's stderr:\n  Traceback: the step handler is not written yet");
      // No step was stored: the run failed on its first batch, and can continue once the program is fixed.
      await expect(page.getByRole('button', { name: /^Continue run \S+ from step 0$/ }).first()).toBeVisible();

      await page.getByRole('link', { name: /^Open the failing episode \(step 1, episode \d+\)$/ }).click();
      const panel = page.getByTestId('episode-panel');
      await expect(panel).toBeVisible();
      await expect(panel).toContainText('step is not implemented');
      await expect(panel.getByTestId('episode-stderr')).toHaveText('Traceback: the step handler is not written yet\n');
    } finally {
      child.kill('SIGTERM');
    }
  },
);

/** examples/broken/'s five programs, and the words each failure is named by on the dashboard. */
const BROKEN: [string, RegExp][] = [
  ['not_json.py', /bad-reply: a stray line on the environment's stdout in reply to reset, not JSON/],
  ['silent.py', /deadline: the environment did not answer reset within the 10 s deadline/],
  ['flood.py', /message-limit: a line on the environment's stdout passed the 1048576-byte message limit/],
  ['exit_after_reset.py', /exited: the environment exited \(exit code 3\)[^]*giving up after reset/],
  ['always_error.py', /environment: this environment always fails[^]*step refused on purpose/],
];

test(
  "grpo-env: each of examples/broken/'s five programs fails its run at once (the evaluation before step 1), the " +
    'dashboard naming the failure and the program’s words',
  async ({ page }) => {
    test.setTimeout(300_000);
    const { child } = await connectCompanion(page);
    try {
      await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Experiments' }).click();
      for (const [name, cause] of BROKEN) {
        await loadConfig(page, {
          preset: 'grpo-env',
          steps: 1,
          prompts: 2,
          group: 2,
          evalN: 8,
          environment: environmentOf(name, readFileSync(join('examples/broken', name), 'utf8')),
        });
        await page.getByTestId('run-start').click();
        await expect(page.getByTestId('run-status')).toHaveText('failed', { timeout: 60_000 });
        const alert = page.getByRole('alert').filter({ hasText: /^EnvironmentBroken: / });
        await expect(alert).toContainText(/the environment failed on (all \d+|\d+ of \d+) episodes of the held-out/);
        await expect(alert).toContainText(cause);
      }
    } finally {
      child.kill('SIGTERM');
    }
  },
);
