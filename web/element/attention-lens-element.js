// <attention-lens>: the one-tag blog embed. Bundled by vite.element.config.js with the
// single-file JS API (wasm inlined) into dist/attention-lens-element.js, a classic script that
// also runs as a module script. Every element on a page shares one wasm module instance, loaded
// on first use; each element has its own engine (web/app/engine.js) and draws with the page's
// own modules (Heatmap, labels, stages, colours, formatting). Attributes are untrusted text:
// they are parsed by stateFromAttributes and only ever shown with textContent.
import { loadAttentionLens } from '../../build/wasm-release/attention-lens.single.mjs';
import { createEngine, PAD_TOKEN } from '../app/engine.js';
import { ELEMENT_ATTRIBUTES, stateFromAttributes } from '../app/embed-snippet.js';
import { formatPrecise } from '../app/format.js';
import { Heatmap } from '../app/heatmap.js';
import { matrixOf } from '../app/labels.js';
import { availableStages, scaleFor, stageById } from '../app/stages.js';
import { DEFAULTS } from '../app/state.js';
import css from './attention-lens-element.css?inline';

const TAG = 'attention-lens';
const OBSERVED = [...Object.keys(ELEMENT_ATTRIBUTES), 'scale', 'compact'];
// State fields that change the computation (the rest, step and head, only change the view).
const COMPUTE_KEYS = ['text', 'tokenizer', 'dModel', 'heads', 'seed', 'positional', 'mask', 'window',
  'prefix', 'padTo', 'cross', 'source', 'scale'];

// ---- shared by every element on the page ---------------------------------------------------

let lensPromise = null;
let lens = null;
/** The one wasm module instance of the page, loaded on the first element's first render. */
function sharedLens() {
  lensPromise ??= loadAttentionLens().then((loaded) => {
    lens = loaded;
    return loaded;
  });
  return lensPromise;
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

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

const MASK_NAMES = { causal: 'causal mask', padding: 'padding mask', 'sliding-window': 'sliding window',
  'prefix-lm': 'prefix-LM mask' };
const POSITIONAL_NAMES = { sinusoidal: 'sinusoidal positions', learned: 'learned positions', rope: 'RoPE',
  alibi: 'ALiBi' };

// Lines break between the parts of the title line, not inside one ("6 tokens", "head 1 of 4").
const keepTogether = (text) => text.replace(/ /g, '\u00a0');

/** "6 tokens · causal mask · sinusoidal positions" for the title line. */
function settingsSummary(state, result) {
  const bits = [result.cross ? `${result.n} → ${result.kvN} tokens (cross-attention)` : `${result.n} tokens`];
  if (state.mask !== 'none') {
    let mask = MASK_NAMES[state.mask];
    if (state.mask === 'sliding-window') mask += ` of ${state.window}`;
    if (state.mask === 'prefix-lm') mask += ` (prefix ${state.prefix})`;
    bits.push(mask);
  }
  if (POSITIONAL_NAMES[result.config.positional]) bits.push(POSITIONAL_NAMES[result.config.positional]);
  if (!state.scale) bits.push('no √d_k scaling');
  return bits.map(keepTogether).join(' · ');
}

// What a step that is missing from a trace needs.
const STEP_NEEDS = { positional: 'positional="sinusoidal" or "learned"', source: 'a source attribute',
  rope: 'positional="rope"', alibi: 'positional="alibi"' };

/** Weights steps rebuilt from r.attention, for inputs too large for a full trace. */
function weightsFromAttention(result) {
  const { n, kvN } = result;
  return Array.from({ length: result.config.heads }, (_, h) => ({
    id: 'weights', head: h, title: `Attention weights, head ${h + 1}`, equation: '', shape: [n, kvN],
    rows: 'query', cols: 'key', data: result.attention.subarray(h * n * kvN, (h + 1) * n * kvN),
  }));
}

/**
 * The smallest cell a heatmap may shrink to before it scrolls sideways: token × token cells stay
 * large enough for their labels (the Heatmap draws labels from 11 px), up to a canvas of about
 * 4000 CSS pixels; dimension columns may get thinner.
 */
function minCellFor(matrix) {
  const wanted = matrix.colAxis === 'dimension' ? 4 : 14;
  return Math.max(3, Math.min(wanted, Math.floor(4000 / Math.max(matrix.rows, matrix.cols))));
}

/** Words for one cell of a matrix: `query “bank” → key “money”`. */
function cellWords(matrix, row, col) {
  const side = (axis, labels, index) => (axis === 'dimension' ? `dimension ${index}` : `${axis} “${labels[index]}”`);
  return `${side(matrix.rowAxis, matrix.rowLabels, row)} → ${side(matrix.colAxis, matrix.colLabels, col)}`;
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
  #maps = []; // [{ slot, heatmap, matrix }]
  #resize = null;
  #drawnWidth = 0;
  #renders = 0;
  #scheme = null;
  #onScheme = () => {
    if (this.#result) this.#schedule();
  };

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    root.adoptedStyleSheets = [styleSheet()];
    const parts = {
      lens: el('div', 'lens'),
      title: el('p', 'title'),
      problems: el('ul', 'problems'),
      tokens: el('div', 'tokens'),
      heads: el('div', 'head-picker'),
      matrices: el('div', 'matrices single'),
      readout: el('p', 'readout hint'),
      explain: el('p', 'explain'),
    };
    parts.lens.dataset.status = 'loading';
    parts.title.append(el('span', 'status', 'Loading Attention Lens…'));
    parts.problems.hidden = true;
    parts.problems.setAttribute('aria-label', 'Problems with the attributes');
    parts.tokens.hidden = true;
    parts.heads.hidden = true;
    parts.heads.setAttribute('role', 'group');
    parts.heads.setAttribute('aria-label', 'Head');
    parts.readout.setAttribute('aria-live', 'polite');
    parts.explain.hidden = true;
    parts.lens.append(parts.title, parts.problems, parts.tokens, parts.heads, parts.matrices, parts.readout,
      parts.explain);
    root.append(parts.lens);
    this.#parts = parts;
  }

  connectedCallback() {
    if (typeof ResizeObserver === 'function' && !this.#resize) {
      this.#resize = new ResizeObserver(() => {
        if (this.#result && this.#width() !== this.#drawnWidth) this.#schedule();
      });
    }
    this.#resize?.observe(this);
    // The canvas is drawn with the theme's colours: redraw when the reader's theme changes.
    this.#scheme ??= typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;
    this.#scheme?.addEventListener('change', this.#onScheme);
    this.#schedule();
  }

  disconnectedCallback() {
    this.#resize?.disconnect();
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
    if (!lens) {
      sharedLens().then(() => this.#schedule(), (error) => this.#fail(error));
      return;
    }
    const { state, problems } = stateFromAttributes((name) => this.getAttribute(name));
    this.#parseProblems = problems;
    const key = JSON.stringify(COMPUTE_KEYS.map((k) => state[k]));
    if (key !== this.#computeKey || !this.#result) {
      this.#computeKey = key;
      this.#compute(state);
    }
    if (!this.#result) return;
    this.#state = { ...this.#state, stage: state.stage, head: state.head };
    this.#draw();
  }

  // One traced forward on the main thread. Settings the core rejects (heads not dividing d-model,
  // text without tokens …) fall back to defaults, with the core's message shown.
  #compute(state) {
    this.#engine ??= createEngine(lens, { traceAllHeads: true }); // head buttons switch without recomputing
    this.#computeProblems = [];
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
    const p = this.#parts;
    p.lens.dataset.status = 'error';
    p.title.replaceChildren(el('span', 'status error', `Attention Lens could not run: ${message}${csp}`));
    for (const part of [p.problems, p.tokens, p.heads, p.explain]) part.hidden = true;
    p.matrices.replaceChildren();
    p.readout.textContent = '';
    this.#maps = [];
  }

  #draw() {
    const result = this.#result;
    const state = this.#state;
    const compact = this.hasAttribute('compact');
    const notes = [...this.#parseProblems, ...this.#computeProblems, ...result.notes];
    const heads = result.config.heads;

    // The stage to show, and its steps for one head.
    const allSteps = result.steps.length ? result.steps : weightsFromAttention(result);
    let stage = stageById(state.stage) ?? stageById('weights');
    const available = availableStages(allSteps);
    if (!available.includes(stage)) {
      const needs = STEP_NEEDS[stage.id] ? ` (it needs ${STEP_NEEDS[stage.id]})` : '';
      notes.push(`step="${state.stage}" has nothing to show with these settings${needs}; showing the softmax weights.`);
      stage = stageById('weights');
    }
    const stageSteps = allSteps.filter((s) => stage.steps.includes(s.id));
    const perHead = stageSteps.some((s) => s.head >= 0);
    let head = this.#headOverride ?? state.head;
    if (head >= heads) {
      notes.push(`head="${head + 1}" is more than the ${heads} head${heads === 1 ? '' : 's'}; showing head 1.`);
      head = 0;
      this.#headOverride = null;
    }
    const steps = stage.steps.flatMap((id) => stageSteps.filter((s) => s.id === id && (s.head === -1 || s.head === head)));

    // Title line.
    const p = this.#parts;
    const first = steps[0];
    const name = stage.id === 'weights' ? 'Attention weights'
      : steps.length === 1 ? first.title.replace(/, head \d+$/, '') : stage.label;
    const where = perHead && heads > 1 ? ` · ${keepTogether(`head ${head + 1} of ${heads}`)}` : '';
    p.title.replaceChildren(el('strong', '', name), el('span', 'settings', `${where} · ${settingsSummary(state, result)}`));

    // Problems, rendered as text.
    p.problems.replaceChildren(...notes.map((note) => el('li', '', note)));
    p.problems.hidden = notes.length === 0;

    // Tokens (full view only).
    p.tokens.hidden = compact;
    if (!compact) {
      const chips = (label, tokens) => [el('span', 'tokens-label', label),
        ...tokens.map((t) => el('span', t === PAD_TOKEN ? 'chip pad' : 'chip', t))];
      p.tokens.replaceChildren(...(result.cross
        ? [...chips('Target:', result.queryTokens), ...chips('Source:', result.keyTokens)]
        : chips('Tokens:', result.queryTokens)));
    }

    // Head picker (full view, per-head steps).
    p.heads.hidden = compact || !perHead || heads < 2;
    if (!p.heads.hidden) {
      const buttons = Array.from({ length: heads }, (_, h) => {
        const b = el('button', '', String(h + 1));
        b.type = 'button';
        b.setAttribute('aria-pressed', String(h === head));
        b.setAttribute('aria-label', `head ${h + 1}`);
        b.addEventListener('click', () => {
          this.#headOverride = h;
          this.#draw();
          this.#parts.heads.querySelectorAll('button')[h]?.focus();
        });
        return b;
      });
      p.heads.replaceChildren(el('span', 'label', 'Head:'), ...buttons);
    }

    // Heatmaps: reuse the Heatmap instances while the number of matrices stays the same.
    if (this.#maps.length !== steps.length) {
      this.#maps = steps.map(() => {
        const slot = el('div', 'slot');
        const entry = { slot, heatmap: null, matrix: null };
        entry.heatmap = new Heatmap(slot, { onHover: (cell) => this.#readout(entry, cell) });
        return entry;
      });
      p.matrices.replaceChildren(...this.#maps.map((m) => m.slot));
    }
    p.matrices.className = steps.length > 1 ? 'matrices multi' : 'matrices single';
    steps.forEach((step, i) => {
      const entry = this.#maps[i];
      entry.matrix = matrixOf(step, result, scaleFor(step.id));
      entry.heatmap.options.minCell = minCellFor(entry.matrix);
      entry.heatmap.render(entry.matrix);
      const { canvas, figure } = entry.heatmap;
      canvas.dataset.rows = String(entry.matrix.rows);
      canvas.dataset.cols = String(entry.matrix.cols);
      figure.dataset.step = step.id;
      figure.dataset.head = String(step.head);
    });
    this.#readout(null, null);

    // The one-line explanation (full view only).
    p.explain.hidden = compact;
    p.explain.textContent = compact ? '' : stage.text;

    p.lens.dataset.status = 'ready';
    p.lens.dataset.step = stage.id;
    p.lens.dataset.head = String(head);
    this.#drawnWidth = this.#width();
    this.#renders += 1;
    this.dispatchEvent(new CustomEvent('attention-lens-render', {
      detail: { step: stage.id, head, matrices: steps.map((s) => ({ id: s.id, rows: s.shape[0], cols: s.shape[1] })) },
    }));
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

if (typeof customElements !== 'undefined' && !customElements.get(TAG)) {
  customElements.define(TAG, AttentionLensElement);
}
