// The JS API against PyTorch's nn.MultiheadAttention: every case in tests/data/golden, as
// tests/cpp/test_golden.cpp checks the core natively.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  assertClose, assertMatchesGolden, DATA_DIR, goldenCases, goldenForwardOptions, goldenLayer,
  loadGoldenCase, loadLens, OUTPUT_TOL, readBytes, readSafetensors,
} from './support.mjs';

const CASES = goldenCases();

test('the golden directory holds the 12 documented PyTorch cases', () => {
  assert.ok(CASES.length >= 12, `found only ${CASES.length} cases: ${CASES.join(', ')}`);
  for (const name of ['self_nobias', 'self_bias', 'causal_bias', 'padding_bias',
    'causal_padding_nobias', 'cross_bias', 'cross_padding_nobias', 'cross_causal_bias',
    'single_head', 'odd_dk', 'wide', 'long_cross']) {
    assert.ok(CASES.includes(name), `missing golden case ${name}`);
  }
});

for (const name of CASES) {
  test(`${name}: output and attention match PyTorch to float32 precision`, async () => {
    const lens = await loadLens();
    const c = loadGoldenCase(name);
    const [heads, n, kvN] = c.expectedAttentionShape;
    assert.deepEqual([heads, n, kvN], [c.heads, c.n, c.kvN]);
    const layer = goldenLayer(lens, c);
    try {
      const r = layer.forward(c.x, goldenForwardOptions(c));
      assert.ok(r.output instanceof Float32Array);
      assert.ok(r.attention instanceof Float32Array);
      assertMatchesGolden(r, c);
    } finally {
      layer.dispose();
    }
  });

  test(`${name}: the output-only path (weights: false) and the traced path match PyTorch too`,
    async () => {
      const lens = await loadLens();
      const c = loadGoldenCase(name);
      const layer = goldenLayer(lens, c);
      try {
        const outputOnly = layer.forward(c.x, goldenForwardOptions(c, { weights: false }));
        assert.equal(outputOnly.attention, undefined);
        assertClose(outputOnly.output, c.expectedOutput,
          { ...OUTPUT_TOL, what: `${name} output (weights: false)` });
        const traced = layer.forward(c.x, goldenForwardOptions(c, { trace: true }));
        assertMatchesGolden(traced, c, `${name} (trace: true)`);
      } finally {
        layer.dispose();
      }
    });
}

for (const name of ['self_bias', 'self_nobias']) {
  test(`${name}: the PyTorch state_dict file loads by name and gives the same answers`,
    async () => {
      const lens = await loadLens();
      const c = loadGoldenCase(name);
      const path = `${DATA_DIR}golden/${name}.weights.safetensors`;
      const stateDict = readSafetensors(path).tensors;
      const layer = lens.createLayer({ dModel: c.dModel, heads: c.heads, bias: c.bias, positional: 'none' });
      try {
        layer.loadSafetensors(readBytes(path));
        // The loaded weights are the file's tensors, exactly.
        const w = layer.getWeights();
        assert.deepEqual(w.inProjWeight, stateDict.in_proj_weight.data);
        assert.deepEqual(w.outProjWeight, stateDict['out_proj.weight'].data);
        if (c.bias) {
          assert.deepEqual(w.inProjBias, stateDict.in_proj_bias.data);
          assert.deepEqual(w.outProjBias, stateDict['out_proj.bias'].data);
        } else {
          assert.equal(w.inProjBias, undefined);
          assert.equal(w.outProjBias, undefined);
        }
        const r = layer.forward(c.x, goldenForwardOptions(c));
        assertMatchesGolden(r, c, `${name} (state_dict)`);
        // An ArrayBuffer is accepted as well as a Uint8Array.
        const other = lens.createLayer({ dModel: c.dModel, heads: c.heads, bias: c.bias, seed: 7 });
        try {
          other.loadSafetensors(readBytes(path).buffer);
          assertMatchesGolden(other.forward(c.x, goldenForwardOptions(c)), c, `${name} (ArrayBuffer)`);
        } finally {
          other.dispose();
        }
      } finally {
        layer.dispose();
      }
    });
}
