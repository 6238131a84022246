// What the full <attention-lens> element (attention-lens-element.js) draws without a snapshot: the
// walkthrough's layer computed in the page. Every element on a page shares one wasm module instance
// (the single-file JS API, bundled by vite.element.config.js), loaded on first use; each element has
// its own engine (web/shared/engine.js) and draws with the page's shared modules (view model, head
// picker, Heatmap, labels, catalog). Attributes are parsed by stateFromAttributes and only ever
// shown with textContent.
import { loadAttentionLens } from 'attention-lens/single-file';
import { catalogOf } from '../shared/catalog.js';
import { el } from '../shared/dom.js';
import { stateFromAttributes } from '../shared/embed-snippet.js';
import { createEngine, PAD_TOKEN } from '../shared/engine.js';
import { formatPrecise } from '../shared/format.js';
import { HeadPicker } from '../shared/head-picker.js';
import { Heatmap } from '../shared/heatmap.js';
import { matrixOf } from '../shared/labels.js';
import { scaleFor, stageById } from '../shared/stages.js';
import { DEFAULTS, makeSchema } from '../shared/state.js';
import { TokenChips } from '../shared/token-chips.js';
import { availableStages, cellWords, keepTogether, pickStage, settingsSummary, stageNeeds, stepsOfStage,
  walkthroughSteps } from '../shared/view-model.js';

// State fields that change the computation (the rest, step and head, only change the view).
const COMPUTE_KEYS = ['text', 'tokenizer', 'dModel', 'heads', 'seed', 'positional', 'mask', 'window',
  'prefix', 'padTo', 'cross', 'source', 'scale', 'model', 'layer'];

// ---- shared by every element on the page ---------------------------------------------------

let lensPromise = null;
let lens = null;
let catalog = null; // the core's catalog (catalog.js)
let schema = null; // the attributes' schema, from the catalog
/** The one wasm module instance of the page, loaded on the first element's first render. */
function sharedLens() {
  lensPromise ??= loadAttentionLens().then((loaded) => {
    catalog = catalogOf(loaded);
    schema = makeSchema(catalog);
    lens = loaded;
    return loaded;
  });
  return lensPromise;
}

/** The URL of the script that defined the element: files it loads (models/NAME.js, attention-lens.mjs) sit beside it. */
export const SCRIPT_URL = (typeof document !== 'undefined' &&
  (document.currentScript?.src || document.querySelector('script[src*="attention-lens-element"]')?.src)) ||
  (typeof location !== 'undefined' ? location.href : '');

// The shipped trained models (model="…"), each loaded on first use: from a script already on the
// page (the Embed dialog's one-file download puts models/NAME.js before the element in one file),
// else from models/NAME.js beside this script: a classic script that sets
// globalThis.attentionLensModels[NAME] to the .safetensors bytes in base64. A <script> tag, unlike
// fetch(), works from file:// and under a strict CSP (script-src 'self'); a post that names no
// model downloads none.
const trainedModels = new Map(); // name -> Promise of the model

const decodeBase64 = (base64) => Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));

function modelBytes(name) {
  const loaded = globalThis.attentionLensModels?.[name];
  if (typeof loaded === 'string') return Promise.resolve(decodeBase64(loaded));
  return new Promise((resolve, reject) => {
    const url = new URL(`models/${name}.js`, SCRIPT_URL).href;
    const script = document.createElement('script');
    script.src = url;
    script.async = true;
    script.onload = () => {
      script.remove();
      const base64 = globalThis.attentionLensModels?.[name];
      if (typeof base64 !== 'string') {
        reject(new Error(`${url} did not define the ${name} model`));
        return;
      }
      resolve(decodeBase64(base64));
    };
    script.onerror = () => {
      script.remove();
      reject(new Error(`could not load ${url}: put the models folder beside attention-lens-element.js`));
    };
    document.head.append(script);
  });
}

/** The shared trained model `name` (one of lens.trainedModels), loading it once. */
function sharedTrainedModel(name) {
  if (!trainedModels.has(name)) {
    const loading = modelBytes(name).then((bytes) => lens.trainedModel(name, { bytes }));
    loading.catch(() => trainedModels.delete(name)); // a later render may try again
    trainedModels.set(name, loading);
  }
  return trainedModels.get(name);
}

// ---- helpers ---------------------------------------------------------------------------------

/** What a step that is missing from a trace needs, in attribute words (from the catalog). */
const attributeNeeds = (stage) => stageNeeds(catalog, stage, (key, value) => (key === 'cross'
  ? 'a source attribute' : `${key}=${value.map((v) => `"${v}"`).join(' or ')}`));

/**
 * The smallest cell a heatmap may shrink to before it scrolls sideways: token × token cells stay
 * large enough for their labels (the Heatmap draws labels from 11 px), up to a canvas of about
 * 4000 CSS pixels; dimension columns may get thinner.
 */
function minCellFor(matrix) {
  const wanted = matrix.colAxis === 'dimension' ? 4 : 14;
  return Math.max(3, Math.min(wanted, Math.floor(4000 / Math.max(matrix.rows, matrix.cols))));
}

// ---- the view --------------------------------------------------------------------------------

export class ComputeView {
  #host; // the element's LensHost (lens-element.js)
  #engine = null;
  #computeKey = null;
  #result = null; // the last successful compute
  #state = null; // the state that result was computed from (after any fallback)
  #parseProblems = [];
  #computeProblems = [];
  #headOverride = null; // a head picked with the head buttons, until the head attribute changes
  #model = null; // the trained model of the model attribute, once loaded
  #maps = []; // [{ slot, heatmap, matrix }]
  #chips; // { target, source }: TokenChips (long inputs collapse; see token-chips.js)
  #picker;

  /** @param {import('./lens-element.js').LensHost} host */
  constructor(host) {
    this.#host = host;
    const { parts } = host;
    this.#chips = { target: new TokenChips(parts.tokens, { label: 'Tokens:' }), source: new TokenChips(parts.sourceTokens, { label: 'Source:' }) };
    this.#picker = new HeadPicker(parts.heads, { label: 'Head:', labelClass: 'label', hide: true, onPick: (h) => {
      this.#headOverride = h;
      this.#draw();
      this.#picker.focus(h);
    } });
  }

  /** Whether a computed layer is drawn (a theme or width change draws it again). */
  get drawn() {
    return Boolean(this.#result);
  }

  /** The head attribute changed: it wins over a head picked with the buttons. */
  headChanged() {
    this.#headOverride = null;
  }

  /** The element comes back to computing (from a snapshot or a live model): computed again, drawn whole. */
  reset() {
    this.#result = null;
    this.#computeKey = null;
    this.#picker.render({ heads: 0, head: 0, visible: false });
  }

  #attribute(name) {
    return this.#host.element.getAttribute(name);
  }

  update() {
    const { parts, schedule } = this.#host;
    if (!lens) {
      sharedLens().then(() => schedule(), (error) => this.#fail(error));
      return;
    }
    const { state, problems } = stateFromAttributes((name) => this.#attribute(name), schema);
    this.#parseProblems = problems;
    if (state.model && !lens.trainedModels.includes(state.model)) {
      problems.push(`model="${state.model}" is not a shipped model (${lens.trainedModels.join(', ')}); showing random weights.`);
      state.model = '';
    }
    if (state.model && this.#model?.info.name !== state.model) {
      this.#model = null;
      const name = state.model;
      parts.title.replaceChildren(el('span', 'status', `Loading the ${name} model…`));
      sharedTrainedModel(name).then((model) => {
        if (this.#attribute('model')?.trim() !== name) return;
        this.#model = model;
        this.#computeKey = null;
        schedule();
      }, (error) => this.#fail(error));
      return;
    }
    const key = JSON.stringify(COMPUTE_KEYS.map((k) => state[k]));
    if (key !== this.#computeKey || !this.#result) {
      this.#computeKey = key;
      this.#compute(state);
    }
    if (!this.#result) return;
    this.#state = { ...this.#state, stage: state.stage, head: state.head, colorScale: state.colorScale };
    this.#draw();
  }

  // One traced forward on the main thread. Settings the core rejects (heads not dividing d-model,
  // text without tokens …) fall back to defaults, with the core's message shown.
  #compute(state) {
    this.#engine ??= createEngine(lens, { traceAllHeads: true }); // head buttons switch without recomputing
    this.#engine.useTrainedModel(state.model ? this.#model : null);
    this.#computeProblems = [];
    // A trained model reads any text (mapped into its alphabet: result.readNote says how).
    const attempts = [
      [null, state],
      ['the default d-model and heads', { ...state, dModel: DEFAULTS.dModel, heads: DEFAULTS.heads }],
      [state.cross ? 'the default text and source' : 'the default text',
        { ...state, text: DEFAULTS.text, source: DEFAULTS.source }],
      ['the default settings', { ...DEFAULTS, cells: [], stage: state.stage, head: state.head }],
    ];
    let firstError = null;
    for (const [fallback, attempt] of attempts) {
      try {
        const result = this.#engine.compute(attempt);
        if (firstError) {
          const message = firstError.message.trim().replace(/([^.!?])$/, '$1.');
          this.#computeProblems.push(`${message} Showing ${fallback} instead.`);
        }
        this.#result = result;
        this.#state = attempt;
        return;
      } catch (error) {
        firstError ??= error;
      }
    }
    this.#result = null;
    this.#fail(firstError);
  }

  #fail(error) {
    const message = String(error?.message ?? error);
    const csp = /Content.Security.Policy|wasm-unsafe-eval|CompileError/i.test(`${error?.name} ${message}`)
      ? " If this page sets a Content-Security-Policy, its script-src needs 'wasm-unsafe-eval'." : '';
    const p = this.#host.parts;
    p.lens.dataset.status = 'error';
    p.title.replaceChildren(el('span', 'status error', `Attention Lens could not run: ${message}${csp}`));
    for (const part of [p.problems, p.tokens, p.sourceTokens, p.explain]) part.hidden = true;
    this.#picker.render({ heads: 0, head: 0, visible: false });
    p.matrices.replaceChildren();
    p.readout.textContent = '';
    this.#maps = [];
  }

  #draw() {
    const result = this.#result;
    const compact = this.#host.element.hasAttribute('compact');
    const notes = [...this.#parseProblems, ...this.#computeProblems, ...result.notes, ...(result.readNote ? [result.readNote] : [])];
    const { stage, head, steps, perHead } = this.#shown(notes);
    this.#drawTitle(stage, steps, perHead, head);
    const p = this.#host.parts;
    p.problems.replaceChildren(...notes.map((note) => el('li', '', note))); // as text
    p.problems.hidden = notes.length === 0;
    this.#drawTokens(compact);
    this.#picker.render({ heads: result.config.heads, head, visible: !compact && perHead && result.config.heads > 1 });
    this.#drawMatrices(steps);
    this.#readout(null, null);
    p.explain.hidden = compact; // the one-line explanation (full view only)
    p.explain.textContent = compact ? '' : stage.text;
    p.lens.dataset.status = 'ready';
    p.lens.dataset.step = stage.id;
    p.lens.dataset.head = String(head);
    p.lens.dataset.model = this.#result.model?.name ?? '';
    p.lens.dataset.layer = String(this.#result.model?.layer ?? 0);
    this.#host.rendered({ step: stage.id, head, model: this.#result.model?.name ?? '', layer: this.#result.model?.layer ?? 0,
      matrices: steps.map((s) => ({ id: s.id, rows: s.shape[0], cols: s.shape[1] })) });
  }

  // The stage to show and its steps for one head; what cannot be shown is said in `notes`.
  #shown(notes) {
    const result = this.#result;
    const state = this.#state;
    const heads = result.config.heads;
    const allSteps = walkthroughSteps(result, catalog);
    const available = availableStages(allSteps);
    let stage = stageById(state.stage) ?? stageById('weights');
    if (!available.includes(stage)) {
      const needs = attributeNeeds(stage);
      notes.push(`step="${state.stage}" has nothing to show with these settings${needs ? ` (it needs ${needs})` : ''}; ` +
        'showing the softmax weights.');
      stage = pickStage(available, 'weights');
    }
    let head = this.#headOverride ?? state.head;
    if (head >= heads) {
      notes.push(`head="${head + 1}" is more than the ${heads} head${heads === 1 ? '' : 's'}; showing head 1.`);
      head = 0;
      this.#headOverride = null;
    }
    const steps = stepsOfStage(stage, allSteps, head);
    return { stage, head, steps, perHead: steps.some((s) => s.head >= 0) };
  }

  #drawTitle(stage, steps, perHead, head) {
    const heads = this.#result.config.heads;
    const name = stage.id === 'weights' ? 'Attention weights'
      : steps.length === 1 ? steps[0].title.replace(/, head \d+$/, '') : stage.label;
    const where = perHead && heads > 1 ? ` · ${keepTogether(`head ${head + 1} of ${heads}`)}` : '';
    const model = this.#result.model;
    const settings = model
      ? `trained model: ${model.title} · ${keepTogether(`layer ${model.layer + 1} of ${model.layers}`)}`
      : settingsSummary(this.#state, this.#result);
    this.#host.parts.title.replaceChildren(el('strong', '', name), el('span', 'settings', `${where} · ${settings}`));
  }

  // Tokens (full view only): the target's and the source's chips, or the tokens'.
  #drawTokens(compact) {
    const { tokens, sourceTokens } = this.#host.parts;
    const result = this.#result;
    tokens.hidden = compact;
    sourceTokens.hidden = compact || !result.cross;
    if (compact) return;
    const pads = (list) => list.filter((t) => t === PAD_TOKEN).length;
    this.#chips.target.label = result.cross ? 'Target:' : 'Tokens:';
    this.#chips.target.render(result.queryTokens, pads(result.queryTokens), [], result.mapped);
    if (result.cross) this.#chips.source.render(result.keyTokens, pads(result.keyTokens));
  }

  // Heatmaps: reuse the Heatmap instances while the number of matrices stays the same.
  #drawMatrices(steps) {
    const { matrices } = this.#host.parts;
    if (this.#maps.length !== steps.length) {
      this.#maps = steps.map(() => {
        const slot = el('div', 'slot');
        const entry = { slot, heatmap: null, matrix: null };
        entry.heatmap = new Heatmap(slot, { onHover: (cell) => this.#readout(entry, cell) });
        return entry;
      });
      matrices.replaceChildren(...this.#maps.map((m) => m.slot));
    }
    matrices.className = steps.length > 1 ? 'matrices multi' : 'matrices single';
    steps.forEach((step, i) => {
      const entry = this.#maps[i];
      entry.matrix = { ...matrixOf(step, this.#result, scaleFor(step.id)), colorScale: this.#state.colorScale };
      entry.heatmap.options.minCell = minCellFor(entry.matrix);
      entry.heatmap.render(entry.matrix);
      const { canvas, figure } = entry.heatmap;
      canvas.dataset.rows = String(entry.matrix.rows);
      canvas.dataset.cols = String(entry.matrix.cols);
      figure.dataset.step = step.id;
      figure.dataset.head = String(step.head);
    });
  }

  /** The line under the heatmap: the hovered or focused cell and its value. */
  #readout(entry, cell) {
    const line = this.#host.parts.readout;
    if (!entry || !cell) {
      line.className = 'readout hint';
      line.textContent = this.#host.element.hasAttribute('compact') ? '' : 'Hover over a cell, or focus the heatmap and use the arrow keys, to read its value.';
      return;
    }
    const m = entry.matrix;
    const value = m.data[cell.row * m.cols + cell.col];
    const prefix = this.#maps.length > 1 ? `${m.title}: ` : '';
    line.className = 'readout';
    line.textContent = `${prefix}${cellWords(m, cell.row, cell.col)}: ${formatPrecise(value)}`;
  }
}
