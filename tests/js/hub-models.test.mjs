// The Your model view's Hub picker data (web/shared/hub-models.js: which models load, and why
// not; a repo's .gguf files as the Hub lists them), its dropped files' order and facts line (model-data.js), the page's hubEndpoint hash
// parameter (web/page-settings.js) and the strict CSP's Hub origins (scripts/lib/csp.mjs).
// No request is made: every id is checked by the API with an already-aborted signal.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { GGUF_GROUP, HUB_MODELS, NO_GGUF_FILE, PYTHIA_REVISIONS, bytesInTab, dequantizedNote, dequantizedTypes, ggufFileLabel, ggufQuant,
  ggufRepoFromFiles, ggufSplit, hubEntry, hubGroups, hubModelLine, hubOptionLabel, hubRequest, isSupported, whyNotLoadable,
  withFile } from '../../web/shared/hub-models.js';
import { fileRole, formatsLine, modelFacts, orderShards } from '../../web/views/model/model-data.js';
import { readFileSync } from 'node:fs';
import { DATA_DIR } from './support.mjs';
import { familyGolden, llamaGolden, smallGpt2Files } from './checkpoint-support.mjs';
import { hubEndpointCodec, pageDefaults, pageSchema } from '../../web/page-settings.js';
import { hashToState, stateToHash } from '../../web/shared/state.js';
import { catalogOf } from '../../web/shared/catalog.js';
import { HUB_ORIGINS, STRICT_CSP, cspWithConnect, strictCspAlso } from '../../scripts/lib/csp.mjs';
import { loadLens } from './support.mjs';

const lens = await loadLens();
// What the core decides about fitting the tab (the page passes the same, from the model session).
const { families, parameterBytes } = lens.catalog;
const tab = (maxParameterBytes) => ({ families, parameterBytes, maxParameterBytes });
const displayName = (family) => families.find((f) => f.name === family)?.displayName ?? family;
// The .safetensors repos (the GGUF repos have a test of their own below).
const SAFETENSORS_MODELS = HUB_MODELS.filter((m) => !m.gguf);

test('the Hub list: the known-good models, their sizes, families and parameters; loadable when the core reads the family and they fit the tab', async () => {
  assert.deepEqual(SAFETENSORS_MODELS.map((m) => [m.id, m.size, displayName(m.family), m.params, m.dtype]), [
    ['openai-community/gpt2', '548 MB', 'GPT-2', 124e6, 'F32'],
    ['distilbert/distilgpt2', '353 MB', 'GPT-2', 82e6, 'F32'],
    ['HuggingFaceTB/SmolLM2-135M', '269 MB', 'Llama', 135e6, 'BF16'],
    ['HuggingFaceTB/SmolLM2-360M', '724 MB', 'Llama', 362e6, 'BF16'],
    ['Qwen/Qwen2.5-0.5B', '988 MB', 'Qwen2', 494e6, 'BF16'],
    ['TinyLlama/TinyLlama-1.1B-Chat-v1.0', '2.2 GB', 'Llama', 1.1e9, 'BF16'],
    ['EleutherAI/pythia-70m', '166 MB', displayName('gpt_neox'), 70_426_624, 'F16'],
    ['EleutherAI/pythia-160m', '375 MB', displayName('gpt_neox'), 162_322_944, 'F16'],
    ['EleutherAI/pythia-410m', '911 MB', displayName('gpt_neox'), 405_334_016, 'F16'],
    ['Qwen/Qwen3-0.6B', '1.5 GB', displayName('qwen3'), 596_049_920, 'BF16'],
    ['google/gemma-3-270m', '536 MB', displayName('gemma3_text'), 268_098_176, 'BF16'],
    ['google/gemma-3-270m-it', '536 MB', displayName('gemma3_text'), 268_098_176, 'BF16'],
    ['allenai/OLMo-2-0425-1B', '5.94 GB', displayName('olmo2'), 1_484_916_736, 'F32'],
  ]);
  assert.deepEqual(['gpt_neox', 'qwen3', 'gemma3_text', 'olmo2'].map(displayName).every((name) => name && !name.includes('_')), true,
    'the core names every new family');
  assert.deepEqual(families.map((f) => f.displayName).slice(0, 4), ['GPT-2', 'Llama', 'Qwen2', 'Mistral']);
  assert.ok(SAFETENSORS_MODELS.every((m) => isSupported(m, tab())));
  // The bytes each takes in the tab: F16 / BF16 weights kept 2-byte, F32 as is (the core's rule).
  assert.deepEqual({ F32: parameterBytes.F32, F16: parameterBytes.F16, BF16: parameterBytes.BF16 }, { F32: 4, F16: 2, BF16: 2 });
  assert.deepEqual(SAFETENSORS_MODELS.map((m) => bytesInTab(m, tab())), [496e6, 328e6, 270e6, 724e6, 988e6, 2.2e9,
    140_853_248, 324_645_888, 810_668_032, 1_192_099_840, 536_196_352, 536_196_352, 5_939_666_944]);
  // Against a limit: within it, loadable; above it, the reason names both sizes.
  const GiB = 2 ** 30;
  assert.deepEqual(SAFETENSORS_MODELS.filter((m) => whyNotLoadable(m, tab(GiB)) === null).map((m) => m.name),
    ['gpt2', 'distilgpt2', 'SmolLM2-135M', 'SmolLM2-360M', 'Qwen2.5-0.5B', 'pythia-70m', 'pythia-160m', 'pythia-410m', 'gemma-3-270m',
      'gemma-3-270m-it']);
  // OLMo-2-0425-1B is published in float32: 5.94 GB, above the core's limit (3 GiB); the rest fit it.
  const coreLimit = lens.catalog.limits.maxCheckpointParameterBytes;
  assert.deepEqual(SAFETENSORS_MODELS.filter((m) => whyNotLoadable(m, tab(coreLimit)) !== null).map((m) => m.name), ['OLMo-2-0425-1B']);
  assert.equal(whyNotLoadable(SAFETENSORS_MODELS.at(-1), tab(3 * GiB)), "needs 5.94 GB as float32; the tab's limit is 3.22 GB");
  assert.equal(hubModelLine(SAFETENSORS_MODELS.find((m) => m.name === 'gemma-3-270m'), tab(3 * GiB)),
    `google/gemma-3-270m · 536 MB · ${displayName('gemma3_text')} · 268 M parameters · gated: accept its licence on the Hub`);
  assert.equal(hubModelLine(SAFETENSORS_MODELS.at(-1), tab(3 * GiB)), `allenai/OLMo-2-0425-1B · 5.94 GB · ${displayName('olmo2')} · 1.48 B ` +
    "parameters · needs 5.94 GB as float32; the tab's limit is 3.22 GB");
  assert.equal(hubModelLine(SAFETENSORS_MODELS[0], tab(GiB)), 'openai-community/gpt2 · 548 MB · GPT-2 · 124 M parameters');
  assert.equal(hubModelLine(SAFETENSORS_MODELS[2], tab(GiB)), 'HuggingFaceTB/SmolLM2-135M · 269 MB · Llama · 135 M parameters');
  assert.equal(hubModelLine(SAFETENSORS_MODELS[5], tab(GiB)),
    "TinyLlama/TinyLlama-1.1B-Chat-v1.0 · 2.2 GB · Llama · 1.1 B parameters · needs 2.2 GB as BF16; the tab's limit is 1.07 GB");
  assert.equal(whyNotLoadable(SAFETENSORS_MODELS[4], tab(0.5 * GiB)), "needs 988 MB as BF16; the tab's limit is 537 MB");
  assert.equal(whyNotLoadable(SAFETENSORS_MODELS[0], tab(0.25 * GiB)), "needs 496 MB as float32; the tab's limit is 268 MB");
  assert.equal(whyNotLoadable(SAFETENSORS_MODELS[5], tab(3 * GiB)), null);
  assert.equal(whyNotLoadable(SAFETENSORS_MODELS[5], tab(undefined)), null, 'no limit given: not checked');
  // A family the core does not read is refused whatever the limit.
  assert.equal(whyNotLoadable({ ...SAFETENSORS_MODELS[0], family: 'bert' }, tab(3 * GiB)), 'not supported yet');
  // The page passes the core's own limit (lens.catalog.limits), never a copy of it.
  const limit = lens.catalog.limits.maxCheckpointParameterBytes;
  assert.ok(Number.isFinite(limit) && limit > 0);
  for (const m of SAFETENSORS_MODELS) assert.equal(whyNotLoadable(m, tab(limit)) === null, bytesInTab(m, tab()) <= limit, m.id);
  assert.equal(new Set(HUB_MODELS.map((m) => m.name)).size, HUB_MODELS.length, 'names are unique');
  assert.ok(Object.isFrozen(HUB_MODELS) && HUB_MODELS.every(Object.isFrozen));
  for (const m of SAFETENSORS_MODELS) {
    assert.ok(Math.abs(m.bytes - Number.parseFloat(m.size) * (m.size.endsWith('GB') ? 1e9 : 1e6)) < 1, m.id);
    // The download is the parameters at the stored dtype's size (within 12%: the cards round), plus
    // what the files hold beside them (STORED_EXTRA: Pythia's mask buffers, Qwen3's lm_head copy).
    const stored = m.params * (m.dtype === 'F32' ? 4 : 2) + (STORED_EXTRA[m.id] ?? 0);
    assert.ok(Math.abs(m.bytes / stored - 1) < 0.12, `${m.id}: ${m.bytes} bytes, ${m.params} parameters`);
    // A valid id for lens.loadCheckpoint: refused only because the load is already cancelled.
    await assert.rejects(lens.loadCheckpoint({ hub: m.id, signal: AbortSignal.abort() }), new RegExp(`^Error: the load of '${m.id}' was cancelled$`));
  }
});

// Where the newer entries' numbers come from: each repo's config.json as published (quoted below:
// the sizes, and torch_dtype, which is the entry's dtype), counted here by the family's own layout
// (transformers' modeling_<family>.py modules: every weight and bias, a tied table once), and the
// model cards' statements they must agree with.
// - EleutherAI/pythia-{70m,160m,410m}: GPTNeoXForCausalLM, vocab_size 50304, hidden_size 512 / 768 /
//   1024, num_hidden_layers 6 / 12 / 24, intermediate_size 4·hidden, max_position_embeddings 2048,
//   tie_word_embeddings false, torch_dtype "float16". The card's table gives the non-embedding
//   counts (tests/data/families/published/cards.json, pythia_card_table_check); embed_in and
//   embed_out add 2 · vocab · hidden. The files also hold each layer's causal-mask buffer
//   attention.bias, 2048 × 2048 one-byte booleans (the 166 / 375 / 911 MB the Hub lists).
// - Qwen/Qwen3-0.6B: vocab_size 151936, hidden_size 1024, num_hidden_layers 28, num_attention_heads
//   16, num_key_value_heads 8, head_dim 128, intermediate_size 3072, tie_word_embeddings true,
//   torch_dtype "bfloat16" (transformers 4.51.0). The card: "Number of Parameters: 0.6B (0.44B
//   non-embedding)". Its model.safetensors (1.5 GB) also stores lm_head.weight, equal to the table.
// - google/gemma-3-270m and -it: Gemma3ForCausalLM, vocab_size 262144, hidden_size 640,
//   num_hidden_layers 18, num_attention_heads 4, num_key_value_heads 1, head_dim 256,
//   intermediate_size 2048, tied, torch_dtype "bfloat16" (transformers 4.55.0.dev0). The card: "the
//   exact number of parameters (270 million)".
// - allenai/OLMo-2-0425-1B: vocab_size 100352, hidden_size 2048, num_hidden_layers 16,
//   num_attention_heads 16, num_key_value_heads 16, intermediate_size 8192, untied; its weights are
//   float32 (the repo's files: 4.98 GB + 956 MB, cards.json).
const STORED_EXTRA = {
  'EleutherAI/pythia-70m': 6 * 2048 * 2048,
  'EleutherAI/pythia-160m': 12 * 2048 * 2048,
  'EleutherAI/pythia-410m': 24 * 2048 * 2048,
  'Qwen/Qwen3-0.6B': 151936 * 1024 * 2,
};

/** A gated-MLP decoder's parameters (Llama-shaped: q, k, v, o, gate, up, down, per-layer norms). */
function gatedDecoderParams({ vocab, d, layers, heads, kvHeads, headDim, mlp, normsPerLayer, qkNorm, tied }) {
  const attention = d * heads * headDim + 2 * d * kvHeads * headDim + heads * headDim * d + qkNorm;
  return vocab * d * (tied ? 1 : 2) + layers * (attention + 3 * d * mlp + normsPerLayer * d) + d;
}

test('the newer Hub entries\' parameter counts follow from their config.json and agree with their cards', async () => {
  const { readFile } = await import('node:fs/promises');
  const cards = JSON.parse(await readFile(new URL('../data/families/published/cards.json', import.meta.url), 'utf8'));
  const params = (id) => HUB_MODELS.find((m) => m.id === id).params;
  const nonEmbedding = (size) => cards.pythia_card_table_check.find((row) => row.model === size).card_non_embedding;
  assert.equal(params('EleutherAI/pythia-70m'), nonEmbedding('70M') + 2 * 50304 * 512);
  assert.equal(params('EleutherAI/pythia-160m'), nonEmbedding('160M') + 2 * 50304 * 768);
  assert.equal(params('EleutherAI/pythia-410m'), nonEmbedding('410M') + 2 * 50304 * 1024);
  const qwen3 = gatedDecoderParams({ vocab: 151936, d: 1024, layers: 28, heads: 16, kvHeads: 8, headDim: 128, mlp: 3072,
    normsPerLayer: 2, qkNorm: 2 * 128, tied: true });
  assert.equal(params('Qwen/Qwen3-0.6B'), qwen3);
  assert.equal((qwen3 / 1e9).toFixed(1), '0.6');
  assert.equal(((qwen3 - 151936 * 1024) / 1e9).toFixed(2), '0.44');
  const gemma = gatedDecoderParams({ vocab: 262144, d: 640, layers: 18, heads: 4, kvHeads: 1, headDim: 256, mlp: 2048,
    normsPerLayer: 4, qkNorm: 2 * 256, tied: true });
  assert.equal(params('google/gemma-3-270m'), gemma);
  assert.equal(params('google/gemma-3-270m-it'), gemma);
  assert.equal(Math.round(gemma / 1e7), 27);
  // OLMo 2's q_norm and k_norm span the whole projection (heads · head_dim), not one head.
  const olmo = gatedDecoderParams({ vocab: 100352, d: 2048, layers: 16, heads: 16, kvHeads: 16, headDim: 128, mlp: 8192,
    normsPerLayer: 2, qkNorm: 2 * 2048, tied: false });
  assert.equal(params('allenai/OLMo-2-0425-1B'), olmo);
  assert.equal(Math.round((olmo * 4) / 1e7), Math.round((4.98e9 + 956e6) / 1e7), 'the float32 files\' size');
});

test('Pythia\'s training checkpoints: the 154 revisions its card lists, oldest first, ending at main\'s step143000', () => {
  assert.equal(PYTHIA_REVISIONS.length, 154);
  assert.deepEqual(PYTHIA_REVISIONS.slice(0, 12), ['step0', 'step1', 'step2', 'step4', 'step8', 'step16', 'step32', 'step64', 'step128',
    'step256', 'step512', 'step1000']);
  assert.equal(PYTHIA_REVISIONS.at(-1), 'step143000');
  assert.equal(new Set(PYTHIA_REVISIONS).size, 154);
  assert.ok(PYTHIA_REVISIONS.slice(11).every((r, i) => r === `step${(i + 1) * 1000}`));
  assert.deepEqual(HUB_MODELS.filter((m) => m.revisions).map((m) => m.name), ['pythia-70m', 'pythia-160m', 'pythia-410m']);
});

test('the Hub menu: the entries grouped by family in the list\'s order, each option "name · size" and in a word why not; the id box names an entry', () => {
  const GiB = 2 ** 30;
  const groups = hubGroups(tab(3 * GiB));
  assert.deepEqual(groups.map((g) => [g.label, g.entries.map((m) => m.name)]), [
    ['GPT-2', ['gpt2', 'distilgpt2']],
    ['Llama', ['SmolLM2-135M', 'SmolLM2-360M', 'TinyLlama-1.1B-Chat']],
    ['Qwen2', ['Qwen2.5-0.5B']],
    [displayName('gpt_neox'), ['pythia-70m', 'pythia-160m', 'pythia-410m']],
    [displayName('qwen3'), ['Qwen3-0.6B']],
    [displayName('gemma3_text'), ['gemma-3-270m', 'gemma-3-270m-it']],
    [displayName('olmo2'), ['OLMo-2-0425-1B']],
    [GGUF_GROUP, ['SmolLM2-135M-Instruct', 'Qwen2.5-0.5B-Instruct', 'Llama-3.2-1B-Instruct']],
  ]);
  assert.equal(groups.flatMap((g) => g.entries).length, HUB_MODELS.length, 'every entry listed once');
  const label = (name, limit) => hubOptionLabel(HUB_MODELS.find((m) => m.name === name), tab(limit));
  assert.equal(label('pythia-70m', 3 * GiB), 'pythia-70m · 166 MB');
  assert.equal(label('gemma-3-270m', 3 * GiB), 'gemma-3-270m · 536 MB · gated');
  assert.equal(label('OLMo-2-0425-1B', 3 * GiB), 'OLMo-2-0425-1B · 5.94 GB · too large');
  assert.equal(label('TinyLlama-1.1B-Chat', GiB), 'TinyLlama-1.1B-Chat · 2.2 GB · too large');
  assert.equal(label('TinyLlama-1.1B-Chat', 3 * GiB), 'TinyLlama-1.1B-Chat · 2.2 GB');
  assert.equal(hubOptionLabel({ ...HUB_MODELS[0], family: 'bert' }, tab(3 * GiB)), 'gpt2 · 548 MB · not supported yet');
  // Every option that cannot load says so, and only those.
  for (const m of SAFETENSORS_MODELS) {
    assert.equal(/· (too large|not supported yet)$/.test(hubOptionLabel(m, tab(GiB))), whyNotLoadable(m, tab(GiB)) !== null, m.id);
  }
  assert.equal(hubEntry('  EleutherAI/pythia-70m '), HUB_MODELS.find((m) => m.name === 'pythia-70m'));
  assert.equal(hubEntry('EleutherAI/pythia-70'), undefined);
  assert.equal(hubEntry(''), undefined);
  assert.equal(hubEntry(undefined), undefined);
});

test('dropped shards: ordered by the index\'s weight_map (first appearance), else by name; a missing shard is named', () => {
  const [a, b, c] = ['model-00001-of-00003.safetensors', 'model-00002-of-00003.safetensors', 'model-00003-of-00003.safetensors'];
  const index = { metadata: { total_size: 1 }, weight_map: { 'lm_head.weight': c, 'model.embed_tokens.weight': a, 'model.layers.0.x': a,
    'model.layers.1.x': b, 'model.norm.weight': c } };
  assert.deepEqual(orderShards([b, c, a], index), { order: [c, a, b] });
  assert.deepEqual(orderShards([c, b], index), { error: `model.safetensors.index.json names 3 shards; ${a} is missing: drop every shard with the index` });
  assert.deepEqual(orderShards([a], index, 'idx.index.json'), { error: `idx.index.json names 3 shards; ${b}, ${c} are missing: drop every shard with the index` });
  assert.deepEqual(orderShards([a, b, c, 'model.safetensors'], index), { error: 'model.safetensors is not a shard model.safetensors.index.json names' });
  assert.deepEqual(orderShards([a], { weight_map: [] }), { error: 'model.safetensors.index.json has no weight_map ({ tensor: shard file })' });
  assert.deepEqual(orderShards([a], { weight_map: {} }), { error: 'model.safetensors.index.json names no shards' });
  // No index: by name (numbers by value); a gap in the numbered names is named.
  assert.deepEqual(orderShards([c, a, b], undefined), { order: [a, b, c] });
  assert.deepEqual(orderShards(['part-10.safetensors', 'part-9.safetensors'], undefined), { order: ['part-9.safetensors', 'part-10.safetensors'] });
  assert.deepEqual(orderShards([c, a], undefined), { error: `${b} is missing: drop every shard` });
  assert.deepEqual(orderShards([b], undefined), { error: `${a}, ${c} are missing: drop every shard` });
  assert.deepEqual(orderShards(['model-00001-of-00001.safetensors'], undefined), { order: ['model-00001-of-00001.safetensors'] });
  assert.deepEqual(orderShards(['model.safetensors'], undefined), { order: ['model.safetensors'] });
  // The files a dropped repo folder holds: shards, the index, the companions skipped.
  assert.deepEqual([a, 'model.safetensors.index.json', 'config.json', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json',
    'special_tokens_map.json', 'vocab.json', 'merges.txt', 'README.md', 'SmolLM2-135M-Instruct-Q8_0.gguf', 'X.GGUF'].map(fileRole),
  ['weights', 'index', 'config', 'tokenizer', 'companion', 'companion', 'companion', 'vocab', 'merges', null, 'gguf', 'gguf']);
});

test('the facts line: a model\'s family and conventions from model.family and model.config alone', async () => {
  // SmolLM2-135M's config as the API gives it (not loaded here: its numbers written out).
  assert.equal(modelFacts(displayName('llama'), { layers: 30, heads: 9, kvHeads: 3, headDim: 64, dModel: 576, norm: 'rms-norm', mlpKind: 'swiglu',
    rope: { pairing: 'rotate-half', base: 100000, scaled: false }, window: 0, tied: true }),
  'Llama · 30 layers · 9 query heads sharing 3 K/V heads · head dim 64 · RMSNorm · SwiGLU · RoPE (rotate-half, θ 100000) · tied embeddings');
  // The golden checkpoints, loaded: Mistral's window, Qwen2's one K/V head, Llama 3's scaled RoPE.
  const facts = async (name) => {
    const { weights, config } = llamaGolden(name);
    const m = await lens.loadCheckpoint({ weights, config });
    try {
      return modelFacts(displayName(m.family), m.config);
    } finally {
      m.dispose();
    }
  };
  assert.equal(await facts('mistral-f32'),
    'Mistral · 3 layers · 4 query heads sharing 2 K/V heads · head dim 16 · RMSNorm · SwiGLU · RoPE (rotate-half, θ 10000) · sliding window 5');
  assert.equal(await facts('qwen2-bf16'),
    'Qwen2 · 2 layers · 4 query heads sharing 1 K/V head · head dim 16 · RMSNorm · SwiGLU · RoPE (rotate-half, θ 1000000) · tied embeddings');
  assert.equal(await facts('llama3-f32'),
    'Llama · 2 layers · 4 heads · head dim 24 · RMSNorm · SwiGLU · RoPE (rotate-half, θ 500000, Llama 3 scaling) · tied embeddings');
  // Gemma 3's full layers scaled linearly (rope_scaling {"rope_type": "linear"}), its sliding ones not.
  const gemma = familyGolden('gemma3-pattern-f32');
  const g = await lens.loadCheckpoint({ weights: gemma.weights, config: gemma.config });
  assert.equal(g.config.rope.scaling, 'linear');
  assert.match(modelFacts(displayName(g.family), g.config), /RoPE \(rotate-half, θ \d+, linear scaling\)/);
  g.dispose();
  const { weights, config, vocab, merges } = smallGpt2Files({ layers: 2, heads: 2, d: 16, vocab: 260, context: 64 });
  const gpt = await lens.loadCheckpoint({ weights, config, tokenizer: { vocab, merges } });
  assert.equal(modelFacts(displayName(gpt.family), gpt.config), 'GPT-2 · 2 layers · 2 heads · head dim 8 · LayerNorm · GELU (tanh) · learned positions · tied embeddings');
  gpt.dispose();
  // A shipped model: no family, what its config says.
  const english = await lens.trainedModel('english');
  assert.equal(modelFacts(english.family, english.config), '2 layers · 4 heads · head dim 16 · LayerNorm · GELU · learned positions');
  english.dispose();
});

test('the id box: an id gets the page\'s endpoint, a repo URL its own; empty text is refused', () => {
  assert.deepEqual(hubRequest('  org/name ', 'http://127.0.0.1:9'), { hub: 'org/name', endpoint: 'http://127.0.0.1:9' });
  assert.deepEqual(hubRequest('org/name', ''), { hub: 'org/name' });
  assert.deepEqual(hubRequest('org/name', undefined), { hub: 'org/name' });
  assert.deepEqual(hubRequest('https://huggingface.co/openai-community/gpt2', 'http://127.0.0.1:9'),
    { hub: 'https://huggingface.co/openai-community/gpt2' });
  assert.deepEqual(hubRequest('   ', undefined), { error: "type a Hugging Face id (org/name) or a repo's URL" });
  assert.deepEqual(hubRequest(undefined, undefined).error, "type a Hugging Face id (org/name) or a repo's URL");
  // '<img src=x onerror=…>' is passed on as text: the API refuses it by name (shown with textContent).
  assert.deepEqual(hubRequest('<img src=x>/a', ''), { hub: '<img src=x>/a' });
  // A GGUF repo's file (the File row's), trimmed; none when empty. The API checks the name.
  assert.deepEqual(hubRequest('org/x-GGUF', 'http://127.0.0.1:9', ' x-Q8_0.gguf '), { hub: 'org/x-GGUF', endpoint: 'http://127.0.0.1:9', file: 'x-Q8_0.gguf' });
  assert.deepEqual(hubRequest('org/x-GGUF', '', 'x-Q8_0.gguf'), { hub: 'org/x-GGUF', file: 'x-Q8_0.gguf' });
  assert.deepEqual(hubRequest('org/name', '', '  '), { hub: 'org/name' });
});

test('hubEndpoint: an http(s) mirror from the link, anything else ignored; absent links are unchanged', () => {
  const schema = pageSchema(catalogOf(lens));
  const parse = (hash) => hashToState(hash, schema, pageDefaults);
  const given = parse('#tab=model&hubEndpoint=http%3A%2F%2F127.0.0.1%3A8123');
  assert.deepEqual(given.ignored, []);
  assert.equal(given.state.hubEndpoint, 'http://127.0.0.1:8123');
  assert.equal(given.state.tab, 'model');
  assert.equal(stateToHash(given.state, schema, pageDefaults), '#tab=model&hubEndpoint=http%3A%2F%2F127.0.0.1%3A8123');
  assert.equal(parse('#hubEndpoint=https://mirror.example/hf/').state.hubEndpoint, 'https://mirror.example/hf');
  for (const bad of ['javascript:alert(1)', 'ftp://mirror', 'mirror.example', 'https://user:pw@mirror.example', 'https://mirror.example/?x=1',
    'https://mirror.example/#x', 'data:text/html,x', `https://${'a'.repeat(200)}.example`, 'http://']) {
    const { state, ignored } = parse(`#hubEndpoint=${encodeURIComponent(bad)}`);
    assert.deepEqual(ignored, ['hubEndpoint'], bad);
    assert.equal(state.hubEndpoint, undefined, bad);
  }
  assert.equal(hubEndpointCodec.parse(''), '');
  // Without it the page's links are as before: nothing added, nothing in the state.
  const bare = parse('');
  assert.equal('hubEndpoint' in bare.state, false);
  assert.equal(stateToHash(bare.state, schema, pageDefaults), '');
  assert.equal(stateToHash({ ...bare.state, hubEndpoint: '' }, schema, pageDefaults), '');
});

test('the strict CSP: connect-src is the page\'s origin and exactly the Hub\'s; tests add theirs', () => {
  const connect = (policy) => policy.split('; ').find((d) => d.startsWith('connect-src ')).split(' ').slice(1);
  assert.deepEqual(connect(STRICT_CSP), ["'self'", 'https://huggingface.co', 'https://cdn-lfs.huggingface.co',
    'https://cdn-lfs-us-1.huggingface.co', 'https://cdn-lfs-eu-1.huggingface.co', 'https://cas-bridge.xethub.hf.co']);
  assert.deepEqual(HUB_ORIGINS, connect(STRICT_CSP).slice(1));
  assert.equal(STRICT_CSP, cspWithConnect(HUB_ORIGINS));
  assert.deepEqual(connect(strictCspAlso(['http://127.0.0.1:9'])), [...connect(STRICT_CSP), 'http://127.0.0.1:9']);
  for (const directive of ["default-src 'self'", "script-src 'self' 'wasm-unsafe-eval'", "worker-src 'self'", "object-src 'none'"]) {
    assert.ok(STRICT_CSP.split('; ').includes(directive), directive);
  }
});

// The GGUF repos' files and sizes as the Hub lists them (the search tools' copies of each repo's
// "Files and versions" page or model card): bartowski/SmolLM2-135M-Instruct-GGUF's Q8_0 145 MB and
// Q4_K_M 105 MB (the same files bartowski uploaded to lmstudio-community/SmolLM2-135M-Instruct-GGUF);
// second-state/Qwen2.5-0.5B-Instruct-GGUF's Q8_0 531 MB and Q4_K_M 398 MB; bartowski/Llama-3.2-1B-
// Instruct-GGUF's card table, Q8_0 1.32GB and Q4_K_M 0.81GB. The parameters: SmolLM2-135M's and
// Qwen2.5-0.5B's as the .safetensors entries above (the same models, instruction-tuned); Llama 3.2
// 1B's counted from its config.json (vocab_size 128256, hidden_size 2048, num_hidden_layers 16,
// num_attention_heads 32, num_key_value_heads 8, head_dim 64, intermediate_size 8192, tied,
// rope_scaling { rope_type: "llama3", factor 32 }).
test('the GGUF repos: their known files, sizes and parameters; every listed file read by the core (a file marked not read yet says why)', async () => {
  const gguf = HUB_MODELS.filter((m) => m.gguf);
  assert.deepEqual(gguf.map((m) => [m.id, m.name, displayName(m.family), m.params, m.files.map((f) => [f.file, f.quant, f.size])]), [
    ['bartowski/SmolLM2-135M-Instruct-GGUF', 'SmolLM2-135M-Instruct', 'Llama', 135e6,
      [['SmolLM2-135M-Instruct-Q8_0.gguf', 'Q8_0', '145 MB'], ['SmolLM2-135M-Instruct-Q4_K_M.gguf', 'Q4_K_M', '105 MB']]],
    ['second-state/Qwen2.5-0.5B-Instruct-GGUF', 'Qwen2.5-0.5B-Instruct', 'Qwen2', 494e6,
      [['Qwen2.5-0.5B-Instruct-Q8_0.gguf', 'Q8_0', '531 MB'], ['Qwen2.5-0.5B-Instruct-Q4_K_M.gguf', 'Q4_K_M', '398 MB']]],
    ['bartowski/Llama-3.2-1B-Instruct-GGUF', 'Llama-3.2-1B-Instruct', 'Llama', 1_235_814_400,
      [['Llama-3.2-1B-Instruct-Q8_0.gguf', 'Q8_0', '1.32 GB'], ['Llama-3.2-1B-Instruct-Q4_K_M.gguf', 'Q4_K_M', '0.81 GB']]],
  ]);
  assert.equal(gatedDecoderParams({ vocab: 128256, d: 2048, layers: 16, heads: 32, kvHeads: 8, headDim: 64, mlp: 8192, normsPerLayer: 2,
    qkNorm: 0, tied: true }), 1_235_814_400);
  assert.equal(HUB_MODELS.find((m) => m.id === 'HuggingFaceTB/SmolLM2-135M').params, 135e6);
  assert.equal(HUB_MODELS.find((m) => m.id === 'Qwen/Qwen2.5-0.5B').params, 494e6);
  for (const m of gguf) {
    assert.ok(Object.isFrozen(m) && Object.isFrozen(m.files) && m.files.every(Object.isFrozen), m.id);
    // The entry's own size, bytes and dtype: its first file's.
    assert.deepEqual([m.size, m.bytes, m.dtype], [m.files[0].size, m.files[0].bytes, m.files[0].quant]);
    for (const f of m.files) {
      assert.ok(Math.abs(f.bytes - Number.parseFloat(f.size) * (f.size.endsWith('GB') ? 1e9 : 1e6)) < 1, f.file);
      // Q8_0 stores 34 bytes per 32 weights: the file is the parameters at 8.5 bits (within 3%: the metadata, the norms in F32).
      if (f.quant === 'Q8_0') assert.ok(Math.abs(f.bytes / (m.params * 34 / 32) - 1) < 0.03, `${f.file}: ${f.bytes} bytes`);
      // A valid id and file for lens.loadCheckpoint: refused only because the load is already cancelled.
      await assert.rejects(lens.loadCheckpoint({ hub: m.id, file: f.file, signal: AbortSignal.abort() }),
        new RegExp(`^Error: the load of '${m.id}' was cancelled$`));
    }
  }
  // Every listed file is read: Llama 3.2's rope_freqs.weight (Llama 3's RoPE scaling) is read by the
  // core, which refuses only a malformed one (zeros). llama.cpp's Q4_K_M stores a row of d_model values
  // that is not whole 256-value blocks as Q5_0 (SmolLM2-135M's 576, Qwen2.5-0.5B's 896; Llama 3.2 1B's
  // 2048 is whole): a type the core reads, so those load.
  const refusal = JSON.parse(readFileSync(`${DATA_DIR}malformed-gguf/expected.json`, 'utf8'));
  const readTypes = /supported in GGUF files: (.*)$/.exec(refusal['iq4_nl.gguf'])[1].split(', ');
  for (const type of ['Q8_0', 'Q4_K', 'Q5_0', 'Q6_K']) assert.ok(readTypes.includes(type), readTypes.join(', '));
  assert.deepEqual([576, 896, 2048].map((d) => d % 256 === 0), [false, false, true]);
  assert.match(refusal['rope-freqs.gguf'], /rope_freqs\.weight holds 0 \(factor 0\); RoPE's factors must be finite and above 0/);
  assert.deepEqual(gguf.flatMap((m) => m.files.filter((f) => f.notYet).map((f) => f.file)), []);

  // The core keeps GGUF's quantized types as stored (catalog.parameterBytes lists them at their
  // blocks' bytes): a listed file takes about its own bytes in the tab, and nothing is said of dequantizing.
  const limited = tab(lens.catalog.limits.maxCheckpointParameterBytes);
  assert.equal(limited.parameterBytes.Q8_0, 34 / 32);
  assert.ok(limited.parameterBytes.Q4_K > 144 / 256 && limited.parameterBytes.Q4_K < 160 / 256, String(limited.parameterBytes.Q4_K));
  const why = gguf.flatMap((m) => m.files.map((f) => [f.file, whyNotLoadable(withFile(m, f.file), limited)]));
  assert.deepEqual(why.filter(([, w]) => w === null).map(([f]) => f), ['SmolLM2-135M-Instruct-Q8_0.gguf', 'SmolLM2-135M-Instruct-Q4_K_M.gguf',
    'Qwen2.5-0.5B-Instruct-Q8_0.gguf', 'Qwen2.5-0.5B-Instruct-Q4_K_M.gguf', 'Llama-3.2-1B-Instruct-Q8_0.gguf', 'Llama-3.2-1B-Instruct-Q4_K_M.gguf']);
  // A file the list marks as not read yet (none today) says why, and its menus say so.
  const llama = gguf[2];
  const marked = { ...llama, files: llama.files.map((f) => ({ ...f, notYet: 'a reason' })) };
  assert.equal(whyNotLoadable(withFile(marked, marked.files[0].file), limited), 'not read yet: a reason');
  assert.equal(hubOptionLabel(marked, limited), 'Llama-3.2-1B-Instruct · Q8_0, Q4_K_M · not read yet');
  assert.equal(ggufFileLabel(marked, marked.files[1], limited), 'Q4_K_M · 0.81 GB · not read yet');
  const smol = gguf[0];
  assert.equal(bytesInTab(withFile(smol, 'SmolLM2-135M-Instruct-Q8_0.gguf'), limited), 145e6);
  assert.equal(bytesInTab(withFile(smol, 'SmolLM2-135M-Instruct-Q4_K_M.gguf'), limited), 105e6);
  assert.deepEqual(dequantizedTypes(['Q8_0', 'F32', 'Q4_K_M', 'Q5_0'], limited), []);
  // The entry's facts line: its chosen file (the first by default), size, family, parameters.
  assert.equal(hubModelLine(smol, limited), 'bartowski/SmolLM2-135M-Instruct-GGUF · SmolLM2-135M-Instruct-Q8_0.gguf · 145 MB · Llama · ' +
    '135 M parameters');
  assert.equal(hubModelLine(withFile(smol, 'SmolLM2-135M-Instruct-Q4_K_M.gguf'), limited), 'bartowski/SmolLM2-135M-Instruct-GGUF · ' +
    'SmolLM2-135M-Instruct-Q4_K_M.gguf · 105 MB · Llama · 135 M parameters');
  // A file the list does not know: named, nothing claimed about it, loadable (the API and the core judge it).
  const other = withFile(smol, 'SmolLM2-135M-Instruct-Q6_K.gguf');
  assert.equal(whyNotLoadable(other, limited), null);
  assert.equal(hubModelLine(other, limited), 'bartowski/SmolLM2-135M-Instruct-GGUF · SmolLM2-135M-Instruct-Q6_K.gguf · Llama · 135 M parameters');
  // The menus: the repo's option names its files' quants ('not read yet' when none loads); the File menu each file's.
  assert.deepEqual(gguf.map((m) => hubOptionLabel(m, limited)), ['SmolLM2-135M-Instruct · Q8_0, Q4_K_M', 'Qwen2.5-0.5B-Instruct · Q8_0, Q4_K_M',
    'Llama-3.2-1B-Instruct · Q8_0, Q4_K_M']);
  assert.deepEqual(smol.files.map((f) => ggufFileLabel(smol, f, limited)), ['Q8_0 · 145 MB', 'Q4_K_M · 105 MB']);
  assert.equal(ggufFileLabel(gguf[1], gguf[1].files[0], tab(0.5e9)), 'Q8_0 · 531 MB · too large');
  // A tab whose core does not keep a type as stored: its weights counted at float32's 4 bytes and said so.
  const { Q8_0: _kept, ...dequantizing } = limited.parameterBytes;
  const older = { ...limited, parameterBytes: dequantizing };
  assert.deepEqual(dequantizedTypes(['Q8_0', 'F32', 'Q4_K'], older), ['Q8_0']);
  assert.equal(dequantizedNote([]), '');
  assert.equal(hubModelLine(smol, older), 'bartowski/SmolLM2-135M-Instruct-GGUF · SmolLM2-135M-Instruct-Q8_0.gguf · 145 MB · Llama · ' +
    '135 M parameters · Q8_0 weights are dequantized to float32 at load today (memory ≈ 4 bytes per weight): 540 MB');
  assert.equal(bytesInTab(smol, older), 135e6 * limited.parameterBytes.F32);
});


test('a GGUF file\'s format line, from m.weights.formats: the most common type first', async () => {
  const m = await lens.loadCheckpoint({ weights: new Uint8Array(readFileSync(`${DATA_DIR}gguf/llama-q8_0.gguf`)) });
  try {
    const { formats } = m.weights;
    assert.ok(formats.Q8_0 > formats.F32, JSON.stringify(formats));
    assert.equal(formatsLine(formats), `Q8_0 × ${formats.Q8_0}, F32 × ${formats.F32} tensors`);
  } finally {
    m.dispose();
  }
  assert.equal(formatsLine({ F16: 1 }), 'F16 × 1 tensor');
  assert.equal(formatsLine({ F32: 2, BF16: 2 }), 'BF16 × 2, F32 × 2 tensors');
  assert.equal(formatsLine({}), '');
  assert.equal(formatsLine(undefined), '');
});

test('a repo\'s files as the Hub lists them (lens.hubFiles) made the File menu\'s GGUF entry: quants from the names, sizes, split models as one line not read, what fits the tab', () => {
  // llama.cpp's type names as the Hub's GGUF repos write them in file names.
  const names = {
    'SmolLM2-135M-Instruct-Q4_K_M.gguf': 'Q4_K_M', 'tinyllama-1.1b-chat-v1.0.Q8_0.gguf': 'Q8_0', 'qwen2.5-0.5b-instruct-fp16.gguf': 'F16',
    'qwen2.5-0.5b-instruct-q5_k_m.gguf': 'Q5_K_M', 'model-IQ4_XS.gguf': 'IQ4_XS', 'x-bf16.gguf': 'BF16', 'Q6_K/name.gguf': 'Q6_K',
    'big-Q8_0-00002-of-00003.gguf': 'Q8_0', 'tiny.gguf': undefined, 'Q8_0.gguf': 'Q8_0',
  };
  for (const [file, quant] of Object.entries(names)) assert.equal(ggufQuant(file), quant, file);
  assert.deepEqual(ggufSplit('a/big-Q8_0-00002-of-00003.gguf'), { base: 'a/big-Q8_0', part: 2, parts: 3 });
  assert.equal(ggufSplit('big-Q8_0.gguf'), null);

  const limits = tab(3e9);
  assert.equal(ggufRepoFromFiles('org/none', [{ file: 'model.safetensors', bytes: 5 }, { file: 'config.json', bytes: 2 }]), null, 'no .gguf: no menu');
  const listing = [
    { file: 'README.md', bytes: 10 },
    { file: 'big/big-Q8_0-00001-of-00002.gguf', bytes: 2.5e9 }, { file: 'big/big-Q8_0-00002-of-00002.gguf', bytes: 2.5e9 },
    { file: 'm-Q4_K_M.gguf', bytes: 105e6 }, { file: 'm-Q8_0.gguf', bytes: 145e6 }, { file: 'm-huge-Q8_0.gguf', bytes: 3.5e9 },
    { file: 'odd.gguf', bytes: 2e6 },
  ];
  const entry = ggufRepoFromFiles('org/m-GGUF', listing);
  assert.deepEqual(entry.files.map((f) => [f.file, f.quant, f.size, f.bytes, f.split]), [
    ['m-Q4_K_M.gguf', 'Q4_K_M', '105 MB', 105e6, undefined], ['m-Q8_0.gguf', 'Q8_0', '145 MB', 145e6, undefined],
    ['m-huge-Q8_0.gguf', 'Q8_0', '3.5 GB', 3.5e9, undefined], ['odd.gguf', undefined, '2 MB', 2e6, undefined],
    ['big/big-Q8_0-00001-of-00002.gguf', 'Q8_0', '5 GB', 5e9, 2],
  ]);
  assert.equal(entry.weights, undefined);
  // Labelled as the listed repos' files; a quant two files share, or none, by the file's name; the
  // family and parameters are the file's, unknown until it is read: the file's own size is the
  // least the tab needs.
  assert.deepEqual(entry.files.map((f) => ggufFileLabel(entry, f, limits)), [
    'Q4_K_M · 105 MB', 'm-Q8_0.gguf · 145 MB', 'm-huge-Q8_0.gguf · 3.5 GB · too large', 'odd.gguf · 2 MB',
    'Q8_0 · 5 GB · split into 2 files — not read',
  ]);
  assert.equal(whyNotLoadable(withFile(entry, 'm-Q4_K_M.gguf'), limits), null);
  assert.equal(whyNotLoadable(withFile(entry, 'm-huge-Q8_0.gguf'), limits), "its file alone is 3.5 GB; the tab's limit is 3 GB");
  assert.equal(whyNotLoadable(withFile(entry, 'big/big-Q8_0-00001-of-00002.gguf'), limits), 'not read yet: split into 2 files');
  assert.equal(withFile(entry).file, 'm-Q4_K_M.gguf', 'the first file that is not split is chosen with the repo');
  assert.equal(hubModelLine(withFile(entry, 'm-Q8_0.gguf'), limits), 'org/m-GGUF · m-Q8_0.gguf · 145 MB');
  // A repo that also has weights read without a file: "None" chooses them.
  const both = ggufRepoFromFiles('org/both', [{ file: 'model.safetensors', bytes: 5 }, { file: 'b-Q8_0.gguf', bytes: 7e6 }]);
  assert.equal(both.weights, 'model.safetensors');
  assert.equal(hubModelLine(withFile(both, NO_GGUF_FILE), limits), 'org/both · model.safetensors');
  assert.equal(whyNotLoadable(withFile(both, NO_GGUF_FILE), limits), null);

  // A listed GGUF repo: its known files first, as listed; the Hub's others after them.
  const smol = HUB_MODELS.find((m) => m.id === 'bartowski/SmolLM2-135M-Instruct-GGUF');
  const merged = ggufRepoFromFiles(smol.id, [{ file: 'SmolLM2-135M-Instruct-Q8_0.gguf', bytes: 144_811_488 },
    { file: 'SmolLM2-135M-Instruct-Q6_K.gguf', bytes: 138_000_000 }], smol);
  assert.deepEqual(merged.files.map((f) => ggufFileLabel(merged, f, limits)), [...smol.files.map((f) => ggufFileLabel(smol, f, limits)), 'Q6_K · 138 MB']);
  assert.equal(hubModelLine(withFile(merged, 'SmolLM2-135M-Instruct-Q6_K.gguf'), limits),
    'bartowski/SmolLM2-135M-Instruct-GGUF · SmolLM2-135M-Instruct-Q6_K.gguf · 138 MB · Llama · 135 M parameters');
});
