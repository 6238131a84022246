// A BF16 checkpoint's weights stay 2-byte in wasm memory: a fresh module's heap grows by at most
// 1.2× the file's size while it loads (the contract of the real-models issue), and the model
// computes. The file is built here (a Llama-shaped model of 44 M parameters, 88 MB).
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { MODULE_URL, mulberry32, writeSafetensors } from './support.mjs';

const D = 512;
const LAYERS = 4;
const HEADS = 8;
const KV = 2;
const INTER = 1376;
const VOCAB = 32000;

// Random BF16 values of magnitude about 0.01–0.06 (sign, exponent 2^-7…2^-5, any mantissa).
function bf16Tensor(shape, random) {
  const size = shape.reduce((a, b) => a * b, 1);
  const data = new Uint16Array(size);
  for (let i = 0; i < size; ++i) {
    const bits = Math.floor(random() * 0x10000);
    data[i] = (bits & 0x8000) | ((120 + (bits & 1) + ((bits >> 1) & 1)) << 7) | ((bits >> 2) & 0x7f);
  }
  return { dtype: 'BF16', shape, data };
}

function llamaFiles() {
  const random = mulberry32(7);
  const tensors = { 'model.embed_tokens.weight': bf16Tensor([VOCAB, D], random) };
  const ones = (n) => ({ dtype: 'BF16', shape: [n], data: new Uint16Array(n).fill(0x3f80) });
  for (let l = 0; l < LAYERS; ++l) {
    const p = `model.layers.${l}.`;
    tensors[`${p}input_layernorm.weight`] = ones(D);
    tensors[`${p}self_attn.q_proj.weight`] = bf16Tensor([D, D], random);
    tensors[`${p}self_attn.k_proj.weight`] = bf16Tensor([KV * (D / HEADS), D], random);
    tensors[`${p}self_attn.v_proj.weight`] = bf16Tensor([KV * (D / HEADS), D], random);
    tensors[`${p}self_attn.o_proj.weight`] = bf16Tensor([D, D], random);
    tensors[`${p}post_attention_layernorm.weight`] = ones(D);
    tensors[`${p}mlp.gate_proj.weight`] = bf16Tensor([INTER, D], random);
    tensors[`${p}mlp.up_proj.weight`] = bf16Tensor([INTER, D], random);
    tensors[`${p}mlp.down_proj.weight`] = bf16Tensor([D, INTER], random);
  }
  tensors['model.norm.weight'] = ones(D);
  tensors['lm_head.weight'] = bf16Tensor([VOCAB, D], random);
  const config = {
    architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: D, intermediate_size: INTER,
    num_hidden_layers: LAYERS, num_attention_heads: HEADS, num_key_value_heads: KV, vocab_size: VOCAB,
    max_position_embeddings: 2048, rms_norm_eps: 1e-5, rope_theta: 10000, tie_word_embeddings: false,
    hidden_act: 'silu', torch_dtype: 'bfloat16',
  };
  return { weights: writeSafetensors(tensors), config };
}

test('a BF16 checkpoint: the heap grows by at most 1.2× the file while it loads; weights kept 2-byte', async () => {
  const { weights, config } = llamaFiles();
  const lens = await (await import(`${MODULE_URL.href}?memory`)).loadAttentionLens();
  const before = lens.memory();
  const model = await lens.loadCheckpoint({ weights, config });
  const after = lens.memory();
  try {
    const grown = after.heapBytes - before.heapBytes;
    const kept = after.allocatedBytes - before.allocatedBytes;
    const ratio = grown / weights.length;
    console.log(`# file ${(weights.length / 1e6).toFixed(1)} MB; heap grew ${(grown / 1e6).toFixed(1)} MB ` +
      `(${ratio.toFixed(3)}×); in use after the load ${(kept / 1e6).toFixed(1)} MB`);
    assert.ok(ratio <= 1.2, `the heap grew ${ratio.toFixed(3)}× the file's size`);
    assert.ok(kept >= 0.98 * weights.length && kept <= 1.05 * weights.length, `${kept} bytes kept for a ${weights.length}-byte file`);
    const out = model.forward(Int32Array.from([1, 20, 300, 4000, 31999]));
    assert.equal(out.logits.length, 5 * VOCAB);
    assert.ok(out.logits.every(Number.isFinite));
    assert.equal(model.parameters()['layers.0.attn.in_proj_weight'].length, (D + 2 * KV * (D / HEADS)) * D);
  } finally {
    model.dispose();
  }
});
