// lens.loadCheckpoint({ hub, file }): a GGUF file of a Hub repo, against the local stand-in of the
// Hub (scripts/lib/hub-stand-in.mjs; no test reaches the internet): only the file is fetched (its
// metadata is the config), by Range, its header first; the model equals the same file's loaded
// from bytes; a missing file and a file option that names no .gguf are refused by name.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { loadLens, readBytes, DATA_DIR } from './support.mjs';
import { startStandIn } from '../../scripts/lib/hub-stand-in.mjs';

const lens = await loadLens();

const q8 = readBytes(`${DATA_DIR}gguf/llama-q8_0.gguf`);
const f32 = readBytes(`${DATA_DIR}gguf/qwen2-f32.gguf`);

// llama-f32.gguf with a 2.5 MB string key first (a multiple of the alignment, 32, so every
// tensor's offset stays valid): a header the size of a real tokenizer's.
const bigHeader = (() => {
  const small = readBytes(`${DATA_DIR}gguf/llama-f32.gguf`);
  const key = new TextEncoder().encode('general.description');
  let length = 2_500_000;
  while ((8 + key.length + 4 + 8 + length) % 32 !== 0) ++length;
  const entry = new Uint8Array(8 + key.length + 4 + 8 + length).fill(0x78);
  const view = new DataView(entry.buffer);
  view.setBigUint64(0, BigInt(key.length), true);
  entry.set(key, 8);
  view.setUint32(8 + key.length, 8, true); // a string
  view.setBigUint64(8 + key.length + 4, BigInt(length), true);
  const out = new Uint8Array(small.length + entry.length);
  out.set(small.subarray(0, 24));
  out.set(entry, 24);
  out.set(small.subarray(24), 24 + entry.length);
  const counts = new DataView(out.buffer);
  counts.setBigUint64(16, counts.getBigUint64(16, true) + 1n, true); // the metadata count
  return out;
})();

const REPOS = {
  'org/tiny-GGUF': { 'README.md': '# tiny', 'tiny-Q8_0.gguf': q8, 'F32/tiny-F32.gguf': f32, 'big-header.gguf': bigHeader },
};

let hub;
before(async () => {
  hub = await startStandIn(REPOS);
});
after(() => hub.close());

/** forward's logits and attention of both models on the same ids, bit for bit. */
function assertSameModel(a, b, ids) {
  assert.deepEqual(a.config, b.config);
  const x = a.forward(ids, { n: ids.length, batch: 1 });
  const y = b.forward(ids, { n: ids.length, batch: 1 });
  assert.deepEqual(Buffer.from(x.logits.buffer), Buffer.from(y.logits.buffer), 'logits bit for bit');
  x.attention.forEach((layer, l) => assert.deepEqual(Buffer.from(layer.buffer), Buffer.from(y.attention[l].buffer), `attention ${l}`));
}

const IDS = Int32Array.from([1, 5, 9, 20, 3, 7, 11, 2]);

test('by id and file: only the file fetched (302 to storage, by Range), the model of the same bytes', async () => {
  for (const [file, bytes] of [['tiny-Q8_0.gguf', q8], ['F32/tiny-F32.gguf', f32]]) {
    hub.reset();
    const fractions = [];
    const remote = await lens.loadCheckpoint({ hub: 'org/tiny-GGUF', file, endpoint: hub.endpoint, onProgress: (f) => fractions.push(f) });
    const local = await lens.loadCheckpoint({ weights: bytes });
    try {
      assertSameModel(remote, local, IDS);
      assert.deepEqual(remote.weights, local.weights);
    } finally {
      remote.dispose();
      local.dispose();
    }
    assert.equal(hub.count('hub', 'config.json'), 0, 'no config.json asked for');
    assert.equal(hub.count('hub', 'tokenizer.json'), 0, 'no tokenizer.json asked for');
    assert.deepEqual(hub.requests.filter((r) => r.path.endsWith(file)).map((r) => [r.server, r.status])[0], ['hub', 302]);
    assert.ok(hub.requests.filter((r) => r.server === 'storage').every((r) => r.status === 206 && r.range !== null));
    assert.equal(fractions.at(-1), 1);
  }
});

test('a 2.5 MB header is fetched in ranges before any tensor, the model the same as from bytes', async () => {
  hub.reset();
  const remote = await lens.loadCheckpoint({ hub: 'org/tiny-GGUF', file: 'big-header.gguf', endpoint: hub.endpoint });
  const local = await lens.loadCheckpoint({ weights: bigHeader });
  try {
    assertSameModel(remote, local, IDS);
  } finally {
    remote.dispose();
    local.dispose();
  }
  const ranges = hub.requests.filter((r) => r.server === 'storage').map((r) => r.range);
  assert.ok(ranges.length >= 2, `${JSON.stringify(ranges)}`);
  assert.equal(ranges[0], 'bytes=0-65535', 'the first request is small');
});

test('a missing file, or a file option naming no .gguf, is refused by name; the module works after', async () => {
  await assert.rejects(lens.loadCheckpoint({ hub: 'org/tiny-GGUF', file: 'tiny-Q4_K_M.gguf', endpoint: hub.endpoint }),
    /tiny-Q4_K_M.gguf was not found in 'org\/tiny-GGUF' \(revision 'main'\)/);
  for (const file of ['model.safetensors', '../x.gguf', '.hidden.gguf', 'a/b/c/d.gguf', 42, '']) {
    await assert.rejects(lens.loadCheckpoint({ hub: 'org/tiny-GGUF', file, endpoint: hub.endpoint }),
      /file must name a .gguf file of the repo/, `file ${JSON.stringify(file)}`);
  }
  await assert.rejects(lens.loadCheckpoint({ weights: q8, file: 'tiny-Q8_0.gguf' }), /loadCheckpoint's file is an option of hub/);
  const m = await lens.loadCheckpoint({ hub: 'org/tiny-GGUF', file: 'tiny-Q8_0.gguf', endpoint: hub.endpoint });
  assert.equal(m.family, 'llama');
  m.dispose();
});
