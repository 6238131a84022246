// The small GPT-2-family repo the browser tests load by Hub id from the local stand-in of the Hub
// (scripts/lib/hub-stand-in.mjs; no test reaches the internet), and the comparison of the Your model
// view's drawn heads with the JS API's attention: shared by tests/e2e/hub.test.mjs (Chromium,
// playwright) and tests/e2e/engines/checks.mjs (Chromium, Firefox and WebKit, scripts/lib/drivers.mjs).
// Also the Llama-family files of tests/e2e/hub.test.mjs, yourmodel.test.mjs and the engines' checks: the golden tiny
// checkpoints of tests/data/llama (Mistral split into shards with its index; the stand-in's repos of them) and a random
// grouped-query Llama, each with a small tokenizer.json of its own (letters, Llama 2's '▁' for a space).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { familyGolden, llamaGolden, smallGpt2Files } from '../js/checkpoint-support.mjs';
import { lcgFloats, splitSafetensors, writeSafetensors } from '../js/support.mjs';
import { startStandIn } from '../../scripts/lib/hub-stand-in.mjs';

/** 2 layers × 2 heads, d_model 16, context 64, GPT-2's 256 byte tokens and its first 4 merges. */
export const SMALL_GPT2 = Object.freeze({ layers: 2, heads: 2, d: 16, vocab: 260, context: 64 });
/** The id the stand-in serves SMALL_GPT2 under. */
export const SMALL_ID = 'org/small';

/** Starts the stand-in with SMALL_ID's config.json, vocab.json, merges.txt and model.safetensors (and `more` repos: stand-in.mjs's form). */
export function startSmallHub(more = {}) {
  const { config, vocab, merges, weights } = smallGpt2Files(SMALL_GPT2);
  return startStandIn({ [SMALL_ID]: { 'config.json': config, 'vocab.json': vocab, 'merges.txt': merges, 'model.safetensors': weights }, ...more });
}

/** A GPT-2-family repo with GPT-2 small's 12 heads per layer (2 layers, d_model 48), for the head grid's layout. */
export const TWELVE_HEADS = Object.freeze({ layers: 2, heads: 12, d: 48, vocab: 260, context: 64 });
export const TWELVE_ID = 'org/twelve-heads';

/** The stand-in's files of TWELVE_ID (startSmallHub's `more`). */
export function twelveHeadsRepo() {
  const { config, vocab, merges, weights } = smallGpt2Files(TWELVE_HEADS);
  return { [TWELVE_ID]: { 'config.json': config, 'vocab.json': vocab, 'merges.txt': merges, 'model.safetensors': weights } };
}

/**
 * A server that holds every request open (a Hub load that stays in flight until cancelled):
 * { origin, requests (the paths asked), close }.
 */
export async function startStall() {
  const requests = [];
  const held = createServer((request) => requests.push(request.url));
  await new Promise((resolve) => held.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${held.address().port}`,
    requests,
    close: () => new Promise((resolve) => {
      held.closeAllConnections();
      held.close(() => resolve());
    }),
  };
}

/**
 * In the page: every text the Your model view's load line (#model-load-status) shows from now on,
 * in window.loadLines (a MutationObserver: each phase is seen however short).
 */
export function recordLoadLines() {
  window.loadLines = [];
  const line = document.querySelector('#model-load-status');
  new MutationObserver(() => window.loadLines.push(line.textContent)).observe(line, { childList: true, characterData: true, subtree: true });
}

/**
 * In the page: where the Your model view's load feedback is against the Hub's id box (document
 * pixels): { idTop, lineBottom, barBottom, errorBottom (null when hidden), height: innerHeight }.
 */
export function loadFeedbackPlace() {
  const top = (selector) => document.querySelector(selector).getBoundingClientRect().top + scrollY;
  const bottom = (selector) => {
    const e = document.querySelector(selector);
    return e.closest('[hidden]') ? null : e.getBoundingClientRect().bottom + scrollY;
  };
  return { idTop: top('#model-hub-id'), filesTop: top('#model-files'), lineBottom: bottom('#model-load-status'),
    barBottom: bottom('#model-progress'), errorBottom: bottom('#model-error'), height: innerHeight };
}

/**
 * In the page: each tile of the Your model view's head grid against its heatmap: the tiles whose
 * heatmap is wider than its frame, or its frame scrolls, or whose canvas does not hold the whole
 * matrix ({ tile, canvas, frame, cells }); and how many tiles there are.
 */
export function tilesCropped() {
  const tiles = [...document.querySelectorAll('#model-head-grid .model-tile')];
  const cropped = tiles.map((tile) => {
    const canvas = tile.querySelector('canvas');
    const frame = canvas.parentElement;
    const c = canvas.getBoundingClientRect();
    const f = frame.getBoundingClientRect();
    const t = tile.getBoundingClientRect();
    const cells = Number(canvas.dataset.cell) * Number(canvas.dataset.cols);
    return { head: `${tile.dataset.layer}.${tile.dataset.head}`, canvas: c.width, frame: f.width, tile: t.width, cells,
      scrolls: frame.scrollWidth > frame.clientWidth || frame.scrollHeight > frame.clientHeight,
      square: Math.abs(c.width - c.height) <= 1 };
  }).filter((x) => x.canvas > x.frame + 0.5 || x.canvas > x.tile || x.scrolls || !x.square || Math.abs(x.cells - x.canvas) > 1 || x.canvas < 10);
  return { tiles: tiles.length, cropped, legends: document.querySelectorAll('#model-heads-legend .legend-bar').length,
    tileLegends: document.querySelectorAll('#model-head-grid .legend-bar').length };
}

/** The figure of the Your model view's heatmap of `layer`, `head` (its screen-reader table: heatmapTable). */
export const headFigure = (layer, head) => `#model-head-grid .model-tile[data-layer="${layer}"][data-head="${head}"] figure`;

/**
 * Every head drawn equals `api.attention` ([layer][head·n·n]) to the table's rounding;
 * `drawnHead(layer, head)` resolves to the numbers the page draws for it, row by row.
 */
export async function assertHeadsDrawn(drawnHead, { layers, heads }, api) {
  for (let layer = 0; layer < layers; ++layer) {
    for (let head = 0; head < heads; ++head) {
      const drawn = await drawnHead(layer, head);
      assert.equal(drawn.length, api.n, `layer ${layer} head ${head}: ${drawn.length} rows drawn, ${api.n} tokens`);
      drawn.forEach((row, q) => row.forEach((v, k) => {
        const want = api.attention[layer][(head * api.n + q) * api.n + k];
        // The table shows 4 decimals (4 significant digits below 1e-3).
        assert.ok(Math.abs(v - want) <= 5.1e-5 + 1e-3 * Math.abs(want), `layer ${layer} head ${head} (${q}, ${k}): drawn ${v}, API ${want}`);
      }));
    }
  }
}

/**
 * In the page: the public API's lens.loadCheckpoint({ hub, endpoint }) on `text`, each layer's
 * attention ({ n, attention: [layer][head·n·n] }).
 */
export async function apiHubCheckpoint({ hub, endpoint, text }) {
  const { loadAttentionLens } = await import(new URL('attention-lens.mjs', document.baseURI).href);
  const lens = await loadAttentionLens();
  const gpt = await lens.loadCheckpoint({ hub, endpoint });
  const { ids } = gpt.tokenize(text);
  const { attention } = gpt.forward(ids, { n: ids.length });
  const out = { n: ids.length, attention: attention.map((a) => Array.from(a)) };
  gpt.dispose();
  return out;
}

// ---- the Llama family ---------------------------------------------------------------------------

/**
 * A tokenizer.json of `size` ids for a tiny Llama-family model: <unk>, <s>, </s>, '▁' (a space, as
 * Llama 2's sentencepiece writes it), letters and punctuation, and 4 merges ('▁t', 'he', '▁a',
 * 'in'); a BOS (<s>) before the text, an unknown character as <unk>.
 */
export function tinyTokenizer(size) {
  const chars = ['▁', ...'etaoinshrdlucmwfgypbvkjxqz', ...'ETAOINSHRDLUCMWFGYPBVKJXQZ', ...".,!?'0123456789"];
  const merges = [['▁', 't'], ['h', 'e'], ['▁', 'a'], ['i', 'n']];
  const special = ['<unk>', '<s>', '</s>'];
  const vocab = Object.fromEntries(special.map((t, id) => [t, id]));
  for (const c of chars.slice(0, size - special.length - merges.length)) vocab[c] = Object.keys(vocab).length;
  for (const [a, b] of merges) vocab[a + b] = Object.keys(vocab).length;
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: special.map((content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
    normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }] },
    pre_tokenizer: null,
    post_processor: { type: 'TemplateProcessing', single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [], special_tokens: { '<s>': { id: '<s>', ids: [1], tokens: ['<s>'] } } },
    decoder: null,
    model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: true,
      byte_fallback: false, vocab, merges: merges.map(([a, b]) => `${a} ${b}`) },
  };
}

/** The shard file names of a checkpoint split in `count`. */
export const shardNames = (count) => Array.from({ length: count }, (_, i) =>
  `model-${String(i + 1).padStart(5, '0')}-of-${String(count).padStart(5, '0')}.safetensors`);

/**
 * tests/data/llama's Mistral (3 layers, 4 query heads sharing 2 K/V heads, sliding window 5) as a
 * sharded repo's files: { config, tokenizer, index, shards: [bytes], names, sizes }; layer 2 and
 * lm_head in the second shard.
 */
export function shardedMistral() {
  const { weights, config } = llamaGolden('mistral-f32');
  const names = shardNames(2);
  const { files, index } = splitSafetensors(weights, (name) => (name.startsWith('model.layers.2.') || name === 'lm_head.weight' ? 1 : 0), names);
  return { config, tokenizer: tinyTokenizer(config.vocab_size), index, shards: files, names,
    sizes: { layers: config.num_hidden_layers, heads: config.num_attention_heads, kvHeads: config.num_key_value_heads } };
}

/** tests/data/llama's Qwen2 in BF16 (2 layers, 4 query heads sharing 1 K/V head): { config, tokenizer, weights, sizes }. */
export function qwen2Bf16() {
  const { weights, config } = llamaGolden('qwen2-bf16');
  return { config, tokenizer: tinyTokenizer(config.vocab_size), weights,
    sizes: { layers: config.num_hidden_layers, heads: config.num_attention_heads, kvHeads: config.num_key_value_heads } };
}

/** tests/data/llama's Llama 3 (2 layers × 4 heads, head_dim 24, rope_scaling 'llama3', biases, tied): { config, tokenizer, weights, sizes }. */
export function llama3F32() {
  const { weights, config } = llamaGolden('llama3-f32');
  return { config, tokenizer: tinyTokenizer(config.vocab_size), weights,
    sizes: { layers: config.num_hidden_layers, heads: config.num_attention_heads, kvHeads: config.num_key_value_heads } };
}

/**
 * The stand-in's Llama-family repos (startSmallHub's `more`): 'org/mistral-sharded' (no
 * model.safetensors: its index and two shards) and 'org/qwen2-bf16' (model.safetensors in BF16),
 * each with config.json and tokenizer.json.
 */
export function llamaHubRepos(mistral = shardedMistral(), qwen2 = qwen2Bf16()) {
  return {
    'org/mistral-sharded': { 'config.json': mistral.config, 'tokenizer.json': mistral.tokenizer, 'model.safetensors.index.json': mistral.index,
      ...Object.fromEntries(mistral.names.map((name, i) => [name, mistral.shards[i]])) },
    'org/qwen2-bf16': { 'config.json': qwen2.config, 'tokenizer.json': qwen2.tokenizer, 'model.safetensors': qwen2.weights },
  };
}

/**
 * A random Llama checkpoint in Hugging Face names (float32, tied embeddings), SmolLM2's head layout
 * by default: 9 query heads sharing 3 K/V heads. { config, tokenizer, weights, sizes }.
 */
export function randomLlama({ layers = 3, heads = 9, kvHeads = 3, headDim = 8, vocab = 80, context = 64, inter = 96 } = {}) {
  const d = heads * headDim;
  let seed = 7;
  const t = (shape, scale = 0.2) => ({ dtype: 'F32', shape, data: lcgFloats(shape.reduce((a, b) => a * b, 1), seed++).map((v) => v * scale) });
  const ones = (n) => ({ dtype: 'F32', shape: [n], data: new Float32Array(n).fill(1) });
  const tensors = { 'model.embed_tokens.weight': t([vocab, d], 1) };
  for (let l = 0; l < layers; ++l) {
    const p = `model.layers.${l}.`;
    Object.assign(tensors, {
      [`${p}input_layernorm.weight`]: ones(d), [`${p}post_attention_layernorm.weight`]: ones(d),
      // Queries and keys larger than the rest: sharper attention patterns to look at.
      [`${p}self_attn.q_proj.weight`]: t([heads * headDim, d], 0.6), [`${p}self_attn.k_proj.weight`]: t([kvHeads * headDim, d], 0.6),
      [`${p}self_attn.v_proj.weight`]: t([kvHeads * headDim, d]), [`${p}self_attn.o_proj.weight`]: t([d, heads * headDim]),
      [`${p}mlp.gate_proj.weight`]: t([inter, d]), [`${p}mlp.up_proj.weight`]: t([inter, d]), [`${p}mlp.down_proj.weight`]: t([d, inter]),
    });
  }
  tensors['model.norm.weight'] = ones(d);
  const config = {
    architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: d, num_hidden_layers: layers, num_attention_heads: heads,
    num_key_value_heads: kvHeads, head_dim: headDim, intermediate_size: inter, vocab_size: vocab, max_position_embeddings: context,
    rms_norm_eps: 1e-5, rope_theta: 100000, rope_scaling: null, hidden_act: 'silu', tie_word_embeddings: true, attention_bias: false,
    torch_dtype: 'float32', bos_token_id: 1, eos_token_id: 2,
  };
  return { config, tokenizer: tinyTokenizer(vocab), weights: writeSafetensors(tensors), sizes: { layers, heads, kvHeads } };
}

/**
 * In the page: the public API's lens.loadCheckpoint from files ({ weights: [shard bytes] or bytes,
 * config, tokenizer }) on `text`, each layer's attention ({ n, family, config, attention }).
 */
export async function apiFilesCheckpoint({ weights, config, tokenizer, text }) {
  const { loadAttentionLens } = await import(new URL('attention-lens.mjs', document.baseURI).href);
  const lens = await loadAttentionLens();
  const blob = (bytes) => new Blob([Uint8Array.from(bytes)]);
  const m = await lens.loadCheckpoint({ weights: Array.isArray(weights[0]) ? weights.map(blob) : blob(weights), config, tokenizer });
  const { ids } = m.tokenize(text);
  const { attention } = m.forward(ids, { n: ids.length });
  const out = { n: ids.length, family: m.family, config: { ...m.config }, attention: attention.map((a) => Array.from(a)) };
  m.dispose();
  return out;
}

/**
 * The drawn groups of grouped-query attention, layer by layer: [[{ label, kv, heads: [head…] }]]
 * (the group's visible label, its data-kv-head, its tiles' heads), and every tile's title.
 */
export function drawnGroups() {
  const layers = [...document.querySelectorAll('#model-head-grid .head-layer')];
  return layers.map((layer) => [...layer.querySelectorAll('.head-group')].map((group) => {
    const label = document.getElementById(group.getAttribute('aria-labelledby'));
    return {
      role: group.getAttribute('role'), label: label?.textContent, kv: Number(group.dataset.kvHead),
      heads: [...group.querySelectorAll('.model-tile')].map((tile) => Number(tile.dataset.head)),
      titles: [...group.querySelectorAll('.model-tile .head-grid-title')].map((p) => p.textContent),
      canvases: [...group.querySelectorAll('.model-tile canvas')].map((c) => c.getAttribute('aria-label')),
    };
  }));
}

/** What drawnGroups should find for `layers` × `heads` query heads sharing `kvHeads` K/V heads. */
export function expectedGroups({ layers, heads, kvHeads }) {
  const size = heads / kvHeads;
  return Array.from({ length: layers }, () => Array.from({ length: kvHeads }, (_, kv) => {
    const members = Array.from({ length: size }, (_, i) => kv * size + i);
    return { role: 'group', label: `K/V head ${kv + 1} · heads ${kv * size + 1}–${(kv + 1) * size}`, kv, heads: members,
      titles: members.map((h) => `H${h + 1} · KV${kv + 1}`) };
  }));
}

// ---- the families of issue 31 (tests/data/families) ------------------------------------------------

/** One case per family, and the id the stand-in serves it under. */
export const FAMILY_CASES = ['pythia-f16', 'qwen3-bf16', 'gemma3-bf16', 'gemma2-f32', 'olmo2-bf16', 'phi3-f32'];
export const familyId = (name) => `families/${name}`;

/** The stand-in's repos of the family cases: config.json, model.safetensors and a tokenizer.json within the vocabulary. */
export function familyRepos(names = FAMILY_CASES) {
  return Object.fromEntries(names.map((name) => {
    const { weights, config } = familyGolden(name);
    return [familyId(name), { 'config.json': config, 'model.safetensors': weights, 'tokenizer.json': tinyTokenizer(config.vocab_size) }];
  }));
}

/** What the golden data says each layer is: 'local · window w' or 'global' (null when every layer is alike). */
export function expectedLayerTags(metadata) {
  const windows = metadata.windows.split(',');
  if (windows.every((w) => w === windows[0])) return null;
  return windows.map((w) => (w === 'none' ? 'global' : `local · window ${w}`));
}


// ---- Pythia across training (issue 32's "Across training" strip) -----------------------------------

/**
 * A random GPT-NeoX (Pythia-shaped) checkpoint in Hugging Face names, float32, Pythia-70m's head
 * layout by default (6 layers × 8 heads; d_model 64, so each head 8 wide, a quarter of it rotary):
 * { config, tokenizer, weights }. `seed` picks the weights, `sharpness` scales the queries and keys
 * (larger: sharper attention), so two revisions written with different seeds and sharpness have
 * different head scores.
 */
export function randomPythia({ layers = 6, heads = 8, d = 64, vocab = 96, context = 64, seed = 1, sharpness = 1 } = {}) {
  let next = seed * 1000;
  const t = (shape, scale = 0.2) => ({ dtype: 'F32', shape, data: lcgFloats(shape.reduce((a, b) => a * b, 1), next++).map((v) => v * scale) });
  const fill = (n, v) => ({ dtype: 'F32', shape: [n], data: new Float32Array(n).fill(v) });
  const tensors = { 'gpt_neox.embed_in.weight': t([vocab, d], 1) };
  for (let l = 0; l < layers; ++l) {
    const p = `gpt_neox.layers.${l}.`;
    // query_key_value: per head, its q, k and v rows (GPT-NeoX's interleaving); the q and k rows scaled by `sharpness`.
    const qkv = t([3 * d, d], 0.3);
    const width = d / heads;
    for (let h = 0; h < heads; ++h) {
      for (let row = 0; row < 2 * width; ++row) {
        const at = (h * 3 * width + row) * d;
        for (let c = 0; c < d; ++c) qkv.data[at + c] *= sharpness;
      }
    }
    Object.assign(tensors, {
      [`${p}input_layernorm.weight`]: fill(d, 1), [`${p}input_layernorm.bias`]: fill(d, 0),
      [`${p}post_attention_layernorm.weight`]: fill(d, 1), [`${p}post_attention_layernorm.bias`]: fill(d, 0),
      [`${p}attention.query_key_value.weight`]: qkv, [`${p}attention.query_key_value.bias`]: t([3 * d], 0.05),
      [`${p}attention.dense.weight`]: t([d, d]), [`${p}attention.dense.bias`]: fill(d, 0),
      [`${p}mlp.dense_h_to_4h.weight`]: t([4 * d, d]), [`${p}mlp.dense_h_to_4h.bias`]: fill(4 * d, 0),
      [`${p}mlp.dense_4h_to_h.weight`]: t([d, 4 * d]), [`${p}mlp.dense_4h_to_h.bias`]: fill(d, 0),
    });
  }
  Object.assign(tensors, { 'gpt_neox.final_layer_norm.weight': fill(d, 1), 'gpt_neox.final_layer_norm.bias': fill(d, 0),
    'embed_out.weight': t([vocab, d]) });
  const config = {
    architectures: ['GPTNeoXForCausalLM'], model_type: 'gpt_neox', hidden_size: d, num_hidden_layers: layers, num_attention_heads: heads,
    intermediate_size: 4 * d, vocab_size: vocab, max_position_embeddings: context, hidden_act: 'gelu', layer_norm_eps: 1e-5,
    rotary_emb_base: 10000, rotary_pct: 0.25, use_parallel_residual: true, tie_word_embeddings: false, bos_token_id: 0, eos_token_id: 0,
    torch_dtype: 'float32',
  };
  return { config, tokenizer: tinyTokenizer(vocab), weights: writeSafetensors(tensors) };
}

/** The Pythia id the stand-in serves at PYTHIA_STEPS (a listed entry with revisions: the view offers the strip for it). */
export const PYTHIA_ID = 'EleutherAI/pythia-70m';
/** The revisions the stand-in serves PYTHIA_ID at (the strip's default spread), and main (= the last). */
export const PYTHIA_STEPS = Object.freeze(['step0', 'step1000', 'step2000', 'step4000', 'step8000', 'step16000', 'step33000', 'step66000',
  'step143000']);

/**
 * Each revision's files ({ [revision]: { config, tokenizer, weights } }): a random Pythia per
 * revision, its seed the revision's index and its queries and keys sharper the later it is, so every
 * revision's head scores differ; main is step143000's files.
 */
export function pythiaRevisions(shape = {}) {
  const out = {};
  PYTHIA_STEPS.forEach((revision, i) => {
    out[revision] = randomPythia({ ...shape, seed: i + 1, sharpness: 0.5 + 0.5 * i });
  });
  out.main = out[PYTHIA_STEPS.at(-1)];
  return out;
}

/** The stand-in's repos of pythiaRevisions (startSmallHub's `more`): 'EleutherAI/pythia-70m@stepN' and main. */
export function pythiaRepos(revisions = pythiaRevisions(), id = PYTHIA_ID) {
  return Object.fromEntries(Object.entries(revisions).map(([revision, { config, tokenizer, weights }]) =>
    [revision === 'main' ? id : `${id}@${revision}`, { 'config.json': config, 'tokenizer.json': tokenizer, 'model.safetensors': weights }]));
}
