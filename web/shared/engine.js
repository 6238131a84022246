// Turns the page state into one traced forward through the JS API and back into plain data
// the page draws. Runs inside the Web Worker (engine-worker.js) for the page and on the main
// thread for the <attention-lens> element. Its inputs (tokens, presets, trained layers) come from
// engine-inputs.js; here they are embedded and padded, and the forward's options are built for the
// core. It does no attention math itself.
import { catalogOf } from './catalog.js';
import { EngineInputs, padCount } from './engine-inputs.js';

export const PAD_TOKEN = '[PAD]';

/** The shipped trained models' catalogue entries by name (lens.trainedModelInfo), as plain data. */
export const trainedInfoOf = (lens) => Object.fromEntries(lens.trainedModels.map((name) => [name, lens.trainedModelInfo(name)]));

/**
 * Multiply-adds ×2 of one forward: the Q projection over n rows, K and V over kvN rows, QKᵀ and
 * A·V per head, and W_O. inner = heads · d_k.
 */
export function forwardFlops({ n, kvN, dModel, heads, headDim, outProj = true }) {
  const inner = heads * headDim;
  return 2 * n * dModel * inner + 2 * 2 * kvN * dModel * inner + 2 * 2 * heads * n * kvN * headDim +
    (outProj ? 2 * n * inner * dModel : 0);
}

/**
 * The settings a forward was drawn with (its figures' provenance): the input's own (engine-inputs.js's
 * inputOf) with what a trained model, a layer opened from another view or a tutorial fixed in place
 * of the reader's — their tokens, positions, mask, d_model and heads — never the settings' unused values.
 */
export function drawnSettings(input, config) {
  const { state, model, tutorial } = input;
  const opened = state.openedLayer;
  const mask = state.mask;
  return {
    text: opened ? opened.probe ?? (input.queryTokens ?? []).join('') : state.text,
    tokenizer: model ? (model.checkpoint ? 'bpe' : 'char') : tutorial ? `the tutorial's (${tutorial.id})` : state.tokenizer,
    dModel: String(config.dModel),
    heads: config.heads,
    ...(model || tutorial ? {} : { seed: state.seed }),
    positional: model?.positional ?? config.positional,
    mask,
    ...(mask === 'sliding-window' ? { window: state.window } : {}),
    ...(mask === 'prefix-lm' ? { prefix: state.prefix } : {}),
    ...(mask === 'padding' ? { padTo: state.padTo } : {}),
    cells: state.cells ?? [],
    scale: state.scale,
    cross: Boolean(state.cross),
    ...(state.cross ? { source: state.source } : {}),
    ...(tutorial ? { preset: tutorial.id } : {}),
  };
}

// Work the page computes on its own thread, inside the frame of the keystroke that asked for it:
// no round trip to the worker, and the new numbers appear in the same frame as the typed
// character. 64 tokens, d_model 256, 8 heads (38 M flops, 32 768 attention entries) is a
// traced forward of about 2.5 ms and a redraw of about 4. The entries bound the exps, the
// copies and the pixels of every head's heatmap. Larger work goes to the worker, so typing
// never waits on it. A new layer of d_model <= 256 initialises in under 4 ms.
export const FRAME_FLOPS = 64e6;
export const FRAME_ENTRIES = 1 << 17; // heads · n · kvN
export const FRAME_MAX_D_MODEL = 256;

// Beyond this many queries or keys, the page draws every head from the core's max-pooled
// preview (forward option `preview`: at most PREVIEW_SIDE × PREVIEW_SIDE cells per head), and
// with a trace of the head on screen the full weights of every head stay in the core: the page
// neither copies heads · n · kvN weights (8 heads at 2 048 tokens: 128 MiB) nor shrinks them.
export const PREVIEW_SIDE = 256;

/** Rows of `x` for the tokens, then zero rows for [PAD] up to `total` rows. */
function padded(x, dModel, count, total) {
  if (total <= count) return x;
  const out = new Float32Array(total * dModel);
  out.set(x.subarray(0, count * dModel));
  return out;
}

/** Whether computing `state` is small enough for the page's own thread (FRAME_*). */
function smallEnoughForFrame(state, tokensFor) {
  if (state.preset || state.model || state.openedLayer) return true; // a few tokens / a trained model's short context
  const dModel = Number(state.dModel);
  if (dModel > FRAME_MAX_D_MODEL) return false;
  try {
    const { n, kvN } = tokensFor(state);
    return state.heads * n * kvN <= FRAME_ENTRIES &&
      forwardFlops({ n, kvN, dModel, heads: state.heads, headDim: dModel / state.heads }) <= FRAME_FLOPS;
  } catch {
    return true; // no tokens: the error comes back at once
  }
}

/**
 * The rows the forward reads: x (the typed text embedded by `layer`, or the input's own rows),
 * and in cross-attention the source's rows kv and tokens as the keys.
 */
function embedded(layer, { typed, queryTokens, x }) {
  const rows = typed ? layer.embed(typed.q.ids) : x;
  if (!typed?.s) return { queryTokens, keyTokens: queryTokens, x: rows };
  return { queryTokens, keyTokens: typed.s.tokens, x: rows, kv: layer.embed(typed.s.ids) };
}

/**
 * With the padding mask: [PAD] keys after the real ones (zero rows of the source kv, or of x and
 * then the queries too) and the keyPadding mask that marks them.
 */
function withPadding(state, rows, dModel, notes) {
  if (state.mask !== 'padding') return rows;
  const real = rows.keyTokens.length;
  const total = real + padCount(state, real);
  if (state.padTo && state.padTo < real) notes.push(`Pad to ${state.padTo} is shorter than the ${real} tokens; nothing was padded.`);
  const keyTokens = [...rows.keyTokens, ...Array(total - real).fill(PAD_TOKEN)];
  const keyPadding = Uint8Array.from(keyTokens, (_, j) => (j >= real ? 1 : 0));
  if (rows.kv) return { ...rows, keyTokens, kv: padded(rows.kv, dModel, real, total), keyPadding };
  return { ...rows, queryTokens: keyTokens, keyTokens, x: padded(rows.x, dModel, real, total), keyPadding };
}

/** The cells masked by hand (those inside n × kvN) as an n × kvN mask, or undefined. */
function cellMaskOf(cells, n, kvN) {
  const inside = (cells ?? []).filter(([i, j]) => i < n && j < kvN);
  if (!inside.length) return undefined;
  const cellMask = new Uint8Array(n * kvN);
  for (const [i, j] of inside) cellMask[i * kvN + j] = 1;
  return cellMask;
}

/**
 * layer.forward's options for the state and its rows, and whether the steps are traced (a note
 * says so when they are too many).
 */
function forwardOptions(state, { n, kvN, heads, kv, keyPadding, cellMask }, { traceAllHeads, traceLimit }, notes) {
  // Every head's weights come back; the other steps are traced for the head on screen only
  // (heads times less to compute, copy and send).
  const traceHead = Math.min(state.head, heads - 1);
  const trace = n * kvN * (traceAllHeads ? heads : 1) <= traceLimit;
  if (!trace) notes.push(`${n} × ${kvN} tokens is too large to trace every step; showing the attention weights only.`);
  const kind = state.mask === 'padding' ? 'none' : state.mask;
  const pooled = Math.max(n, kvN) > PREVIEW_SIDE && !traceAllHeads;
  // Without a trace (the longest inputs) every head's weights are the walkthrough's steps.
  const options = { n, mask: kind, scale: state.scale, trace, weights: !(pooled && trace) };
  if (pooled) options.preview = PREVIEW_SIDE;
  if (trace && !traceAllHeads) options.traceHead = traceHead;
  if (kv) Object.assign(options, { kv, kvN });
  if (kind === 'sliding-window') options.window = state.window;
  if (kind === 'prefix-lm') options.prefix = state.prefix;
  if (keyPadding) options.keyPadding = keyPadding;
  if (cellMask) options.cellMask = cellMask;
  return { options, trace };
}

/**
 * The page's layer and the weights it uses, on one thread: compute(state) -> the plain data the
 * page draws; explain a cell of the last traced compute; weights in and out; the trained model.
 */
class PageEngine {
  #lens;
  #traceAllHeads;
  #traceLimit; // traced heads·n·kvN the core allows
  #inputs;
  #layer = null;
  #layerKey = '';
  #loadedWeights = null; // { name, bytes } from a .safetensors file, kept across recomputes
  #lastSteps = false;

  constructor(lens, traceAllHeads) {
    this.#lens = lens;
    this.#traceAllHeads = traceAllHeads;
    this.#traceLimit = catalogOf(lens).limits.maxTraceValues;
    this.#inputs = new EngineInputs(lens);
  }

  // The layer for a config (and preset or loaded file), created only when one of them changes.
  #ensureLayer(config, preset) {
    const weights = preset?.weights ?? null;
    const key = JSON.stringify({ config, preset: preset?.id ?? null, file: weights ? null : this.#loadedWeights?.name ?? null });
    if (this.#layer && key === this.#layerKey) return this.#layer;
    const next = this.#lens.createLayer(config);
    try {
      if (weights) next.setWeights(weights);
      else if (this.#loadedWeights) next.loadSafetensors(this.#loadedWeights.bytes);
    } catch (error) {
      next.dispose();
      throw error;
    }
    this.#layer?.dispose();
    this.#layer = next;
    this.#layerKey = key;
    return this.#layer;
  }

  // The state's input (engine-inputs.js), its layer, its rows (embedded, padded), the forward.
  compute(requested) {
    const started = performance.now();
    const notes = [];
    const input = this.#inputs.inputOf(requested, notes);
    const { state, tutorial, model } = input;
    const active = this.#ensureLayer(input.config, input.preset);
    const { queryTokens, keyTokens, x, kv, keyPadding } = withPadding(state, embedded(active, input), active.config.dModel, notes);
    const n = queryTokens.length;
    const kvN = keyTokens.length;
    const { options, trace } = forwardOptions(state, { n, kvN, heads: active.config.heads, kv, keyPadding,
      cellMask: cellMaskOf(state.cells, n, kvN) }, { traceAllHeads: this.#traceAllHeads, traceLimit: this.#traceLimit }, notes);
    const t0 = performance.now();
    const result = active.forward(x, options);
    const computeMs = performance.now() - t0;
    this.#lastSteps = trace;
    return {
      config: active.config,
      drawn: drawnSettings(input, active.config),
      queryTokens,
      keyTokens,
      n,
      kvN,
      cross: Boolean(kv),
      steps: result.steps ?? [],
      attention: result.attention,
      headPreviews: result.preview ?? null,
      output: result.output,
      computeMs,
      totalMs: performance.now() - started,
      printout: tutorial ? tutorial.printout(result) : null,
      weightsFile: tutorial || model ? null : this.#loadedWeights?.name ?? null,
      model,
      notes,
      ...input.read,
    };
  }

  fitsInFrame(state) {
    return smallEnoughForFrame(state, (s) => this.#inputs.tokensFor(s));
  }

  explain(request) {
    if (!this.#layer || !this.#lastSteps) throw new Error('Nothing to explain yet: the last compute had no trace.');
    return this.#layer.explain(request);
  }

  /**
   * The weights later computes use: {name, bytes} of a .safetensors file (checked when the next
   * compute builds its layer), or null for the seeded ones.
   */
  useWeights(weights) {
    this.#loadedWeights = weights;
    this.#layerKey = '';
  }

  /** Loads .safetensors bytes into a layer of the given config; they stay until replaced. */
  loadWeights(name, bytes, state) {
    const previous = this.#loadedWeights;
    this.useWeights({ name, bytes });
    try {
      return this.compute({ ...state, preset: '' });
    } catch (error) {
      this.useWeights(previous);
      throw error;
    }
  }

  saveWeights() {
    if (!this.#layer) throw new Error('No layer yet.');
    return this.#layer.saveSafetensors();
  }

  /** The trained model states with `model: name` use (lens.trainedModel's), or null. */
  /** The input and weights of the layer another view opened (state.openedLayer.key): opened-layers.js. */
  useOpenedLayer(key, arrays) {
    this.#inputs.useOpenedLayer(key, arrays);
  }

  useTrainedModel(model) {
    this.#inputs.useTrainedModel(model);
  }
}

/**
 * @param {object} lens  the loaded API (loadAttentionLens())
 * @param {{traceAllHeads?: boolean}} [options]  trace every head's steps (the element, which
 *   switches heads without recomputing); by default only the head on screen (state.head).
 * @returns {{compute, explain, fitsInFrame, useWeights, loadWeights, saveWeights, useTrainedModel, useOpenedLayer}}
 *   PageEngine's methods as plain functions (callers may pass them around)
 */
export function createEngine(lens, { traceAllHeads = false } = {}) {
  const engine = new PageEngine(lens, traceAllHeads);
  return Object.fromEntries(['compute', 'explain', 'fitsInFrame', 'useWeights', 'loadWeights', 'saveWeights', 'useTrainedModel', 'useOpenedLayer']
    .map((name) => [name, engine[name].bind(engine)]));
}

/**
 * V8 runs wasm in a baseline tier first and optimises a function only once it has been called
 * several times (a 64-token forward takes ~38 ms cold, ~4 ms warm). A dozen throwaway forwards
 * right after loading, one per `schedule`d task so the reader's requests go first, make typing
 * fast at once.
 */
export function warmUp(lens, schedule, rounds = 12) {
  const layer = lens.createLayer({ dModel: 128, heads: 8, positional: 'sinusoidal' });
  const x = layer.embed(Uint32Array.from({ length: 32 }, (_, i) => i));
  let done = 0;
  const step = () => {
    layer.forward(x, { n: 32, trace: true, traceHead: done % 8, mask: done % 2 ? 'causal' : 'none' });
    layer.explain({ step: 'scores', head: done % 8, row: 1, col: 0 });
    if (++done < rounds) schedule(step);
    else layer.dispose();
  };
  schedule(step);
}
