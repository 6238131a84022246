// lens.loadCheckpoint({ hub }) against the local stand-in of the Hub (scripts/lib/hub-stand-in.mjs; no test reaches the internet).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadLens } from './support.mjs';
import { assertAsAccurate, gpt2SizedCheckpoint, gpt2Tokenizer, llamaGolden, smallGpt2Files } from './checkpoint-support.mjs';
import { DATA_DIR, readBytes, splitSafetensors } from './support.mjs';
import { startStandIn } from '../../scripts/lib/hub-stand-in.mjs';

const lens = await loadLens();

// The repos' files. big: GPT-2's vocabulary, d 64 (13 MB: several ranges), tokenizer.json.
const big = gpt2SizedCheckpoint({ layers: 1, heads: 2, d: 64, context: 16 });
const full = gpt2Tokenizer();
const mergeLines = (text) => text.split('\n').filter((line) => line !== '' && !line.startsWith('#version'));
const tokenizerJson = (vocab, merges) => ({
  model: { type: 'BPE', vocab, merges: mergeLines(merges) },
  added_tokens: [],
});
const small = smallGpt2Files({ layers: 2, heads: 2, d: 16, vocab: 300, context: 32 });
const other = smallGpt2Files({ layers: 1, heads: 4, d: 8, vocab: 300, context: 32 }); // another revision
const bare = gpt2SizedCheckpoint(); // GPT-2's vocabulary, no tokenizer files
const llamaConfig = {
  architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: 16, num_hidden_layers: 2,
  num_attention_heads: 2, vocab_size: 300, max_position_embeddings: 32, intermediate_size: 32,
};
// A Mistral checkpoint split as the Hub stores a sharded repo (model.safetensors.index.json).
const mistral = llamaGolden('mistral-f32');
const SHARDS = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
const mistralShards = splitSafetensors(mistral.weights, (name) => (name.startsWith('model.layers.2.') || name === 'lm_head.weight' ? 1 : 0), SHARDS);

// pytorch_model.bin repos (tests/data/torch/models, torch.save of the Llama test checkpoints):
// one file, and sharded by pytorch_model.bin.index.json; a legacy-format file.
const torchModels = `${DATA_DIR}torch/models/`;
const llamaBf16 = llamaGolden('llama-bf16');
const llamaF32 = llamaGolden('llama-f32');
const BIN_SHARDS = ['llama-f32-sharded-00001-of-00002.bin', 'llama-f32-sharded-00002-of-00002.bin'];

const REPOS = {
  'org/bin': { 'config.json': llamaBf16.config, 'pytorch_model.bin': readBytes(`${torchModels}llama-bf16.bin`) },
  'org/bin-sharded': {
    'config.json': llamaF32.config,
    'pytorch_model.bin.index.json': readBytes(`${torchModels}llama-f32-sharded.bin.index.json`),
    [BIN_SHARDS[0]]: readBytes(`${torchModels}${BIN_SHARDS[0]}`), [BIN_SHARDS[1]]: readBytes(`${torchModels}${BIN_SHARDS[1]}`),
  },
  'org/bin-legacy': { 'config.json': small.config, 'pytorch_model.bin': readBytes(`${DATA_DIR}malformed-torch/legacy-format.bin`) },
  'org/big': { 'config.json': big.config, 'tokenizer.json': tokenizerJson(full.vocab, full.merges), 'model.safetensors': big.weights },
  'org/small': { 'config.json': small.config, 'vocab.json': small.vocab, 'merges.txt': small.merges, 'model.safetensors': small.weights },
  'org/small@refs/pr/1': { 'config.json': other.config, 'vocab.json': other.vocab, 'merges.txt': other.merges, 'model.safetensors': other.weights },
  'org/bare': { 'config.json': bare.config, 'model.safetensors': bare.weights },
  'org/tiny-vocab': { 'config.json': small.config, 'model.safetensors': small.weights },
  'org/gated': { 'config.json': small.config, 'model.safetensors': small.weights },
  'org/gated-403': { 'config.json': small.config, 'model.safetensors': small.weights },
  'org/no-config': { 'model.safetensors': small.weights },
  'org/no-weights': { 'config.json': small.config, 'flax_model.msgpack': 'x' },
  'org/sharded': {
    'config.json': mistral.config, 'model.safetensors.index.json': mistralShards.index,
    [SHARDS[0]]: mistralShards.files[0], [SHARDS[1]]: mistralShards.files[1],
  },
  'org/half-sharded': {
    'config.json': mistral.config, 'model.safetensors.index.json': mistralShards.index, [SHARDS[0]]: mistralShards.files[0],
  },
  'org/bad-index': { 'config.json': mistral.config, 'model.safetensors.index.json': { weight_map: { a: '../x.safetensors' } } },
  'org/qwen2': { 'config.json': llamaGolden('qwen2-bf16').config, 'model.safetensors': llamaGolden('qwen2-bf16').weights },
  'org/llama': { 'config.json': llamaConfig, 'tokenizer.json': tokenizerJson(small.vocab, small.merges), 'model.safetensors': small.weights },
  'org/half': { 'config.json': small.config, 'vocab.json': small.vocab, 'model.safetensors': small.weights },
  'org/drop': { 'config.json': bare.config, 'model.safetensors': bare.weights },
};

let hub;
before(async () => {
  hub = await startStandIn(REPOS, { gated: ['org/gated', { id: 'org/gated-403', status: 403 }] });
});
after(() => hub.close());

async function rejects(promise, pattern) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof Error);
    assert.match(error.message, pattern);
    return true;
  });
}

/** forward's logits and attention of both models on the same ids, bit for bit. */
function assertSameModel(a, b, ids) {
  assert.deepEqual(a.config, b.config);
  const x = a.forward(ids, { n: ids.length, batch: 1 });
  const y = b.forward(ids, { n: ids.length, batch: 1 });
  assert.deepEqual(Buffer.from(x.logits.buffer), Buffer.from(y.logits.buffer), 'logits bit for bit');
  assert.equal(x.attention.length, y.attention.length);
  x.attention.forEach((layer, l) => assert.deepEqual(Buffer.from(layer.buffer), Buffer.from(y.attention[l].buffer), `attention ${l}`));
}

/** The storage server's ranges of `suffix`: each 206, no byte asked for twice, together the whole file. */
function assertRangesCover(suffix, size) {
  const ranges = hub.requests.filter((r) => r.server === 'storage' && r.path.endsWith(suffix))
    .map((r) => {
      assert.equal(r.status, 206, `${r.range} answered ${r.status}`);
      const [, a, b] = /^bytes=(\d+)-(\d+)$/.exec(r.range).map(Number);
      return [a, Math.min(b, size - 1)];
    }).sort((p, q) => p[0] - q[0]);
  let next = 0;
  for (const [a, b] of ranges) {
    assert.equal(a, next, `ranges ${JSON.stringify(ranges)}: a gap or a byte fetched twice`);
    next = b + 1;
  }
  assert.equal(next, size, 'the ranges cover the file');
  return ranges;
}

test('by id: the model of the same files, the 302 followed, the weights read by Range in several requests', async () => {
  const tokenizer = tokenizerJson(full.vocab, full.merges);
  const local = await lens.loadCheckpoint({ weights: big.weights, config: big.config, tokenizer });
  hub.reset();
  const fractions = [];
  const phases = [];
  const remote = await lens.loadCheckpoint({ hub: 'org/big', endpoint: hub.endpoint, onProgress: (f, now) => {
    fractions.push(f);
    phases.push(now);
  } });
  try {
    const { ids } = remote.tokenize('The cat sat on the mat, and the hub served it.');
    assert.deepEqual(ids, local.tokenize('The cat sat on the mat, and the hub served it.').ids);
    assert.equal(remote.hasTokenizer, true);
    assertSameModel(remote, local, ids.subarray(0, 16));
  } finally {
    remote.dispose();
    local.dispose();
  }
  // The Hub: config.json and tokenizer.json once each, model.safetensors once (a 302 to storage).
  assert.equal(hub.count('hub', '/org/big/resolve/main/config.json'), 1);
  assert.equal(hub.count('hub', '/org/big/resolve/main/tokenizer.json'), 1);
  assert.equal(hub.count('hub', '/org/big/resolve/main/vocab.json'), 0);
  assert.deepEqual(hub.requests.filter((r) => r.path.endsWith('model.safetensors')).map((r) => [r.server, r.status])[0], ['hub', 302]);
  assert.equal(hub.count('hub', 'model.safetensors'), 1, 'later ranges go to the redirect\'s origin');
  const ranges = assertRangesCover('/org/big/main/model.safetensors', big.weights.length);
  assert.ok(ranges.length >= 3, `${ranges.length} range requests`);
  assert.equal(ranges[0][1], 65535, 'the first request is small (the header)');
  // Progress over all the files' bytes: never going back, ending at 1.
  assert.ok(fractions.length >= 10, `${fractions.length} progress calls`);
  for (let i = 1; i < fractions.length; ++i) assert.ok(fractions[i] >= fractions[i - 1]);
  assert.ok(fractions[0] > 0 && fractions[0] < 0.1);
  assert.equal(fractions.at(-1), 1);
  assertPhases(fractions, phases, { download: true });
  // The bytes at the end: the weights, config.json and whatever tokenizer.json was read before them.
  const last = phases.filter((now) => now.phase === 'download').at(-1);
  assert.ok(last.total >= big.weights.length + JSON.stringify(big.config).length && last.total < big.weights.length + 4e6,
    `${last.total} bytes in all, the weights ${big.weights.length}`);
});

/**
 * onProgress's second argument: { phase, fraction } on every call; the download first (its
 * fraction the first argument's, rising), then the weights prepared (read into the core: its own
 * fraction, never going back, 1 at the end). `download`: whether the load fetched the weights.
 */
function assertPhases(fractions, phases, { download }) {
  assert.equal(phases.length, fractions.length);
  for (const now of phases) {
    // A download also says its bytes ({ received, total }: the fraction's numerator and denominator).
    assert.deepEqual(Object.keys(now).sort(), now.phase === 'download' ? ['fraction', 'phase', 'received', 'total'] : ['fraction', 'phase']);
    assert.ok(['download', 'prepare'].includes(now.phase), now.phase);
    assert.ok(now.fraction >= 0 && now.fraction <= 1, String(now.fraction));
  }
  const first = phases.findIndex((now) => now.phase === 'prepare');
  assert.ok(first >= 0, 'a prepare phase');
  assert.ok(phases.slice(first).every((now) => now.phase === 'prepare'), 'nothing downloaded once the weights are prepared');
  const downloads = phases.slice(0, first);
  downloads.forEach((now, i) => assert.equal(now.fraction, fractions[i], 'the download\'s fraction is the first argument'));
  downloads.forEach((now, i) => {
    assert.ok(Number.isInteger(now.received) && Number.isInteger(now.total) && now.received <= now.total, JSON.stringify(now));
    assert.ok(Math.abs(now.received / now.total - now.fraction) < 1e-12, `${JSON.stringify(now)}: the fraction is received / total`);
    if (i > 0) assert.ok(now.received >= downloads[i - 1].received, 'the bytes received never go back');
  });
  if (download) assert.equal(downloads.at(-1).received, downloads.at(-1).total, 'the download ends with every byte received');
  if (download) assert.ok(downloads.some((now) => now.fraction > 0 && now.fraction < 1), 'the download reported as it goes');
  const prepared = phases.slice(first).map((now) => now.fraction);
  for (let i = 1; i < prepared.length; ++i) assert.ok(prepared[i] >= prepared[i - 1], 'preparing never goes back');
  assert.equal(prepared.at(-1), 1);
}

test('vocab.json + merges.txt when tokenizer.json is 404; a full repo URL; a revision other than main', async () => {
  const local = await lens.loadCheckpoint({ weights: small.weights, config: small.config, tokenizer: { vocab: small.vocab, merges: small.merges } });
  hub.reset();
  for (const address of ['org/small', `${hub.endpoint}/org/small`, `${hub.endpoint}/org/small/`]) {
    const remote = await lens.loadCheckpoint(address.startsWith('http') ? { hub: address } : { hub: address, endpoint: `${hub.endpoint}/` });
    try {
      const { ids } = remote.tokenize('hello there');
      assert.deepEqual(ids, local.tokenize('hello there').ids);
      assertSameModel(remote, local, ids);
    } finally {
      remote.dispose();
    }
  }
  assert.equal(hub.count('hub', '/org/small/resolve/main/tokenizer.json'), 3);
  assert.equal(hub.count('hub', '/org/small/resolve/main/vocab.json'), 3);
  assert.equal(hub.count('hub', '/org/small/resolve/main/merges.txt'), 3);
  assert.ok(hub.requests.filter((r) => r.path.endsWith('tokenizer.json')).every((r) => r.status === 404));

  // refs/pr/1: URL-encoded into one path segment, its own files.
  hub.reset();
  const pr = await lens.loadCheckpoint({ hub: 'org/small', revision: 'refs/pr/1', endpoint: hub.endpoint });
  const prLocal = await lens.loadCheckpoint({ weights: other.weights, config: other.config, tokenizer: { vocab: other.vocab, merges: other.merges } });
  try {
    assert.equal(pr.config.heads, 4);
    assertSameModel(pr, prLocal, Int32Array.of(1, 2, 3, 4));
  } finally {
    pr.dispose();
    prLocal.dispose();
    local.dispose();
  }
  assert.equal(hub.count('hub', '/org/small/resolve/refs%2Fpr%2F1/config.json'), 1);
  assert.equal(hub.count('hub', '/resolve/main/config.json'), 0);
  await rejects(lens.loadCheckpoint({ hub: 'org/small', revision: 'v9', endpoint: hub.endpoint }),
    /revision 'v9' was not found in 'org\/small' on http:\/\/127\.0\.0\.1:\d+$/);
});

test('no tokenizer files: GPT-2\'s own for GPT-2\'s vocabulary, none for a smaller one', async () => {
  hub.reset();
  const gpt = await lens.loadCheckpoint({ hub: 'org/bare', endpoint: hub.endpoint });
  const local = await lens.loadCheckpoint(bare);
  try {
    assert.equal(gpt.hasTokenizer, true);
    assert.deepEqual(gpt.tokenize('Hello world').ids, Int32Array.of(15496, 995));
    assertSameModel(gpt, local, Int32Array.of(15496, 995, 50256));
  } finally {
    gpt.dispose();
    local.dispose();
  }
  for (const file of ['tokenizer.json', 'vocab.json', 'merges.txt']) assert.equal(hub.count('hub', `/org/bare/resolve/main/${file}`), 1, file);
  const tiny = await lens.loadCheckpoint({ hub: 'org/tiny-vocab', endpoint: hub.endpoint });
  assert.equal(tiny.hasTokenizer, false);
  assert.throws(() => tiny.tokenize('hi'), /fewer than GPT-2's tokenizer's 50257/);
  tiny.dispose();
  await rejects(lens.loadCheckpoint({ hub: 'org/half', endpoint: hub.endpoint }),
    /'org\/half' has vocab.json but no merges.txt \(and no tokenizer.json\)/);
});

test('a server that ignores Range: the whole file read once, the same model', async () => {
  hub.reset();
  hub.ignoreRange = true;
  try {
    const remote = await lens.loadCheckpoint({ hub: 'org/small', endpoint: hub.endpoint });
    const local = await lens.loadCheckpoint({ weights: small.weights, config: small.config, tokenizer: { vocab: small.vocab, merges: small.merges } });
    assertSameModel(remote, local, Int32Array.of(5, 6, 7));
    remote.dispose();
    local.dispose();
  } finally {
    hub.ignoreRange = false;
  }
  const weights = hub.requests.filter((r) => r.server === 'storage');
  assert.deepEqual(weights.map((r) => r.status), [200], 'one request, answered whole');
});

test('each failure has its message; nothing leaks and the module keeps working', async () => {
  const warm = await lens.loadCheckpoint({ hub: 'org/tiny-vocab', endpoint: hub.endpoint });
  warm.dispose();
  const allocated = lens.memory().allocatedBytes;
  const load = (id, extra = {}) => lens.loadCheckpoint({ hub: id, endpoint: hub.endpoint, ...extra });
  hub.reset();
  await rejects(load('org/missing'), /^repository 'org\/missing' was not found on http:\/\/127\.0\.0\.1:\d+ \(or it is private\)$/);
  // Gated (the Hub's X-Error-Code GatedRepo): 401 without a login, 403 with one that has not accepted the licence.
  const gatedMessage = (id) => new RegExp(`^repository '${id}' on http://127\\.0\\.0\\.1:\\d+ is gated: .*no Hugging Face login or token\\. ` +
    `To use it: open http://127\\.0\\.0\\.1:\\d+/${id}, log in and accept the licence there, then download its config\\.json, ` +
    'model\\.safetensors and tokenizer\\.json .*drop them into the page');
  await rejects(load('org/gated'), gatedMessage('org/gated'));
  await rejects(load('org/gated-403'), gatedMessage('org/gated-403'));
  assert.deepEqual(hub.requests.filter((r) => r.path.includes('/org/gated')).map((r) => r.status), [401, 403]);
  await rejects(load('org/no-config'), /^config.json was not found in 'org\/no-config' \(revision 'main'\) on http:\/\/127/);
  await rejects(load('org/no-weights'), /^model.safetensors was not found in 'org\/no-weights' \(revision 'main'\) on .*nor model.safetensors.index.json, pytorch_model.bin or pytorch_model.bin.index.json/);
  await rejects(load('org/bin-legacy'), /^PyTorch checkpoint: the file is in the legacy PyTorch format \(torch.save before torch 1.6/);
  await rejects(load('org/half-sharded'), /^model-00002-of-00002.safetensors was not found in 'org\/half-sharded'/);
  await rejects(load('org/bad-index'), /names a shard "\.\.\/x\.safetensors"; a shard is a \.safetensors file beside it/);
  // Refused by the core by name (GPT-2's tensors under a Llama config), before the tokenizer is fetched.
  await rejects(load('org/llama'), /^this looks like a GPT-2 checkpoint \(tensor 'wte.weight'\); supported: Llama-family/);
  assert.equal(hub.count('hub', '/org/llama/resolve/main/tokenizer.json'), 0);
  // The connection dropped at byte 300 000 of model.safetensors (its second range).
  hub.dropAfter['org/drop/model.safetensors'] = 300000;
  await rejects(load('org/drop'),
    new RegExp(`^the connection was lost while reading model.safetensors of 'org/drop' from .* \\(300000 of ${bare.weights.length} bytes\\)$`));
  assert.ok(hub.requests.some((r) => r.server === 'storage' && r.path.endsWith('/org/drop/main/model.safetensors') && /dropped/.test(r.status)));
  delete hub.dropAfter['org/drop/model.safetensors'];
  // …and mid config.json.
  hub.dropAfter['org/drop/config.json'] = 20;
  await rejects(load('org/drop'), /^the connection was lost while reading config.json of 'org\/drop' from .* \(20 of \d+ bytes\)$/);
  delete hub.dropAfter['org/drop/config.json'];
  // Nothing listening there.
  const closed = await startStandIn({});
  const dead = closed.endpoint;
  await closed.close();
  await rejects(lens.loadCheckpoint({ hub: 'org/big', endpoint: dead }), /^could not reach http:\/\/127\.0\.0\.1:\d+ for config.json of 'org\/big'/);
  assert.equal(lens.memory().allocatedBytes, allocated, 'a refused load frees what it allocated');
  const ok = await load('org/drop');
  assert.equal(ok.forward(Int32Array.of(1, 2), { n: 2 }).logits.length, 2 * 50257);
  ok.dispose();
});

test('a cancelled load rejects, stops fetching and frees what it allocated', async () => {
  const warm = await lens.loadCheckpoint({ hub: 'org/big', endpoint: hub.endpoint });
  warm.dispose();
  const allocated = lens.memory().allocatedBytes;
  // Cancelled at the first progress call (the header's bytes).
  hub.reset();
  let controller = new AbortController();
  let seen = -1;
  await rejects(lens.loadCheckpoint({ hub: 'org/big', endpoint: hub.endpoint, signal: controller.signal, onProgress: () => {
    if (seen < 0) {
      seen = hub.requests.length;
      controller.abort();
    }
  } }), /^the load of 'org\/big' was cancelled$/);
  assert.ok(seen >= 1);
  assert.equal(hub.count('hub', '/org/big/resolve/main/tokenizer.json'), 0, 'nothing fetched after the abort');
  assert.equal(hub.count('storage', 'model.safetensors'), 1, `only the first range: ${JSON.stringify(hub.requests)}`);
  assert.equal(lens.memory().allocatedBytes, allocated);
  // Cancelled half-way through the weights (the core holds the model being read).
  hub.reset();
  controller = new AbortController();
  const fractions = [];
  await rejects(lens.loadCheckpoint({ hub: 'org/big', endpoint: hub.endpoint, signal: controller.signal, onProgress: (f) => {
    fractions.push(f);
    if (f > 0.5) controller.abort();
  } }), /was cancelled/);
  assert.ok(fractions.at(-1) > 0.5 && fractions.at(-1) < 1);
  assert.ok(hub.count('storage', 'model.safetensors') < 3, 'the last ranges were not fetched');
  assert.equal(lens.memory().allocatedBytes, allocated, 'the half-read model was freed');
  // Already cancelled: no request at all.
  hub.reset();
  await rejects(lens.loadCheckpoint({ hub: 'org/big', endpoint: hub.endpoint, signal: AbortSignal.abort() }), /was cancelled/);
  assert.equal(hub.requests.length, 0);
  assert.equal(lens.memory().allocatedBytes, allocated);
});

test('bad ids, revisions, endpoints and options are refused before any request', async () => {
  hub.reset();
  const bad = async (options, pattern) => rejects(lens.loadCheckpoint({ endpoint: hub.endpoint, ...options }), pattern);
  const badId = /hub must be a Hugging Face id 'org\/name'/;
  for (const id of ['gpt2', 'a/b/c', '../etc/passwd', 'org/..', 'org/na me', 'org/a..b', 'org/a--b', `${'x'.repeat(97)}/a`,
    `a/${'y'.repeat(97)}`, 'org/-name', 'org/name.', '/name', 'org/', 'org/nam%65', 'org/name?x']) {
    await bad({ hub: id }, badId);
  }
  await bad({ hub: 'ftp://host/org/name', endpoint: undefined }, /hub must be an http\(s\) URL/);
  await bad({ hub: 'https://host/org', endpoint: undefined }, badId);
  await bad({ hub: 'https://host/org/name?download=1', endpoint: undefined }, /hub's URL must be a repo's/);
  await bad({ hub: 'https://host/org/name' }, /hub's URL is on https:\/\/host but endpoint is http:\/\/127/);
  await bad({ hub: 42 }, /hub must be a Hugging Face id 'org\/name' or a repo's URL, got 42/);
  for (const revision of ['main/../x', '..', 'a b', '', 'v1\n', 7]) {
    await bad({ hub: 'org/big', revision }, /revision must be a branch, tag or commit of the repo/);
  }
  for (const endpoint of ['ftp://mirror', 'not a url', 'https://user:pw@host']) {
    await bad({ hub: 'org/big', endpoint }, /endpoint must be an http\(s\) URL/);
  }
  await bad({ hub: 'org/big', endpoint: 42 }, /endpoint must be an http\(s\) URL, got 42/);
  await bad({ hub: 'org/big', endpoint: 'https://host/?x' }, /endpoint must be a URL without \? or #/);
  await bad({ hub: 'org/big', weights: small.weights, config: small.config },
    /takes hub \(the files fetched by id\) or weights and config \(the files themselves\), not both: got hub and weights and config/);
  await bad({ hub: 'org/big', signal: {} }, /signal must be an AbortSignal/);
  await bad({ hub: 'org/big', onProgress: 1 }, /onProgress must be a function/);
  await bad({ hub: 'org/big', token: 'x' }, /unknown loadCheckpoint options key 'token'/);
  await rejects(lens.loadCheckpoint({ weights: small.weights, config: small.config, revision: 'main' }),
    /loadCheckpoint's revision is an option of hub \(loading by Hugging Face id\), not of weights and config/);
  assert.equal(hub.requests.length, 0, 'no request was made');
});

// An in-memory CacheStorage (Node has none): what the browser's keeps, as bytes and headers.
function memoryCaches() {
  const stores = new Map();
  return {
    async open(name) {
      if (!stores.has(name)) stores.set(name, new Map());
      const store = stores.get(name);
      return {
        async match(url) {
          const kept = store.get(String(url));
          return kept ? new Response(kept.body && new Blob([kept.body]), { status: kept.status, headers: kept.headers }) : undefined;
        },
        async put(url, response) {
          const body = response.body ? new Uint8Array(await response.arrayBuffer()) : null;
          store.set(String(url), { body, status: response.status, headers: Object.fromEntries(response.headers) });
        },
        async delete(url) {
          return store.delete(String(url));
        },
        async keys() {
          return [...store.keys()].map((url) => ({ url }));
        },
      };
    },
  };
}

test('cache: a second load reads no network and gives the same model; list() and remove(repo); a failed or cancelled load keeps nothing', async () => {
  const caches = memoryCaches();
  const store = lens.hubCache(caches);
  assert.deepEqual(await store.list(), []);
  hub.reset();
  const first = await lens.loadCheckpoint({ hub: 'org/small', endpoint: hub.endpoint, cache: caches });
  const fetched = hub.requests.length;
  assert.ok(fetched >= 4, `${fetched} requests the first time`);
  assert.equal(hub.count('hub', '/org/small/resolve/main/tokenizer.json'), 1);
  hub.reset();
  const fractions = [];
  const phases = [];
  const second = await lens.loadCheckpoint({ hub: 'org/small', endpoint: hub.endpoint, cache: caches, onProgress: (f, now) => {
    fractions.push(f);
    phases.push(now);
  } });
  try {
    assert.equal(hub.requests.length, 0, 'the second load asked the network nothing');
    const ids = second.tokenize('When Mary and John went to the store').ids;
    assertSameModel(second, first, ids);
    assert.equal(fractions.at(-1), 1);
    // Nothing to download: the kept weights read into the core are the whole load's progress.
    assertPhases(fractions, phases, { download: false });
    assert.ok(phases.filter((now) => now.phase === 'prepare').length > 1, 'the kept file read as it goes');
    assert.equal(phases.filter((now) => now.phase === 'download' && now.fraction > 0 && now.fraction < 1).length, 0);
  } finally {
    first.dispose();
    second.dispose();
  }
  const files = await store.list();
  assert.deepEqual(files.map((f) => f.file).sort(), ['config.json', 'merges.txt', 'model.safetensors', 'vocab.json']);
  assert.ok(files.every((f) => f.repo === 'org/small' && f.revision === 'main'));
  assert.equal(files.find((f) => f.file === 'model.safetensors').bytes, small.weights.length);
  // The Llama repo is refused by the core after its header: nothing of it is kept.
  await assert.rejects(lens.loadCheckpoint({ hub: 'org/llama', endpoint: hub.endpoint, cache: caches }), /looks like a GPT-2 checkpoint/);
  // A load cancelled half-way through the weights keeps nothing either.
  const controller = new AbortController();
  await assert.rejects(lens.loadCheckpoint({ hub: 'org/big', endpoint: hub.endpoint, cache: caches, signal: controller.signal,
    onProgress: (f) => { if (f > 0.5) controller.abort(); } }), /was cancelled/);
  assert.deepEqual((await store.list()).map((f) => f.repo), files.map(() => 'org/small'));
  // A file past the first range is streamed whole into the cache, and read back from it.
  const bigLocal = await lens.loadCheckpoint({ weights: big.weights, config: big.config, tokenizer: tokenizerJson(full.vocab, full.merges) });
  (await lens.loadCheckpoint({ hub: 'org/big', endpoint: hub.endpoint, cache: caches })).dispose();
  hub.reset();
  const bigAgain = await lens.loadCheckpoint({ hub: 'org/big', endpoint: hub.endpoint, cache: caches });
  try {
    assert.equal(hub.requests.length, 0, 'org/big the second time: no request');
    assertSameModel(bigAgain, bigLocal, bigAgain.tokenize('The hub served it twice.').ids);
  } finally {
    bigAgain.dispose();
    bigLocal.dispose();
  }
  assert.equal((await store.list()).find((f) => f.repo === 'org/big' && f.file === 'model.safetensors').bytes, big.weights.length);
  assert.equal(await store.remove('org/big'), 3, 'config.json, tokenizer.json, model.safetensors');
  // remove: that repo's files; the next load fetches again.
  assert.equal(await store.remove('org/other'), 0);
  assert.equal(await store.remove('org/small'), 5, 'four files and the kept 404 of tokenizer.json');
  assert.deepEqual(await store.list(), []);
  hub.reset();
  (await lens.loadCheckpoint({ hub: 'org/small', endpoint: hub.endpoint, cache: caches })).dispose();
  assert.ok(hub.requests.length >= 4);
  await assert.rejects(store.remove(5), /remove takes a repo id, got 5/);
  await assert.rejects(lens.loadCheckpoint({ hub: 'org/small', endpoint: hub.endpoint, cache: 'yes' }), /cache must be true, false or a CacheStorage, got "yes"/);
  assert.deepEqual(await lens.hubCache().list(), [], 'Node has no Cache Storage: nothing kept');
});

test('cache: a browser that cannot keep the weights (its put fails after the whole body, or says storage is full) still loads the model, by ranges, and keeps no weights; a dropped connection is still the connection lost', async () => {
  const local = await lens.loadCheckpoint({ weights: big.weights, config: big.config, tokenizer: tokenizerJson(full.vocab, full.merges) });
  try {
    for (const failure of ['UnknownError', 'QuotaExceededError']) {
      const caches = memoryCaches();
      const open = caches.open.bind(caches);
      caches.open = async (name) => {
        const cache = await open(name);
        const put = cache.put.bind(cache);
        cache.put = async (url, response) => {
          if (!String(url).endsWith('/model.safetensors')) return put(url, response);
          if (failure === 'UnknownError') await response.arrayBuffer(); // every byte read, then refused
          else await response.body.getReader().read(); // refused after the first piece
          throw new DOMException('Unexpected internal error.', failure);
        };
        return cache;
      };
      hub.reset();
      const fractions = [];
      const remote = await lens.loadCheckpoint({ hub: 'org/big', endpoint: hub.endpoint, cache: caches, onProgress: (f) => fractions.push(f) });
      try {
        assertSameModel(remote, local, remote.tokenize('Kept or not, the same model.').ids);
      } finally {
        remote.dispose();
      }
      assert.equal(fractions.at(-1), 1, failure);
      for (let i = 1; i < fractions.length; ++i) assert.ok(fractions[i] >= fractions[i - 1], failure);
      // the whole file once (for the cache), then by ranges from the storage origin
      assert.ok(hub.requests.some((r) => r.server === 'storage' && r.path.endsWith('/model.safetensors') && r.range === null && r.status === 200), failure);
      assert.ok(hub.requests.some((r) => r.server === 'storage' && r.path.endsWith('/model.safetensors') && r.range !== null && r.status === 206), failure);
      const kept = (await lens.hubCache(caches).list()).map((f) => f.file).sort();
      assert.deepEqual(kept, ['config.json', 'tokenizer.json'], `${failure}: no weights kept`);
    }
    // The connection dropped half-way while the whole file streams into the cache: an error that says so.
    hub.dropAfter['org/big/model.safetensors'] = Math.floor(big.weights.length / 2);
    try {
      await assert.rejects(lens.loadCheckpoint({ hub: 'org/big', endpoint: hub.endpoint, cache: memoryCaches() }),
        /the connection was lost while reading model\.safetensors of 'org\/big'/);
    } finally {
      delete hub.dropAfter['org/big/model.safetensors'];
    }
  } finally {
    local.dispose();
  }
});

test('the Llama family by id: a sharded Mistral repo (the index, then each shard by Range) and a Qwen2 BF16 repo, equal to the files and to PyTorch; the cache keeps every shard', async () => {
  const caches = memoryCaches();
  const local = await lens.loadCheckpoint({ weights: mistral.weights, config: mistral.config });
  const ids = Int32Array.from(mistral.expected.ids.data, Number);
  hub.reset();
  const fractions = [];
  const remote = await lens.loadCheckpoint({ hub: 'org/sharded', endpoint: hub.endpoint, cache: caches, onProgress: (f) => fractions.push(f) });
  try {
    assert.equal(remote.family, 'mistral');
    assert.deepEqual(remote.forward(ids).logits, local.forward(ids).logits);
    const out = remote.forward(ids);
    assertAsAccurate(out.logits, mistral.expected.logits32.data, mistral.expected.logits64.data, 'sharded mistral logits');
  } finally {
    remote.dispose();
    local.dispose();
  }
  // model.safetensors is 404 (one request), then the index, then each shard through the 302.
  assert.equal(hub.count('hub', '/org/sharded/resolve/main/model.safetensors.index.json', 'GET'), 1);
  for (const shard of SHARDS) assert.equal(hub.count('hub', `/org/sharded/resolve/main/${shard}`), 1, shard);
  assert.ok(hub.requests.some((r) => r.server === 'storage' && r.path.endsWith(SHARDS[1]) && r.status === 206));
  assert.equal(fractions.at(-1), 1);
  for (let i = 1; i < fractions.length; ++i) assert.ok(fractions[i] >= fractions[i - 1]);
  // The second load: the index and both shards from the cache, no request.
  hub.reset();
  const again = await lens.loadCheckpoint({ hub: 'org/sharded', endpoint: hub.endpoint, cache: caches });
  try {
    assert.equal(hub.requests.length, 0, 'the second load asked the network nothing');
    assertAsAccurate(again.forward(ids).logits, mistral.expected.logits32.data, mistral.expected.logits64.data, 'cached');
  } finally {
    again.dispose();
  }
  const kept = (await lens.hubCache(caches).list()).map((f) => f.file).sort();
  assert.deepEqual(kept, ['config.json', 'model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors', 'model.safetensors.index.json']);
  // Qwen2 in BF16, one file.
  const qwen2 = llamaGolden('qwen2-bf16');
  const q = await lens.loadCheckpoint({ hub: 'org/qwen2', endpoint: hub.endpoint });
  try {
    assert.equal(q.family, 'qwen2');
    assert.equal(q.config.kvHeads, 1);
    const qids = Int32Array.from(qwen2.expected.ids.data, Number);
    const out = q.forward(qids);
    assertAsAccurate(out.logits, qwen2.expected.logits32.data, qwen2.expected.logits64.data, 'qwen2 by id');
    out.attention.forEach((a, l) => assertAsAccurate(a, qwen2.expected[`attn32.${l}`].data, qwen2.expected[`attn64.${l}`].data, `qwen2 layer ${l}`));
  } finally {
    q.dispose();
  }
});

test('pytorch_model.bin by id when the repo has no safetensors: one file and a sharded index, by Range through the redirect, equal to the .safetensors load; the cache keeps them', async () => {
  const ids = Int32Array.from({ length: 8 }, (_, i) => (i * 7 + 3) % 96);
  for (const [repo, twin, files] of [['org/bin', llamaBf16, ['pytorch_model.bin']], ['org/bin-sharded', llamaF32, BIN_SHARDS]]) {
    const local = await lens.loadCheckpoint({ weights: twin.weights, config: twin.config });
    hub.reset();
    const fractions = [];
    const remote = await lens.loadCheckpoint({ hub: repo, endpoint: hub.endpoint, cache: false, onProgress: (f) => fractions.push(f) });
    try {
      assertSameModel(remote, local, ids);
    } finally {
      remote.dispose();
    }
    // model.safetensors and its index looked for first (404), then the .bin files through the 302, by ranges.
    assert.equal(hub.count('hub', `/${repo}/resolve/main/model.safetensors`), 1);
    assert.equal(hub.count('hub', `/${repo}/resolve/main/model.safetensors.index.json`, 'HEAD'), 1);
    for (const file of files) {
      const ranges = hub.requests.filter((r) => r.server === 'storage' && r.path.endsWith(`/${file}`));
      assert.ok(ranges.length >= 2, `${file}: ${ranges.length} requests`);
      assert.ok(ranges.every((r) => r.status === 206 && r.range !== null), `${file} read by ranges`);
    }
    assert.equal(fractions.at(-1), 1);
    for (let i = 1; i < fractions.length; ++i) assert.ok(fractions[i] >= fractions[i - 1]);
    // With a cache: the second load asks the network nothing.
    const caches = memoryCaches();
    (await lens.loadCheckpoint({ hub: repo, endpoint: hub.endpoint, cache: caches })).dispose();
    hub.reset();
    const again = await lens.loadCheckpoint({ hub: repo, endpoint: hub.endpoint, cache: caches });
    try {
      assert.equal(hub.requests.length, 0, 'the second load asked the network nothing');
      assertSameModel(again, local, ids);
    } finally {
      again.dispose();
      local.dispose();
    }
    const kept = (await lens.hubCache(caches).list()).map((f) => f.file).sort();
    assert.deepEqual(kept, ['config.json', ...(files.length > 1 ? ['pytorch_model.bin.index.json'] : []), ...files].sort());
  }
});
