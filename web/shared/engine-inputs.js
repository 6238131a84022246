// What a page state gives the engine's layer to read (engine.js): typed tokens, a tutorial preset, or a trained layer's input.
import { buildPreset } from './presets.js';

/** How many [PAD] keys the padding mask adds after `real` keys (up to state.padTo, or 2). */
export const padCount = (state, real) => (state.mask === 'padding' ? Math.max(state.padTo || real + 2, real) - real : 0);


/** `map`'s value for `key`, made by make() the first time and kept among the last `size` made. */
function remembered(map, key, make, size = 4) {
  let found = map.get(key);
  if (!found) {
    found = make();
    if (map.size >= size) map.delete(map.keys().next().value);
    map.set(key, found);
  }
  return found;
}

/**
 * The inputs of page states, with their caches (the last few tokenizations and trained layers).
 * inputOf(state, notes) says what one state's forward reads: { config, preset } for the layer
 * (preset: weights { id, weights } or a tutorial preset, or null), queryTokens, and either x (the
 * rows) or typed (the typed text's tokensFor: the layer embeds them); tutorial (the preset, for
 * its printout), model (a trained model's { name, title, layer, layers, … }), read (the characters
 * a shipped model read as others) and state (as computed: a trained layer's attention is causal).
 */
export class EngineInputs {
  #lens;
  #tokenized = new Map(); // mode and text -> { tokens, ids }
  #trained = null; // a shipped trained model (lens.trainedModel) for states naming it
  #trainedLayers = new Map(); // ids key -> attentionLayer result, the last few
  #opened = null; // { key, arrays: { input, weights } }: the layer another view opened (useOpenedLayer)

  /** @param {object} lens  the loaded API */
  constructor(lens) {
    this.#lens = lens;
  }

  // The last few tokenizations, kept: deciding where to compute (fitsInFrame) and computing
  // both tokenize the same text on every keystroke.
  #tokensOf(text, mode) {
    return remembered(this.#tokenized, `${mode}\u0000${text}`, () => {
      const { tokens, ids } = this.#lens.tokenize(text, { mode });
      return { tokens, ids };
    });
  }

  /**
   * The tokens a (non-preset) state asks for: its queries q, the source s in cross-attention,
   * and the n × kvN they make (with [PAD] keys). Throws when there is nothing to attend over.
   */
  tokensFor(state) {
    const q = this.#tokensOf(state.text, state.tokenizer);
    if (q.tokens.length === 0) throw new Error('Type some text: there are no tokens to attend over yet.');
    const s = state.cross ? this.#tokensOf(state.source, state.tokenizer) : null;
    if (s && s.tokens.length === 0) throw new Error('Type a source sentence for cross-attention: it has no tokens.');
    const real = (s ?? q).tokens.length;
    const pads = padCount(state, real);
    return { q, s, n: s ? q.tokens.length : real + pads, kvN: real + pads };
  }

  /**
   * A state naming a trained model: its layer's attention on the text, as a standalone layer
   * (model.attentionLayer), always causal, one sequence of at most the model's context.
   */
  #trainedInput(state, notes) {
    const trained = this.#trained;
    if (!trained || trained.info.name !== state.model) {
      throw new Error(`The trained model '${state.model}' is not loaded (shipped: ${this.#lens.trainedModels.join(', ')}).`);
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
    const found = remembered(this.#trainedLayers, `${trained.info.name}\u0000${l}\u0000${ids.join(',')}`,
      () => trained.attentionLayer(l, ids, { n: ids.length }));
    const preset = { id: `trained:${trained.info.name}:${l}`, weights: found.weights };
    const model = { name: trained.info.name, title: trained.info.title, layer: l, layers: trained.config.layers,
      positional: trained.config.positional, norm: trained.config.layerNorm ? 'layer-norm' : null };
    return { preset, config: found.config, x: found.input, tokens: read.tokens, model,
      read: read.mapped ? { mapped: read.mapped, readNote: read.note } : null };
  }

  /**
   * A state carrying `openedLayer`: a layer the Train or Your model view opened (its config, mask,
   * ids, tokens or probe, step, layer and where it came from; its input and weights, kept out of
   * the store, handed over by useOpenedLayer), the same trained path as a shipped model's, fed by
   * data instead of a model.
   */
  #openedInput(opened) {
    const arrays = this.#opened?.key === opened.key ? this.#opened.arrays : null;
    if (!arrays) throw new Error('The layer opened in the walkthrough is no longer held: open it again from its view.');
    // A checkpoint's layer (views/model) brings its BPE tokens; the Train view's probe is characters.
    const tokens = opened.tokens ?? Array.from(opened.probe).slice(0, opened.ids.length);
    const preset = { id: `opened:${opened.key}`, weights: arrays.weights };
    const family = this.#lens.catalog.families.find((f) => f.name === opened.family)?.displayName ?? opened.family;
    const title = opened.source === 'checkpoint' ? `Your model (${family} checkpoint), layer ${opened.layer + 1}`
      : `Trained in the Train view: ${opened.task ?? 'a task'}, step ${opened.step}, layer ${opened.layer + 1}`;
    const model = { name: 'opened-layer', title, checkpoint: opened.source === 'checkpoint',
      layer: opened.layer, layers: opened.modelConfig?.layers ?? opened.layer + 1, positional: opened.modelConfig?.positional ?? opened.config.positional,
      opened: true, task: opened.task ?? '', step: opened.step,
      maskText: opened.mask?.mask === 'sliding-window' ? `sliding window ${opened.mask.window}` : 'causal',
      window: opened.mask?.window ?? 0, norm: opened.modelConfig?.norm ?? null };
    return { preset, config: opened.config, x: arrays.input, tokens, model, mask: opened.mask };
  }

  /** The input and weights of the opened layer `key` (opened-layers.js), for states that name it. */
  useOpenedLayer(key, arrays) {
    this.#opened = key && arrays ? { key, arrays } : null;
  }

  /** What `state`'s forward reads (see the class); notes: where to say what was changed or left out. */
  inputOf(state, notes) {
    const none = { tutorial: null, typed: null, model: null, read: { mapped: [], readNote: '' }, state };
    if (state.openedLayer || state.model) {
      const t = state.openedLayer ? this.#openedInput(state.openedLayer) : this.#trainedInput(state, notes);
      // Causal, or the model's own sliding window (Mistral): attentionLayer's mask.
      const mask = t.mask?.mask === 'sliding-window' ? { mask: 'sliding-window', window: t.mask.window } : { mask: 'causal' };
      return { ...none, config: t.config, preset: t.preset, queryTokens: t.tokens, x: t.x, model: t.model, read: t.read ?? none.read,
        state: { ...state, ...mask, cross: false, cells: [], scale: true, padTo: 0 } };
    }
    if (state.preset) {
      const tutorial = { id: state.preset, ...buildPreset(this.#lens, state.preset) };
      return { ...none, config: tutorial.config, preset: tutorial, queryTokens: tutorial.tokens, x: tutorial.x, tutorial };
    }
    const typed = this.tokensFor(state);
    return { ...none, config: { dModel: Number(state.dModel), heads: state.heads, positional: state.positional, seed: state.seed },
      preset: null, queryTokens: typed.q.tokens, typed };
  }

  /** The trained model states with `model: name` use (lens.trainedModel's), or null. */
  useTrainedModel(model) {
    if (model !== this.#trained) this.#trainedLayers.clear();
    this.#trained = model;
  }
}
