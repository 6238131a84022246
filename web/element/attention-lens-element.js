// <attention-lens>: the one-tag blog embed. Bundled by vite.element.config.js with the
// single-file JS API (wasm inlined; the config says where `attention-lens/single-file` comes
// from) into dist/attention-lens-element.js, a classic script that also runs as a module script.
// Every element on a page shares one wasm module instance, loaded on first use; each element has
// its own engine (web/shared/engine.js) and draws with the page's shared modules (view model,
// head picker, Heatmap, labels, catalog). Attributes are untrusted text: they are parsed by
// stateFromAttributes and only ever shown with textContent.
// With a snapshot (a child <script type="application/json">, or snapshot="file.json" fetched over
// http) it draws the snapshot's numbers instead (snapshot-source.js reads it, snapshot-view.js
// draws it): no wasm is instantiated, no worker started, and no request made but the file's.
// With hub="org/name" (and no snapshot) it offers to load that model from the Hub, and only when the
// reader presses its button (live-hub.js), then draws each run as a snapshot.
import { loadAttentionLens } from 'attention-lens/single-file';
import { catalogOf } from '../shared/catalog.js';
import { el } from '../shared/dom.js';
import { ELEMENT_ATTRIBUTES, stateFromAttributes } from '../shared/embed-snippet.js';
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
import { LiveHub, liveRequest } from './live-hub.js';
import { snapshotOptions, snapshotSource } from './snapshot-source.js';
import { SnapshotView } from './snapshot-view.js';
import css from './attention-lens-element.css?inline';

const TAG = 'attention-lens';
const OBSERVED = [...Object.keys(ELEMENT_ATTRIBUTES), 'scale', 'compact', 'snapshot', 'hub', 'revision', 'file', 'endpoint'];
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

// The shipped trained models (model="…"), each loaded on first use from models/NAME.js beside
// this script: a classic script that sets globalThis.attentionLensModels[NAME] to the
// .safetensors bytes in base64. A <script> tag, unlike fetch(), works from file:// and under a
// strict CSP (script-src 'self'); a post that names no model downloads none.
const SCRIPT_URL = (typeof document !== 'undefined' &&
  (document.currentScript?.src || document.querySelector('script[src*="attention-lens-element"]')?.src)) ||
  (typeof location !== 'undefined' ? location.href : '');
const trainedModels = new Map(); // name -> Promise of the model

function modelBytes(name) {
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
      resolve(Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)));
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

let sheet = null;
function styleSheet() {
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(css);
  }
  return sheet;
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

// ---- the element ---------------------------------------------------------------------------

class AttentionLensElement extends HTMLElement {
  static get observedAttributes() {
    return OBSERVED;
  }

  #parts;
  #engine = null;
  #frame = 0;
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
  #resize = null;
  #drawnWidth = 0;
  #renders = 0;
  #scheme = null;
  #onScheme = () => {
    if (this.#result || this.#drawn) this.#schedule();
  };
  #mode = 'compute'; // 'compute' (the walkthrough's layer), 'snapshot' or 'live' (hub=…)
  // A snapshot's state: the source read (key), its value or error.
  #shot = { key: null, snapshot: null, error: null };
  #snapView = null; // the SnapshotView drawing a snapshot or a live run
  #drawn = null; // the snapshot it draws
  #live = null; // the LiveHub of hub=…
  #children = null; // a MutationObserver: an inline snapshot written or replaced after the element

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    root.adoptedStyleSheets = [styleSheet()];
    const parts = {
      lens: el('div', 'lens'),
      title: el('p', 'title'),
      problems: el('ul', 'problems'),
      tokens: el('div', 'tokens'),
      sourceTokens: el('div', 'tokens'),
      heads: el('div', 'head-picker'),
      matrices: el('div', 'matrices single'),
      readout: el('p', 'readout hint'),
      explain: el('p', 'explain'),
      snapshot: el('div', 'snapshot'),
      live: el('div', 'live'),
    };
    parts.snapshot.hidden = true;
    parts.live.hidden = true;
    parts.lens.dataset.status = 'loading';
    parts.title.append(el('span', 'status', 'Loading Attention Lens…'));
    parts.problems.hidden = true;
    parts.problems.setAttribute('aria-label', 'Problems with the attributes');
    parts.tokens.hidden = true;
    parts.sourceTokens.hidden = true;
    parts.heads.hidden = true;
    parts.heads.setAttribute('role', 'group');
    parts.heads.setAttribute('aria-label', 'Head');
    parts.readout.setAttribute('aria-live', 'polite');
    parts.explain.hidden = true;
    parts.lens.append(parts.title, parts.problems, parts.tokens, parts.sourceTokens, parts.heads, parts.matrices,
      parts.readout, parts.explain, parts.snapshot, parts.live);
    root.append(parts.lens);
    this.#parts = parts;
    this.#chips = { target: new TokenChips(parts.tokens, { label: 'Tokens:' }), source: new TokenChips(parts.sourceTokens, { label: 'Source:' }) };
    this.#picker = new HeadPicker(parts.heads, { label: 'Head:', labelClass: 'label', hide: true, onPick: (h) => {
      this.#headOverride = h;
      this.#draw();
      this.#picker.focus(h);
    } });
  }

  connectedCallback() {
    if (typeof ResizeObserver === 'function' && !this.#resize) {
      this.#resize = new ResizeObserver(() => {
        if ((this.#result || this.#drawn) && this.#width() !== this.#drawnWidth) this.#schedule();
      });
    }
    this.#resize?.observe(this);
    // The canvas is drawn with the theme's colours: redraw when the reader's theme changes.
    this.#scheme ??= typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;
    this.#scheme?.addEventListener('change', this.#onScheme);
    // An inline snapshot may be parsed (or replaced) after the element is connected.
    this.#children ??= typeof MutationObserver === 'function' ? new MutationObserver(() => this.#schedule()) : null;
    this.#children?.observe(this, { childList: true, subtree: true, characterData: true });
    this.#schedule();
  }

  disconnectedCallback() {
    this.#resize?.disconnect();
    this.#children?.disconnect();
    this.#scheme?.removeEventListener('change', this.#onScheme);
    if (this.#frame) cancelAnimationFrame(this.#frame);
    this.#frame = 0;
  }

  attributeChangedCallback(name, previous, value) {
    if (previous === value) return;
    if (name === 'head') this.#headOverride = null;
    if (this.isConnected) this.#schedule();
  }

  #width() {
    return Math.round(this.#parts.lens.getBoundingClientRect().width);
  }

  /** How many times this element has drawn (each attribute burst draws once per frame). */
  get renderCount() {
    return this.#renders;
  }

  // Attribute changes, resizes and the wasm load all land here: at most one update per frame.
  #schedule() {
    if (this.#frame) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      this.#update();
    });
  }

  #update() {
    if (!this.isConnected) return;
    const source = snapshotSource(this);
    if (source) {
      this.#enter('snapshot');
      this.#updateSnapshot(source);
      return;
    }
    if (this.getAttribute('hub') !== null) {
      this.#enter('live');
      this.#updateLive();
      return;
    }
    this.#enter('compute');
    if (!lens) {
      sharedLens().then(() => this.#schedule(), (error) => this.#fail(error));
      return;
    }
    const { state, problems } = stateFromAttributes((name) => this.getAttribute(name), schema);
    this.#parseProblems = problems;
    if (state.model && !lens.trainedModels.includes(state.model)) {
      problems.push(`model="${state.model}" is not a shipped model (${lens.trainedModels.join(', ')}); showing random weights.`);
      state.model = '';
    }
    if (state.model && this.#model?.info.name !== state.model) {
      this.#model = null;
      const name = state.model;
      this.#parts.title.replaceChildren(el('span', 'status', `Loading the ${name} model…`));
      sharedTrainedModel(name).then((model) => {
        if (this.getAttribute('model')?.trim() !== name) return;
        this.#model = model;
        this.#computeKey = null;
        this.#schedule();
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

  // ---- snapshots ----

  /**
   * A snapshot's source ({ key, read }: snapshot-source.js) read once per key (a file: fetched
   * once), then drawn; a bad one shows its message in the element and nothing else.
   */
  #updateSnapshot(source) {
    const shot = this.#shot;
    if (source.key !== shot.key) {
      shot.key = source.key;
      shot.snapshot = null;
      shot.error = null;
      this.#parts.lens.dataset.status = 'loading';
      this.#parts.title.replaceChildren(el('span', 'status', 'Loading the snapshot…'));
      source.read().then((snapshot) => {
        if (shot.key !== source.key) return;
        shot.snapshot = snapshot;
        this.#schedule();
      }, (error) => {
        if (shot.key !== source.key) return;
        shot.error = error;
        this.#schedule();
      });
      return;
    }
    if (shot.error) {
      this.#failSnapshot(shot.error);
      return;
    }
    if (!shot.snapshot) return; // still reading
    this.#drawSnapshot(shot.snapshot);
  }

  /**
   * The element's mode changes (a snapshot added or removed, hub set or unset): what the last
   * mode drew is dropped and its parts hidden; computing starts again from its attributes.
   */
  #enter(mode) {
    if (mode === this.#mode) return;
    if (this.#mode === 'snapshot') this.#shot = { key: null, snapshot: null, error: null };
    this.#mode = mode;
    this.#drawn = null;
    const p = this.#parts;
    p.snapshot.hidden = true;
    p.live.hidden = true;
    p.lens.dataset.snapshot = '';
    p.lens.dataset.live = '';
    if (mode === 'compute') {
      p.matrices.hidden = false;
      p.readout.hidden = false;
      this.#result = null;
      this.#computeKey = null;
    }
  }

  /** hub=…: the live box (a button until the reader asks), then each run drawn as a snapshot. */
  #updateLive() {
    const p = this.#parts;
    const { request, text, error } = liveRequest((name) => this.getAttribute(name), DEFAULTS.text);
    if (error) {
      p.live.hidden = true;
      this.#failLive(`Attention Lens cannot load a model: ${error}.`);
      return;
    }
    this.#live ??= new LiveHub(p.live, { moduleUrl: new URL('attention-lens.mjs', SCRIPT_URL).href, onChange: () => this.#schedule() });
    const state = this.#live.update(request, text);
    p.lens.dataset.live = this.#live.phase;
    if (state.snapshot) {
      p.live.hidden = true;
      this.#drawSnapshot(state.snapshot, { label: 'live' });
      return;
    }
    this.#drawn = null;
    for (const part of [p.problems, p.tokens, p.sourceTokens, p.explain, p.matrices, p.readout, p.snapshot]) part.hidden = true;
    this.#picker.render({ heads: 0, head: 0, visible: false });
    p.live.hidden = false;
    if (state.error) {
      this.#failLive(state.message, { keepBox: true });
      return;
    }
    p.lens.dataset.status = this.#live.phase === 'loading' ? 'loading' : 'idle';
    p.title.replaceChildren(el('strong', '', request.hub), el('span', 'settings', ` · live, loaded when you ask${state.message ? ` · ${state.message}` : ''}`));
  }

  #failLive(message, { keepBox = false } = {}) {
    const p = this.#parts;
    p.lens.dataset.status = 'error';
    p.title.replaceChildren(el('span', 'status error', message));
    for (const part of [p.problems, p.tokens, p.sourceTokens, p.explain, p.snapshot, p.matrices, p.readout]) part.hidden = true;
    p.live.hidden = !keepBox;
  }

  #drawSnapshot(snapshot, { label = 'snapshot' } = {}) {
    const p = this.#parts;
    for (const part of [p.tokens, p.sourceTokens, p.explain, p.matrices, p.readout]) part.hidden = true;
    this.#picker.render({ heads: 0, head: 0, visible: false });
    p.snapshot.hidden = false;
    this.#drawn = snapshot;
    this.#snapView ??= new SnapshotView(p.snapshot, { onRender: (detail) => {
      p.lens.dataset.layer = String(detail.layer);
      p.lens.dataset.head = String(detail.head);
      p.title.replaceChildren(el('strong', '', this.#snapView.title), el('span', 'settings', ` · ${snapshotModelName(this.#drawn, this.#snapLabel)}`));
      this.#renders += 1;
      this.dispatchEvent(new CustomEvent('attention-lens-render', { detail: { snapshot: this.#mode === 'snapshot', live: this.#mode === 'live', ...detail } }));
    } });
    this.#snapLabel = label;
    const { options, problems } = snapshotOptions((name) => this.getAttribute(name));
    const notes = [...problems, ...this.#snapView.show(snapshot, options)];
    p.problems.replaceChildren(...notes.map((note) => el('li', '', note)));
    p.problems.hidden = notes.length === 0;
    p.lens.dataset.status = 'ready';
    p.lens.dataset.snapshot = snapshot.kind;
    p.lens.dataset.step = snapshot.kind === 'model' ? 'weights' : snapshot.analysis;
    this.#drawnWidth = this.#width();
  }

  #failSnapshot(error) {
    const p = this.#parts;
    p.lens.dataset.status = 'error';
    p.lens.dataset.snapshot = '';
    p.title.replaceChildren(el('span', 'status error', `This snapshot cannot be shown: ${String(error?.message ?? error)}`));
    for (const part of [p.problems, p.tokens, p.sourceTokens, p.explain, p.snapshot, p.matrices]) part.hidden = true;
    this.#picker.render({ heads: 0, head: 0, visible: false });
    p.readout.textContent = '';
    this.#drawn = null;
  }

  #snapLabel = 'snapshot';

  /** The snapshot's (or live run's) drawn numbers (tests read them): { data, rows, cols, … } of its main heatmap, or null. */
  get snapshotMatrix() {
    return this.#drawn ? this.#snapView?.matrix ?? null : null;
  }

  #fail(error) {
    const message = String(error?.message ?? error);
    const csp = /Content.Security.Policy|wasm-unsafe-eval|CompileError/i.test(`${error?.name} ${message}`)
      ? " If this page sets a Content-Security-Policy, its script-src needs 'wasm-unsafe-eval'." : '';
    const p = this.#parts;
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
    const compact = this.hasAttribute('compact');
    const notes = [...this.#parseProblems, ...this.#computeProblems, ...result.notes, ...(result.readNote ? [result.readNote] : [])];
    const { stage, head, steps, perHead } = this.#shown(notes);
    this.#drawTitle(stage, steps, perHead, head);
    const p = this.#parts;
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
    this.#drawnWidth = this.#width();
    this.#renders += 1;
    this.dispatchEvent(new CustomEvent('attention-lens-render', {
      detail: { step: stage.id, head, model: this.#result.model?.name ?? '', layer: this.#result.model?.layer ?? 0, matrices: steps.map((s) => ({ id: s.id, rows: s.shape[0], cols: s.shape[1] })) },
    }));
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
    this.#parts.title.replaceChildren(el('strong', '', name), el('span', 'settings', `${where} · ${settings}`));
  }

  // Tokens (full view only): the target's and the source's chips, or the tokens'.
  #drawTokens(compact) {
    const { tokens, sourceTokens } = this.#parts;
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
    const { matrices } = this.#parts;
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
    const line = this.#parts.readout;
    if (!entry || !cell) {
      line.className = 'readout hint';
      line.textContent = this.hasAttribute('compact') ? '' : 'Hover over a cell, or focus the heatmap and use the arrow keys, to read its value.';
      return;
    }
    const m = entry.matrix;
    const value = m.data[cell.row * m.cols + cell.col];
    const prefix = this.#maps.length > 1 ? `${m.title}: ` : '';
    line.className = 'readout';
    line.textContent = `${prefix}${cellWords(m, cell.row, cell.col)}: ${formatPrecise(value)}`;
  }
}

/** A snapshot's model in a few words for the title line, then `label` ('snapshot', 'live'). */
function snapshotModelName(snapshot, label = 'snapshot') {
  const m = snapshot?.provenance.model;
  const name = m?.source === 'hub' ? m.id : m?.source === 'shipped' ? m.name : m?.source === 'files' ? m.fileName : '';
  return `${name ? `${name} · ` : ''}${label}`;
}

if (typeof customElements !== 'undefined' && !customElements.get(TAG)) {
  customElements.define(TAG, AttentionLensElement);
}
