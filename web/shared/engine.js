// Turns the page state into one traced forward through the JS API and back into plain data
// the page draws. Runs inside the Web Worker (engine-worker.js) for the page and on the main
// thread for the <attention-lens> element. Builds inputs (tokens, padding rows, presets) and
// calls the core; it does no attention math itself.
import { catalogOf } from './catalog.js';
import { buildPreset } from './presets.js';

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

/** How many [PAD] keys the padding mask adds after `real` keys (up to state.padTo, or 2). */
const padCount = (state, real) => (state.mask === 'padding' ? Math.max(state.padTo || real + 2, real) - real : 0);

/**
 * @param {object} lens  the loaded API (loadAttentionLens())
 * @param {{traceAllHeads?: boolean}} [options]  trace every head's steps (the element, which
 *   switches heads without recomputing); by default only the head on screen (state.head).
 */
export function createEngine(lens, { traceAllHeads = false } = {}) {
  let layer = null;
  let layerKey = '';
  let loadedWeights = null; // { name, bytes } from a .safetensors file, kept across recomputes
  let lastSteps = false;
  let trained = null; // a shipped trained model (lens.trainedModel) for states naming it
  const trainedLayers = new Map(); // ids key -> attentionLayer result, the last few
  const fromTrainIds = new WeakMap(); // a Train view layer (state.trainedLayer) -> its layer key
  let nextFromTrain = 1;
  const traceLimit = catalogOf(lens).limits.maxTraceValues; // traced heads·n·kvN the core allows

  // The layer for a config (and preset or loaded file), created only when one of them changes.
  function ensureLayer(config, preset) {
    const weights = preset?.weights ?? null;
    const key = JSON.stringify({ config, preset: preset?.id ?? null, file: weights ? null : loadedWeights?.name ?? null });
    if (layer && key === layerKey) return layer;
    const next = lens.createLayer(config);
    try {
      if (weights) next.setWeights(weights);
      else if (loadedWeights) next.loadSafetensors(loadedWeights.bytes);
    } catch (error) {
      next.dispose();
      throw error;
    }
    layer?.dispose();
    layer = next;
    layerKey = key;
    return layer;
  }

  // The last few tokenizations, kept: deciding where to compute (fitsInFrame) and computing
  // both tokenize the same text on every keystroke.
  const tokenized = new Map();
  function tokensOf(text, mode) {
    const key = `${mode}\u0000${text}`;
    let found = tokenized.get(key);
    if (!found) {
      const { tokens, ids } = lens.tokenize(text, { mode });
      found = { tokens, ids };
      if (tokenized.size >= 4) tokenized.delete(tokenized.keys().next().value);
      tokenized.set(key, found);
    }
    return found;
  }

  /**
   * The tokens a (non-preset) state asks for: its queries q, the source s in cross-attention,
   * and the n × kvN they make (with [PAD] keys). Throws when there is nothing to attend over.
   */
  function tokensFor(state) {
    const q = tokensOf(state.text, state.tokenizer);
    if (q.tokens.length === 0) throw new Error('Type some text: there are no tokens to attend over yet.');
    const s = state.cross ? tokensOf(state.source, state.tokenizer) : null;
    if (s && s.tokens.length === 0) throw new Error('Type a source sentence for cross-attention: it has no tokens.');
    const real = (s ?? q).tokens.length;
    const pads = padCount(state, real);
    return { q, s, n: s ? q.tokens.length : real + pads, kvN: real + pads };
  }

  /** Whether computing `state` is small enough for the page's own thread (FRAME_*). */
  function fitsInFrame(state) {
    if (state.preset || state.model || state.trainedLayer) return true; // a few tokens / a trained model's short context
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

  /** Rows of `x` for the tokens, then zero rows for [PAD] up to `total` rows. */
  function padded(x, dModel, count, total) {
    if (total <= count) return x;
    const out = new Float32Array(total * dModel);
    out.set(x.subarray(0, count * dModel));
    return out;
  }

  /**
   * A state naming a trained model: its layer's attention on the text, as a standalone layer
   * (model.attentionLayer), always causal, one sequence of at most the model's context.
   */
  function trainedInput(state, notes) {
    if (!trained || trained.info.name !== state.model) {
      throw new Error(`The trained model '${state.model}' is not loaded (shipped: ${lens.trainedModels.join(', ')}).`);
    }
    const { context, layers } = trained.config;
    let chars = Array.from(state.text);
    if (chars.length === 0) throw new Error('Type some text: there are no tokens to attend over yet.');
    if (chars.length > context) {
      notes.push(`The ${trained.info.name} model reads at most ${context} characters; showing the first ${context}.`);
      chars = chars.slice(0, context);
    }
    // What people type (capitals, curly quotes, €) is read in the model's alphabet by the core's
    // rule: the ids are those of the mapped text; result.mapped and result.readNote say how.
    const read = trained.tokenize(chars.join(''), { unknown: 'map' });
    const ids = read.ids;
    const l = Math.min(state.layer ?? 0, layers - 1);
    if ((state.layer ?? 0) >= layers) notes.push(`The ${trained.info.name} model has ${layers} layers; showing layer ${l + 1}.`);
    if (!['none', 'causal'].includes(state.mask) || state.cross || state.cells?.length) {
      notes.push(`A trained model's attention is causal: the mask${state.cross ? ', the source' : ''} and masked cells are not used.`);
    }
    const key = `${trained.info.name}\u0000${l}\u0000${ids.join(',')}`;
    let found = trainedLayers.get(key);
    if (!found) {
      found = trained.attentionLayer(l, ids, { n: ids.length });
      if (trainedLayers.size >= 4) trainedLayers.delete(trainedLayers.keys().next().value);
      trainedLayers.set(key, found);
    }
    const preset = { id: `trained:${trained.info.name}:${l}`, weights: found.weights };
    return { preset, config: found.config, x: found.input, tokens: read.tokens, layer: l, mapped: read.mapped,
      readNote: read.note };
  }

  /**
   * A state carrying `trainedLayer`: a layer the Train view opened ({ input, config, weights }
   * of model.attentionLayer on its probe, with ids, probe, step, layer, task, modelConfig), the
   * same trained path as a shipped model's, fed by data instead of a model.
   */
  function fromTrainInput(data) {
    let id = fromTrainIds.get(data);
    if (!id) fromTrainIds.set(data, (id = nextFromTrain++));
    // A checkpoint's layer (views/model) brings its BPE tokens; the Train view's probe is characters.
    const tokens = data.tokens ?? Array.from(data.probe).slice(0, data.ids.length);
    const preset = { id: `train-view:${id}`, weights: data.weights };
    const title = data.source === 'checkpoint' ? `Your model (GPT-2 checkpoint), layer ${data.layer + 1}`
      : `Trained in the Train view: ${data.task ?? 'a task'}, step ${data.step}, layer ${data.layer + 1}`;
    const model = { name: 'train-view', title, checkpoint: data.source === 'checkpoint',
      layer: data.layer, layers: data.modelConfig?.layers ?? data.layer + 1, positional: data.modelConfig?.positional ?? data.config.positional,
      fromTrain: true, task: data.task ?? '', step: data.step };
    return { preset, config: data.config, x: data.input, tokens, model };
  }

  function compute(state) {
    const started = performance.now();
    const notes = [];
    let preset = null;
    let tokens = null; // tokensFor(state), without a preset
    let active;
    let queryTokens;
    let x;
    let model = null; // { name, title, layer, layers } with a trained model
    let read = { mapped: [], readNote: '' }; // a shipped model's typed characters it read as others
    if (state.trainedLayer || state.model) {
      const t = state.trainedLayer ? fromTrainInput(state.trainedLayer) : trainedInput(state, notes);
      if (t.mapped) read = { mapped: t.mapped, readNote: t.readNote };
      active = ensureLayer(t.config, t.preset);
      queryTokens = t.tokens;
      x = t.x;
      model = t.model ?? { name: trained.info.name, title: trained.info.title, layer: t.layer, layers: trained.config.layers,
        positional: trained.config.positional };
      state = { ...state, mask: 'causal', cross: false, cells: [], scale: true, padTo: 0 };
    } else if (state.preset) {
      preset = { id: state.preset, ...buildPreset(lens, state.preset) };
      active = ensureLayer(preset.config, preset);
      queryTokens = preset.tokens;
      x = preset.x;
    } else {
      tokens = tokensFor(state);
      active = ensureLayer({ dModel: Number(state.dModel), heads: state.heads, positional: state.positional,
        seed: state.seed }, null);
      queryTokens = tokens.q.tokens;
      x = active.embed(tokens.q.ids);
    }
    const dModel = active.config.dModel;

    let keyTokens = queryTokens;
    let kv;
    if (tokens?.s) {
      keyTokens = tokens.s.tokens;
      kv = active.embed(tokens.s.ids);
    }

    let keyPadding;
    if (state.mask === 'padding') {
      const real = keyTokens.length;
      const total = real + padCount(state, real);
      if (state.padTo && state.padTo < real) notes.push(`Pad to ${state.padTo} is shorter than the ${real} tokens; nothing was padded.`);
      keyTokens = [...keyTokens, ...Array(total - real).fill(PAD_TOKEN)];
      keyPadding = Uint8Array.from(keyTokens, (_, j) => (j >= real ? 1 : 0));
      if (kv) kv = padded(kv, dModel, real, total);
      else {
        x = padded(x, dModel, real, total);
        queryTokens = keyTokens;
      }
    }
    const n = queryTokens.length;
    const kvN = keyTokens.length;

    let cellMask;
    const cells = (state.cells ?? []).filter(([i, j]) => i < n && j < kvN);
    if (cells.length) {
      cellMask = new Uint8Array(n * kvN);
      for (const [i, j] of cells) cellMask[i * kvN + j] = 1;
    }
    // Every head's weights come back; the other steps are traced for the head on screen only
    // (heads times less to compute, copy and send).
    const traceHead = Math.min(state.head, active.config.heads - 1);
    const trace = n * kvN * (traceAllHeads ? active.config.heads : 1) <= traceLimit;
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

    const t0 = performance.now();
    const result = active.forward(x, options);
    const computeMs = performance.now() - t0;
    lastSteps = trace;
    return {
      config: active.config,
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
      printout: preset ? preset.printout(result) : null,
      weightsFile: preset || model ? null : loadedWeights?.name ?? null,
      model,
      notes,
      ...read,
    };
  }

  function explain(request) {
    if (!layer || !lastSteps) throw new Error('Nothing to explain yet: the last compute had no trace.');
    return layer.explain(request);
  }

  /**
   * The weights later computes use: {name, bytes} of a .safetensors file (checked when the next
   * compute builds its layer), or null for the seeded ones.
   */
  function useWeights(weights) {
    loadedWeights = weights;
    layerKey = '';
  }

  /** Loads .safetensors bytes into a layer of the given config; they stay until replaced. */
  function loadWeights(name, bytes, state) {
    const previous = loadedWeights;
    useWeights({ name, bytes });
    try {
      return compute({ ...state, preset: '' });
    } catch (error) {
      useWeights(previous);
      throw error;
    }
  }

  function saveWeights() {
    if (!layer) throw new Error('No layer yet.');
    return layer.saveSafetensors();
  }

  /** The trained model states with `model: name` use (lens.trainedModel's), or null. */
  function useTrainedModel(model) {
    if (model !== trained) trainedLayers.clear();
    trained = model;
  }

  return { compute, explain, fitsInFrame, useWeights, loadWeights, saveWeights, useTrainedModel };
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
