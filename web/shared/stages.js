// The walkthrough's stages: which traced steps each one shows, how to colour them, and the
// sentence that says what happens there (after the seeds' tutorials).

export const STAGES = [
  {
    id: 'embedding', title: 'Token embeddings', label: 'Embedding', steps: ['embedding'],
    text: 'Each token is looked up in an embedding table: one learned row of d_model numbers per ' +
      'vocabulary entry. Here the table is seeded, so the same word always gets the same row.',
  },
  {
    id: 'positional', title: 'Adding the positional encoding', label: '+ Position', steps: ['positional', 'input'],
    requires: 'positional', // without an additive encoding, the input is the embedding
    text: 'Attention by itself has no sense of order. A positional encoding (sinusoidal or learned) ' +
      'is added to each embedding, so "dog bites man" and "man bites dog" differ.',
  },
  {
    id: 'source', title: 'The source sequence', label: 'Source', steps: ['source'],
    text: 'Cross-attention: queries come from the target sentence, keys and values from this ' +
      'source sentence (as a decoder attends to the encoder).',
  },
  {
    id: 'qkv', title: 'Queries, keys and values', label: 'Q, K, V', steps: ['q', 'k', 'v'],
    text: 'Three learned projections give each token a query (what it looks for), a key (what it ' +
      'offers) and a value (what it passes on). Each head has its own slice of d_k columns.',
  },
  {
    id: 'qk-norm', title: 'Normalising queries and keys (q/k norm)', label: 'q/k norm', steps: ['q_normed', 'k_normed'],
    text: 'Each query and key is divided by its root mean square and scaled by a learned weight (RMSNorm), ' +
      'before any rotation: the scores q·k stay in a steady range however large the projections grow.',
  },
  {
    id: 'rope', title: 'Rotating queries and keys (RoPE)', label: 'RoPE', steps: ['q_rotated', 'k_rotated'],
    text: 'Rotary encoding rotates each pair of query and key dimensions by an angle proportional ' +
      'to the position, so q·k depends on the distance between tokens.',
  },
  {
    id: 'scores', title: 'Scores: every query against every key', label: 'QKᵀ', steps: ['scores'],
    text: 'Every query is compared with every key by a dot product: an n × n matrix of scores. ' +
      'This is the O(n²) step: double the tokens, four times the cells.',
  },
  {
    id: 'scaled', title: 'Scaling by √d_k', label: '÷ √d_k', steps: ['scaled'],
    text: 'Dot products of d_k-dimensional vectors grow like √d_k; dividing by √d_k keeps the ' +
      'softmax out of its flat, saturated regions where gradients vanish.',
  },
  {
    id: 'capped', title: 'Soft-capping the scores', label: 'Soft-cap', steps: ['capped'],
    text: 'Each scaled score s becomes c·tanh(s / c): nearly unchanged when small, never beyond ±c, so no ' +
      'single score can dominate the softmax.',
  },
  {
    id: 'alibi', title: 'ALiBi distance bias', label: 'ALiBi', steps: ['alibi'],
    text: 'ALiBi adds a penalty proportional to the distance between query and key, with a ' +
      'different slope per head, instead of adding positions to the embeddings.',
  },
  {
    id: 'masked', title: 'Masking', label: 'Mask', steps: ['masked'],
    text: 'Cells a query may not see are set to −∞ before the softmax, so they get exactly zero ' +
      'weight: future tokens for a causal (decoder) mask, padding tokens, or cells you click.',
  },
  {
    id: 'weights', title: 'Softmax: the attention weights', label: 'Softmax', steps: ['weights'],
    text: 'A softmax along each row turns scores into weights that are positive and sum to 1. ' +
      'The row maximum is subtracted first (a stable softmax); a row with no visible key is all zeros.',
  },
  {
    id: 'context', title: 'Weighted sum of the values', label: 'A·V', steps: ['context'],
    text: 'Each query\'s output is the weighted sum of the value vectors: a blend of the tokens it ' +
      'attends to.',
  },
  {
    id: 'concat', title: 'Concatenating the heads', label: 'Concat', steps: ['concat'],
    text: 'The heads\' outputs are placed side by side: h slices of d_k columns make d_model again.',
  },
  {
    id: 'output', title: 'Output projection', label: 'W_O', steps: ['output'],
    text: 'A final projection W_O mixes the heads into the layer\'s output, one d_model vector per token.',
  },
];

export const stageById = (id) => STAGES.find((s) => s.id === id);

const NORM_TEXT = {
  'rms-norm': 'normalized by RMSNorm (x · rsqrt(mean(x²) + ε) ⊙ w: no mean subtracted, no bias)',
  'layer-norm': 'normalized by LayerNorm ((x − mean) / σ ⊙ w + b)',
};

/**
 * A stage as it reads for the layer on screen (pure): a model's layer (`model` of the engine's
 * result: a shipped, trained or loaded checkpoint's layer, with its `norm`) starts from the
 * layer's own input, not a seeded table; `config` (the layer's) says how RoPE pairs dimensions,
 * and whether K/V heads are shared; a model's `window`, its sliding window.
 */
export function stageFor(stage, { model = null, config = {} } = {}) {
  if (stage.id === 'embedding' && model) {
    const norm = NORM_TEXT[model.norm];
    return { ...stage, title: 'The layer\'s input', label: 'Input',
      text: `The layer reads the residual stream after the blocks before it${norm ? `, ${norm}` : ''}: one row of ` +
        'd_model numbers per token, the model\'s own (not a seeded table).' };
  }
  if (stage.id === 'rope' && config.rope?.pairing === 'rotate-half') {
    const r = config.rope.rotaryDims;
    const partial = r && r < config.headDim;
    const half = partial ? 'r/2' : 'd_k/2';
    return { ...stage, text: 'Rotary encoding as the Llama family has it (rotate_half): dimension i of each query and ' +
      `key head turns with dimension i + ${half}, by an angle proportional to the position (θ base ${config.rope.base}), ` +
      'so q·k depends on the distance between tokens.' +
      (partial ? ` Only the first r = ${r} of the head's ${config.headDim} dimensions turn (a partial rotary); the ` +
        'others pass through unchanged.' : '') };
  }
  if (stage.id === 'qk-norm' && config.qkNorm && config.qkNorm !== 'none') {
    const weight = config.qkNormWeight === 'one-plus' ? '(1 + w), Gemma\'s form of the weight' : 'a learned weight w';
    const over = config.qkNorm === 'whole'
      ? 'over the whole projection at once (every head\'s columns of a token together, before the heads are split)'
      : 'head by head (each head\'s d_k columns on their own)';
    return { ...stage, text: `Each query and key is divided by its root mean square ${over} and scaled by ${weight} ` +
      '(RMSNorm), before any rotation: the scores q·k stay in a steady range however large the projections grow.' };
  }
  if (stage.id === 'scaled' && config.scale) {
    return { ...stage, title: 'Scaling the scores', label: '× scale',
      text: `The scores are multiplied by the model's own factor ${config.scale.toPrecision(4)} rather than 1/√d_k ` +
        `(= ${(1 / Math.sqrt(config.headDim)).toPrecision(4)}): Gemma's query_pre_attn_scalar^−½.` };
  }
  if (stage.id === 'capped' && config.softcap) {
    return { ...stage, text: `Each scaled score s becomes c·tanh(s / c) with c = ${config.softcap}: nearly unchanged when ` +
      'small, never beyond ±c, so no single score can dominate the softmax.' };
  }
  if (stage.id === 'qkv' && config.kvHeads && config.kvHeads < config.heads) {
    return { ...stage, text: `Three learned projections give each token a query, a key and a value. Grouped-query attention: ` +
      `${config.heads} query heads share ${config.kvHeads} key/value heads, ${config.heads / config.kvHeads} query heads ` +
      'reading each K/V head, so K and V are smaller than Q.' };
  }
  if (stage.id === 'masked' && model?.window) {
    return { ...stage, text: `A sliding window: query i sees only keys i − ${model.window} < j ≤ i (the model's own ` +
      'window); the other cells are set to −∞ before the softmax and get exactly zero weight.' };
  }
  return stage;
}

/** How a step's numbers are coloured. */
export function scaleFor(stepId) {
  return stepId === 'weights' ? 'probability' : 'diverging';
}
