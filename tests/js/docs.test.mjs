// The docs match the tree: every folder of cpp/ and web/ that git tracks is named in
// docs/development.md (its folder table) or ARCHITECTURE.md, no file cites a contract that is not
// in the repository (the API contract is docs/API.md), the README stays a newcomer's page that
// links every doc, and every relative link and anchor of the docs resolves. Needs git and the
// source tree, not the build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Paths (relative to the root) that git lists; `others` adds untracked files not ignored. */
function gitFiles(args) {
  const out = execFileSync('git', ['ls-files', '-z', ...args], { cwd: root, encoding: 'utf8' });
  return out.split('\0').filter((path) => path !== '' && existsSync(join(root, path)));
}

/** Every folder holding a tracked file under cpp/ or web/, with its ancestors below cpp/ and web/. */
function trackedFolders() {
  const folders = new Set();
  for (const file of gitFiles(['--', 'cpp', 'web'])) {
    const parts = file.split('/').slice(0, -1);
    // parts[0] is cpp or web itself: its subfolders are what the docs must name.
    for (let depth = 2; depth <= parts.length; ++depth) folders.add(parts.slice(0, depth).join('/'));
  }
  return [...folders].sort();
}

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * True when `text` names `folder` as a path of its own: `cpp/attention/model/` or
 * `cpp/attention/model`, not a prefix of a longer path (`cpp/attention/model/model.hpp`) and not
 * the tail of one (`x/cpp/attention/model`).
 */
function namesFolder(text, folder) {
  // After it: no more path (a sentence's full stop may follow).
  return new RegExp(`(?<![A-Za-z0-9_./-])${escape(folder)}/?(?![A-Za-z0-9_/-]|\\.[A-Za-z0-9_])`).test(text);
}

test('namesFolder: a folder path of its own, with or without the trailing slash', () => {
  assert.ok(namesFolder('| `cpp/attention/model/` | core |', 'cpp/attention/model'));
  assert.ok(namesFolder('see web/views/train.', 'web/views/train'));
  assert.ok(namesFolder('web/views/train', 'web/views/train'));
  assert.ok(!namesFolder('`cpp/attention/model/model.hpp`', 'cpp/attention/model'));
  assert.ok(!namesFolder('`web/views/training/`', 'web/views/train'));
  assert.ok(!namesFolder('`x/web/views/train/`', 'web/views/train'));
  assert.ok(!namesFolder('web/views/train.js', 'web/views/train'));
});

test('every folder of cpp/ and web/ is named in docs/development.md or ARCHITECTURE.md', () => {
  const docs = ['docs/development.md', 'ARCHITECTURE.md'].map((name) => readFileSync(join(root, name), 'utf8'));
  const folders = trackedFolders();
  assert.ok(folders.includes('cpp/attention/ops') && folders.includes('web/shared'),
    `git ls-files found too little under cpp/ and web/: ${folders.join(', ')}`);
  const missing = folders.filter((folder) => !docs.some((text) => namesFolder(text, folder)));
  assert.deepEqual(missing, [],
    `folders named in neither docs/development.md's folder table nor ARCHITECTURE.md: ${missing.map((f) => `${f}/`).join(', ')}`);
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading) {
  return heading.replace(/`/g, '').trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-');
}

/** The text of a Markdown file without its fenced code blocks (links there are code, not links). */
const prose = (file) => readFileSync(join(root, file), 'utf8').replace(/```[\s\S]*?```/g, '');

/** The anchors of a Markdown file's headings, numbered as GitHub numbers repeated ones. */
function anchorsOf(file) {
  const seen = new Map();
  const anchors = new Set();
  for (const [, heading] of prose(file).matchAll(/^#{1,6}\s+(.+)$/gm)) {
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count ? `${base}-${count}` : base);
  }
  return anchors;
}

test('slug: GitHub heading anchors', () => {
  assert.equal(slug('Snapshots: what you found on a real model, in the post'),
    'snapshots-what-you-found-on-a-real-model-in-the-post');
  assert.equal(slug('The "Your model" view'), 'the-your-model-view');
  assert.equal(slug('`lens.rollout` (Abnar & Zuidema)'), 'lensrollout-abnar--zuidema');
});

const DOCS = () => ['README.md', 'ARCHITECTURE.md', ...gitFiles(['--cached', '--others', '--exclude-standard', '--', 'docs'])
  .filter((file) => file.endsWith('.md'))];

test('every relative link and anchor in README.md, ARCHITECTURE.md and docs/ resolves', () => {
  const broken = [];
  for (const file of DOCS()) {
    for (const [, link] of prose(file).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(link)) continue; // https:, mailto:
      const [path, anchor] = link.split('#');
      const target = path ? join(dirname(file), path) : file;
      if (!existsSync(join(root, target))) broken.push(`${file}: ${link} (no such file)`);
      else if (anchor && target.endsWith('.md') && !anchorsOf(target).has(anchor)) broken.push(`${file}: ${link} (no such heading)`);
    }
  }
  assert.deepEqual(broken, []);
});

test('the README is a newcomer\'s page: at most 250 lines, the two commands first, every doc linked', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const lines = readme.split('\n').length;
  assert.ok(lines <= 250, `README.md has ${lines} lines`);
  const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('\n## ', readme.indexOf('## Quick start') + 1));
  assert.match(quickStart, /^npm start\b/m);
  assert.match(quickStart, /^npm test\b/m);
  const docs = gitFiles(['--cached', '--others', '--exclude-standard', '--', 'docs']).filter((file) => file.endsWith('.md'));
  assert.ok(docs.length >= 5, `docs/ has ${docs.length} Markdown files`);
  const unlinked = docs.filter((file) => !readme.includes(`](${file}`));
  assert.deepEqual(unlinked, [], 'every doc is linked from the README');
});

test('no file cites a contract outside the repository (it is docs/API.md)', () => {
  // Spelled in pieces so that this file does not match itself.
  const stale = ['DESIGN' + '.md', 'DESIGN' + ' contract', 'DESIGN' + "'s contract"];
  const files = gitFiles(['--cached', '--others', '--exclude-standard']);
  assert.ok(files.includes('README.md'), 'git ls-files listed no README.md');
  const found = [];
  for (const file of files) {
    const bytes = readFileSync(join(root, file));
    if (bytes.includes(0)) continue; // binary: .safetensors, images
    const lines = bytes.toString('utf8').split('\n');
    lines.forEach((line, i) => {
      const hit = stale.find((phrase) => line.includes(phrase));
      if (hit) found.push(`${file}:${i + 1}: ${hit}`);
    });
  }
  assert.deepEqual(found, [], `cite docs/API.md (or ARCHITECTURE.md) instead:\n${found.join('\n')}`);
});

test('docs/API.md exists and covers the contract sections', () => {
  const api = readFileSync(join(root, 'docs', 'API.md'), 'utf8');
  for (const heading of ['## Conventions the whole project shares', '## The public JavaScript API',
    '## Models, training and checkpoints', '## Real models: families, the Hub, generation, threads']) {
    assert.ok(api.includes(heading), `docs/API.md lacks "${heading}"`);
  }
  // The status table says what this tree implements: threads too, since the threaded build.
  const status = api.slice(api.indexOf('| part | status |'), api.indexOf('\n\n', api.indexOf('| part | status |')));
  assert.match(status, /\| implemented/);
  assert.match(status, /loadAttentionLens\(\{ threads \}\)/);
  assert.doesNotMatch(status.split('\n').find((line) => line.includes('threads')) ?? '', /planned/);
});

// The core's folders in the order includes may point (ARCHITECTURE.md: "Includes go one way"): a
// file may include its own folder's headers and those of any folder after its own in this list.
const CORE_ORDER = [['train'], ['model', 'model/families'], ['layer', 'text'], ['io'], ['ops'], ['.']];

test("the core's includes go one way: train → model → layer, text → io → ops → the root", () => {
  const rank = (folder) => CORE_ORDER.findIndex((group) => group.includes(folder));
  const wrong = [];
  for (const file of gitFiles(['--', 'cpp/attention'])) {
    if (!/\.(hpp|cpp)$/.test(file)) continue;
    const from = dirname(file.slice('cpp/attention/'.length)).replace(/^$/, '.');
    for (const [, included] of readFileSync(join(root, file), 'utf8').matchAll(/^#include "attention\/([^"]+)"/gm)) {
      const to = dirname(included);
      assert.ok(rank(from) >= 0 && rank(to) >= 0, `${file}: a folder the order does not know (${from} or ${to})`);
      if (rank(to) < rank(from)) wrong.push(`${file} includes attention/${included}`);
    }
  }
  assert.deepEqual(wrong, []);
});
