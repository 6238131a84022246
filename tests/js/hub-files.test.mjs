// lens.hubFiles({ hub, revision, endpoint, signal }): a repo's files from the Hub's tree API, against the
// local stand-in of the Hub (scripts/lib/hub-stand-in.mjs) and, for what a hostile server may send, a
// server of the test's own: the request huggingface_hub's list_repo_tree makes (the revision
// URL-encoded whole), every page of a paged answer, LFS sizes, refusals as loadCheckpoint({ hub })'s,
// an answer that is not the expected JSON, a Link that loops or leaves the origin, a cancel.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';

import { loadLens } from './support.mjs';
import { startStandIn } from '../../scripts/lib/hub-stand-in.mjs';

const lens = await loadLens();

const bytes = (n) => new Uint8Array(n).fill(7);
const REPO = {
  'README.md': '# tiny',
  'config.json': { model_type: 'llama' },
  'tiny-Q8_0.gguf': bytes(1234),
  'tiny-Q4_K_M.gguf': bytes(777),
  'F32/tiny-F32.gguf': bytes(4096),
  'big/big-Q8_0-00001-of-00002.gguf': bytes(50),
  'big/big-Q8_0-00002-of-00002.gguf': bytes(60),
};
// Every file of REPO as hubFiles gives it: sorted by path, each with its size in bytes.
const EXPECTED = Object.entries(REPO).map(([file, content]) => ({
  file, bytes: typeof content === 'string' ? content.length : content instanceof Uint8Array ? content.length : JSON.stringify(content).length,
})).sort((a, b) => (a.file < b.file ? -1 : 1));

let hub;
before(async () => {
  hub = await startStandIn({ 'org/tiny-GGUF': REPO, 'org/tiny-GGUF@refs/pr/1': { 'pr-Q8_0.gguf': bytes(99) }, 'org/gated': { 'a.gguf': bytes(3) } },
    { gated: ['org/gated'] });
});
after(() => hub.close());

/** The stand-in's requests to the tree API. */
const treeRequests = () => hub.requests.filter((r) => r.path.startsWith('/api/models/'));

test('every file of the repo, sorted by path, with its bytes (an LFS file\'s lfs.size); folders are not files', async () => {
  hub.reset();
  const files = await lens.hubFiles({ hub: 'org/tiny-GGUF', endpoint: hub.endpoint });
  assert.deepEqual(files, EXPECTED);
  // One request, as huggingface_hub's list_repo_tree asks it.
  assert.deepEqual(treeRequests().map((r) => `${r.method} ${r.path} ${r.status}`), ['GET /api/models/org/tiny-GGUF/tree/main 200']);
  // A repo's URL names the endpoint; a revision such as refs/pr/1 is encoded whole, as huggingface_hub's quote(revision, safe='').
  hub.reset();
  assert.deepEqual(await lens.hubFiles({ hub: `${hub.endpoint}/org/tiny-GGUF`, revision: 'refs/pr/1' }), [{ file: 'pr-Q8_0.gguf', bytes: 99 }]);
  assert.deepEqual(treeRequests().map((r) => r.path), ['/api/models/org/tiny-GGUF/tree/refs%2Fpr%2F1']);
});

test('a paged answer: each Link rel="next" followed, the same list', async () => {
  for (const page of [1, 2, 3]) {
    hub.treePage = page;
    hub.reset();
    assert.deepEqual(await lens.hubFiles({ hub: 'org/tiny-GGUF', endpoint: hub.endpoint }), EXPECTED, `${page} a page`);
    // The recursive listing holds the files and the folders F32 and big.
    assert.equal(treeRequests().length, Math.ceil((EXPECTED.length + 2) / page), `${page} a page`);
    assert.ok(treeRequests().slice(1).every((r) => r.status === 200));
  }
  hub.treePage = Infinity;
});

test('refusals read as loadCheckpoint({ hub })\'s: an unknown repo (401), a gated one, a revision it does not have (404), an endpoint that does not answer', async () => {
  await assert.rejects(lens.hubFiles({ hub: 'org/missing', endpoint: hub.endpoint }),
    { message: `repository 'org/missing' was not found on ${hub.endpoint} (or it is private)` });
  await assert.rejects(lens.hubFiles({ hub: 'org/gated', endpoint: hub.endpoint }), /^Error: repository 'org\/gated' on http:\/\/127\.0\.0\.1:\d+ is gated/);
  await assert.rejects(lens.hubFiles({ hub: 'org/tiny-GGUF', endpoint: hub.endpoint, revision: 'v9' }),
    { message: `revision 'v9' was not found in 'org/tiny-GGUF' on ${hub.endpoint}` });
  const closed = createServer();
  await new Promise((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const gone = `http://127.0.0.1:${closed.address().port}`;
  await new Promise((resolve) => closed.close(resolve));
  await assert.rejects(lens.hubFiles({ hub: 'org/tiny-GGUF', endpoint: gone }),
    (error) => error.message.startsWith(`could not reach ${gone} for the file list of 'org/tiny-GGUF' (`));
  // The module keeps working: the same repo listed after the refusals.
  assert.deepEqual(await lens.hubFiles({ hub: 'org/tiny-GGUF', endpoint: hub.endpoint }), EXPECTED);
});

test('an answer that is not the expected JSON: said, naming the repo', async () => {
  const cases = [
    ['<!doctype html><title>Hub</title>', /^the Hub's file list for org\/tiny-GGUF was not understood: its answer is not JSON \(/],
    ['{"error": "x"}', /^the Hub's file list for org\/tiny-GGUF was not understood: its answer is an object, not a list of entries$/],
    ['[{"type": "file", "path": "a.gguf"}]', /^the Hub's file list for org\/tiny-GGUF was not understood: "a\.gguf" has no size in bytes \(got undefined\)$/],
    ['[{"type": "file", "path": "a.gguf", "size": -1}]', /: "a\.gguf" has no size in bytes \(got -1\)$/],
    ['[{"type": "file", "path": "a.gguf", "size": 1, "lfs": {"size": "12"}}]', /: "a\.gguf" has no size in bytes \(got "12"\)$/],
    ['[{"type": "file", "size": 3}]', /: an entry's path is undefined$/],
    ['[{"type": "file", "path": "a\\nb.gguf", "size": 3}]', /: an entry's path is "a\\nb\.gguf"$/],
    ['[7]', /: an entry is 7$/],
  ];
  for (const [body, message] of cases) {
    hub.treeBodies['org/tiny-GGUF'] = body;
    await assert.rejects(lens.hubFiles({ hub: 'org/tiny-GGUF', endpoint: hub.endpoint }), (error) => message.test(error.message), body);
  }
  // A name is data, never markup: given back as the Hub wrote it.
  hub.treeBodies['org/tiny-GGUF'] = JSON.stringify([{ type: 'file', path: '<img src=x onerror=alert(1)>.gguf', size: 3 },
    { type: 'directory', path: 'd', size: 0 }, { type: 'unknown', path: 'later', size: 0 }]);
  assert.deepEqual(await lens.hubFiles({ hub: 'org/tiny-GGUF', endpoint: hub.endpoint }), [{ file: '<img src=x onerror=alert(1)>.gguf', bytes: 3 }]);
  delete hub.treeBodies['org/tiny-GGUF'];
});

test('a cancel: the listing in flight rejects as cancelled; an aborted signal asks nothing', async () => {
  hub.reset();
  hub.hold('/tree/main');
  const controller = new AbortController();
  const listing = lens.hubFiles({ hub: 'org/tiny-GGUF', endpoint: hub.endpoint, signal: controller.signal });
  const deadline = Date.now() + 10000;
  while (treeRequests().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.equal(treeRequests().length, 1, 'the request was sent');
  controller.abort();
  await assert.rejects(listing, { message: "the file list of 'org/tiny-GGUF' was cancelled" });
  hub.release();
  hub.reset();
  await assert.rejects(lens.hubFiles({ hub: 'org/tiny-GGUF', endpoint: hub.endpoint, signal: AbortSignal.abort() }),
    { message: "the file list of 'org/tiny-GGUF' was cancelled" });
  assert.equal(treeRequests().length, 0);
});

test('the options are checked as loadCheckpoint({ hub })\'s', async () => {
  await assert.rejects(lens.hubFiles({ hub: 'not an id' }), /^Error: hub must be a Hugging Face id 'org\/name'/);
  await assert.rejects(lens.hubFiles({ hub: 'org/x', revision: 'a b' }), /^Error: revision must be a branch, tag or commit/);
  await assert.rejects(lens.hubFiles({ hub: 'org/x', endpoint: 'ftp://x' }), /^Error: endpoint must be an http\(s\) URL/);
  await assert.rejects(lens.hubFiles({ hub: 'org/x', file: 'a.gguf' }), /^Error: unknown hubFiles options key 'file'; expected one of: hub, revision, endpoint, signal$/);
  await assert.rejects(lens.hubFiles({ hub: 'org/x', signal: {} }), /^Error: signal must be an AbortSignal/);
  await assert.rejects(lens.hubFiles('org/x'), /^Error: hubFiles takes an options object/);
});

/**
 * A server of the test's own answering the tree API with one entry a page and the Link `link(n, origin)`
 * gives page n (null: none). Returns { origin, pages (paths asked, with their query), close }.
 */
async function linkServer(link) {
  const pages = [];
  const server = createServer((request, response) => {
    pages.push(request.url);
    const n = Number(new URL(request.url, 'http://x').searchParams.get('cursor') ?? 0);
    const next = link(n, origin);
    response.writeHead(200, { 'Content-Type': 'application/json', ...(next ? { Link: next } : {}) });
    response.end(JSON.stringify([{ type: 'file', path: `f${String(n).padStart(4, '0')}.gguf`, size: n }]));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return { origin, pages, close: () => new Promise((resolve) => server.close(resolve)) };
}

test('a hostile Link: no more than 100 pages, never a page twice, never another origin; the public Hub\'s link from a mirror is asked of the mirror', async () => {
  const path = '/api/models/org/x/tree/main';
  const endless = await linkServer((n, origin) => `<${origin}${path}?cursor=${n + 1}>; rel="next"`);
  await assert.rejects(lens.hubFiles({ hub: 'org/x', endpoint: endless.origin }),
    { message: "the Hub's file list for org/x was not understood: it runs past 100 pages" });
  assert.equal(endless.pages.length, 100);
  await endless.close();

  const loop = await linkServer((n, origin) => `<${origin}${path}?cursor=1>; rel="next"`); // page 1 names itself
  await assert.rejects(lens.hubFiles({ hub: 'org/x', endpoint: loop.origin }),
    { message: "the Hub's file list for org/x was not understood: its next page is one already read" });
  assert.equal(loop.pages.length, 2);
  await loop.close();

  const away = await linkServer(() => '<http://127.0.0.2:1/elsewhere>; rel="next"');
  await assert.rejects(lens.hubFiles({ hub: 'org/x', endpoint: away.origin }),
    { message: `the Hub's file list for org/x was not understood: its next page is on http://127.0.0.2:1, not ${away.origin}` });
  assert.equal(away.pages.length, 1);
  await away.close();

  // A mirror whose Link names huggingface.co (as huggingface_hub's fix_hf_endpoint_in_url expects),
  // beside another rel: the next page is asked of the mirror; a relative link resolves against the page.
  const mirror = await linkServer((n) => (n === 0 ? `<https://huggingface.co${path}?cursor=1>; rel="next", <https://huggingface.co${path}>; rel="first"`
    : n === 1 ? `<${path}?cursor=2>; rel="next"` : null));
  assert.deepEqual(await lens.hubFiles({ hub: 'org/x', endpoint: mirror.origin }),
    [{ file: 'f0000.gguf', bytes: 0 }, { file: 'f0001.gguf', bytes: 1 }, { file: 'f0002.gguf', bytes: 2 }]);
  assert.deepEqual(mirror.pages, [`${path}?recursive=true&expand=false`, `${path}?cursor=1`, `${path}?cursor=2`]);
  await mirror.close();
});
