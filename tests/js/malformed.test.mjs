// The malformed .safetensors corpus (tests/data/malformed/, written by
// scripts/data/make-malformed-corpus.mjs) through the wasm module: every file gives the message
// expected.json lists for it, the layer keeps its weights, and the valid seeds the corpus was cut
// from load. tests/cpp/test_malformed.cpp checks the same files natively.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';

import {
  assertBitIdentical, assertThrowsMessage, CORPUS_LAYER, FUZZ_SEED_DIR, literal, loadLens,
  malformedCorpus, parseSafetensors, readBytes,
} from './support.mjs';

const lens = await loadLens();
const corpus = malformedCorpus();

test('the corpus covers every class of defect the reader and the layer check', () => {
  const classes = ['empty', 'length-', 'truncated-', 'offsets-', 'dtype-', 'shape-', 'json-', 'metadata-',
    'utf8-', 'name-', 'layer-'];
  for (const prefix of classes) {
    assert.ok(corpus.some((c) => c.name.startsWith(prefix)), `a file for ${prefix}`);
  }
  assert.ok(corpus.length >= 50, `${corpus.length} files`);
});

const layer = lens.createLayer(CORPUS_LAYER);
const before = layer.getWeights();

for (const { name, bytes, expected } of corpus) {
  test(`${name} is refused: "${expected}"`, () => {
    assertThrowsMessage(() => layer.loadSafetensors(bytes), literal(expected));
  });
}

test('after every refused file the layer has the weights it had', () => {
  const after = layer.getWeights();
  for (const key of Object.keys(before)) assertBitIdentical(after[key], before[key], key);
});

test('the valid seeds the corpus was cut from load, with the values they hold', () => {
  const seeds = readdirSync(FUZZ_SEED_DIR).filter((f) => f.endsWith('.safetensors'));
  assert.ok(seeds.length >= 2);
  for (const name of seeds) {
    const bytes = readBytes(FUZZ_SEED_DIR + name);
    const { tensors } = parseSafetensors(bytes);
    const dModel = tensors.in_proj_weight.shape[1]; // [3·dModel, dModel] for any head count
    const seeded = lens.createLayer({ dModel, heads: 1, bias: 'in_proj_bias' in tensors });
    try {
      seeded.loadSafetensors(bytes);
      assertBitIdentical(seeded.getWeights().inProjWeight, tensors.in_proj_weight.data, `${name} in_proj_weight`);
    } finally {
      seeded.dispose();
    }
  }
});
