// TransformerModel (lens.createModel): a small decoder-only transformer's forward, gradients,
// head diagnostics, next tokens and .safetensors files.
// A module of the JS API (web/api/attention-lens-api.js is its entry; scripts/bundle-api.mjs
// bundles them into dist/attention-lens.mjs).
import { makeModelSnapshot, readSnapshot, SNAPSHOT_LIMITS, snapshotProvenance } from './snapshot.js';
import { booleanOption, byteArray, checkKeys, checkOptions, deepFreeze, describe, fieldOptions, finalizer, freeHandle, integerIn, measured, needTraining, numberOption, numbers, probeOptions, SEQUENCE_KEYS, sequenceShape, SIZE_MAX, stringOption, tokenIds, unwrap } from './common.js';

const MODEL_FORWARD_KEYS = ['n', 'batch', 'trace', 'logits', 'ablate', 'next'];
const GENERATE_KEYS = ['maxTokens', 'temperature', 'topK', 'topP', 'seed', 'stop', 'onToken'];
const ABLATION_KEYS = ['layer', 'head', 'scale'];
const LENS_KEYS = ['topK', 'token'];
const ATTRIBUTE_KEYS = ['answers'];
const PATCH_KEYS = ['clean', 'corrupted', 'answers', 'over'];
const SNAPSHOT_KEYS = ['ids', 'text', 'layers', 'layer', 'head', 'top', 'source', 'settings'];
const SNAPSHOT_SOURCES = ['hub', 'files', 'shipped'];
// The project's version (package.json's), which a snapshot's provenance records: the module's
// --extern-pre-js defines it.
const PROJECT_VERSION = typeof ATTN_VERSION === 'string' ? ATTN_VERSION : 'dev'; // eslint-disable-line no-undef
const INT32_MIN = -0x80000000;
const INT32_MAX = 0x7fffffff;

// What a subclass adds to generate (CheckpointModel: its tokenizer's texts and its end-of-text
// ids): [TOKEN_TEXT](id) -> the token's text or null; [DEFAULT_STOP]() -> the stop ids when the
// caller gives none (undefined: none).
export const TOKEN_TEXT = Symbol('tokenText');
export const DEFAULT_STOP = Symbol('defaultStop');

// The model behind a TransformerModel, for its trainers: { live() -> handle, trainers: Set of
// callbacks, each disposing one trainer when the model is disposed }.
export const modelInternals = new WeakMap();

// [{ layer, head, scale? }] of ablate (or forward's ablate option), types checked.
/** The two answer ids [a, b] of attribute and patch (the core checks they are in the vocabulary). */
function answerIds(what, answers) {
  if (!(Array.isArray(answers) || ArrayBuffer.isView(answers)) || answers.length !== 2) {
    throw new Error(`${what}'s answers must be [a, b]: two token ids, got ${describe(answers)}`);
  }
  return tokenIds('answers', answers);
}

function headList(what, heads) {
  if (!Array.isArray(heads)) {
    throw new Error(`${what === 'ablate' ? 'ablate expects' : "forward's ablate must be"} an array of { layer, head, scale? } ` +
      `(or [] to restore), got ${describe(heads)}`);
  }
  return heads.map((entry, i) => {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      throw new Error(`${what}'s heads[${i}] must be { layer, head, scale? }, got ${describe(entry)}`);
    }
    checkKeys(`${what} heads[${i}]`, entry, ABLATION_KEYS);
    return {
      layer: integerIn(`heads[${i}].layer`, entry.layer, 0, SIZE_MAX),
      head: integerIn(`heads[${i}].head`, entry.head, 0, SIZE_MAX),
      scale: numberOption(`heads[${i}].scale`, entry.scale),
    };
  });
}

export class TransformerModel {
  #handle;
  #config;
  #names;
  #shapes;
  #trainers = new Set();
  #generating = false;

  // catalog: lens.catalog (createModel's fields and defaults); adopt: (handle) => {} fills a new
  // ModelHandle instead of configure (the config is then the adopted model's own, from the core).
  constructor(core, catalog, config, adopt = null) {
    const handle = new core.ModelHandle();
    let args;
    try {
      if (adopt) {
        adopt(handle);
        args = handle.config();
      } else {
        args = fieldOptions('createModel', config, catalog.fields.model, catalog.defaults.model);
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
   * ids: Int32Array [batch * n]; options { n, batch = 1, trace = false (batch 1),
   * logits = 'all' ([batch * n * vocab]) | 'last' ([batch * vocab]: each sequence's last position,
   * equal to those rows of 'all', without the unembedding of every other row), ablate: heads
   * [{ layer, head, scale? }] ablated in this call instead of model.ablate's ([]: none), next: k
   * (result.next: the k most likely next tokens after the first sequence's last position, as
   * nextTokens gives them) }.
   */
  forward(ids, options = {}) {
    const handle = this.#live();
    const tokens = tokenIds('ids', ids);
    const { n, batch } = sequenceShape('forward', options, MODEL_FORWARD_KEYS, tokens.length);
    const trace = booleanOption('trace', options.trace, false);
    const logits = stringOption('logits', options.logits, 'all');
    if (logits !== 'all' && logits !== 'last') {
      throw new Error(`logits must be 'all' or 'last', got ${describe(options.logits)}`);
    }
    const heads = options.ablate === undefined ? undefined : headList('forward', options.ablate);
    const next = options.next === undefined ? 0 : integerIn('next', options.next, 0, SIZE_MAX);
    unwrap(handle.forward(tokens, batch, n, trace, logits === 'last', heads));
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
    if (next > 0) result.next = this.nextTokens(next);
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
   * standalone attention layer: { input: Float32Array [n·dModel] (the norm's output, or x without
   * one), config: { dModel, heads, positional: 'none' | 'rope', bias (q/k/v); a checkpoint's also
   * headDim, kvHeads, outBias, rope? (with its rotaryDims), and what its block has of scale,
   * softcap, qkNorm with qkNormWeight and qkNormEps }, weights: { inProjWeight, inProjBias?,
   * outProjWeight, outProjBias?, qNormWeight?, kNormWeight? }, mask: { mask: 'causal' |
   * 'sliding-window', window? } }. lens.createLayer(config), setWeights(weights),
   * forward(input, { n, ...mask }) reproduce forward(ids).attention[layer].
   */
  attentionLayer(layer, ids, options = {}) {
    const handle = this.#live();
    const config = this.#config;
    const l = integerIn('layer', layer, 0, config.layers - 1);
    const tokens = tokenIds('ids', ids);
    const { n } = sequenceShape('attentionLayer', options, ['n'], tokens.length);
    unwrap(handle.forward(tokens, 1, n, false, true, undefined));
    const input = unwrap(handle.attentionInput(l)).slice();
    const has = (name) => this.#names.includes(`layers.${l}.attn.${name}`);
    const read = (name) => unwrap(handle.parameter(`layers.${l}.attn.${name}`)).slice();
    const weights = { inProjWeight: read('in_proj_weight') };
    if (has('in_proj_bias')) weights.inProjBias = read('in_proj_bias');
    weights.outProjWeight = read('out_proj.weight');
    if (has('out_proj.bias')) weights.outProjBias = read('out_proj.bias');
    if (has('q_norm.weight')) weights.qNormWeight = read('q_norm.weight');
    if (has('k_norm.weight')) weights.kNormWeight = read('k_norm.weight');
    // The core's config of the layer as the model's trace runs it (Model::layer_config).
    const core = unwrap(handle.layerConfig(l));
    const { dModel, heads, positional, bias } = core;
    const layerConfig = { dModel, heads, positional, bias };
    if (config.kvHeads !== undefined) { // a checkpoint: its own head width, K/V heads and RoPE
      Object.assign(layerConfig, { headDim: core.headDim, kvHeads: core.kvHeads, outBias: has('out_proj.bias') });
      if (positional === 'rope') layerConfig.rope = core.rope;
    }
    // What a checkpoint's block adds (Gemma's scale, Gemma 2's soft-cap, Qwen3's, Gemma 3's and
    // OLMo 2's q/k norms), only where the block has it.
    if (core.scale !== 0) layerConfig.scale = core.scale;
    if (core.softcap !== 0) layerConfig.softcap = core.softcap;
    if (core.qkNorm !== 'none') {
      Object.assign(layerConfig, { qkNorm: core.qkNorm, qkNormWeight: core.qkNormWeight, qkNormEps: core.qkNormEps });
    }
    const window = config.layerWindows?.[l] ?? config.window; // a checkpoint's own layer's window (Gemma's differ)
    const mask = window ? { mask: 'sliding-window', window } : { mask: 'causal' };
    return { input, config: layerConfig, weights, mask };
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

  /**
   * Writes up to maxTokens new tokens after the prompt `ids` through a KV cache (the prompt runs
   * once, then one row per token): { ids: Int32Array (the new tokens only), steps: [{ id, token,
   * probability, attention }] }. Options: maxTokens (default 20, or what the context leaves after
   * the prompt; the prompt and maxTokens must fit the context), temperature (0, the default: greedy, the argmax with ties to the lower id; > 0:
   * drawn from softmax(logits / temperature)), topK (0: off; else the k most likely ids only),
   * topP (1: off; else the fewest most likely ids whose probability reaches topP, after topK),
   * seed (default 1: the same seed replays the same tokens; the token at sequence position p is
   * drawn from a generator seeded from (seed, p) alone, so a run continued from its own prefix
   * in several calls with the same seed writes what one call writes), stop (ids
   * that end the generation once produced, kept as its last token; default: a checkpoint's
   * end-of-text ids, model.eos, else none), onToken(step) (called with each step as it is made).
   * A step: id; token (its text for a checkpoint with a tokenizer, else null); probability (its
   * softmax probability at temperature 1, float64, as nextTokens gives it); attention (per layer a
   * Float32Array [heads * t]: the query row, head after head, of the position whose logits chose
   * it, t = prompt length + k for the k-th new token). The ablated heads (model.ablated) stay
   * ablated. The last forward's results are replaced: call forward again before nextTokens.
   */
  generate(ids, options = {}) {
    const handle = this.#live();
    needTraining(handle.generateStart, 'model.generate');
    if (this.#generating) throw new Error('generate is already running on this model (onToken cannot start another)');
    const tokens = tokenIds('ids', ids);
    checkOptions('generate', options, GENERATE_KEYS);
    const optional = (name, check) => (options[name] === undefined ? undefined : check(name, options[name]));
    const args = {
      maxTokens: optional('maxTokens', (name, v) => integerIn(name, v, 0, SIZE_MAX)),
      temperature: optional('temperature', (name, v) => numberOption(name, v)),
      topK: optional('topK', (name, v) => integerIn(name, v, 0, SIZE_MAX)),
      topP: optional('topP', (name, v) => numberOption(name, v)),
      seed: optional('seed', (name, v) => integerIn(name, v, 0, 0xffffffff)),
      stop: options.stop === undefined ? this[DEFAULT_STOP]() : tokenIds('stop', options.stop),
    };
    const onToken = options.onToken;
    if (onToken !== undefined && typeof onToken !== 'function') {
      throw new Error(`onToken must be a function (step) => {}, got ${describe(onToken)}`);
    }
    this.#generating = true;
    try {
      unwrap(handle.generateStart(tokens, args));
      const made = [];
      const steps = [];
      for (;;) {
        // onToken may have disposed the model: #live() says so.
        const next = unwrap(this.#live().generateNext());
        if (next === null) break;
        // Copy the views out before anything else can run (and grow memory).
        const attention = next.attention.map((row) => row.slice());
        const step = { id: next.id, token: this[TOKEN_TEXT](next.id), probability: next.probability, attention };
        made.push(step.id);
        steps.push(step);
        onToken?.(step);
      }
      return { ids: Int32Array.from(made), steps };
    } finally {
      this.#generating = false;
      this.#handle?.generateEnd();
    }
  }

  /**
   * The logit lens of one sequence (the ablated heads stay ablated): what the residual stream
   * already predicts at every layer, read through the model's own final norm (with each row's own
   * statistics), unembedding and final soft-cap. { rows, n, topK, ids, probs, token }: rows =
   * layers + 1 (row l < layers: the residual entering block l, row 0 the embeddings; the last:
   * after the last block, its probabilities the forward's own); ids Int32Array and probs
   * Float32Array [rows * n * topK], index (row * n + position) * topK + j, the topK most likely
   * ids most likely first (ties by the lower id) and their softmax probabilities (float64, as
   * nextTokens'); token null, or with options.token { id, probs: Float32Array [rows * n] (its
   * probability), ranks: Int32Array [rows * n] (0 = the most likely) }. Options: topK (default 5,
   * 1 to min(vocab, 100)), token (an id).
   */
  logitLens(ids, options = {}) {
    const handle = this.#live();
    needTraining(handle.logitLens, 'model.logitLens');
    const tokens = tokenIds('ids', ids);
    checkOptions('logitLens', options, LENS_KEYS);
    const args = {
      topK: options.topK === undefined ? undefined : integerIn('topK', options.topK, 0, SIZE_MAX),
      token: options.token === undefined ? undefined : integerIn('token', options.token, INT32_MIN, INT32_MAX),
    };
    const lens = unwrap(handle.logitLens(tokens, args));
    // Copy the views out before anything else can run (and grow memory).
    const token = lens.token === null ? null
      : { id: lens.token.id, probs: lens.token.probs.slice(), ranks: lens.token.ranks.slice() };
    return { rows: lens.rows, n: lens.n, topK: lens.topK, ids: lens.ids.slice(), probs: lens.probs.slice(), token };
  }

  /**
   * Attention rollout (Abnar & Zuidema 2020) of one sequence (the ablated heads stay ablated, as
   * in forward: an ablated head's own pattern still counts in its layer's mean): Float32Array
   * [layers * n * n], index (l * n + i) * n + j: R_l = Â_l · R_(l−1), R_0 = Â_0, where Â_l =
   * 0.5 · (the mean over heads of layer l's attention) + 0.5 · I, rows renormalised. Row i of R_l:
   * how much position i after layer l draws on input token j; every row sums to 1.
   */
  rollout(ids) {
    const handle = this.#live();
    needTraining(handle.rollout, 'model.rollout');
    return unwrap(handle.rollout(tokenIds('ids', ids))).slice();
  }

  /**
   * Direct logit attribution of logit[a] − logit[b] at the last position of one sequence (the
   * ablated heads stay ablated), options { answers: [a, b] } (token ids): { total, embed, heads,
   * attentionBias, mlp, constant }. Each part's contribution through the final norm with its scale
   * frozen from this run (each part mean-centred for LayerNorm, not for RMSNorm): embed (token
   * embedding plus positions), heads Float32Array [layers * heads] (index layer * heads + head: the
   * head's output before out_proj through its columns of out_proj), attentionBias Float32Array
   * [layers] (out_proj's bias), mlp Float32Array [layers] (the MLP's output with its bias),
   * constant (the final norm's bias). They sum to total, the forward's logit difference. A model
   * whose blocks normalise their sublayers' outputs (Gemma 2 and 3, OLMo 2) or that soft-caps its
   * logits (Gemma 2) throws, saying why: its logit difference does not split into linear parts.
   */
  attribute(ids, options = {}) {
    const handle = this.#live();
    needTraining(handle.attribute, 'model.attribute');
    const tokens = tokenIds('ids', ids);
    checkOptions('attribute', options, ATTRIBUTE_KEYS);
    const answers = options.answers;
    const [a, b] = answerIds('attribute', answers);
    const parts = unwrap(handle.attribute(tokens, a, b));
    return {
      total: parts.total,
      embed: parts.embed,
      heads: parts.heads.slice(),
      attentionBias: parts.attentionBias.slice(),
      mlp: parts.mlp.slice(),
      constant: parts.constant,
    };
  }

  /**
   * Activation patching (denoising), options { clean, corrupted, answers: [a, b], over }: the
   * metric logit[a] − logit[b] at the last position of the clean and the corrupted run (token ids
   * of the same length), and for each site over 'heads' | 'residual' | 'layers' the effect
   * (patched − corrupted) / (clean − corrupted) of the corrupted run with that site's activation
   * taken from the clean run — 1: the site restores the clean answer alone, 0: it changes nothing.
   * { clean, corrupted, effect }: over 'heads' Float32Array [layers * heads] (index layer * heads
   * + head: the head's output before out_proj at every position), 'residual' Float32Array
   * [layers * n] (index layer * n + position: the residual stream entering the block), 'layers'
   * { attention, mlp }: Float32Array [layers] each (the sublayer's whole output). Ablated heads
   * stay ablated in every run. Throws for prompts of different lengths (naming both), answers
   * giving both runs the same metric, or a call too large to run (saying how large).
   */
  patch(options = {}) {
    const handle = this.#live();
    needTraining(handle.patch, 'model.patch');
    checkOptions('patch', options, PATCH_KEYS);
    const clean = tokenIds('clean', options.clean);
    const corrupted = tokenIds('corrupted', options.corrupted);
    const [a, b] = answerIds('patch', options.answers);
    if (typeof options.over !== 'string') {
      throw new Error(`patch's over must be a string naming the sites to patch, got ${describe(options.over)}`);
    }
    const result = unwrap(handle.patch(clean, corrupted, a, b, options.over));
    const effect = ArrayBuffer.isView(result.effect) ? result.effect.slice()
      : { attention: result.effect.attention.slice(), mlp: result.effect.mlp.slice() };
    return { clean: result.clean, corrupted: result.corrupted, effect };
  }

  /**
   * The model's run on `ids` (or, for a checkpoint with a tokenizer, `text`) as a snapshot that
   * <attention-lens> draws with no model, core or worker (docs/embedding.md): the
   * tokens, every layer × head's attention (or only `layers`', 0-based) quantised to 8 bits per row
   * (within 1/510), the `top` next tokens (default 10), the knocked-out heads, the head shown first
   * (`layer`, `head`), and the provenance: `source` ({ source: 'hub', id, revision?, file?,
   * endpoint? } | { source: 'files', fileName, files?: [{ name, bytes, sha256 }] } | { source:
   * 'shipped', name }), the family, the text, `settings` (plain values) and this module's version.
   * Returns the snapshot as a plain object: JSON.stringify(m.snapshot({ … })) is the .json file.
   */
  snapshot(options = {}) {
    this.#live();
    checkKeys('snapshot options', options, SNAPSHOT_KEYS);
    const { layers: layerCount, heads } = this.#config;
    let ids;
    let tokens = null;
    let text = '';
    if (options.text !== undefined) {
      if (options.ids !== undefined) throw new Error('snapshot takes ids or text, not both');
      if (typeof options.text !== 'string') throw new Error(`snapshot's text must be a string, got ${describe(options.text)}`);
      if (typeof this.tokenize !== 'function') throw new Error("snapshot's text needs a checkpoint with a tokenizer: give ids");
      text = options.text;
      ({ ids, tokens } = this.tokenize(text));
    } else if (options.ids !== undefined) {
      ids = tokenIds('ids', options.ids);
    } else {
      throw new Error('snapshot needs ids (or text, for a checkpoint with a tokenizer)');
    }
    let layers;
    if (options.layers !== undefined) {
      if (!Array.isArray(options.layers) || options.layers.length === 0) {
        throw new Error(`snapshot's layers must be a non-empty array of layer numbers, got ${describe(options.layers)}`);
      }
      layers = [...new Set(options.layers.map((l, i) => integerIn(`layers[${i}]`, l, 0, layerCount - 1)))].sort((a, b) => a - b);
    }
    const layer = integerIn('layer', options.layer ?? layers?.[0] ?? 0, 0, layerCount - 1);
    if (layers && !layers.includes(layer)) throw new Error(`snapshot's layer ${layer} is not one of its layers (${layers.join(', ')})`);
    const head = integerIn('head', options.head ?? 0, 0, heads - 1);
    const top = integerIn('top', options.top ?? 10, 1, SNAPSHOT_LIMITS.next);
    let model = null;
    if (options.source !== undefined) {
      const source = options.source;
      if (source === null || typeof source !== 'object' || !SNAPSHOT_SOURCES.includes(source.source)) {
        throw new Error(`snapshot's source must be { source: ${SNAPSHOT_SOURCES.map((s) => `'${s}'`).join(' | ')}, … }, got ${describe(source)}`);
      }
      model = { ...source, family: this.family ?? '' };
    }
    const n = ids.length;
    const { attention, next } = this.forward(ids, { n, logits: 'last', next: top });
    const textOf = (id, known) => known ?? this[TOKEN_TEXT](id) ?? `#${id}`;
    const run = { n, ids: Array.from(ids), tokens: tokens ?? Array.from(ids, (id) => textOf(id)), attention,
      top: next.map((t) => ({ id: t.id, token: textOf(t.id, t.token), probability: t.probability })), ablated: this.ablated ?? [] };
    const provenance = snapshotProvenance(model, { files: model?.files, text, settings: options.settings ?? {}, version: PROJECT_VERSION });
    const snapshot = makeModelSnapshot({ run, config: this.#config, provenance, view: { layer, head }, layers });
    readSnapshot(snapshot); // what the element will read: a snapshot it would refuse is never returned
    return JSON.parse(JSON.stringify(snapshot));
  }

  /**
   * Ablates heads in every later forward, trace, generate, headScores, headAblation,
   * lossAndGradients, logitLens, rollout and attribute: [{ layer, head, scale? }] (0-based, as forward().attention and
   * headScores(); scale in [0, 1], default 0: the head's output — its columns of the heads'
   * concatenated A·V, before out_proj — zeroed; else multiplied by scale). [] restores the model,
   * bit for bit. A head out of range, a scale outside [0, 1] or a head listed twice throws, and the
   * ablation in force stays.
   */
  ablate(heads) {
    const handle = this.#live();
    needTraining(handle.ablate, 'model.ablate');
    unwrap(handle.ablate(headList('ablate', heads)));
  }

  /** The heads ablated now: [{ layer, head, scale }] (a copy; [] when none). */
  get ablated() {
    const handle = this.#live();
    needTraining(handle.ablated, 'model.ablated');
    return handle.ablated();
  }

  [TOKEN_TEXT]() {
    return null;
  }

  [DEFAULT_STOP]() {
    return undefined;
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
    for (const release of [...this.#trainers]) release();
    this.#handle = freeHandle(this, this.#handle);
  }

  #live() {
    if (!this.#handle) throw new Error('this model was disposed; create a new one with lens.createModel()');
    return this.#handle;
  }
}
