// Types of the models (lens.createModel, the trained models, the alphabet): forward, probes, head
// scores, ablation and generation. Part of attention-lens.d.ts, which re-exports it.
import type { AttentionLayer, LayerConfig, LayerWeights, Step } from './attention-lens-layer.js';
import type { CheckpointModel } from './attention-lens-checkpoint.js';
import type { TaskName, TrainerOptions } from './attention-lens.js';

/** createModel options (docs/javascript-api.md, "Models and training"); omitted ones: catalog.defaults.model. */
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

/** logitLens' options; omitted ones: the core's defaults. */
export interface LogitLensOptions {
  /** The most likely ids kept per row and position: 1 to min(vocab, 100); default 5. */
  topK?: number;
  /** A token id whose probability and rank to report at every row and position. */
  token?: number;
}

/**
 * The logit lens of one sequence: rows = layers + 1 (row l < layers: the residual stream entering
 * block l, row 0 the embeddings; the last: after the last block) × n positions, each read through
 * the model's own final norm (with that row's statistics), unembedding and final soft-cap.
 */
export interface LogitLens {
  rows: number;
  n: number;
  topK: number;
  /** [rows * n * topK], index (row * n + position) * topK + j: most likely first, ties by the lower id. */
  ids: Int32Array;
  /** Their softmax probabilities (float64 softmax); the last row's are the forward's own. */
  probs: Float32Array;
  /** With options.token: its probability and rank (0 = the most likely) at every row and position, [rows * n]. */
  token: { id: number; probs: Float32Array; ranks: Int32Array } | null;
}

/** attribute's options. */
export interface AttributeOptions {
  /** [a, b]: token ids; the metric is logit[a] − logit[b] at the last position. */
  answers: TokenIds;
}

/**
 * Direct logit attribution of logit[a] − logit[b] at the last position: each part's contribution
 * through the final norm with its scale frozen from this run (each part mean-centred for
 * LayerNorm, not for RMSNorm). The parts sum to total, to float rounding.
 */
export interface LogitAttribution {
  /** The forward's logit[a] − logit[b]. */
  total: number;
  /** The token embedding (× Gemma's scale) plus the learned or sinusoidal positions. */
  embed: number;
  /** [layers * heads], index layer * heads + head: the head's output before out_proj (hook_z) through its out_proj columns. */
  heads: Float32Array;
  /** [layers]: out_proj's bias (0 without one). */
  attentionBias: Float32Array;
  /** [layers]: the MLP's output, its bias included (0 without an MLP). */
  mlp: Float32Array;
  /** The final norm's bias: b · (W_U[a] − W_U[b]) (0 without one). */
  constant: number;
}

/** patch's options. */
export interface PatchOptions {
  /** The clean prompt's token ids. */
  clean: TokenIds;
  /** The corrupted prompt's token ids: as many as the clean prompt's. */
  corrupted: TokenIds;
  /** [a, b]: token ids; the metric is logit[a] − logit[b] at the last position. */
  answers: TokenIds;
  /**
   * 'heads': each head's output before out_proj (hook_z) at every position; 'residual': the
   * residual stream entering each block (resid_pre) at each position; 'layers': each block's
   * attention output and MLP output at every position.
   */
  over: 'heads' | 'residual' | 'layers';
}

/**
 * Activation patching (denoising): the metric of the clean and the corrupted run, and for each
 * site (patched − corrupted) / (clean − corrupted) with the site's activation taken from the clean
 * run into the corrupted run (1: it restores the clean answer alone; 0: it changes nothing).
 */
export interface Patching<Effect> {
  /** The clean run's logit[a] − logit[b]. */
  clean: number;
  /** The corrupted run's logit[a] − logit[b]. */
  corrupted: number;
  /**
   * over 'heads': [layers * heads], index layer * heads + head; 'residual': [layers * n], index
   * layer * n + position; 'layers': { attention, mlp }, [layers] each.
   */
  effect: Effect;
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
   * The logit lens of one sequence (docs/API.md, "Analysis: what a head does"): the top-k next
   * tokens read from every layer's residual stream, and a chosen token's probability and rank.
   */
  logitLens(ids: TokenIds, options?: LogitLensOptions): LogitLens;
  /**
   * Attention rollout (Abnar & Zuidema 2020): [layers * n * n], index (l * n + i) * n + j,
   * R_l = Â_l · R_(l−1), R_0 = Â_0, Â_l = 0.5 · (mean over heads of A_l) + 0.5 · I, rows
   * renormalised; every row sums to 1.
   */
  rollout(ids: TokenIds): Float32Array;
  /**
   * Direct logit attribution at the last position. Throws, saying why, for a model whose blocks
   * normalise their sublayers' outputs (Gemma 2 and 3, OLMo 2) or that soft-caps its logits.
   */
  attribute(ids: TokenIds, options: AttributeOptions): LogitAttribution;
  /**
   * Activation patching over heads, the residual stream or whole sublayers (ablated heads stay
   * ablated in every run). Throws for prompts of different lengths (naming both), answers that
   * give both runs the same metric, or a call too large to run (saying how large).
   */
  patch(options: PatchOptions & { over: 'heads' | 'residual' }): Patching<Float32Array>;
  patch(options: PatchOptions & { over: 'layers' }): Patching<{ attention: Float32Array; mlp: Float32Array }>;
  /**
   * The run on `ids` (or a checkpoint's `text`) as a snapshot for <attention-lens> (docs/embedding.md): tokens, every (or `layers`') layer × head's attention quantised to 8 bits per row
   * (within 1/510), the `top` next tokens, the knocked-out heads, the provenance. JSON.stringify it
   * for the .json file.
   */
  snapshot(options: SnapshotOptions): Snapshot;
  /**
   * Ablates these heads (output zeroed, or scaled) in every later forward, trace, generate,
   * headScores, headAblation, lossAndGradients, logitLens, rollout, attribute and patch; [] restores
   * the model bit for bit. A head out
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

/** Options of model.snapshot. */
export interface SnapshotOptions {
  ids?: Int32Array | number[];
  /** A checkpoint with a tokenizer only; not with ids. */
  text?: string;
  /** 0-based layers to keep (default: every layer). */
  layers?: number[];
  /** The layer and head shown first (0-based). */
  layer?: number;
  head?: number;
  /** How many next tokens (default 10). */
  top?: number;
  source?:
    | { source: 'hub'; id: string; revision?: string; file?: string; endpoint?: string }
    | { source: 'files'; fileName: string; files?: { name: string; bytes: number; sha256: string }[] }
    | { source: 'shipped'; name: string };
  settings?: Record<string, string | number | boolean>;
}

/** A snapshot document (format 'attention-lens-snapshot'): plain JSON. */
export interface Snapshot {
  format: 'attention-lens-snapshot';
  version: number;
  kind: 'model' | 'circuits';
  provenance: { generator: string; version: string; created: string; model: object | null; family: string; text: string; settings: object };
  model: { layers: number; heads: number; kvHeads: number };
  [part: string]: unknown;
}
