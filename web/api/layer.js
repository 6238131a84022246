// AttentionLayer (lens.createLayer): one multi-head attention layer, its weights, forward, trace
// and cell explanations.
// A module of the JS API (web/api/attention-lens-api.js is its entry; scripts/bundle-api.mjs
// bundles them into dist/attention-lens.mjs).
import { byteArray, checkKeys, describe, fieldOptions, finalizer, flags, freeHandle, integerIn, numbers, unwrap } from './common.js';

// A forward's options beyond ForwardOptions' fields (lens.catalog.fields.forward): the sizes and arrays.
const FORWARD_EXTRA_KEYS = ['n', 'kv', 'kvN', 'keyPadding', 'cellMask'];
const EXPLAIN_KEYS = ['step', 'head', 'row', 'col'];

export class AttentionLayer {
  #core;
  #handle;
  #config;

  #catalog;

  // catalog: lens.catalog (the fields and defaults of createLayer's and forward's options).
  constructor(core, catalog, config) {
    const args = fieldOptions('createLayer', config, catalog.fields.layer, catalog.defaults.layer);
    const handle = new core.LayerHandle();
    try {
      unwrap(handle.configure(args));
    } catch (error) {
      handle.delete();
      throw error;
    }
    this.#core = core;
    this.#catalog = catalog;
    this.#handle = handle;
    this.#config = Object.freeze({ ...args, headDim: handle.headDim(), kvHeads: handle.kvHeads(),
      outBias: handle.outBias(), rope: Object.freeze(args.rope) });
    finalizer?.register(this, handle, this);
  }

  /**
   * The normalized configuration: { dModel, heads, headDim, kvHeads, bias (q/k/v), outBias, outProj,
   * positional, rope: { pairing, base, frequencies, rotaryDims }, scale, softcap, qkNorm,
   * qkNormWeight, qkNormEps, seed }.
   */
  get config() {
    return this.#config;
  }

  /** Replaces the weights (Float32Arrays in nn.MultiheadAttention layout). */
  setWeights(weights) {
    const handle = this.#live();
    if (weights === null || typeof weights !== 'object') {
      throw new Error(`setWeights expects an object, got ${describe(weights)}`);
    }
    checkKeys('setWeights', weights, ['inProjWeight', 'inProjBias', 'outProjWeight', 'outProjBias', 'qNormWeight', 'kNormWeight']);
    const norms = this.#config.qkNorm !== 'none';
    unwrap(handle.setWeights(
      numbers('inProjWeight', weights.inProjWeight, true),
      numbers('inProjBias', weights.inProjBias),
      numbers('outProjWeight', weights.outProjWeight, this.#config.outProj),
      numbers('outProjBias', weights.outProjBias),
      numbers('qNormWeight', weights.qNormWeight, norms),
      numbers('kNormWeight', weights.kNormWeight, norms)));
  }

  /**
   * Copies of the current weights: { inProjWeight, inProjBias?, outProjWeight?, outProjBias?,
   * qNormWeight?, kNormWeight? }.
   */
  getWeights() {
    const handle = this.#live();
    const read = (name) => unwrap(handle.weight(name)).slice();
    const weights = { inProjWeight: read('in_proj_weight') };
    if (this.#config.bias) weights.inProjBias = read('in_proj_bias');
    if (this.#config.outProj) weights.outProjWeight = read('out_proj.weight');
    if (this.#config.outBias && this.#config.outProj) weights.outProjBias = read('out_proj.bias');
    if (this.#config.qkNorm !== 'none') {
      weights.qNormWeight = read('q_norm.weight');
      weights.kNormWeight = read('k_norm.weight');
    }
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
    const fields = this.#catalog.fields.forward;
    checkKeys('forward options', options, [...FORWARD_EXTRA_KEYS, ...fields.map((f) => f.name)]);
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
    const scalars = Object.fromEntries(fields.map((f) => [f.name, options[f.name]]).filter(([, v]) => v !== undefined));
    const args = { n, cross: kv !== undefined, kvN,
      ...fieldOptions('forward', scalars, fields, this.#catalog.defaults.forward) };
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
    this.#handle = freeHandle(this, this.#handle);
  }

  #live() {
    if (!this.#handle) throw new Error('this layer was disposed; create a new one with lens.createLayer()');
    return this.#handle;
  }
}
