// The public JavaScript API of Attention Lens (docs/javascript-api.md; its place in the
// layers: ARCHITECTURE.md).
// This file is the API's entry: the loader and the lens object; the modules it imports hold the
// rest (common.js: argument checks; layer.js, model.js, trained-models.js, checkpoint.js, hub.js,
// trainer.js, alphabet.js: one part each). scripts/bundle-api.mjs bundles them into one file that
// CMake appends to the Emscripten module (--extern-post-js), so dist/attention-lens.mjs is one ES
// module that works in Node >= 18 and in browsers. `createAttentionLensCore` (the Emscripten
// factory) and the ATTN_* constants (from the generated --extern-pre-js) are globals of that file.
//
// Lifetime rule: every array this API returns is a copy owned by JavaScript. Nothing returned
// is a view into wasm memory, so memory growth can never leave you holding a detached array.
import { checkpointOptions, loadCheckpoint, loadGpt2Tokenizer } from './checkpoint.js';
import { byteArray, checkKeys, checkOptions, deepFreeze, describe, integerIn, isNode, needTraining, numbers, unwrap } from './common.js';
import { hubCacheApi, listHubFiles, loadHubCheckpoint } from './hub.js';
import { AttentionLayer } from './layer.js';
import { TransformerModel } from './model.js';
import { readModelFile, TRAINED_NAMES, trainedInfo, TrainedModel } from './trained-models.js';
import { Trainer } from './trainer.js';

/* global createAttentionLensCore, ATTN_WASM_INLINED, ATTN_THREADS_BUILD, ATTN_TRAINED_MODELS */

// This module's wasm; the threaded build (ATTN_THREADS_BUILD) is attention-lens-threads.mjs, with
// its .wasm and its workers' script (.worker.js; for node a .worker.cjs copy).
const WASM_FILE = ATTN_THREADS_BUILD ? 'attention-lens-threads.wasm' : 'attention-lens.wasm';
const THREADS_MODULE = 'attention-lens-threads.mjs';
const MAX_THREADS = 16;

// Whether this context can run the threaded build: SharedArrayBuffer exists (a browser gives it
// only to a cross-origin isolated page: COOP/COEP headers) — node always.
function threadsPossible() {
  return typeof SharedArrayBuffer === 'function' && (isNode || globalThis.crossOriginIsolated === true);
}

async function threadsWanted(value) {
  if (value === undefined) return 1;
  if (value === 'auto') {
    let cores = globalThis.navigator?.hardwareConcurrency;
    if (!cores && isNode) {
      const osModule = 'node:os';
      const os = await import(/* @vite-ignore */ osModule);
      cores = os.availableParallelism?.() ?? os.cpus().length;
    }
    return Math.max(1, Math.min(cores || 1, 8));
  }
  return integerIn('threads', value, 1, MAX_THREADS);
}

/**
 * Loads the wasm module and returns the API object.
 * threads: 1 (default), n or 'auto' (the machine's cores, at most 8): more than one loads the
 * threaded build where it can run (a cross-origin isolated page, or node), else one thread;
 * lens.threads says how many it got. The numbers are the same either way.
 * @param {{wasmBinary?: ArrayBuffer|Uint8Array, locateFile?: (file: string, dir: string) => string,
 *   threads?: number|'auto'}} [options]
 */
export async function loadAttentionLens(options = {}) {
  checkKeys('loadAttentionLens options', options, ['wasmBinary', 'locateFile', 'threads']);
  const threads = await threadsWanted(options.threads);
  if (!ATTN_THREADS_BUILD && threads > 1 && threadsPossible() && !ATTN_WASM_INLINED) {
    let threaded = null;
    try {
      threaded = await import(/* @vite-ignore */ new URL(THREADS_MODULE, import.meta.url).href);
    } catch {
      // no threaded build beside this module: one thread
    }
    if (threaded) {
      const { wasmBinary, ...rest } = options;  // this module's wasm, not the threaded one's
      return threaded.loadAttentionLens({ ...rest, threads });
    }
  }
  if (ATTN_THREADS_BUILD && !threadsPossible()) {
    throw new Error('the threaded build needs SharedArrayBuffer: serve the page cross-origin isolated ' +
      '(Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy: require-corp), or ' +
      'load attention-lens.mjs (one thread)');
  }
  const moduleArgs = {};
  if (options.locateFile !== undefined) moduleArgs.locateFile = options.locateFile;
  if (ATTN_THREADS_BUILD) {
    moduleArgs.attnWorkers = threads - 1;
    if (isNode) {  // node's worker_threads must not read the worker script as an ES module
      const locate = options.locateFile ?? ((file, dir) => dir + file);
      moduleArgs.locateFile = (file, dir) =>
        locate(file.endsWith('.worker.js') ? file.replace(/\.js$/, '.cjs') : file, dir);
    }
  }
  if (options.wasmBinary !== undefined) {
    moduleArgs.wasmBinary = options.wasmBinary;
  } else if (isNode && !ATTN_WASM_INLINED) {
    // Emscripten 3.1.6 would fetch() a file path in Node; read the file ourselves instead.
    const fsModule = 'node:fs/promises';
    const { readFile } = await import(/* @vite-ignore */ fsModule);
    const defaultUrl = new URL(WASM_FILE, import.meta.url);
    const location = options.locateFile ? options.locateFile(WASM_FILE, '') : defaultUrl;
    moduleArgs.wasmBinary = await readFile(location);
  }
  const core = await createAttentionLensCore(moduleArgs);
  if (ATTN_THREADS_BUILD) {
    unwrap(core.setThreads(threads));
    if (isNode) {  // the pool's worker_threads must not keep node running once the caller is done
      for (const worker of [...core.PThread.unusedWorkers, ...core.PThread.runningWorkers]) worker.unref?.();
    }
  }
  return new AttentionLens(core);
}

class AttentionLens {
  #core;
  #catalog;
  #gpt2Tokenizer = null;

  constructor(core) {
    this.#core = core;
    this.#catalog = deepFreeze(core.catalog());
  }

  /**
   * What the core offers, read once from it (deep-frozen): the steps in walkthrough order
   * ({ id, title, perHead, rows, cols, equation, appearsWith, needs }), the positional, mask and
   * tokenizer names, the defaults of createLayer and forward, and the size limits.
   */
  get catalog() {
    return this.#catalog;
  }

  /** Creates a multi-head attention layer (options: docs/javascript-api.md). */
  createLayer(config = {}) {
    return new AttentionLayer(this.#core, this.#catalog, config);
  }

  /**
   * Creates a small decoder-only transformer (docs/javascript-api.md, "Models and training"); every option
   * defaults to catalog.defaults.model.
   */
  createModel(config = {}) {
    return new TransformerModel(this.#core, this.#catalog, config);
  }

  /**
   * Loads a Hugging Face GPT-2-family checkpoint (docs/javascript-api.md, "Your own model"):
   * { weights: Uint8Array | Blob (model.safetensors), config (parsed config.json), tokenizer?
   * (parsed tokenizer.json, or { vocab, merges }), onProgress?: (fraction) => {} }. Resolves to a
   * model like createModel's (forward, headScores, …) with tokenize(text); GPT-2's own tokenizer
   * (loaded from beside this module on first need) unless one is given. Or by Hugging Face id:
   * { hub: 'org/name' or a repo's URL, revision?: 'main', endpoint?: 'https://huggingface.co',
   * onProgress?, signal?: AbortSignal, cache?: true | false | CacheStorage } fetches config.json,
   * the tokenizer and model.safetensors, and keeps them in the browser's Cache Storage (where
   * there is one; lens.hubCache() lists and removes them), so a second load reads no network.
   */
  async loadCheckpoint(options) {
    needTraining(this.#core.CheckpointHandle, 'lens.loadCheckpoint');
    const load = checkpointOptions(options).hub !== undefined ? loadHubCheckpoint : loadCheckpoint;
    return load(this.#core, options, () => {
      this.#gpt2Tokenizer ??= loadGpt2Tokenizer().catch((error) => {
        this.#gpt2Tokenizer = null;
        throw error;
      });
      return this.#gpt2Tokenizer;
    });
  }

  /**
   * The Hub files kept in this browser by loadCheckpoint({ hub }): { list() → [{ repo, revision,
   * file, bytes, url, endpoint }], remove(repo?) → files removed }. Empty where there is no Cache
   * Storage (Node); `storage` replaces the browser's.
   */
  hubCache(storage) {
    return hubCacheApi(storage);
  }

  /**
   * Every file of a Hub repo at a revision (the Hub's tree API, every page): { hub: 'org/name' or
   * a repo's URL, revision?: 'main', endpoint?, signal?: AbortSignal } → [{ file (its path in the
   * repo), bytes }] sorted by path. Refusals read as loadCheckpoint({ hub })'s.
   */
  hubFiles(options) {
    return listHubFiles(options);
  }

  /**
   * Creates an AdamW trainer of `model` on a task (catalog.tasks); every option defaults to
   * catalog.defaults.trainer. The trainer borrows the model: disposing the model disposes it.
   */
  createTrainer(model, options = {}) {
    needTraining(this.#core.TrainerHandle, 'lens.createTrainer');
    return new Trainer(this.#core, this.#catalog, model, options);
  }

  /** The names of the trained models that ship (web/models/models.json, built into the module). */
  get trainedModels() {
    return TRAINED_NAMES;
  }

  /**
   * A shipped trained model's catalogue entry (frozen: name, title, config, vocabulary, the
   * metrics it claims …) without loading its weights; an unknown name throws listing them.
   */
  trainedModelInfo(name) {
    return trainedInfo(name);
  }

  /**
   * Opens a shipped trained model by name: a model as createModel's, plus `info` (its catalogue
   * entry: title, description, config, training, the metrics it claims) and encode/decode for its
   * task's alphabet. The weights are read from `models/NAME.safetensors` beside this module (Node:
   * the file; browsers: fetch) unless options.bytes gives them (a page on file://, the element).
   * @param {string} name
   * @param {{bytes?: Uint8Array|ArrayBuffer}} [options]
   */
  async trainedModel(name, options = {}) {
    checkOptions('trainedModel', options, ['bytes']);
    const info = trainedInfo(name);
    const bytes = options.bytes === undefined
      ? await readModelFile(info.file)
      : byteArray('bytes', options.bytes);
    const model = new TrainedModel(this.#core, this.#catalog, info, this.#catalog.unknownCharacters);
    try {
      model.loadSafetensors(bytes);
    } catch (error) {
      model.dispose();
      throw new Error(`the trained model '${info.name}' could not be loaded: ${error.message}`);
    }
    return model;
  }

  /** np.random.RandomState(seed).randn(count), bit for bit, as a Float64Array. */
  numpyRandn(seed, count) {
    const s = integerIn('seed', seed, 0, 0xffffffff);
    const c = integerIn('count', count, 0, 1 << 26);
    return unwrap(this.#core.numpyRandn(s, c)).slice();
  }

  /**
   * Splits text into tokens and their embedding-table ids.
   * @param {string} text
   * @param {{mode?: 'word'|'char'}} [options]
   * @returns {{tokens: string[], ids: Uint32Array}}
   */
  tokenize(text, options = {}) {
    if (typeof text !== 'string') throw new Error(`text must be a string, got ${describe(text)}`);
    checkKeys('tokenize options', options, ['mode']);
    const mode = options.mode ?? this.#catalog.tokenizers[0];
    if (typeof mode !== 'string') {
      throw new Error(`mode must be ${this.#catalog.tokenizers.map((m) => `'${m}'`).join(' or ')}, got ${describe(mode)}`);
    }
    const result = unwrap(this.#core.tokenize(text, mode));
    return { tokens: result.tokens, ids: Uint32Array.from(result.ids) };
  }

  /** How many threads the core computes with (1 unless loaded with threads where it can be). */
  get threads() {
    return this.#core.threadCount();
  }

  /** The SIMD architecture the core was built for ('wasm' or 'scalar'). */
  get simd() {
    return this.#core.simdArch();
  }

  /** Wasm heap size and the bytes currently allocated in it (for leak checks). */
  memory() {
    // The threaded build's HEAPU8 may still view the heap before its last growth: ask the memory.
    const heap = this.#core.wasmMemory?.buffer ?? this.#core.HEAPU8.buffer;
    return { heapBytes: heap.byteLength, allocatedBytes: this.#core.heapInUse() };
  }
}
