// The output-only (flash) path on a long sequence: n = 8192, d_model = 512, 8 heads, causal,
// weights: false runs in the wasm module without running out of memory, and its output agrees
// with the materialising path. Causal attention makes row i depend on tokens 0 … i only, so the
// first m rows of the long output must equal a forward(weights: true) over the first m tokens.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { MODULE_URL, assertClose, lcgFloats } from './support.mjs';

const N = 8192;
const D = 512;
const HEADS = 8;
const PREFIX = 200; // rows checked against the materialising path

test(`n = ${N}, d_model = ${D}, ${HEADS} heads, causal, weights: false runs in O(n·d) memory`,
  async (t) => {
    // A module of its own, so that its heap size is this test's peak and nothing else's.
    const { loadAttentionLens } = await import(MODULE_URL.href);
    const lens = await loadAttentionLens();
    const layer = lens.createLayer({ dModel: D, heads: HEADS, bias: true, positional: 'none', seed: 3 });
    try {
      const x = lcgFloats(N * D, 8192);
      // The materialising path on the first PREFIX tokens (also warms the kernels up).
      const short = layer.forward(x.subarray(0, PREFIX * D), { n: PREFIX, mask: 'causal', weights: true });
      assert.equal(short.attention.length, HEADS * PREFIX * PREFIX);
      const before = lens.memory();

      const long = layer.forward(x, { n: N, mask: 'causal', weights: false });
      const after = lens.memory();
      assert.equal(long.output.length, N * D);
      assert.equal(long.attention, undefined, 'weights: false returns no attention');

      assertClose(long.output.subarray(0, PREFIX * D), short.output,
        { atol: 2e-5, rtol: 1e-4, what: `first ${PREFIX} rows vs the materialising path` });
      let finite = true;
      for (const v of long.output) finite &&= Number.isFinite(v);
      assert.ok(finite, 'every output value is finite');

      // One head's n × n scores alone would be 256 MiB; the whole call must stay well below.
      const mib = (bytes) => (bytes / 2 ** 20).toFixed(1);
      t.diagnostic(`forward(n=${N}): wasm heap ${mib(before.heapBytes)} MiB ` +
        `before, ${mib(after.heapBytes)} MiB after (peak), ${mib(after.allocatedBytes)} MiB allocated after`);
      assert.ok(after.heapBytes < 256 * 2 ** 20,
        `peak wasm heap ${mib(after.heapBytes)} MiB must stay below one head's n² scores (256 MiB)`);
      assert.throws(() => layer.forward(x, { n: N, mask: 'causal', weights: true }),
        /attention weights exceed the limit of 67108864; pass weights: false/);
    } finally {
      layer.dispose();
    }
  });
