// The <attention-lens> element without its engines: the shadow parts, one update per frame, and
// snapshots (a child <script type="application/json">, or snapshot="file.json" fetched over http:
// snapshot-source.js reads it, snapshot-view.js draws it) with no wasm, no worker and no request but
// the file's. What else it can do is plugged in by the script that defines it: the full element
// (attention-lens-element.js) adds the walkthrough's layer computed in the page (compute-view.js, the
// wasm) and hub="org/name" (live-hub.js); the snapshot-only element (attention-lens-snapshot.js) adds
// nothing, and says which script a figure without a snapshot needs. Attributes are untrusted text:
// they are only ever shown with textContent.
import { el } from '../shared/dom.js';
import { ELEMENT_ATTRIBUTES } from '../shared/embed-snippet.js';
import { snapshotOptions, snapshotSource } from './snapshot-source.js';
import { SnapshotView } from './snapshot-view.js';
import css from './attention-lens-element.css?inline';

const TAG = 'attention-lens';
const OBSERVED = [...Object.keys(ELEMENT_ATTRIBUTES), 'scale', 'compact', 'snapshot', 'hub', 'revision', 'file', 'endpoint'];

/** What a figure the snapshot-only script cannot draw says (`what`: what the figure does). */
export const needsFullElement = (what) => `This figure ${what}: it needs attention-lens-element.js, not ` +
  'attention-lens-snapshot.js, which only draws snapshots.';

let sheet = null;
function styleSheet() {
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(css);
  }
  return sheet;
}

/**
 * What a mode (compute-view.js's ComputeView, live-hub.js's LiveView) gets from its element:
 * @typedef {object} LensHost
 * @property {HTMLElement} element the <attention-lens> (its attributes)
 * @property {Record<string, HTMLElement>} parts the shadow root's parts
 * @property {() => void} schedule one update in the next frame
 * @property {(snapshot: object, options?: {label?: string}) => void} drawSnapshot draws a snapshot (a live run)
 * @property {(detail: object) => void} rendered after a draw: counted, its width kept, the render event sent
 */

class AttentionLensElement extends HTMLElement {
  static get observedAttributes() {
    return OBSERVED;
  }

  /** The modes the defining script plugs in: { compute?: (host) => view, live?: (host) => view }. */
  static modes = {};

  /**
   * Another Attention Lens script on the page adds its modes (a post with a snapshot snippet's
   * attention-lens-snapshot.js before a live snippet's attention-lens-element.js): the page's
   * elements draw again with them.
   */
  static addModes(modes) {
    this.modes = { ...this.modes, ...modes };
    for (const element of document.querySelectorAll(TAG)) {
      if (!(element instanceof this)) continue;
      element.#mode = null; // entered afresh: what it said it could not draw is drawn
      if (element.isConnected) element.#schedule();
    }
  }

  #parts;
  #host;
  #frame = 0;
  #renders = 0;
  #drawnWidth = 0;
  #resize = null;
  #scheme = null;
  #onScheme = () => {
    if (this.#drawnSomething()) this.#schedule();
  };
  #mode = 'compute'; // 'compute' (the walkthrough's layer), 'snapshot' or 'live' (hub=…); null: none yet
  #compute = null; // the compute mode's view, made on first use
  #live = null; // the live mode's view
  // A snapshot's state: the source read (key), its value or error.
  #shot = { key: null, snapshot: null, error: null };
  #snapView = null; // the SnapshotView drawing a snapshot or a live run
  #drawn = null; // the snapshot it draws
  #snapLabel = 'snapshot';
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
    /** @type {LensHost} */
    this.#host = {
      element: this,
      parts,
      schedule: () => this.#schedule(),
      drawSnapshot: (snapshot, options) => this.#drawSnapshot(snapshot, options),
      rendered: (detail) => this.#rendered(detail),
    };
  }

  connectedCallback() {
    if (typeof ResizeObserver === 'function' && !this.#resize) {
      this.#resize = new ResizeObserver(() => {
        if (this.#drawnSomething() && this.#width() !== this.#drawnWidth) this.#schedule();
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
    if (name === 'head') this.#compute?.headChanged();
    if (this.isConnected) this.#schedule();
  }

  #width() {
    return Math.round(this.#parts.lens.getBoundingClientRect().width);
  }

  #drawnSomething() {
    return Boolean(this.#drawn || this.#compute?.drawn);
  }

  /** How many times this element has drawn (each attribute burst draws once per frame). */
  get renderCount() {
    return this.#renders;
  }

  /** The snapshot's (or live run's) drawn numbers (tests read them): { data, rows, cols, … } of its main heatmap, or null. */
  get snapshotMatrix() {
    return this.#drawn ? this.#snapView?.matrix ?? null : null;
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
    const { compute, live } = this.constructor.modes;
    const source = snapshotSource(this);
    if (source) {
      this.#enter('snapshot');
      this.#updateSnapshot(source);
    } else if (this.getAttribute('hub') !== null) {
      this.#enter('live');
      this.#drawn = null; // until the live view draws its run
      if (!live) this.#cannot(needsFullElement(`loads hub="${this.getAttribute('hub').slice(0, 80)}" from the Hugging Face Hub`));
      else (this.#live ??= live(this.#host)).update();
    } else {
      this.#enter('compute');
      if (!compute) this.#cannot(needsFullElement('computes attention in the page'));
      else (this.#compute ??= compute(this.#host)).update();
    }
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
      this.#compute?.reset();
    }
  }

  /** After a draw: counted, its width kept (a resize redraws), and the render event sent with `detail`. */
  #rendered(detail) {
    this.#drawnWidth = this.#width();
    this.#renders += 1;
    this.dispatchEvent(new CustomEvent('attention-lens-render', { detail }));
  }

  /** Hides every part but the title, which says `message` (a figure this script cannot draw, a bad snapshot). */
  #cannot(message) {
    const p = this.#parts;
    p.lens.dataset.status = 'error';
    p.title.replaceChildren(el('span', 'status error', message));
    for (const part of [p.problems, p.tokens, p.sourceTokens, p.heads, p.explain, p.snapshot, p.matrices, p.readout, p.live]) part.hidden = true;
    this.#drawn = null;
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
      this.#parts.lens.dataset.snapshot = '';
      this.#cannot(`This snapshot cannot be shown: ${String(shot.error?.message ?? shot.error)}`);
      return;
    }
    if (!shot.snapshot) return; // still reading
    this.#drawSnapshot(shot.snapshot);
  }

  #drawSnapshot(snapshot, { label = 'snapshot' } = {}) {
    const p = this.#parts;
    for (const part of [p.tokens, p.sourceTokens, p.heads, p.explain, p.matrices, p.readout]) part.hidden = true;
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
}

/** A snapshot's model in a few words for the title line, then `label` ('snapshot', 'live'). */
function snapshotModelName(snapshot, label = 'snapshot') {
  const m = snapshot?.provenance.model;
  const name = m?.source === 'hub' ? m.id : m?.source === 'shipped' ? m.name : m?.source === 'files' ? m.fileName : '';
  return `${name ? `${name} · ` : ''}${label}`;
}

/**
 * Defines <attention-lens> with `modes` ({ compute?, live? }: each makes its view from the element's
 * LensHost). When another Attention Lens script defined the tag first (both element scripts on one
 * page, in either order), that element gains these modes: the page's figures draw as with the full one.
 */
export function defineLensElement(modes = {}) {
  if (typeof customElements === 'undefined') return;
  const defined = customElements.get(TAG);
  if (defined) {
    defined.addModes?.(modes);
    return;
  }
  customElements.define(TAG, class extends AttentionLensElement {
    static modes = modes;
  });
}
