// The "Your model" view's DOM-free helpers: the head table's order, which checkpoint file a file
// is, the order of a sharded checkpoint's files, a loaded model's facts line, and a probability as
// a percentage. (The next tokens, their texts and the head finder's probe come from the core:
// model.nextTokens, model.probe.)

/** Head scores sorted by `key` ('induction' or 'previousToken'), highest first; nulls last. */
export function sortHeads(scores, key) {
  const value = (s) => (s[key] === null || s[key] === undefined ? -Infinity : s[key]);
  return [...scores].sort((a, b) => value(b) - value(a) || a.layer - b.layer || a.head - b.head);
}

// A Hugging Face repo's other files, not needed to read the model: skipped when dropped with it.
const COMPANIONS = ['tokenizer_config.json', 'generation_config.json', 'special_tokens_map.json'];

/**
 * Which checkpoint file a dropped or picked file is, by its name: 'weights' (a .safetensors file:
 * the model or one of its shards), 'gguf' (a .gguf file: llama.cpp's, its config and tokenizer in
 * its metadata), 'index' (model.safetensors.index.json), 'config', 'tokenizer', 'vocab', 'merges',
 * 'companion' (a repo's file the model does not need), or null (none of them).
 */
export function fileRole(name) {
  const lower = name.toLowerCase();
  if (lower.endsWith('.safetensors')) return 'weights';
  if (lower.endsWith('.gguf')) return 'gguf';
  if (lower.endsWith('.index.json')) return 'index';
  if (lower.endsWith('.txt')) return 'merges';
  if (!lower.endsWith('.json')) return null;
  if (COMPANIONS.includes(lower)) return 'companion';
  if (lower.includes('tokenizer')) return 'tokenizer';
  if (lower.includes('vocab')) return 'vocab';
  return 'config';
}

const SHARD_NAME = /^(.*)-(\d+)-of-(\d+)\.safetensors$/i;
const byName = (a, b) => a.localeCompare(b, 'en', { numeric: true });

/**
 * The weights files' names in the order lens.loadCheckpoint reads them: with the index (`index`:
 * model.safetensors.index.json parsed, named `indexName`), the order its weight_map first names
 * each shard; without one, by name. { order } or { error } when a shard is missing (named by the
 * index, or a gap in 'model-0000i-of-0000N' names) or a file is not one the index names.
 */
export function orderShards(names, index, indexName = 'model.safetensors.index.json') {
  if (index !== undefined) {
    const map = index?.weight_map;
    if (map === null || typeof map !== 'object' || Array.isArray(map)) {
      return { error: `${indexName} has no weight_map ({ tensor: shard file })` };
    }
    const shards = [...new Set(Object.values(map).map(String))];
    if (shards.length === 0) return { error: `${indexName} names no shards` };
    const missing = shards.filter((s) => !names.includes(s)).sort(byName);
    if (missing.length) {
      return { error: `${indexName} names ${shards.length} shard${shards.length === 1 ? '' : 's'}; ` +
        `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing: drop every shard with the index` };
    }
    const stray = names.filter((n) => !shards.includes(n));
    if (stray.length) return { error: `${stray.join(', ')} ${stray.length === 1 ? 'is not a shard' : 'are not shards'} ${indexName} names` };
    return { order: shards };
  }
  const order = [...names].sort(byName);
  const parsed = order.map((n) => SHARD_NAME.exec(n));
  if (parsed.every(Boolean) && new Set(parsed.map((m) => `${m[1]}|${m[3]}`)).size === 1) {
    const [, stem, digits, total] = parsed[0];
    const have = new Set(parsed.map((m) => Number(m[2])));
    const missing = [];
    for (let i = 1; i <= Number(total); ++i) {
      if (!have.has(i)) missing.push(`${stem}-${String(i).padStart(digits.length, '0')}-of-${total}.safetensors`);
    }
    if (missing.length) return { error: `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing: drop every shard` };
  }
  return { order };
}

/**
 * The tensors a checkpoint's file(s) held, by storage type (the API's m.weights.formats: { Q8_0:
 * 168, F32: 61 }), the most common first: 'Q8_0 × 168, F32 × 61 tensors'; '' when none are given.
 */
export function formatsLine(formats) {
  const entries = Object.entries(formats ?? {}).filter(([, count]) => count > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  if (!entries.length) return '';
  const total = entries.reduce((sum, [, count]) => sum + count, 0);
  return `${entries.map(([type, count]) => `${type} × ${count}`).join(', ')} tensor${total === 1 ? '' : 's'}`;
}

const NORM_NAMES = { 'rms-norm': 'RMSNorm', 'rms-norm-1+w': 'RMSNorm (1 + w)', 'layer-norm': 'LayerNorm' };
// The rope_scaling types the core reads (model.config.rope.scaling), as the facts line says them.
const ROPE_SCALING_NAMES = { llama3: 'Llama 3 scaling', linear: 'linear scaling' };

/**
 * A loaded model's family (the name people know it by: lens.catalog.families' displayName) and
 * conventions, from the API's model.config alone:
 * 'Llama · 30 layers · 9 query heads sharing 3 K/V heads · head dim 64 · RMSNorm · SwiGLU ·
 * RoPE (rotate-half, θ 100000) · tied embeddings'. A shipped model (no family) gets what its config says.
 */
export function modelFacts(family, config) {
  const parts = [];
  if (family) parts.push(family);
  parts.push(`${config.layers} layer${config.layers === 1 ? '' : 's'}`);
  const { heads } = config;
  const kv = config.kvHeads ?? heads;
  parts.push(kv < heads ? `${heads} query heads sharing ${kv} K/V head${kv === 1 ? '' : 's'}` : `${heads} head${heads === 1 ? '' : 's'}`);
  parts.push(`head dim ${config.headDim ?? config.dModel / heads}`);
  const norm = config.norm ? NORM_NAMES[config.norm] ?? config.norm : config.layerNorm ? 'LayerNorm' : null;
  if (norm) parts.push(norm);
  const mlp = config.mlpKind ?? (config.mlp ? 'gelu' : null);
  if (mlp === 'swiglu') parts.push('SwiGLU');
  else if (mlp === 'geglu') parts.push('GeGLU');
  else if (mlp === 'gelu') parts.push(config.gelu === 'tanh' ? 'GELU (tanh)' : 'GELU');
  if (config.rope) {
    const { pairing, base, scaling, rotaryDims } = config.rope;
    const partial = rotaryDims && config.headDim && rotaryDims < config.headDim ? `, first ${rotaryDims} of ${config.headDim} dims` : '';
    const scaled = ROPE_SCALING_NAMES[scaling] ? `, ${ROPE_SCALING_NAMES[scaling]}` : '';
    parts.push(`RoPE (${pairing}, θ ${base}${partial}${scaled})`);
  } else if (config.positional === 'learned') {
    parts.push('learned positions');
  } else if (config.positional && config.positional !== 'none') {
    parts.push(`${config.positional} positions`);
  }
  const kinds = layerKinds(config);
  if (kinds) {
    const local = kinds.filter((k) => k.local);
    const windows = [...new Set(local.map((k) => k.window))].join(', ');
    parts.push(`${local.length} local layer${local.length === 1 ? '' : 's'} (sliding window ${windows}) + ` +
      `${kinds.length - local.length} global`);
  } else if (config.window > 0) {
    parts.push(`sliding window ${config.window}`);
  }
  if (config.tied) parts.push('tied embeddings');
  return parts.join(' · ');
}

/**
 * Which layers attend locally and which globally, from config.layerWindows (the core's window of
 * each layer; 0: every earlier key): null when every layer is alike (no window, or the same window
 * on all of them: the facts line says so), else one { local, window, label } per layer — label
 * 'local · window 512' (query i sees keys i − 512 < j ≤ i) or 'global'. Gemma 2 and 3 mix them.
 */
export function layerKinds(config) {
  const windows = config?.layerWindows;
  if (!Array.isArray(windows) || windows.length === 0 || windows.every((w) => w === windows[0])) return null;
  return windows.map((window) => (window > 0
    ? { local: true, window, label: `local · window ${window}` } : { local: false, window: 0, label: 'global' }));
}

/**
 * The sentence that explains the head grid's layer labels (null when layerKinds is): what a local
 * and a global layer's queries see.
 */
export function layerKindsLegend(config) {
  const kinds = layerKinds(config);
  if (!kinds) return null;
  const windows = [...new Set(kinds.filter((k) => k.local).map((k) => k.window))];
  const local = kinds.filter((k) => k.local).length;
  return `${local} of the ${kinds.length} layers are local: each query sees only the last ${windows.join(' or ')} tokens up to ` +
    'itself (a sliding window), so a local layer\'s heatmap is a band along the diagonal once the text is longer than that. ' +
    'The other layers are global: each query sees every earlier token.';
}

/** A probability as a percentage: the page's one formatter (shared/format.js's formatPercent: '12.3%', '< 0.01%'). */
export { formatPercent as percent } from '../../shared/format.js';

/**
 * The growing heatmap of a generation for one head, from the steps as m.generate returned them
 * (no attention computed here): row k is step k's query row of `head` in `layer`
 * (steps[k].attention[layer], [heads · t], t = the prompt's length + k: the positions that token
 * looked at); the columns are every position the rows cover — the prompt's and each new token but
 * the last — and a row's positions after its t are NaN (not written yet). Returns { data
 * (Float32Array [rows · cols]), rows, cols, rowTokens (the new tokens), colTokens }.
 * @param {string[]} promptTokens the prompt's tokens (the text the generation continued)
 * @param {{token: string, attention: Float32Array[]}[]} steps
 */
export function generationMatrix(promptTokens, steps, layer, head, heads) {
  const rows = steps.length;
  const lengths = steps.map((step) => step.attention[layer].length / heads);
  const cols = rows ? lengths[rows - 1] : 0;
  const data = new Float32Array(rows * cols).fill(NaN);
  steps.forEach((step, k) => {
    const t = lengths[k];
    data.set(step.attention[layer].subarray(head * t, (head + 1) * t), k * cols);
  });
  const rowTokens = steps.map((step) => step.token);
  const colTokens = [...promptTokens, ...rowTokens].slice(0, cols);
  return { data, rows, cols, rowTokens, colTokens };
}

/**
 * The rows of a generation step's strip (its query row over the t positions it saw, in every layer
 * and head; `attention`: per layer [heads · t], as m.generate's step gives it), as the reader picked:
 * 'layers' one row per layer, each position the largest weight of the layer's heads (the heads
 * max-pooled, as a heatmap too small for its cells pools them); 'layer' the heads of layer `layer`;
 * 'all' every layer × head, layer by layer. Returns { values (Float32Array [rows · t]), rows,
 * labels (one per row: 'L1' … or 'L3 H2' …) }. Nothing is computed but the pooling maximum.
 */
export function stripRows(attention, t, heads, mode, layer = 0) {
  const layers = attention.length;
  if (mode === 'layer') {
    return { values: attention[layer].slice(0, heads * t), rows: heads, labels: Array.from({ length: heads }, (_, h) => `H${h + 1}`) };
  }
  if (mode === 'all') {
    const values = new Float32Array(layers * heads * t);
    attention.forEach((a, l) => values.set(a.subarray(0, heads * t), l * heads * t));
    return { values, rows: layers * heads, labels: Array.from({ length: layers * heads }, (_, i) => `L${Math.floor(i / heads) + 1} H${(i % heads) + 1}`) };
  }
  const values = new Float32Array(layers * t);
  attention.forEach((a, l) => {
    for (let j = 0; j < t; ++j) {
      let most = 0;
      for (let h = 0; h < heads; ++h) most = Math.max(most, a[h * t + j]);
      values[l * t + j] = most;
    }
  });
  return { values, rows: layers, labels: Array.from({ length: layers }, (_, l) => `L${l + 1}`) };
}
