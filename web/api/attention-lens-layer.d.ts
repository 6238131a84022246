// Types of the attention layer (lens.createLayer): its config, weights, forward, trace steps and
// cell explanations. Part of attention-lens.d.ts, which re-exports it.

export type PositionalKind = 'none' | 'sinusoidal' | 'learned' | 'rope' | 'alibi';
export type MaskKind = 'none' | 'causal' | 'sliding-window' | 'prefix-lm';

export interface LayerConfig {
  /** Model width d_model (1 … 4096). Default 64. */
  dModel?: number;
  /** Number of heads; must divide dModel unless headDim is given. Default 4. */
  heads?: number;
  /** Per-head width d_k; default dModel / heads. Other values leave PyTorch's layout. */
  headDim?: number;
  /**
   * Key/value heads (grouped-query attention): 0 (default) means heads; fewer must divide heads,
   * and query head h reads key/value head h / (heads / kvHeads). in_proj_weight is then
   * [(heads + 2·kvHeads)·headDim, dModel].
   */
  kvHeads?: number;
  /** in_proj_bias (q, k, v), and out_proj.bias unless outBias says otherwise. Default true. */
  bias?: boolean;
  /** out_proj.bias; null (default): as bias. */
  outBias?: boolean | null;
  /** Output projection W_O; false returns the concatenated heads. Default true. */
  outProj?: boolean;
  /** Positional information. Default 'none' (the PyTorch-equivalent setting). */
  positional?: PositionalKind;
  /** With positional 'rope': how q and k turn. Default the walkthrough's interleaved pairs, base 10000. */
  rope?: RopeOptions;
  /**
   * The scores' factor instead of 1/√headDim (a checkpoint block's own: Gemma's
   * query_pre_attn_scalar^−½); 0 (default) for 1/√headDim. forward's scale: false still turns it off.
   */
  scale?: number;
  /** > 0: the scaled scores soft-capped to c·tanh(s/c) before the mask (Gemma 2's attn_logit_softcapping). Default 0: none. */
  softcap?: number;
  /**
   * q/k norms before RoPE (RMSNorm of q and k, weights qNormWeight and kNormWeight): 'per-head'
   * (Qwen3, Gemma 3: [headDim] each), 'whole' (OLMo 2: the whole projection, [heads·headDim] and
   * [kvHeads·headDim]) or 'none' (default). A new layer's norms start as the identity.
   */
  qkNorm?: 'none' | 'per-head' | 'whole';
  /** The q/k norms' weight form: 'plain' (x̂ ⊙ w, default) or 'one-plus' (Gemma's x̂ ⊙ (1 + w)). */
  qkNormWeight?: 'plain' | 'one-plus';
  /** The q/k norms' ε (> 0). Default 1e-6. */
  qkNormEps?: number;
  /** Seed (0 … 2^32-1) of the weights, the embedding table and the learned encoding. Default 42. */
  seed?: number;
}

/** RoPE's convention: which dimensions pair up, the base θ, and optionally every pair's θ_i. */
export interface RopeOptions {
  /** 'interleaved' (2i, 2i+1) or 'rotate-half' (i, i + d_k/2: the Llama family's). */
  pairing?: 'interleaved' | 'rotate-half';
  /** θ_i = base^(−2i/d_k). Default 10000. */
  base?: number;
  /** θ per pair (e.g. Llama 3's scaled frequencies), or null for the base's. */
  frequencies?: number[] | Float64Array | null;
  /** A partial rotary (GPT-NeoX's rotary_pct): only the first rotaryDims (even, ≤ headDim) columns of each head turn. Default 0: all. */
  rotaryDims?: number;
}

/** One field of an options object as the core lists it (lens.catalog.fields). */
export interface CatalogField {
  name: string;
  kind: 'count' | 'number' | 'boolean' | 'choice' | 'optionalBoolean' | 'numbers' | 'object';
  /** count: the bounds the JS API checks. */
  min?: number;
  max?: number;
  /** choice: the accepted names. */
  names?: readonly string[];
  /** numbers: what they are. */
  note?: string;
  /** object: its own fields. */
  fields?: readonly CatalogField[];
}

/** Weights in PyTorch nn.MultiheadAttention layout (inner = heads · headDim). */
export interface LayerWeights {
  /** [3·inner, dModel]: rows W_Q, then W_K, then W_V; Q = X·W_Qᵀ + b_Q. */
  inProjWeight: Float32Array | number[];
  /** [3·inner] (layers with bias only). */
  inProjBias?: Float32Array | number[];
  /** [dModel, inner] (layers with outProj only). */
  outProjWeight?: Float32Array | number[];
  /** [dModel] (layers with bias and outProj only). */
  outProjBias?: Float32Array | number[];
  /** q_norm.weight (layers with qkNorm only): [headDim] per head, [heads·headDim] for 'whole'. */
  qNormWeight?: Float32Array | number[];
  /** k_norm.weight (layers with qkNorm only): [headDim] per head, [kvHeads·headDim] for 'whole'. */
  kNormWeight?: Float32Array | number[];
}

export interface ForwardOptions {
  /** Number of query tokens; default x.length / dModel. */
  n?: number;
  /** Cross-attention source [kvN · dModel]; default: self-attention (kv = x). */
  kv?: Float32Array | number[];
  /** Source length; default kv.length / dModel. */
  kvN?: number;
  /** Default 'none'. 'sliding-window' needs `window`, 'prefix-lm' uses `prefix`. */
  mask?: MaskKind;
  /** Sliding window: keys visible per query (itself and window-1 before it). */
  window?: number;
  /** Prefix-LM: the first `prefix` keys are visible to every query. */
  prefix?: number;
  /** [kvN] flags, 1 = padded key, hidden from every query. */
  keyPadding?: Uint8Array | ArrayLike<number | boolean>;
  /** [n · kvN] flags, 1 = hide key j from query i. */
  cellMask?: Uint8Array | ArrayLike<number | boolean>;
  /** Divide scores by √d_k. Default true. */
  scale?: boolean;
  /** Return the attention weights. Default true; false takes the output-only path. */
  weights?: boolean;
  /** Return every intermediate step. Default false. */
  trace?: boolean;
  /**
   * With trace: record the per-head steps (q, k, v, scores … context) of this head only
   * (0-based); -1 (the default) records every head. Shared steps and r.attention are unchanged.
   * One head's trace is heads times smaller and may hold heads times more tokens.
   */
  traceHead?: number;
  /**
   * A side s > 0: also return every head's weights max-pooled to at most s × s cells
   * (r.preview), for drawing long inputs small. Works with weights: false too (the weights are
   * then computed head by head and not returned). Default 0: no preview.
   */
  preview?: number;
}

/** Every head's attention weights max-pooled: each cell the largest weight of a step × step block. */
export interface WeightsPreview {
  /** Queries and keys per cell: ceil(max(n, kvN) / side). */
  step: number;
  /** ceil(n / step) */
  rows: number;
  /** ceil(kvN / step) */
  cols: number;
  /** [heads · rows · cols] */
  data: Float32Array;
}

export type StepId =
  | 'embedding' | 'positional' | 'input' | 'source' | 'q' | 'k' | 'v' | 'q_normed' | 'k_normed'
  | 'q_rotated' | 'k_rotated' | 'scores' | 'scaled' | 'capped' | 'alibi' | 'masked' | 'weights'
  | 'context' | 'concat' | 'output';

export interface Step {
  id: StepId;
  title: string;
  /** LaTeX. */
  equation: string;
  /** [rows, cols] */
  shape: number[];
  /** 0-based head, or -1 for steps shared by all heads. Titles and equations count from 1. */
  head: number;
  /** What a row is: 'query', 'key' or 'position'. */
  rows: string;
  /** What a column is: 'key' or 'dimension'. */
  cols: string;
  /** Row-major values; masked scores are -Infinity. */
  data: Float32Array;
}

export interface ForwardResult {
  /** [n · dModel] (or [n · heads · headDim] without outProj). */
  output: Float32Array;
  /** [heads · n · kvN] softmax weights per head, unless weights: false. */
  attention?: Float32Array;
  /** With preview: s, every head's weights max-pooled. */
  preview?: WeightsPreview;
  /** Every step in walkthrough order, with trace: true. */
  steps?: Step[];
}

/** Which cell to explain (see AttentionLayer.explain). */
export interface ExplainCell {
  /** A step id present in the last trace. */
  step: StepId;
  /** 0-based head: required for per-head steps (q … context); omit it (or -1) for shared steps. */
  head?: number;
  /** 0-based row of the step's grid (query or position). */
  row: number;
  /** 0-based column of the step's grid (key or dimension). */
  col: number;
}

/** One term of a dot product or weighted sum: left · right = product (computed in float32). */
export interface ExplainTerm {
  /** 0-based index over the summed axis (t, a key j, a RoPE dimension, or key k for weights). */
  index: number;
  left: number;
  right: number;
  product: number;
}

/**
 * Another number that goes into the cell,
 * e.g. { name: 'scale', latex: '1/\sqrt{d_k} = 1/\sqrt{4}', value: 0.5 }.
 */
export interface ExplainQuantity {
  /** Plain text, e.g. 'bias', 'row max', 'mask (masked)'. */
  name: string;
  /** The symbol, LaTeX. */
  latex: string;
  /** Sums are accumulated in double; a masked cell's mask is -Infinity. */
  value: number;
}

/**
 * The arithmetic behind one cell, computed by the core. Rows, columns and indices count from 0;
 * `head` is 0-based like Step.head, while summaries name heads 1-based ("head 2 of 4") like
 * the step titles. Per step:
 * - embedding: a lookup (no terms). positional (sinusoidal): quantities position, dimension,
 *   pair index, denominator 10000^(2i/d_model), angle; value = sin/cos(angle). learned: a lookup.
 * - input / source: quantities 'embedding' (source: 'source token (value − PE)', as kv itself
 *   is not traced), then 'positional encoding' with sinusoidal or learned encodings.
 * - q / k / v: terms x_in[i][t] · W[h·d_k + c][t] over dModel (x_in is the source for k, v
 *   under cross-attention); quantities 'sum of products', 'bias'.
 * - q_rotated / k_rotated: two terms (dims 2p, 2p+1: pre-rotation value · cos / ∓sin);
 *   quantities the pair, frequency θ_p, angle, cos, sin.
 * - scores: terms q_i[t] · k_j[t] over d_k (rotated with RoPE).
 * - scaled: quantities 'score', 'scale' (1/√d_k, or 1 with scale: false).
 * - alibi: quantities 'slope', 'distance'.
 * - masked: quantities 'scaled score', 'ALiBi bias' (with ALiBi), then 'mask (visible)' = 0
 *   or 'mask (masked)' = -Infinity.
 * - weights: quantities 'masked score', 'row max', 'shifted', 'exp', 'row sum'; value = exp / row sum.
 *   Terms: one per key k of the row with left = e^(x_ik − max), right = 1 / row sum,
 *   product = A_ik (the products sum to 1; term `col` is this cell). A row whose keys are all
 *   masked has weights 0 (never NaN): no terms, quantities 'masked score' and 'visible keys' = 0.
 * - context: terms A_ij · v_j[c] over keys j.
 * - concat: quantities 'head index (0-based)', 'column in head', 'context value'.
 * - output: terms z_i[t] · W_O[c][t]; quantities 'sum of products', 'bias' (without outProj:
 *   no terms, quantity 'concat').
 */
export interface CellExplanation {
  step: StepId;
  head: number;
  row: number;
  col: number;
  /** The cell exactly as the trace holds it (-Infinity for a masked score). */
  value: number;
  /** Plain text, e.g. "score = q_2 · k_1 = Σ_t q_2[t]·k_1[t] over d_k = 4 terms = 0.334 (head 2 of 2)". */
  summary: string;
  /** LaTeX, indices and values substituted: "S_{2,1} = \sum_{t=0}^{3} q_{2,t}\, k_{1,t} = 0.334". */
  equation: string;
  /** What a term's left and right are, e.g. 'q_2[t]' and 'k_1[t]'; '' when there are no terms. */
  leftLabel: string;
  rightLabel: string;
  /** Empty for steps without a sum. */
  terms: ExplainTerm[];
  /** The other numbers, in the order they are applied. */
  quantities: ExplainQuantity[];
}

export interface AttentionLayer {
  readonly config: Required<LayerConfig>;
  setWeights(weights: LayerWeights): void;
  getWeights(): { inProjWeight: Float32Array; inProjBias?: Float32Array; outProjWeight?: Float32Array; outProjBias?: Float32Array;
    qNormWeight?: Float32Array; kNormWeight?: Float32Array };
  /** Loads PyTorch state_dict tensors (in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias). */
  loadSafetensors(bytes: Uint8Array | ArrayBuffer): void;
  saveSafetensors(): Uint8Array;
  /** Rows of the seeded embedding table: [ids.length · dModel]. */
  embed(ids: Uint32Array | number[]): Float32Array;
  forward(x: Float32Array | number[], options?: ForwardOptions): ForwardResult;
  /**
   * The arithmetic behind one cell of the last successful forward, which must have run with
   * trace: true. Throws for an unknown step, a head out of range (or given for a shared step),
   * a row or column out of range, or weights replaced since that forward.
   */
  explain(cell: ExplainCell): CellExplanation;
  /** Frees the layer's wasm memory; using it afterwards throws. */
  dispose(): void;
}
