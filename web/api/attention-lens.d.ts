// Types for dist/attention-lens.mjs (and attention-lens.single.mjs), the Attention Lens JS API.
// Every array returned is a copy owned by JavaScript: none is a view into wasm memory.

export interface LoadOptions {
  /** The module's wasm bytes; by default read beside the .mjs (fs in Node, fetch in browsers). */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /**
   * Maps 'attention-lens.wasm' (and, with threads, 'attention-lens-threads.wasm' and its workers'
   * 'attention-lens-threads.worker.js') to the URL or path to load it from.
   */
  locateFile?: (file: string, scriptDirectory: string) => string;
  /**
   * 1 (the default), up to 16, or 'auto' (the machine's cores, at most 8). More than one loads the
   * threaded build (attention-lens-threads.mjs, beside this module) where SharedArrayBuffer exists
   * (node, a cross-origin isolated page), else one thread; the numbers are the same either way.
   * wasmBinary is this module's and is not passed on to the threaded build.
   */
  threads?: number | 'auto';
}

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

/** createModel options (README "Models and training"); omitted ones: catalog.defaults.model. */
export interface ModelConfig {
  /** Token ids 0 … vocab − 1; 2 to 512. */
  vocab?: number;
  /** The longest sequence; 1 to 1024. */
  context?: number;
  /** 1 to 512, a multiple of heads. */
  dModel?: number;
  heads?: number;
  /** 1 to 4. */
  layers?: number;
  positional?: 'none' | 'sinusoidal' | 'learned' | 'rope';
  /** Pre-LN in every block and a final ln_f. */
  layerNorm?: boolean;
  /** A GELU MLP block (4·dModel) after each attention block. */
  mlp?: boolean;
  /** Unembedding = embed.weight (no unembed.weight). */
  tied?: boolean;
  /** false drops every linear bias. */
  bias?: boolean;
  /** 'erf': torch.nn.GELU(); 'tanh': GPT-2's approximation. */
  gelu?: 'erf' | 'tanh';
  /** The initial weights. */
  seed?: number;
}

/** Token ids: an Int32Array or an array of integers. */
export type TokenIds = Int32Array | ArrayLike<number>;

export interface ModelForwardResult {
  /** [batch · n · vocab]. */
  logits: Float32Array;
  /** One per layer: [batch · heads · n · n], causal (zero above the diagonal). */
  attention: Float32Array[];
  /** With trace: true: one array per layer of that layer's steps, as AttentionLayer.forward's. */
  steps?: Step[][];
  /** With next: k: the k most likely next tokens (a checkpoint's with their text), as nextTokens'. */
  next?: { id: number; token?: string | null; probability: number }[];
}

/** A probe for headScores / headAblation: omit it for the core's default induction probe. */
export interface ProbeOptions {
  /** [batch · n] token ids. */
  ids?: TokenIds;
  /** Default: ids.length / batch. */
  n?: number;
  /** Default 1. */
  batch?: number;
}

export interface HeadScore {
  layer: number;
  head: number;
  /** Each a mean attention weight in [0, 1]; null when the probe cannot measure it (e.g. no
   * repeated token for induction and sameToken). */
  previousToken: number | null;
  induction: number | null;
  sameToken: number | null;
  firstToken: number | null;
}

export interface HeadAblation {
  /** The probe's mean cross-entropy with nothing ablated. */
  loss: number;
  /** Per layer and head: the loss with that head's output zeroed, and delta = that − loss. */
  heads: { layer: number; head: number; loss: number; delta: number }[];
}

/** generate's options; omitted ones: the core's defaults. */
export interface GenerateOptions {
  /**
   * New tokens at most (>= 1; the prompt and maxTokens must fit the context). Default 20, or what
   * the context leaves after the prompt.
   */
  maxTokens?: number;
  /** 0 (the default): greedy, the argmax (ties to the lower id); > 0: drawn from softmax(logits / temperature). */
  temperature?: number;
  /** Draw among the topK most likely ids only; 0 (the default): all. */
  topK?: number;
  /**
   * Draw among the fewest most likely ids whose probability (after topK, renormalized) reaches
   * topP; in (0, 1], 1 (the default): all.
   */
  topP?: number;
  /**
   * The sampler's seed (0 to 2^32 − 1): the same seed (and options) replays the same tokens.
   * Default 1. The token at sequence position p (the number of ids before it) is drawn from a
   * generator seeded from (seed, p) alone (NumpyRandomState of SplitMix64's mix of seed · 2^32 xor
   * p), so a run continued in several calls — generate(ids, { maxTokens: 8, seed }), then
   * generate(ids + those 8, { maxTokens: 12, seed }) — writes what one call of 20 writes.
   */
  seed?: number;
  /**
   * Ids that end the generation once produced (kept as its last token). Default: a checkpoint's
   * end-of-text ids (CheckpointModel.eos: config.json's eos_token_id), else none; [] for none.
   */
  stop?: TokenIds;
  /** Called with each step as it is produced, before the next one is computed. */
  onToken?: (step: GenerationStep) => void;
}

/** One generated token. */
export interface GenerationStep {
  id: number;
  /** Its text: a checkpoint's tokenizer's ('<0xNN>' for part of a character); null without one. */
  token: string | null;
  /** Its softmax probability at temperature 1 (float64), as nextTokens gives it. */
  probability: number;
  /**
   * Per layer [heads * t], head after head: the query row of the position whose logits chose this
   * token, over the t = prompt length + k positions so far (k: 0-based index of the new token).
   */
  attention: Float32Array[];
}

export interface Generation {
  /** The new tokens only. */
  ids: Int32Array;
  steps: GenerationStep[];
}

/** One ablated head: layer and head 0-based, as forward().attention and headScores(). */
export interface AblatedHead {
  layer: number;
  head: number;
  /** In [0, 1]: the head's output is multiplied by it; 0 (the default): zeroed. */
  scale?: number;
}

export interface TransformerModel {
  /** The normalized config (frozen). */
  readonly config: Readonly<Required<ModelConfig>>;
  /** Parameter names in buffer order (PyTorch style, e.g. 'layers.0.attn.in_proj_weight'). */
  readonly parameterNames: readonly string[];
  readonly parameterShapes: Readonly<Record<string, readonly number[]>>;
  /** Copies of every parameter. */
  parameters(): Record<string, Float32Array>;
  /** Replaces the named parameters (each exactly its size; an unknown name throws). */
  setParameters(values: Record<string, Float32Array | number[]>): void;
  /**
   * trace: true needs batch 1. logits 'last' (default 'all'): logits [batch * vocab] of each
   * sequence's last position only, equal to those rows of 'all' (skips the other rows' unembedding).
   * ablate: heads ablated in this call instead of ablate()'s ([]: none; the model's own stay as
   * they are). next: k, and result.next holds the k most likely next tokens after the first
   * sequence's last position (nextTokens of this forward).
   */
  forward(ids: TokenIds, options?: { n?: number; batch?: number; trace?: boolean; logits?: 'all' | 'last';
    ablate?: AblatedHead[]; next?: number }): ModelForwardResult;
  /** Mean next-token cross-entropy over targets >= 0 (< 0 ignored) and every parameter's gradient. */
  lossAndGradients(ids: TokenIds, targets: TokenIds, options?: { n?: number; batch?: number }):
    { loss: number; gradients: Record<string, Float32Array> };
  /**
   * The k (default 10) most likely next tokens after the last position of the last forward's first
   * sequence, highest first (ties by id); softmax probabilities computed in float64.
   */
  nextTokens(k?: number): { id: number; probability: number }[];
  /**
   * headScores' and headAblation's default probe: 16 sequences of min(context/2, 32) random tokens
   * then their repeat, seed 2022; for a checkpoint one sequence of min(context/2, 25) and its repeat.
   */
  probe(): { batch: number; n: number; ids: Int32Array };
  /** Default probe: probe(). */
  headScores(options?: ProbeOptions): HeadScore[];
  /** targets default to each position's next token (the last position not scored). */
  headAblation(options?: ProbeOptions & { targets?: TokenIds }): HeadAblation;
  /**
   * Writes up to maxTokens new tokens after the prompt through a KV cache (greedy by default;
   * seeded sampling with temperature, topK, topP). Uses the ablated heads. Replaces the last
   * forward's results: call forward again before nextTokens.
   */
  generate(ids: TokenIds, options?: GenerateOptions): Generation;
  /**
   * Ablates these heads (output zeroed, or scaled) in every later forward, trace, generate,
   * headScores, headAblation and lossAndGradients; [] restores the model bit for bit. A head out
   * of range, a scale outside [0, 1] or a head listed twice throws (the ablation in force stays).
   */
  ablate(heads: AblatedHead[]): void;
  /** The heads ablated now (a copy; [] when none). */
  readonly ablated: Required<AblatedHead>[];
  saveSafetensors(): Uint8Array;
  /** A checkpoint of another config throws naming the tensor; the weights stay unchanged. */
  loadSafetensors(bytes: Uint8Array | ArrayBuffer): void;
  /**
   * Layer `layer` (0-based, as forward().attention) on one sequence as a standalone attention
   * layer: createLayer(config), setWeights(weights), forward(input, { n, ...mask })
   * reproduce forward(ids).attention[layer] (to float32 precision) for every family: the
   * checkpoint block's q/k norms, partial rotary, scale and soft-cap come with it.
   */
  attentionLayer(layer: number, ids: TokenIds, options?: { n?: number }): AttentionLayerOfModel;
  /** Frees the model and disposes its trainers; using either afterwards throws. */
  dispose(): void;
}

export interface AttentionLayerOfModel {
  /** [n * dModel]: the layer's attention input, ln1(x) (x without LayerNorm). */
  input: Float32Array;
  /**
   * createLayer's options for it; a checkpoint's also headDim, kvHeads, outBias and rope, and scale,
   * softcap and qkNorm (with qkNormWeight and qkNormEps) only where its block has them.
   */
  config: LayerConfig & { dModel: number; heads: number; positional: 'none' | 'rope'; bias: boolean };
  /** inProjBias and outProjBias only with bias; qNormWeight and kNormWeight only with qkNorm. */
  weights: LayerWeights;
  /** The layer's mask: causal, or the checkpoint layer's own sliding window. */
  mask: { mask: 'causal' } | { mask: 'sliding-window'; window: number };
}

/** A head named in a trained model's claims (layers and heads count from 0). */
export interface ClaimedHead { layer: number; head: number; score: number }

/** One entry of web/models/models.json: what a shipped model is, how it was made, what it claims. */
export interface TrainedModelInfo {
  name: string;
  title: string;
  description: string;
  /** models/<file> beside the module. */
  file: string;
  bytes: number;
  task: TaskName;
  /** The task's characters: token id i is the i-th. */
  vocabulary: string;
  config: Required<ModelConfig>;
  /** createTrainer options and the steps taken. */
  training: Required<TrainerOptions> & { steps: number };
  /** Measured by the native tool at the end of training; tests/js/trained-models.test.mjs re-measures them. */
  metrics: {
    heldOutLoss: number;
    heldOutAccuracy: number;
    /** English: the loss of the training text's character frequencies. */
    unigramLoss?: number;
    bestInductionHead: ClaimedHead;
    bestPreviousTokenHead: ClaimedHead;
    /** English: on the held-out set's first 16 windows. */
    bestPreviousTokenHeadOnText?: ClaimedHead;
    /** headScores() on the default probe. */
    heads: HeadScore[];
  };
}

/**
 * What reading text does with a character outside a character model's alphabet: 'error' (the
 * default) throws naming it; 'map' reads another character of the alphabet in its place.
 */
export type UnknownCharacters = 'error' | 'map';

export interface AlphabetReadOptions {
  unknown?: UnknownCharacters;
}

/**
 * A character read as another (unknown: 'map'), tried in this order: 'lowercase' (a capital the
 * alphabet lacks), 'similar' (a look-alike: an accented letter's base letter, curly quotes as
 * straight ones, dashes as "-", "…" as ".", tabs and line breaks as a space, brackets as
 * parentheses), 'replaced' (anything else: a space if the alphabet has it, else "?", else its
 * first character; the page marks these).
 */
export interface MappedCharacter {
  /** Index of the character in the text, counting code points (= its token index). */
  position: number;
  typed: string;
  read: string;
  how: 'lowercase' | 'similar' | 'replaced';
}

/** Text in a character model's alphabet: one token per character (code point). */
export interface AlphabetText {
  /** The characters read (after mapping). */
  tokens: string[];
  ids: Int32Array;
  mapped: MappedCharacter[];
  /** One sentence saying what was mapped and why; '' when nothing was. */
  note: string;
}

/** A shipped trained model: a TransformerModel with its catalogue entry and alphabet. */
export interface TrainedModel extends TransformerModel {
  readonly info: Readonly<TrainedModelInfo>;
  readonly vocabulary: string;
  /** The text as the model reads it; a character outside the alphabet throws unless mapped. */
  tokenize(text: string, options?: AlphabetReadOptions): AlphabetText;
  /** Token ids of text, read as tokenize(text, options) reads it. */
  encode(text: string, options?: AlphabetReadOptions): Int32Array;
  decode(ids: TokenIds): string;
}

/** Hugging Face config.json of a GPT-2-family checkpoint; other keys are ignored. */
export interface Gpt2ConfigJson {
  model_type?: string; // 'gpt2' (default)
  n_layer: number;
  n_head: number;
  n_embd: number;
  n_positions?: number; // or n_ctx
  n_ctx?: number;
  vocab_size: number;
  n_inner?: number | null; // null or 4 * n_embd
  layer_norm_epsilon?: number; // 1e-5
  activation_function?: string; // 'gelu_new' (default), 'gelu_pytorch_tanh' or 'gelu'
  scale_attn_weights?: boolean;
  scale_attn_by_inverse_layer_idx?: boolean;
  [key: string]: unknown;
}

/**
 * Hugging Face config.json of a Llama-family checkpoint (model_type 'llama', 'qwen2' or
 * 'mistral'): the keys the core reads; a switch it does not implement (a rope_scaling type other
 * than 'llama3', a hidden_act other than 'silu', Qwen2's use_sliding_window true) is refused by
 * name. Other keys are ignored.
 */
export interface LlamaConfigJson {
  model_type: 'llama' | 'qwen2' | 'mistral';
  hidden_size: number;
  intermediate_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  num_key_value_heads?: number; // default: num_attention_heads
  head_dim?: number; // default: hidden_size / num_attention_heads
  max_position_embeddings: number;
  vocab_size: number;
  rms_norm_eps?: number; // 1e-6
  rope_theta?: number; // 10000
  rope_scaling?: null | { rope_type?: 'default' | 'llama3'; type?: string; factor?: number;
    low_freq_factor?: number; high_freq_factor?: number; original_max_position_embeddings?: number };
  tie_word_embeddings?: boolean; // false
  hidden_act?: 'silu';
  attention_bias?: boolean; // llama: q/k/v/o biases
  mlp_bias?: boolean; // llama
  sliding_window?: number | null; // mistral
  use_sliding_window?: boolean; // qwen2: false only
  [key: string]: unknown;
}

/**
 * A tokenizer, read by the core: tokenizer.json's text or the parsed tokenizer.json (byte-level BPE
 * with GPT-2's, Llama 3's, Qwen2's or GPT-4's pre-tokenizer, SentencePiece-style BPE with Metaspace
 * or Split and byte_fallback, added tokens, the post-processor's BOS), or GPT-2's two files:
 * vocab.json (its object or text) with merges.txt's text (or lines).
 */
export type Gpt2Tokenizer =
  | string
  | { model: { type?: 'BPE'; vocab: Record<string, number>; merges: string[] | [string, string][] };
      added_tokens?: { id: number; content: string }[]; [key: string]: unknown }
  | { vocab: Record<string, number> | string; merges: string | string[] | [string, string][] };

/**
 * A Blob or File (what loadCheckpoint reads of one), declared here so the types need neither the
 * DOM library nor @types/node.
 */
export interface BlobLike {
  readonly size: number;
  slice(start?: number, end?: number): { arrayBuffer(): Promise<ArrayBuffer> };
}

export type CheckpointWeights = Uint8Array | ArrayBuffer | BlobLike;

/** What a checkpoint's load does when onProgress is called, and how far that phase is. */
export interface LoadProgress {
  /** 'download': the files fetched from the Hub; 'prepare': the weights read into the core. */
  phase: 'download' | 'prepare';
  /** The phase's own fraction done, 0 … 1. */
  fraction: number;
}

export interface LoadCheckpointOptions {
  /**
   * model.safetensors or pytorch_model.bin (torch.save's zip format, torch >= 1.6, read by a
   * weights-only unpickler; the legacy pre-1.6 format is refused by name), told apart by their
   * first bytes; or the shards in the order model.safetensors.index.json or
   * pytorch_model.bin.index.json names them (F32, F16 or BF16; F16/BF16 weight matrices stay
   * 2-byte in memory; a Blob is read in 4 MB chunks, a .bin's zip directory and data.pkl first).
   */
  weights: CheckpointWeights | CheckpointWeights[];
  /** config.json: its text, or the parsed object (the core parses and checks it). */
  config: string | Gpt2ConfigJson | LlamaConfigJson;
  /** Default: GPT-2's own for a GPT-2 checkpoint with a vocab_size of at least 50 257; none for the Llama family. */
  tokenizer?: Gpt2Tokenizer;
  /**
   * Called after each chunk with the fraction of the tensors' bytes read; the second argument is
   * { phase: 'prepare', fraction } (the same fraction: reading files is preparing the weights).
   */
  onProgress?: (fraction: number, progress: LoadProgress) => void;
  hub?: undefined;
}

/** An AbortSignal (declared here so the types need neither the DOM library nor @types/node). */
export interface AbortSignalLike {
  readonly aborted: boolean;
}

/**
 * A checkpoint fetched by Hugging Face id: config.json, tokenizer.json (else vocab.json and
 * merges.txt, else GPT-2's own for GPT-2's vocabulary) and model.safetensors, or
 * model.safetensors.index.json and each shard it names (by Range requests), from
 * `${endpoint}/${id}/resolve/${revision}/${file}`; when the repo (at that revision) has neither,
 * pytorch_model.bin or pytorch_model.bin.index.json's shards the same way (kept in the cache
 * alike). Every family loadCheckpoint reads.
 */
export interface HubLoadOptions {
  /** 'org/name', or a repo's URL 'https://host/org/name' (its origin is then the endpoint). */
  hub: string;
  /** A branch, tag or commit. Default 'main'. */
  revision?: string;
  /** The Hub or a mirror. Default 'https://huggingface.co'. */
  endpoint?: string;
  /**
   * Called as bytes arrive with the fraction of all the files' bytes read (never going back; 1 at
   * the end), and what the load does now: { phase: 'download', fraction } while files are fetched,
   * then { phase: 'prepare', fraction } while the core reads the weights (from the download or the
   * browser's kept copy: a load from the cache has only this phase).
   */
  onProgress?: (fraction: number, progress: LoadProgress) => void;
  /** Aborting it stops the load, which rejects with "the load of 'org/name' was cancelled". */
  signal?: AbortSignalLike;
  /**
   * Keep the files in Cache Storage (a second load reads no network). Default: the browser's
   * `caches` where there is one; false: no cache; or a CacheStorage-like object of your own.
   */
  cache?: boolean | HubCacheStorage;
  weights?: undefined;
  config?: undefined;
  tokenizer?: undefined;
}

/** The part of the DOM's CacheStorage the Hub loader uses. */
export interface HubCacheStorage {
  open(name: string): Promise<{
    match(url: string): Promise<unknown>;
    put(url: string, response: unknown): Promise<void>;
    delete(url: string): Promise<boolean>;
    keys(): Promise<readonly unknown[]>;
  }>;
}

/** One file kept by loadCheckpoint({ hub }). */
export interface HubCachedFile {
  repo: string;
  revision: string;
  file: string;
  bytes: number;
  url: string;
  endpoint: string;
}

/** What a checkpoint's config.json became (CheckpointModel.config): the model's options and these. */
export interface CheckpointConfig extends Required<ModelConfig> {
  /** Key/value heads: fewer than heads is grouped-query attention (query head h reads h / (heads / kvHeads)). */
  kvHeads: number;
  headDim: number;
  /** 'rms-norm-1+w': Gemma's RMSNorm with a (1 + w) weight. */
  norm: 'layer-norm' | 'rms-norm' | 'rms-norm-1+w';
  /** 'geglu': gated with GELU (Gemma's GELU-tanh); 'swiglu': gated with SiLU; 'gelu': a plain MLP. */
  mlpKind: 'gelu' | 'swiglu' | 'geglu';
  mlpWidth: number;
  /** The first layer's sliding window (query i sees keys i − window < j ≤ i); 0: none. */
  window: number;
  /**
   * Each layer's own window (0: the layer sees every earlier key): Gemma 2 and 3 mix local
   * (sliding-window) and global layers; Mistral and Phi-3 have the same window on every layer.
   */
  layerWindows: number[];
  rope: null | { pairing: 'interleaved' | 'rotate-half'; base: number; scaled: boolean; /** Columns of each head that turn (Pythia's rotary_pct: fewer than headDim). */ rotaryDims: number };
}

/** A loaded checkpoint: a TransformerModel of its family (lens.catalog.families: GPT-2, the Llama family, GPT-NeoX, Qwen3, Gemma 2 and 3, OLMo 2, Phi-3). */
export interface CheckpointModel extends TransformerModel {
  /** The core's family name, one of lens.catalog.families' names (e.g. 'gpt2', 'llama', 'gpt_neox', 'gemma3_text'). */
  readonly family: string;
  readonly config: Readonly<CheckpointConfig>;
  /**
   * The checkpoint's tokenizer's ids of text, as the model gets them (with the BOS its
   * post-processor adds; a string is UTF-8 encoded, a lone surrogate as U+FFFD). tokens: each
   * token's bytes as text. Throws when the checkpoint has no tokenizer (none given, and not
   * GPT-2's vocabulary).
   */
  tokenize(text: string | Uint8Array): { tokens: string[]; ids: Int32Array };
  /** Whether tokenize works: a tokenizer was given, or the checkpoint has GPT-2's vocabulary. */
  readonly hasTokenizer: boolean;
  /** token: the token's bytes as text ('<0xNN>' for part of a character); null without a tokenizer. */
  nextTokens(k?: number): { id: number; token: string | null; probability: number }[];
  /** Each id's text: its bytes as text, '<0xNN>' per byte of part of a character; '[id N: no token]' for a row of the model's vocabulary past the tokenizer's (padding). Needs a tokenizer. */
  tokenTexts(ids: TokenIds): string[];
  /**
   * The end-of-text ids (config.json's eos_token_id: one id or a list, those within the
   * vocabulary; [] when it names none): generate stops at them unless given `stop`.
   */
  readonly eos: readonly number[];
}

export type TaskName = 'induction' | 'copy' | 'reverse' | 'sort' | 'english';

/** createTrainer options; omitted ones: catalog.defaults.trainer. */
export interface TrainerOptions {
  task?: TaskName;
  /** Peak learning rate. */
  lr?: number;
  /** Sequences per step. */
  batch?: number;
  weightDecay?: number;
  /** Max global gradient norm; 0 = no clipping. */
  clip?: number;
  /** The task's batches (the model has its own seed). */
  seed?: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  /** Linear warmup steps. */
  warmup?: number;
  /** > warmup: cosine decay to minLr at totalSteps; 0 = constant after warmup. */
  totalSteps?: number;
  minLr?: number;
  /** Held-out sequences. */
  heldOut?: number;
}

export interface TrainReport {
  /** Steps taken so far. */
  step: number;
  /** The last step's training loss. */
  loss: number;
  /** Absent when step(k, { evaluate: false }). */
  heldOutLoss?: number;
  /** Fraction of held-out targets predicted (argmax). Absent when step(k, { evaluate: false }). */
  accuracy?: number;
}

/** The held-out set's loss and accuracy after `step` steps (trainer.evaluate()). */
export interface HeldOutEvaluation {
  step: number;
  heldOutLoss: number;
  accuracy: number;
}

export interface Trainer {
  /** Token id i is vocabulary's i-th character. */
  readonly task: { name: TaskName; vocabulary: string };
  readonly steps: number;
  /**
   * k >= 1 steps, then the held-out evaluation (a forward of every held-out sequence, about three
   * steps' worth at the defaults) unless { evaluate: false }. Throws "diverged at step
   * N: …" on a NaN/∞ loss, keeping the last good weights.
   */
  step(k?: number): TrainReport & { heldOutLoss: number; accuracy: number };
  step(k: number, options: { evaluate?: boolean }): TrainReport;
  /** The held-out loss and accuracy now; takes no step. */
  evaluate(): HeldOutEvaluation;
  encode(text: string): Int32Array;
  decode(ids: TokenIds): string;
  heldOut(): { batch: number; n: number; ids: Int32Array; targets: Int32Array };
  /** Frees the trainer (the model stays). */
  dispose(): void;
}

/** One step of the catalog (lens.catalog.steps), in walkthrough order. */
export interface CatalogStep {
  id: StepId;
  /** Generic title; a per-head step's trace title adds ", head h". */
  title: string;
  /** One grid per head (else one shared by all heads). */
  perHead: boolean;
  rows: 'query' | 'key' | 'position';
  cols: 'key' | 'dimension';
  /** Generic LaTeX; `%` marks the 1-based head number. */
  equation: string;
  /** When the step is in a trace: null = always. */
  appearsWith: null | { positional: PositionalKind[] } | { cross: true };
  /** The condition in words, e.g. "positional: 'rope'"; null = always. */
  needs: string | null;
}

/** What the core offers, read from it once (deep-frozen). */
export interface Catalog {
  steps: readonly CatalogStep[];
  /** Exactly the names createLayer's positional accepts. */
  positional: readonly PositionalKind[];
  /** Exactly the names forward's mask accepts. */
  masks: readonly MaskKind[];
  /** Exactly the modes tokenize accepts. */
  tokenizers: readonly ('word' | 'char')[];
  /** The unknown-character policies of a character model's tokenize / encode; the first is the default. */
  unknownCharacters: readonly UnknownCharacters[];
  /** Exactly the names createModel's gelu accepts. */
  gelu: readonly ('erf' | 'tanh')[];
  /** Exactly the names createTrainer's task accepts. */
  tasks: readonly TaskName[];
  /** The checkpoint families loadCheckpoint reads: the core's name (m.family), config.json's model_type, the name people know. */
  families: readonly { name: string; modelType: string; displayName: string }[];
  /** The bytes one parameter takes in the tab by the dtype a checkpoint stores it in (F16/BF16 weights stay 2-byte). */
  parameterBytes: Readonly<Record<'F32' | 'F64' | 'F16' | 'BF16', number>>;
  /** Each options object's fields, from the core's one list of them (names, kinds, bounds). */
  fields: { layer: readonly CatalogField[]; forward: readonly CatalogField[];
    model: readonly CatalogField[]; trainer: readonly CatalogField[] };
  /** The values used for omitted options. */
  defaults: {
    layer: Required<LayerConfig>;
    forward: { mask: MaskKind; window: number; prefix: number; scale: boolean; weights: boolean;
      trace: boolean; traceHead: number; preview: number };
    model: Required<ModelConfig>;
    trainer: Required<TrainerOptions>;
  };
  /** The core's size limits (exceeding one throws). */
  limits: { maxModelDim: number; maxHeads: number; maxSequence: number; maxScoreValues: number;
    maxTraceValues: number; maxTokens: number; vocabularySize: number; maxModelVocab: number;
    maxModelContext: number; maxModelDModel: number; maxModelLayers: number;
    /** A loaded checkpoint's own bounds (loadCheckpoint), and the float32 bytes of its parameters. */
    maxCheckpointVocab: number; maxCheckpointContext: number; maxCheckpointDModel: number;
    maxCheckpointLayers: number; maxCheckpointParameterBytes: number };
}

export interface AttentionLens {
  /** The step catalog, option names, defaults and limits (deep-frozen). */
  readonly catalog: Catalog;
  createLayer(config?: LayerConfig): AttentionLayer;
  createModel(config?: ModelConfig): TransformerModel;
  /** A Hugging Face checkpoint of the GPT-2 or Llama family (README "Your own model"); errors name what was found. */
  loadCheckpoint(options: LoadCheckpointOptions | HubLoadOptions): Promise<CheckpointModel>;
  /** The Hub files kept in this browser: list them, remove one repo's or all (empty in Node). */
  hubCache(storage?: HubCacheStorage): {
    list(): Promise<HubCachedFile[]>;
    remove(repo?: string): Promise<number>;
  };
  /** The trainer borrows the model: disposing the model disposes the trainer. */
  createTrainer(model: TransformerModel, options?: TrainerOptions): Trainer;
  /** The names of the shipped trained models (the catalogue is built into the module). */
  readonly trainedModels: readonly string[];
  /** A shipped trained model's catalogue entry, without loading its weights; unknown names throw. */
  trainedModelInfo(name: string): Readonly<TrainedModelInfo>;
  /**
   * Opens a shipped trained model. Its weights are read from models/<name>.safetensors beside
   * the module (Node: the file; browsers: fetch) unless `bytes` gives them (a page on file://,
   * where fetch cannot read files, or the single-file module). Unknown names throw listing them.
   */
  trainedModel(name: string, options?: { bytes?: Uint8Array | ArrayBuffer }): Promise<TrainedModel>;
  /** Equal to np.random.RandomState(seed).randn(count), bit for bit. */
  numpyRandn(seed: number, count: number): Float64Array;
  /** Word tokens (punctuation apart) or characters, with their embedding-table ids. */
  tokenize(text: string, options?: { mode?: 'word' | 'char' }): { tokens: string[]; ids: Uint32Array };
  /** 'wasm' for the SIMD build, 'scalar' without SIMD. */
  readonly simd: string;
  /** How many threads the core computes with: 1 unless loaded with threads where it can be. */
  readonly threads: number;
  /** Wasm heap size and bytes allocated in it. */
  memory(): { heapBytes: number; allocatedBytes: number };
}

export function loadAttentionLens(options?: LoadOptions): Promise<AttentionLens>;
