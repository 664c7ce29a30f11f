#!/usr/bin/env node
// `node scripts/check-docs.mjs` (run by `npm run lint` and `npm test`): fails, one line per
// problem as `file:line: what`, when
//   - a source or doc file cites a document that is not in the repository: the team's working
//     notes (calibration.md, rl-spec, rl-formulas, DESIGN.md, conventions.md, the dew reference
//     text) anywhere but under docs/, or a `shared/` path outside app/shared/;
//   - a file cites `docs/NAME.md` that does not exist, or a section of it that does not exist
//     (`docs/rl-formulas.md §3.1`, `docs/calibration.md "GRPO"`, written on the cited line);
//   - a doc under docs/ names a repository path in backticks (`worker/presets/table.ts`,
//     `kernels/rmsnorm/`, `losses/ppo.ts`) that no tracked path matches.
// A person who clones the project must be able to follow every citation. The checks are pure
// functions over `{ path, text }` so that scripts/check-docs.test.mjs can plant bad ones.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Files whose citations are read: sources, docs and data the repository ships. */
const SCANNED = /\.(ts|tsx|mts|mjs|js|md|wgsl|json)$/;
/** Files left out: the lock file, and the checker and its test, which name the bad citations. */
const EXEMPT = new Set(['package-lock.json', 'scripts/check-docs.mjs', 'scripts/check-docs.test.mjs']);
/** Backticked paths in docs that name other projects' files, not this repository's. */
const UPSTREAM = /^(verl|trl|rllm|flow_grpo|docs\/algo)\//;
/** Extensions that make a backticked word without a slash a file name. */
const FILE_EXT = /\.(ts|tsx|mts|mjs|js|json|wgsl|md|html|sh|css)$/;

/**
 * The team's working notes, which live outside the repository. A name is fine only as a path
 * under docs/ (checked to exist separately).
 */
const OUTSIDE_NAMES =
  /(?<![\w-])((?:[\w.-]+\/)*)(calibration\.md|rl-spec(?:\.md)?|rl-formulas(?:\.md)?|DESIGN\.md|conventions\.md|dew-objectives[\w.-]*)/g;
/** A path through a `shared/` folder, with whatever leads to it. */
const SHARED_PATH = /(?<![\w@-])(\/?(?:[\w.-]+\/)*)shared\/([\w.@/-]*)/g;
/** A citation of a doc in docs/, possibly relative (`../docs/x.md`). */
const DOCS_CITE = /(?<![\w-])((?:\.\.?\/)*)docs\/([\w.-]+\.md)/g;

/** Whether `p` (a repo-relative path, a trailing `/` for a folder) is tracked, as a file or a folder. */
function existsIn(tracked, p) {
  const clean = p.replace(/\/+$/, '');
  if (clean === '') return true;
  if (tracked.has(clean)) return true;
  for (const ext of ['.ts', '.tsx', '.mjs', '.js']) if (tracked.has(clean + ext)) return true;
  const folder = clean + '/';
  for (const t of tracked) if (t.startsWith(folder)) return true;
  return false;
}

/** The sections a doc defines: `§N` and `§N.M` from numbered headings and list items, and heading titles. */
export function sectionsOf(text) {
  const numbers = new Set();
  const titles = [];
  let top = null;
  for (const line of text.split('\n')) {
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    if (h) {
      const title = h[2].trim();
      const num = /^(\d+(?:\.\d+)?)\.?\s+(.*)$/.exec(title);
      if (num) {
        numbers.add(num[1]);
        if (!num[1].includes('.')) top = num[1];
        titles.push(num[2]);
      } else {
        titles.push(title);
        if (h[1].length <= 2) top = null;
      }
      continue;
    }
    const item = /^(\d+)\.\s/.exec(line);
    if (item && top) numbers.add(`${top}.${item[1]}`);
  }
  return { numbers, titles };
}

/** Problems with the citations in one file: `{ path, line, message }` each. */
export function checkCitations(file, tracked, readDoc) {
  const problems = [];
  const dir = posix.dirname(file.path);
  const lines = file.text.split('\n');
  lines.forEach((line, i) => {
    const at = (message) => problems.push({ path: file.path, line: i + 1, message });
    for (const m of line.matchAll(OUTSIDE_NAMES)) {
      if (!/(^|\/)docs\/$/.test(m[1]))
        at(`cites ${m[1]}${m[2]}, a document outside the repository: cite docs/ instead`);
    }
    for (const m of line.matchAll(SHARED_PATH)) {
      const lead = m[1];
      const rest = m[2];
      let resolved;
      if (lead.startsWith('/')) resolved = null;
      else if (/^\.\.?\//.test(lead)) resolved = posix.normalize(posix.join(dir, lead, 'shared', rest));
      else if (lead === '' || lead === 'app/') resolved = posix.join('app/shared', rest);
      else resolved = null;
      const inside = resolved !== null && (resolved === 'app/shared' || resolved.startsWith('app/shared/'));
      if (!inside || !existsIn(tracked, resolved))
        at(`names ${lead}shared/${rest}, a path outside the repository (only app/shared/ is in it)`);
    }
    for (const m of line.matchAll(DOCS_CITE)) {
      const target = m[1] ? posix.normalize(posix.join(dir, m[1], 'docs', m[2])) : `docs/${m[2]}`;
      if (!tracked.has(target)) {
        at(`cites ${m[0]}, which does not exist`);
        continue;
      }
      // Sections cited right after it, up to the end of the parenthesis or clause.
      const tail = line.slice(m.index + m[0].length).split(/[);]|docs\//)[0];
      const wanted = [...tail.matchAll(/§(\d+(?:\.\d+)?)/g)].map((x) => x[1]);
      const titled = [...tail.matchAll(/"([^"]+)"/g)].map((x) => x[1]);
      if (!wanted.length && !titled.length) continue;
      const { numbers, titles } = sectionsOf(readDoc(target));
      for (const n of wanted) if (!numbers.has(n)) at(`cites ${target} §${n}, which has no such section`);
      for (const t of titled)
        if (!titles.some((h) => h === t || h.startsWith(`${t} `) || h.startsWith(`${t}:`)))
          at(`cites ${target} "${t}", which has no such heading`);
    }
  });
  return problems;
}

/** Problems with the repository paths a doc names in backticks. */
export function checkDocPaths(file, tracked) {
  const problems = [];
  file.text.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(/`([^`]+)`/g)) {
      const word = m[1].trim().split(/\s+/)[0];
      if (!/^[\w.@-]+(\/[\w.@-]*)*$/.test(word)) continue; // placeholders, globs, commands, code
      // A path: a file name, a folder (trailing `/`), or a path from a top-level folder. Not a
      // metric key (`loss/policy`) or another project's repository (`huggingface/trl`).
      const top = word.split('/')[0];
      if (!FILE_EXT.test(word) && !word.endsWith('/') && !(word.includes('/') && existsIn(tracked, top + '/')))
        continue;
      if (UPSTREAM.test(word)) continue;
      if (existsIn(tracked, word)) continue;
      const tail = '/' + word.replace(/\/+$/, '');
      const matched = [...tracked].some((t) => t.endsWith(tail) || t.includes(tail + '/'));
      if (!matched)
        problems.push({ path: file.path, line: i + 1, message: `names \`${m[1]}\`, which is not in the repository` });
    }
  });
  return problems;
}

/** Every problem over a set of files (`{ path, text }`), given the tracked paths. */
export function checkDocs(files, tracked) {
  const texts = new Map(files.map((f) => [f.path, f.text]));
  const readDoc = (p) => texts.get(p) ?? '';
  const problems = [];
  for (const f of files) {
    if (EXEMPT.has(f.path) || !SCANNED.test(f.path)) continue;
    problems.push(...checkCitations(f, tracked, readDoc));
    if (/^docs\/[^/]+\.md$/.test(f.path)) problems.push(...checkDocPaths(f, tracked));
  }
  return problems;
}

/** The repository's files: tracked, plus new ones git does not ignore. */
function repoFiles(root) {
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root });
  return [...new Set(out.toString().split('\0').filter(Boolean))];
}

function main() {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const paths = repoFiles(root);
  const tracked = new Set(paths);
  const files = [];
  for (const p of paths) {
    if (!SCANNED.test(p) || EXEMPT.has(p)) continue;
    let text;
    try {
      text = readFileSync(join(root, p), 'utf8');
    } catch {
      continue; // listed by git but deleted in the work tree
    }
    files.push({ path: p, text });
  }
  const problems = checkDocs(files, tracked);
  for (const p of problems) console.error(`${p.path}:${p.line}: ${p.message}`);
  if (problems.length) {
    console.error(`check-docs: ${problems.length} problem(s) in ${files.length} files (scripts/check-docs.mjs)`);
    process.exit(1);
  }
  console.log(`check-docs: ${files.length} files, every citation in the repository`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
