// The public JavaScript API of Attention Lens (README "The JavaScript API"; its place in the
// layers: ARCHITECTURE.md).
// CMake appends this file to the Emscripten module (--extern-post-js), so dist/attention-lens.mjs
// is one ES module that works in Node >= 18 and in browsers. `createAttentionLensCore` (the
// Emscripten factory) and `ATTN_WASM_INLINED` (from the generated --extern-pre-js) are in scope.
//
// Lifetime rule: every array this API returns is a copy owned by JavaScript. Nothing returned
// is a view into wasm memory, so memory growth can never leave you holding a detached array.

/* global createAttentionLensCore, ATTN_WASM_INLINED */

const isNode =
  typeof process === 'object' && process?.versions?.node != null && typeof window === 'undefined';

const WASM_FILE = 'attention-lens.wasm';

/**
 * Loads the wasm module and returns the API object.
 * @param {{wasmBinary?: ArrayBuffer|Uint8Array, locateFile?: (file: string, dir: string) => string}} [options]
 */
export async function loadAttentionLens(options = {}) {
  checkKeys('loadAttentionLens options', options, ['wasmBinary', 'locateFile']);
  const moduleArgs = {};
  if (options.locateFile !== undefined) moduleArgs.locateFile = options.locateFile;
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
  return new AttentionLens(core);
}

class AttentionLens {
  #core;
  #catalog;

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

  /** Creates a multi-head attention layer (options: README "The JavaScript API"). */
  createLayer(config = {}) {
    return new AttentionLayer(this.#core, this.#catalog.defaults, config);
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

  /** The SIMD architecture the core was built for ('wasm' or 'scalar'). */
  get simd() {
    return this.#core.simdArch();
  }

  /** Wasm heap size and the bytes currently allocated in it (for leak checks). */
  memory() {
    return { heapBytes: this.#core.HEAPU8.length, allocatedBytes: this.#core.heapInUse() };
  }
}

const CONFIG_KEYS = ['dModel', 'heads', 'headDim', 'bias', 'outProj', 'positional', 'seed'];
const FORWARD_KEYS = ['n', 'kv', 'kvN', 'mask', 'window', 'prefix', 'keyPadding', 'cellMask',
  'scale', 'weights', 'trace', 'traceHead', 'preview'];
const EXPLAIN_KEYS = ['step', 'head', 'row', 'col'];

// Layers not disposed are freed when garbage-collected; dispose() frees them at once.
const finalizer = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((handle) => handle.delete())
  : null;

class AttentionLayer {
  #core;
  #handle;
  #config;

  #defaults;

  constructor(core, defaults, config) {
    if (config === null || typeof config !== 'object') {
      throw new Error(`createLayer expects an options object, got ${describe(config)}`);
    }
    checkKeys('createLayer options', config, CONFIG_KEYS);
    const d = defaults.layer;
    const args = {
      dModel: integerIn('dModel', config.dModel ?? d.dModel, 1, 1 << 30),
      heads: integerIn('heads', config.heads ?? d.heads, 1, 1 << 30),
      headDim: integerIn('headDim', config.headDim ?? d.headDim, 0, 1 << 30),
      bias: booleanOption('bias', config.bias, d.bias),
      outProj: booleanOption('outProj', config.outProj, d.outProj),
      positional: stringOption('positional', config.positional, d.positional),
      seed: integerIn('seed', config.seed ?? d.seed, 0, 0xffffffff),
    };
    const handle = new core.LayerHandle();
    try {
      unwrap(handle.configure(args));
    } catch (error) {
      handle.delete();
      throw error;
    }
    this.#core = core;
    this.#defaults = defaults;
    this.#handle = handle;
    this.#config = Object.freeze({ ...args, headDim: handle.headDim() });
    finalizer?.register(this, handle, this);
  }

  /** The normalized configuration: { dModel, heads, headDim, bias, outProj, positional, seed }. */
  get config() {
    return this.#config;
  }

  /** Replaces the weights (Float32Arrays in nn.MultiheadAttention layout). */
  setWeights(weights) {
    const handle = this.#live();
    if (weights === null || typeof weights !== 'object') {
      throw new Error(`setWeights expects an object, got ${describe(weights)}`);
    }
    checkKeys('setWeights', weights, ['inProjWeight', 'inProjBias', 'outProjWeight', 'outProjBias']);
    unwrap(handle.setWeights(
      numbers('inProjWeight', weights.inProjWeight, true),
      numbers('inProjBias', weights.inProjBias),
      numbers('outProjWeight', weights.outProjWeight, this.#config.outProj),
      numbers('outProjBias', weights.outProjBias)));
  }

  /** Copies of the current weights: { inProjWeight, inProjBias?, outProjWeight?, outProjBias? }. */
  getWeights() {
    const handle = this.#live();
    const read = (name) => unwrap(handle.weight(name)).slice();
    const weights = { inProjWeight: read('in_proj_weight') };
    if (this.#config.bias) weights.inProjBias = read('in_proj_bias');
    if (this.#config.outProj) weights.outProjWeight = read('out_proj.weight');
    if (this.#config.bias && this.#config.outProj) weights.outProjBias = read('out_proj.bias');
    return weights;
  }

  /** Loads PyTorch state_dict tensors from .safetensors bytes. */
  loadSafetensors(bytes) {
    const handle = this.#live();
    unwrap(handle.loadSafetensors(byteArray('loadSafetensors', bytes)));
  }

  /** The current weights as .safetensors bytes with PyTorch state_dict names. */
  saveSafetensors() {
    const handle = this.#live();
    return unwrap(handle.saveSafetensors()).slice();
  }

  /** Looks token ids up in the layer's seeded embedding table: Float32Array [ids.length * dModel]. */
  embed(ids) {
    const handle = this.#live();
    const values = numbers('ids', ids, true);
    for (let i = 0; i < values.length; ++i) {
      if (!Number.isInteger(values[i]) || values[i] < 0 || values[i] > 0xffffffff) {
        throw new Error(`ids[${i}] must be an integer from 0 to 4294967295, got ${describe(values[i])}`);
      }
    }
    return unwrap(handle.embed(values)).slice();
  }

  /**
   * Runs the layer. x: Float32Array [n * dModel].
   * @returns {{output: Float32Array, attention?: Float32Array, steps?: object[]}}
   */
  forward(x, options = {}) {
    const handle = this.#live();
    if (options === null || typeof options !== 'object') {
      throw new Error(`forward options must be an object, got ${describe(options)}`);
    }
    checkKeys('forward options', options, FORWARD_KEYS);
    const xs = numbers('x', x, true);
    const dModel = this.#config.dModel;
    const n = integerIn('n', options.n ?? Math.floor(xs.length / dModel), 0, 1 << 30);
    const kv = numbers('kv', options.kv);
    if (kv === undefined && options.kvN !== undefined) {
      throw new Error('kvN was given without kv: pass the source sequence as kv for cross-attention');
    }
    const kvN = kv === undefined
      ? n
      : integerIn('kvN', options.kvN ?? Math.floor(kv.length / dModel), 0, 1 << 30);
    const d = this.#defaults.forward;
    const args = {
      n,
      cross: kv !== undefined,
      kvN,
      mask: stringOption('mask', options.mask, d.mask),
      window: integerIn('window', options.window ?? d.window, 0, 1 << 30),
      prefix: integerIn('prefix', options.prefix ?? d.prefix, 0, 1 << 30),
      scale: booleanOption('scale', options.scale, d.scale),
      weights: booleanOption('weights', options.weights, d.weights),
      trace: booleanOption('trace', options.trace, d.trace),
      traceHead: integerIn('traceHead', options.traceHead ?? d.traceHead, -1, 1 << 30),
      preview: integerIn('preview', options.preview ?? d.preview, 0, 1 << 30),
    };
    unwrap(handle.forward(xs, kv, args, flags('keyPadding', options.keyPadding),
      flags('cellMask', options.cellMask)));
    // Copy everything out before anything else can run (and grow memory).
    const result = { output: handle.output().slice() };
    if (args.weights) result.attention = handle.attention().slice();
    if (args.preview > 0) {
      const { step, rows, cols, data } = handle.preview();
      result.preview = { step, rows, cols, data: data.slice() };
    }
    if (args.trace) {
      const steps = [];
      const count = handle.stepCount();
      for (let i = 0; i < count; ++i) {
        const step = handle.step(i);
        step.data = step.data.slice();
        steps.push(step);
      }
      result.steps = steps;
    }
    return result;
  }

  /**
   * The arithmetic behind one cell of the last traced forward (run forward with trace: true
   * first): { step, head, row, col, value, summary, equation, leftLabel, rightLabel,
   * terms: [{ index, left, right, product }], quantities: [{ name, latex, value }] }.
   * head: 0-based, required for per-head steps; omit it (or pass -1) for shared steps.
   * Rows, columns and term indices count from 0. The core computes every number.
   */
  explain(cell) {
    const handle = this.#live();
    if (cell === null || typeof cell !== 'object' || Array.isArray(cell)) {
      throw new Error(`explain expects an object { step, head, row, col }, got ${describe(cell)}`);
    }
    checkKeys('explain', cell, EXPLAIN_KEYS);
    if (typeof cell.step !== 'string') {
      throw new Error(`step must be a step id string such as 'scores', got ${describe(cell.step)}`);
    }
    const head = integerIn('head', cell.head ?? -1, -1, 0x7fffffff);
    const row = integerIn('row', cell.row, 0, 0xffffffff);
    const col = integerIn('col', cell.col, 0, 0xffffffff);
    const r = unwrap(handle.explain(cell.step, head, row, col));
    // Copy the term columns out of wasm memory before anything else can run.
    const index = r.termIndex.slice();
    const left = r.termLeft.slice();
    const right = r.termRight.slice();
    const product = r.termProduct.slice();
    const terms = Array.from(index, (t, k) => ({
      index: t, left: left[k], right: right[k], product: product[k],
    }));
    return {
      step: r.step,
      head: r.head,
      row: r.row,
      col: r.col,
      value: r.value,
      summary: r.summary,
      equation: r.equation,
      leftLabel: r.leftLabel,
      rightLabel: r.rightLabel,
      terms,
      quantities: r.quantities.map((q) => ({ name: q.name, latex: q.latex, value: q.value })),
    };
  }

  /** Frees the layer's wasm memory. Using the layer afterwards throws. */
  dispose() {
    if (!this.#handle) return;
    finalizer?.unregister(this);
    this.#handle.delete();
    this.#handle = null;
  }

  #live() {
    if (!this.#handle) throw new Error('this layer was disposed; create a new one with lens.createLayer()');
    return this.#handle;
  }
}

// ---- argument checks: types only; every value check lives in the C++ core ----------------

function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  if (value instanceof DataView) return `a DataView of ${value.byteLength} bytes`;
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name} of length ${value.length}`;
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'object') return 'an object';
  return String(value);
}

function checkKeys(what, object, allowed) {
  for (const key of Object.keys(object)) {
    if (!allowed.includes(key)) {
      throw new Error(`unknown ${what} key '${key}'; expected one of: ${allowed.join(', ')}`);
    }
  }
}

function integerIn(name, value, min, max) {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got ${describe(value)}`);
  }
  return value;
}

function booleanOption(name, value, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new Error(`${name} must be true or false, got ${describe(value)}`);
  return value;
}

function stringOption(name, value, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'string') throw new Error(`${name} must be a string, got ${describe(value)}`);
  return value;
}

// A typed array or array of numbers, passed through; undefined when absent and optional.
function numbers(name, value, required = false) {
  if (value === undefined || value === null) {
    if (required) throw new Error(`${name} is required (a Float32Array)`);
    return undefined;
  }
  const bigInts = value instanceof BigInt64Array || value instanceof BigUint64Array;
  if (ArrayBuffer.isView(value) && !(value instanceof DataView) && !bigInts) return value;
  if (Array.isArray(value) && value.every((v) => typeof v === 'number')) return value;
  throw new Error(`${name} must be a Float32Array or an array of numbers, got ${describe(value)}`);
}

// 0/1 flags (Uint8Array, array of numbers or booleans) as a Uint8Array.
function flags(name, value) {
  if (value === undefined || value === null) return undefined;
  if (value instanceof Uint8Array) return value;
  if (Array.isArray(value) || ArrayBuffer.isView(value)) {
    return Uint8Array.from(value, (v) => (v ? 1 : 0));
  }
  throw new Error(`${name} must be a Uint8Array or an array of 0/1 flags, got ${describe(value)}`);
}

function byteArray(name, value) {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new Error(`${name} expects a Uint8Array or ArrayBuffer, got ${describe(value)}`);
}

// Every fallible binding returns its result or { error: message } (see cpp/bindings/embind.cpp).
function unwrap(result) {
  if (result !== null && typeof result === 'object' && typeof result.error === 'string') {
    throw new Error(result.error);
  }
  return result;
}

function deepFreeze(value) {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const key of Object.keys(value)) deepFreeze(value[key]);
    Object.freeze(value);
  }
  return value;
}
