// Types for dist/attention-lens.mjs (and attention-lens.single.mjs), the Attention Lens JS API.
// Every array returned is a copy owned by JavaScript: none is a view into wasm memory.

export interface LoadOptions {
  /** The module's wasm bytes; by default read beside the .mjs (fs in Node, fetch in browsers). */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Maps 'attention-lens.wasm' to the URL or path to load it from. */
  locateFile?: (file: string, scriptDirectory: string) => string;
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
  /** in_proj_bias and out_proj.bias. Default true. */
  bias?: boolean;
  /** Output projection W_O; false returns the concatenated heads. Default true. */
  outProj?: boolean;
  /** Positional information. Default 'none' (the PyTorch-equivalent setting). */
  positional?: PositionalKind;
  /** Seed (0 … 2^32-1) of the weights, the embedding table and the learned encoding. Default 42. */
  seed?: number;
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
}

export type StepId =
  | 'embedding' | 'positional' | 'input' | 'source' | 'q' | 'k' | 'v' | 'q_rotated' | 'k_rotated'
  | 'scores' | 'scaled' | 'alibi' | 'masked' | 'weights' | 'context' | 'concat' | 'output';

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
  /** Every step in walkthrough order, with trace: true. */
  steps?: Step[];
}

export interface AttentionLayer {
  readonly config: Required<LayerConfig>;
  setWeights(weights: LayerWeights): void;
  getWeights(): { inProjWeight: Float32Array; inProjBias?: Float32Array; outProjWeight?: Float32Array; outProjBias?: Float32Array };
  /** Loads PyTorch state_dict tensors (in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias). */
  loadSafetensors(bytes: Uint8Array | ArrayBuffer): void;
  saveSafetensors(): Uint8Array;
  /** Rows of the seeded embedding table: [ids.length · dModel]. */
  embed(ids: Uint32Array | number[]): Float32Array;
  forward(x: Float32Array | number[], options?: ForwardOptions): ForwardResult;
  /** Frees the layer's wasm memory; using it afterwards throws. */
  dispose(): void;
}

export interface AttentionLens {
  createLayer(config?: LayerConfig): AttentionLayer;
  /** Equal to np.random.RandomState(seed).randn(count), bit for bit. */
  numpyRandn(seed: number, count: number): Float64Array;
  /** Word tokens (punctuation apart) or characters, with their embedding-table ids. */
  tokenize(text: string, options?: { mode?: 'word' | 'char' }): { tokens: string[]; ids: Uint32Array };
  /** 'wasm' for the SIMD build, 'scalar' without SIMD. */
  readonly simd: string;
  /** Wasm heap size and bytes allocated in it. */
  memory(): { heapBytes: number; allocatedBytes: number };
}

export function loadAttentionLens(options?: LoadOptions): Promise<AttentionLens>;
