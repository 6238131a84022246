// Leak checks through lens.memory(): { heapBytes (wasm memory size), allocatedBytes (malloc'd
// bytes in use) }. Layers free everything on dispose(); failed calls free what they allocated.
// The counts are exact: the allocator's bookkeeping is deterministic, so "the same" means equal.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  assertMatchesGolden, goldenForwardOptions, goldenLayer, lcgFloats, loadGoldenCase, loadLens,
  malformedCorpus,
} from './support.mjs';

const lens = await loadLens();
const x = lcgFloats(8 * 32, 1);
const kv = lcgFloats(5 * 32, 2);

/**
 * One create/forward/dispose cycle at small sizes (dModel 32, 4 heads, 8 tokens by default):
 * every 10th traced, every 7th cross-attention, masks alternating. Returns the result.
 */
function cycle(i, { dModel = 32, heads = 4, n = 8 } = {}) {
  const layer = lens.createLayer({ dModel, heads, seed: i, positional: i % 3 === 0 ? 'rope' : 'sinusoidal' });
  try {
    const trace = i % 10 === 0;
    const cross = i % 7 === 0 ? { kv: kv.subarray(0, 5 * dModel), kvN: 5 } : {};
    const r = layer.forward(x.subarray(0, n * dModel), { n, trace, mask: i % 2 === 0 ? 'causal' : 'none', ...cross });
    assert.equal(r.output.length, n * dModel);
    assert.equal(r.attention.length, heads * n * (cross.kvN ?? n));
    if (trace) assert.ok(r.steps.length > 0);
    return r;
  } finally {
    layer.dispose();
  }
}

/**
 * run(warmUp) first (so that one-time allocations are made), then run(count): asserts that the
 * second left allocatedBytes and heapBytes exactly as the first did. `what` names the calls.
 */
function assertRunLeaksNothing(t, run, warmUp, count, what) {
  run(warmUp);
  const warm = lens.memory();
  run(count);
  const end = lens.memory();
  t.diagnostic(`allocatedBytes ${warm.allocatedBytes} -> ${end.allocatedBytes} over ${count} ${what}`);
  assert.equal(end.allocatedBytes, warm.allocatedBytes);
  assert.equal(end.heapBytes, warm.heapBytes);
}

test('a live layer holds wasm memory and dispose() gives all of it back', (t) => {
  for (let i = 0; i < 3; ++i) cycle(i); // warm-up: one-time allocations of the module
  const before = lens.memory().allocatedBytes;
  const layer = lens.createLayer({ dModel: 32, heads: 4 });
  const alive = lens.memory().allocatedBytes;
  layer.forward(x, { n: 8, trace: true });
  const afterForward = lens.memory().allocatedBytes;
  layer.dispose();
  const after = lens.memory().allocatedBytes;
  t.diagnostic(`allocatedBytes: ${before} before, ${alive} with a layer, ${afterForward} after ` +
    `its traced forward, ${after} after dispose()`);
  // The weights alone (in_proj 3·32·32 floats and its transposed copy) are > 24 KB.
  assert.ok(alive - before > 24 * 1024, `a layer allocates its weights (${alive - before} bytes)`);
  assert.ok(afterForward > alive, 'forward allocates its workspace and trace');
  assert.equal(after, before, 'dispose() frees everything the layer allocated');
});

test('10 000 createLayer/forward/dispose cycles leave allocatedBytes and heapBytes unchanged', (t) => {
  const small = { dModel: 8, heads: 2, n: 4 }; // small layers keep 10 000 cycles to a second or two
  for (let i = 0; i < 10; ++i) cycle(i, small); // warm-up
  const warm = lens.memory();
  for (let i = 0; i < 10000; ++i) {
    cycle(i, small);
    if (i % 1000 === 999) {
      assert.equal(lens.memory().allocatedBytes, warm.allocatedBytes, `allocatedBytes after cycle ${i + 1}`);
    }
  }
  // Larger layers too (dModel 32, 4 heads, 8 tokens, traced every 10th), 1000 times.
  for (let i = 0; i < 1000; ++i) cycle(i);
  const end = lens.memory();
  t.diagnostic(`after warm-up: allocatedBytes ${warm.allocatedBytes}, heapBytes ${warm.heapBytes}; ` +
    `after 11 000 cycles: allocatedBytes ${end.allocatedBytes}, heapBytes ${end.heapBytes}`);
  assert.equal(end.allocatedBytes, warm.allocatedBytes, 'no byte leaked (exactly the same count)');
  assert.equal(end.heapBytes, warm.heapBytes, 'the wasm heap did not grow');
});

test('repeated forward calls on one layer reuse its workspace', (t) => {
  const c = loadGoldenCase('cross_causal_bias');
  const layer = goldenLayer(lens, c);
  try {
    const options = goldenForwardOptions(c, { trace: true });
    // The layer keeps its last result (and trace) until the next call, so both measurements
    // are taken right after the same kind of call.
    const run = (count) => {
      for (let i = 0; i < count; ++i) {
        layer.forward(c.x, { ...options, weights: i % 2 === 0, trace: i % 3 === 0 });
      }
      layer.forward(c.x, options);
    };
    // 30 warm-up calls (every combination: containers reach their final capacity), then 500.
    assertRunLeaksNothing(t, run, 30, 500, 'forward calls');
    assertMatchesGolden(layer.forward(c.x, options), c);
  } finally {
    layer.dispose();
  }
});

test('1000 failed calls (bad config, shapes, files of the malformed corpus, weights, masks) leak nothing', (t) => {
  const layer = lens.createLayer({ dModel: 32, heads: 4 });
  try {
    const garbage = new Uint8Array(20).fill(7);
    const nanWeights = { ...layer.getWeights(), inProjWeight: new Float32Array(3 * 32 * 32).fill(NaN) };
    const failures = [
      () => lens.createLayer({ dModel: 10, heads: 4 }),
      () => lens.createLayer({ positional: 'fourier' }),
      () => layer.forward(x.subarray(1), { n: 8 }),
      () => layer.forward(x, { n: 8, mask: 'diagonal' }),
      () => layer.forward(x, { n: 8, keyPadding: [1, 0] }),
      () => layer.forward(x, { n: 8, kv: new Float32Array(33), kvN: 1 }),
      () => layer.loadSafetensors(garbage),
      () => layer.setWeights(nanWeights),
      () => layer.embed([70000]),
      () => lens.tokenize('x', { mode: 'bpe' }),
      () => layer.forward(new Float32Array(8 * 32).fill(1e30), { n: 8 }), // float32 would overflow
      ...malformedCorpus().map(({ bytes }) => () => layer.loadSafetensors(bytes)),
    ];
    const runAll = (count) => {
      for (let i = 0; i < count; ++i) assert.throws(failures[i % failures.length], Error);
    };
    // Warm-up: each failure once (embed keeps its reused output buffer), then 1000.
    assertRunLeaksNothing(t, runAll, failures.length, 1000, 'failed calls');
  } finally {
    layer.dispose();
  }
});
