// Types of checkpoints (lens.loadCheckpoint: files or the Hub) and of the loaded CheckpointModel.
// Part of attention-lens.d.ts, which re-exports it.
import type { ModelConfig, TokenIds, TransformerModel } from './attention-lens-model.js';

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
  /**
   * A Hub load's download only: the bytes behind the fraction — the small files read and the
   * weights' bytes received so far (received), of those and the weights' sizes known so far (total).
   */
  received?: number;
  total?: number;
}

export interface LoadCheckpointOptions {
  /**
   * model.safetensors or pytorch_model.bin (torch.save's zip format, torch >= 1.6, read by a
   * weights-only unpickler; the legacy pre-1.6 format is refused by name), told apart by their
   * first bytes; or the shards in the order model.safetensors.index.json or
   * pytorch_model.bin.index.json names them (F32, F16 or BF16; F16/BF16 weight matrices stay
   * 2-byte in memory; a Blob is read in 4 MB chunks, a .bin's zip directory and data.pkl first);
   * or one GGUF file (magic 'GGUF'; architectures gpt2, llama (Llama 3's rope_freqs.weight
   * included), qwen2, gptneox, qwen3, gemma2, gemma3 (text only), phi3; F32, F16, BF16 and
   * Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K — the quantized ones kept in their blocks,
   * dequantized as the kernels stream them),
   * its header and metadata read first, in as many ranges as it takes.
   */
  weights: CheckpointWeights | CheckpointWeights[];
  /**
   * config.json: its text, or the parsed object (the core parses and checks it). Required for
   * .safetensors and pytorch_model.bin; refused for a GGUF file, whose metadata is its config.
   */
  config?: string | Gpt2ConfigJson | LlamaConfigJson;
  /**
   * Default: a GGUF file's own when its metadata holds a byte-level BPE (tokenizer.ggml.model 'gpt2'; pre-tokenizers
   * gpt-2, smollm, llama-bpe, qwen2) or a SentencePiece BPE ('llama': Llama 2, TinyLlama, Mistral, Phi-3, Gemma; its
   * merges generated from the scores as transformers' converter does); GPT-2's own for a GPT-2 checkpoint with a
   * vocab_size of at least 50 257; none for the Llama family.
   */
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
  /**
   * A GGUF file of the repo ('SmolLM2-135M-Instruct-Q8_0.gguf', or up to two folders down): only
   * it is fetched, by Range, its header and metadata first (they are its config and tokenizer).
   * Without it, the repo's model.safetensors or pytorch_model.bin with its config.json.
   */
  file?: string;
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

/**
 * lens.hubFiles' options: the repo and revision as loadCheckpoint({ hub }) takes them. The list is
 * the Hub's tree API (`${endpoint}/api/models/${id}/tree/${revision}?recursive=true&expand=false`,
 * every `Link: <…>; rel="next"` page, at most 100 pages and 100 000 entries).
 */
export interface HubFilesOptions {
  /** 'org/name', or a repo's URL 'https://host/org/name' (its origin is then the endpoint). */
  hub: string;
  /** A branch, tag, commit or 'refs/pr/N'. Default 'main'. */
  revision?: string;
  /** The Hub or a mirror. Default 'https://huggingface.co'. */
  endpoint?: string;
  /** Aborting it stops the listing, which rejects with "the file list of 'org/name' was cancelled". */
  signal?: AbortSignalLike;
}

/** One file of a repo (lens.hubFiles): its path in the repo and its size (an LFS file's real size). */
export interface HubFile {
  file: string;
  bytes: number;
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
  rope: null | { pairing: 'interleaved' | 'rotate-half'; base: number; scaled: boolean; /** Which rope_scaling config.json gave: Llama 3's, linear (Gemma 3's full layers), or none. */ scaling: 'none' | 'llama3' | 'linear'; /** Columns of each head that turn (Pythia's rotary_pct: fewer than headDim). */ rotaryDims: number };
}

/** A loaded checkpoint: a TransformerModel of its family (lens.catalog.families: GPT-2, the Llama family, GPT-NeoX, Qwen3, Gemma 2 and 3, OLMo 2, Phi-3). */
export interface CheckpointModel extends TransformerModel {
  /** The core's family name, one of lens.catalog.families' names (e.g. 'gpt2', 'llama', 'gpt_neox', 'gemma3_text'). */
  readonly family: string;
  readonly config: Readonly<CheckpointConfig>;
  /**
   * The tensors read: how many of each storage type the file names ('F32', 'F16', 'BF16',
   * 'Q8_0', 'Q4_K', …; each kept so in memory: F16/BF16 matrices 2-byte, GGUF's quantized ones in
   * their blocks, dequantized as the kernels stream them), their bytes in the file(s), and the
   * bytes the model's parameters take in memory.
   */
  readonly weights: {
    readonly formats: Readonly<Record<string, number>>;
    readonly bytes: number;
    readonly memory: number;
  };
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
