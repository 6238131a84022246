// Turns the page state into one traced forward through the JS API and back into plain data
// the page draws. Runs inside the Web Worker (engine-worker.js) for the page and on the main
// thread for the <attention-lens> element. Builds inputs (tokens, padding rows, presets) and
// calls the core; it does no attention math itself.
import { buildPreset } from './presets.js';

export const PAD_TOKEN = '[PAD]';
const TRACE_LIMIT = 1 << 22; // traced heads·n·kvN the core allows (attn::kMaxTraceValues)

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

  function tokensOf(text, mode) {
    const { tokens, ids } = lens.tokenize(text, { mode });
    return { tokens, ids };
  }

  /** Rows of `x` for the tokens, then zero rows for [PAD] up to `total` rows. */
  function padded(x, dModel, count, total) {
    if (total <= count) return x;
    const out = new Float32Array(total * dModel);
    out.set(x.subarray(0, count * dModel));
    return out;
  }

  function compute(state) {
    const started = performance.now();
    const notes = [];
    let preset = null;
    let active;
    let queryTokens;
    let x;
    if (state.preset) {
      preset = { id: state.preset, ...buildPreset(lens, state.preset) };
      active = ensureLayer(preset.config, preset);
      queryTokens = preset.tokens;
      x = preset.x;
    } else {
      const q = tokensOf(state.text, state.tokenizer);
      if (q.tokens.length === 0) throw new Error('Type some text: there are no tokens to attend over yet.');
      active = ensureLayer({ dModel: Number(state.dModel), heads: state.heads, positional: state.positional,
        seed: state.seed }, null);
      queryTokens = q.tokens;
      x = active.embed(q.ids);
    }
    const dModel = active.config.dModel;

    let keyTokens = queryTokens;
    let kv;
    if (state.cross && !preset) {
      const s = tokensOf(state.source, state.tokenizer);
      if (s.tokens.length === 0) throw new Error('Type a source sentence for cross-attention: it has no tokens.');
      keyTokens = s.tokens;
      kv = active.embed(s.ids);
    }

    let keyPadding;
    if (state.mask === 'padding') {
      const real = keyTokens.length;
      const total = Math.max(state.padTo || real + 2, real);
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
    const trace = n * kvN * (traceAllHeads ? active.config.heads : 1) <= TRACE_LIMIT;
    if (!trace) notes.push(`${n} × ${kvN} tokens is too large to trace every step; showing the attention weights only.`);
    const kind = state.mask === 'padding' ? 'none' : state.mask;
    const options = { n, mask: kind, scale: state.scale, trace };
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
      output: result.output,
      computeMs,
      totalMs: performance.now() - started,
      printout: preset ? preset.printout(result) : null,
      weightsFile: preset ? null : loadedWeights?.name ?? null,
      notes,
    };
  }

  function explain(request) {
    if (!layer || !lastSteps) throw new Error('Nothing to explain yet: the last compute had no trace.');
    return layer.explain(request);
  }

  /** Loads .safetensors bytes into a layer of the given config; they stay until replaced. */
  function loadWeights(name, bytes, state) {
    const previous = loadedWeights;
    loadedWeights = { name, bytes };
    try {
      layerKey = '';
      return compute({ ...state, preset: '' });
    } catch (error) {
      loadedWeights = previous;
      layerKey = '';
      throw error;
    }
  }

  function clearWeights() {
    loadedWeights = null;
    layerKey = '';
  }

  function saveWeights() {
    if (!layer) throw new Error('No layer yet.');
    return layer.saveSafetensors();
  }

  return { compute, explain, loadWeights, clearWeights, saveWeights };
}

/**
 * Runs one request message ({type, ...}) on an engine: the protocol shared by the Web Worker
 * (engine-worker.js) and the main-thread fallback (engine-client.js).
 */
export function runRequest(engine, message) {
  switch (message.type) {
    case 'compute':
      return engine.compute(message.state);
    case 'explain':
      return engine.explain(message.request);
    case 'load-weights':
      return engine.loadWeights(message.name, message.bytes, message.state);
    case 'clear-weights':
      return engine.clearWeights();
    case 'save-weights':
      return engine.saveWeights();
    default:
      throw new Error(`unknown request '${String(message.type).slice(0, 40)}'`);
  }
}
