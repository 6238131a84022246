// Types for dist/attention-lens.mjs (and attention-lens.single.mjs), the Attention Lens JS API.
// Every array returned is a copy owned by JavaScript: none is a view into wasm memory.
// The layer's, the models' and the checkpoints' types are in attention-lens-{layer,model,checkpoint}.d.ts,
// re-exported here: import everything from this file.
import type { AttentionLayer, CatalogField, LayerConfig, MaskKind, PositionalKind, StepId } from './attention-lens-layer.js';
import type { ModelConfig, TokenIds, TrainedModel, TrainedModelInfo, TransformerModel, UnknownCharacters } from './attention-lens-model.js';
import type { CheckpointModel, HubCacheStorage, HubCachedFile, HubFile, HubFilesOptions, HubLoadOptions, LoadCheckpointOptions } from './attention-lens-checkpoint.js';
export * from './attention-lens-layer.js';
export * from './attention-lens-model.js';
export * from './attention-lens-checkpoint.js';


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
  /** A Hugging Face checkpoint of the GPT-2 or Llama family (docs/javascript-api.md, "Your own model"); errors name what was found. */
  loadCheckpoint(options: LoadCheckpointOptions | HubLoadOptions): Promise<CheckpointModel>;
  /** The Hub files kept in this browser: list them, remove one repo's or all (empty in Node). */
  hubCache(storage?: HubCacheStorage): {
    list(): Promise<HubCachedFile[]>;
    remove(repo?: string): Promise<number>;
  };
  /**
   * Every file of a Hub repo at a revision, sorted by path (the Hub's tree API, every page);
   * refusals (not found, gated, no such revision, unreachable, an answer not understood) read as
   * loadCheckpoint({ hub })'s.
   */
  hubFiles(options: HubFilesOptions): Promise<HubFile[]>;
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
