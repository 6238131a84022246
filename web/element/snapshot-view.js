// What <attention-lens> draws for a snapshot (web/api/snapshot.js's readSnapshot): no model, no
// core, no worker. A Your model snapshot: the tokens, a layer and head picker, that head's heatmap
// (hover or focus a cell to read it, its query and key chips marked), every layer × head as small
// tiles (click one to show it), the next tokens (before → after with heads knocked out) and the
// generation's tokens with where each looked; a Circuits snapshot: its analysis's map (the Circuits
// view's matrices: patching, attribution with its bars, logit lens with each cell's top 5, rollout
// by layer) and its metric line. Both with the quantisation's bound and the provenance said in text.
// The page's shared renderers draw it (Heatmap, HeadGrid, HeadPicker, TokenChips); every string
// from the snapshot goes in with textContent.
import { attributionParts, lensCell, lensRowLabels, resultMatrix } from '../shared/circuit-matrices.js';
import { percent, signed } from '../shared/circuit-format.js';
import { el } from '../shared/dom.js';
import { boundText } from '../shared/embed-snippet.js';
import { formatPrecise } from '../shared/format.js';
import { HeadGrid } from '../shared/head-grid.js';
import { HeadPicker } from '../shared/head-picker.js';
import { Heatmap } from '../shared/heatmap.js';
import { displayToken } from '../shared/labels.js';
import { TokenChips } from '../shared/token-chips.js';
import { cellWords } from '../shared/view-model.js';

const MAX_BARS = 12;
const MAX_GRID_HEADS = 1024; // small tiles for every head up to this many (a 32 × 32 model)

/** Where the numbers came from, as one line of text. */
export function provenanceLine(p) {
  const m = p.model;
  let model = '';
  if (m?.source === 'hub') model = `${m.id}${m.file ? ` (${m.file})` : ''} @ ${m.revision}${m.endpoint && m.endpoint !== 'https://huggingface.co' ? ` from ${m.endpoint}` : ''}`;
  else if (m?.source === 'shipped') model = `${m.name}${m.title ? ` (${m.title})` : ''}, shipped with Attention Lens`;
  else if (m?.source === 'files') {
    model = m.files.length ? m.files.map((f) => `${f.name}${f.sha256 ? ` (SHA-256 ${f.sha256.slice(0, 12)}…)` : ''}`).join(', ') : m.fileName;
  }
  const made = [p.version ? `Attention Lens ${p.version}` : '', p.created ? `on ${p.created.slice(0, 10)}` : ''].filter(Boolean).join(' ');
  return [model && `Model: ${model}`, p.family && `family ${p.family}`, made && `snapshot made with ${made}`].filter(Boolean).join(' · ');
}

/** A heatmap's smallest cell before it scrolls (as the element's walkthrough). */
const minCellFor = (rows, cols) => Math.max(3, Math.min(14, Math.floor(4000 / Math.max(rows, cols))));

export class SnapshotView {
  #host;
  #parts;
  #snapshot = null;
  #options = {};
  #layer = 0;
  #head = 0;
  #rolloutLayer = 0;
  #map;
  #matrix = null;
  #genMap = null;
  #genMatrix = null;
  #genChips = null;
  #grid = null;
  #gridShape = '';
  #chips;
  #layers;
  #heads;
  #onRender;

  /**
   * @param {HTMLElement} host emptied and filled
   * @param {{onRender?: (detail: object) => void}} [hooks] after each draw (the element's event)
   */
  constructor(host, { onRender } = {}) {
    this.#host = host;
    this.#onRender = onRender;
    const parts = {
      tokens: el('div', 'tokens'),
      layers: el('div', 'head-picker'),
      heads: el('div', 'head-picker'),
      metric: el('p', 'metric'),
      map: el('div', 'matrices single'),
      readout: el('p', 'readout hint'),
      quantised: el('p', 'quantised muted'),
      bars: el('ol', 'snapshot-bars'),
      next: el('div', 'snapshot-next'),
      generation: el('div', 'snapshot-generation'),
      grid: el('details', 'snapshot-heads'),
      provenance: el('p', 'provenance muted'),
    };
    parts.readout.setAttribute('aria-live', 'polite');
    for (const picker of [parts.layers, parts.heads]) picker.setAttribute('role', 'group');
    parts.layers.setAttribute('aria-label', 'Layer');
    parts.heads.setAttribute('aria-label', 'Head');
    parts.gridHost = el('div', 'snapshot-grid');
    parts.grid.append(el('summary', '', 'Every layer × head'), parts.gridHost);
    host.replaceChildren(parts.tokens, parts.layers, parts.heads, parts.metric, parts.map, parts.readout, parts.quantised, parts.bars,
      parts.next, parts.generation, parts.grid, parts.provenance);
    this.#parts = parts;
    this.#chips = new TokenChips(parts.tokens, { label: 'Tokens:' });
    this.#map = new Heatmap(parts.map, { onHover: (cell) => this.#hover(cell) });
    this.#layers = new HeadPicker(parts.layers, { label: 'Layer:', labelClass: 'label', itemName: 'layer', hide: true, onPick: (i) => {
      if (this.#snapshot.kind === 'model') this.#layer = this.#snapshot.layers[i];
      else this.#rolloutLayer = i;
      this.draw();
      this.#layers.focus(i);
    } });
    this.#heads = new HeadPicker(parts.heads, { label: 'Head:', labelClass: 'label', hide: true, onPick: (h) => {
      this.#head = h;
      this.draw();
      this.#heads.focus(h);
    } });
  }

  /**
   * Shows `snapshot` (readSnapshot's value) with `options` { layer, head (0-based, or null: the
   * snapshot's own), compact, colorScale }; a new snapshot starts from its own layer and head.
   */
  show(snapshot, options) {
    if (snapshot !== this.#snapshot) {
      this.#snapshot = snapshot;
      this.#layer = snapshot.view.layer ?? 0;
      this.#head = snapshot.view.head ?? 0;
      this.#rolloutLayer = snapshot.view.layer ?? 0;
      this.#gridShape = '';
    }
    const notes = [];
    if (options.layer !== null && options.layer !== undefined) {
      if (snapshot.kind === 'model' && snapshot.layers.includes(options.layer)) this.#layer = options.layer;
      else if (snapshot.kind === 'circuits' && options.layer < snapshot.model.layers) this.#rolloutLayer = options.layer;
      else notes.push(`layer="${options.layer + 1}" is not in this snapshot; showing layer ${(snapshot.kind === 'model' ? this.#layer : this.#rolloutLayer) + 1}.`);
    }
    if (options.head !== null && options.head !== undefined && snapshot.kind === 'model') {
      if (options.head < snapshot.model.heads) this.#head = options.head;
      else notes.push(`head="${options.head + 1}" is more than the ${snapshot.model.heads} heads; showing head ${this.#head + 1}.`);
    }
    this.#options = options;
    this.draw();
    return notes;
  }

  /** The title line's words for what is shown. */
  get title() {
    const s = this.#snapshot;
    if (!s) return '';
    if (s.kind === 'model') return `Attention · layer ${this.#layer + 1} of ${s.model.layers}, head ${this.#head + 1} of ${s.model.heads}`;
    return this.#matrix?.title ?? '';
  }

  /** The numbers of the main heatmap as drawn (tests read them): { data, rows, cols }. */
  get matrix() {
    return this.#matrix;
  }

  /** Draws again (a pick, the theme, the width). */
  draw() {
    const s = this.#snapshot;
    if (!s) return;
    const p = this.#parts;
    const compact = Boolean(this.#options.compact);
    // (The layer and head pickers show and hide themselves: a redraw that showed them here would leave an
    // unchanged picker's empty row in place.)
    for (const part of [p.tokens, p.metric, p.quantised, p.bars, p.next, p.generation, p.grid, p.provenance]) part.hidden = compact;
    if (s.kind === 'model') this.#drawModel(s, compact);
    else this.#drawCircuits(s, compact);
    const bound = s.bound > 0 ? `Weights are stored in 8 bits: each is within ${boundText(s.bound)} of the model's float32 value.` : '';
    p.quantised.textContent = bound;
    p.quantised.hidden = compact || !bound;
    p.provenance.textContent = provenanceLine(s.provenance);
    this.#hover(null);
    this.#onRender?.({ kind: s.kind, layer: s.kind === 'model' ? this.#layer : this.#rolloutLayer, head: this.#head,
      analysis: s.analysis ?? '', rows: this.#matrix.rows, cols: this.#matrix.cols });
  }

  /** The main heatmap: `matrix` drawn, the bound in its legend and aria-label. */
  #render(matrix, bound) {
    this.#matrix = matrix;
    this.#map.options.minCell = matrix.cellLabels ? 26 : minCellFor(matrix.rows, matrix.cols);
    this.#map.render(matrix);
    const { canvas, legend, figure } = this.#map;
    canvas.dataset.rows = String(matrix.rows);
    canvas.dataset.cols = String(matrix.cols);
    legend.querySelector('.legend-bound')?.remove(); // the Heatmap keeps a legend that did not change
    if (bound > 0) {
      canvas.setAttribute('aria-label', `${canvas.getAttribute('aria-label')} Weights to ${boundText(bound)} (8-bit snapshot).`);
      legend.append(el('span', 'legend-name muted legend-bound', `8-bit snapshot: weights to ${boundText(bound)}`));
    }
    figure.dataset.layer = String(this.#layer);
    figure.dataset.head = String(this.#head);
  }

  #drawModel(s, compact) {
    const p = this.#parts;
    const n = s.n;
    const labels = s.tokens.map(displayToken);
    this.#chips.render(s.tokens, 0, []);
    this.#layers.render({ heads: s.layers.length, head: s.layers.indexOf(this.#layer), visible: !compact && s.layers.length > 1 });
    this.#relabel(p.layers, s.layers, 'layer');
    this.#heads.render({ heads: s.model.heads, head: this.#head, visible: !compact && s.model.heads > 1 });
    const data = s.attention.get(this.#layer).subarray(this.#head * n * n, (this.#head + 1) * n * n);
    const knocked = s.knockedOut.some((k) => k.layer === this.#layer && k.head === this.#head);
    this.#render({ data, rows: n, cols: n, rowLabels: labels, colLabels: labels, rowAxis: 'query', colAxis: 'key', scale: 'probability',
      colorScale: this.#options.colorScale ?? 'linear',
      title: `Layer ${this.#layer + 1}, head ${this.#head + 1}${knocked ? ' (knocked out: its output was zeroed)' : ''}` }, s.bound);
    p.metric.hidden = true;
    p.bars.hidden = true;
    this.#drawNext(s, compact);
    this.#drawGeneration(s, compact);
    this.#drawGrid(s, compact);
  }

  /** The layer picker's buttons say the stored layers' numbers (a snapshot may keep some layers only). */
  #relabel(host, layers, name) {
    host.querySelectorAll('button').forEach((b, i) => {
      b.textContent = String(layers[i] + 1);
      b.setAttribute('aria-label', `${name} ${layers[i] + 1}`);
    });
  }

  #drawNext(s, compact) {
    const host = this.#parts.next;
    host.hidden = compact || !s.next.length;
    if (host.hidden) return;
    const list = el('ol', 'snapshot-next-list');
    const knocked = s.knockedOut.map((k) => `L${k.layer + 1}H${k.head + 1}`).join(', ');
    if (s.compare) {
      const floor = (v) => (v === null ? `< ${percent(s.compare.floor)}` : percent(v));
      list.append(...s.compare.tokens.map(({ token, before, after }) => this.#nextItem(token, after ?? 0, `${floor(before)} → ${floor(after)}`)));
    } else list.append(...s.next.map(({ token, probability }) => this.#nextItem(token, probability, percent(probability))));
    host.replaceChildren(el('p', 'snapshot-next-title', s.compare
      ? `Next token after the text, before → after knocking out ${knocked}:` : 'The most likely next tokens after the text:'), list);
  }

  #nextItem(token, width, words) {
    const item = el('li', 'snapshot-next-item');
    const bar = el('span', 'snapshot-next-bar');
    bar.style.width = `${(Math.max(0, Math.min(1, width)) * 100).toFixed(1)}%`;
    bar.setAttribute('aria-hidden', 'true');
    item.append(bar, el('span', 'snapshot-next-token', displayToken(token)), el('span', 'num', words));
    return item;
  }

  /** The generation: its tokens, and where each looked in the head shown (row k: the query that chose token k). */
  #drawGeneration(s, compact) {
    const host = this.#parts.generation;
    const steps = s.generation;
    host.hidden = compact || !steps?.length;
    if (host.hidden) return;
    if (!this.#genMap) {
      const chips = el('div', 'tokens');
      const slot = el('div', 'matrices single');
      host.replaceChildren(el('p', 'snapshot-next-title', 'Generated after the text, and where each new token looked in this head:'), chips, slot);
      this.#genChips = new TokenChips(chips, { label: 'Generated:' });
      this.#genMap = new Heatmap(slot, { onHover: (cell) => this.#genHover(cell) });
    }
    this.#genChips.render(steps.map((g) => g.token), 0, []);
    const n = s.n;
    const cols = n + steps.length - 1;
    const data = new Float32Array(steps.length * cols).fill(NaN);
    steps.forEach((g, k) => data.set(g.attention[this.#layer].subarray(this.#head * (n + k), (this.#head + 1) * (n + k)), k * cols));
    const keys = [...s.tokens, ...steps.slice(0, -1).map((g) => g.token)].map(displayToken);
    this.#genMatrix = { data, rows: steps.length, cols, rowLabels: steps.map((g) => displayToken(g.token)), colLabels: keys, rowAxis: 'new token',
      colAxis: 'key', scale: 'probability', missing: 'not written yet', colorScale: this.#options.colorScale ?? 'linear',
      title: `Generation, layer ${this.#layer + 1}, head ${this.#head + 1}` };
    this.#genMap.options.minCell = minCellFor(steps.length, cols);
    this.#genMap.render(this.#genMatrix);
  }

  #genHover(cell) {
    if (!cell || !this.#genMatrix) return this.#hover(null);
    const m = this.#genMatrix;
    const v = m.data[cell.row * m.cols + cell.col];
    const line = this.#parts.readout;
    line.className = 'readout';
    line.textContent = `${cellWords(m, cell.row, cell.col)}: ${Number.isNaN(v) ? m.missing : formatPrecise(v)}`;
    return undefined;
  }

  /** Every stored head as a small tile (all layers stored; up to MAX_GRID_HEADS); a click shows it. */
  #drawGrid(s, compact) {
    const { grid, gridHost } = this.#parts;
    const all = s.layers.length === s.model.layers && s.model.layers * s.model.heads <= MAX_GRID_HEADS;
    grid.hidden = compact || !all;
    if (grid.hidden) return;
    const shape = `${s.model.layers}x${s.model.heads}/${s.model.kvHeads}`;
    if (!this.#grid || this.#gridShape !== shape) {
      this.#gridShape = shape;
      this.#grid = new HeadGrid(gridHost, { gridClass: 'snap-heads', tileClass: 'snap-tile', maxCell: 8, compact: true,
        title: (layer, head, kv) => (kv === null ? `H${head + 1}` : `H${head + 1} · KV${kv + 1}`),
        label: (layer, head) => `Layer ${layer + 1}, head ${head + 1}: show it above`,
        // The head is shown above; the host page is not scrolled (only the reader scrolls it).
        onActivate: (layer, head) => {
          this.#layer = layer;
          this.#head = head;
          this.draw();
        },
        tokens: (frame) => frame.tokens,
        properties: (layers, heads) => ({ '--snap-cols': String(Math.min(heads, 16)) }) });
      this.#grid.build(s.model.layers, s.model.heads, false, s.model.kvHeads);
      if (!grid.open && s.model.layers * s.model.heads <= 48) grid.open = true;
    }
    const attention = Array.from({ length: s.model.layers }, (_, l) => s.attention.get(l));
    // The tiles are measured when drawn: a closed <details> draws them when it opens.
    const paint = () => this.#grid.render({ n: s.n, tokens: s.tokens, attention });
    if (grid.open) paint();
    grid.ontoggle = () => grid.open && paint();
    this.#grid.highlight(this.#layer, this.#head);
    for (const k of s.knockedOut) this.#grid.tile(k.layer, k.head)?.classList.add('knocked');
  }

  #drawCircuits(s, compact) {
    const p = this.#parts;
    const { result, model } = s;
    const isRollout = result.kind === 'rollout';
    const matrix = resultMatrix(result, model, this.#rolloutLayer);
    this.#chips.render(s.tokens, 0, []);
    p.tokens.hidden = compact || !s.tokens.length;
    this.#layers.render({ heads: model.layers, head: this.#rolloutLayer, visible: !compact && isRollout && model.layers > 1 });
    this.#relabel(p.layers, Array.from({ length: model.layers }, (_, l) => l), 'layer');
    this.#heads.render({ heads: 0, head: 0, visible: false });
    this.#render(matrix, isRollout ? s.bound : 0);
    const answers = s.answers.map((a) => (a ? `“${displayToken(a.text)}”` : '(none)'));
    let metric = '';
    if (['heads', 'residual', 'layers'].includes(result.kind)) {
      metric = `logit[a] − logit[b] (a = ${answers[0]}, b = ${answers[1]}): clean ${signed(result.clean)}, corrupted ${signed(result.corrupted)}. ` +
        `Clean prompt: “${s.prompts.clean}”; corrupted: “${s.prompts.corrupted}”.`;
    } else if (result.kind === 'attribution') {
      metric = `logit[a] − logit[b] (a = ${answers[0]}, b = ${answers[1]}) on the clean prompt: ${signed(result.total)} = embeddings ` +
        `${signed(result.embed)} + constant ${signed(result.constant)} + the heads, biases and MLPs drawn.`;
    }
    p.metric.textContent = metric;
    p.metric.hidden = compact || !metric;
    this.#drawBars(s, compact);
    p.next.hidden = true;
    p.generation.hidden = true;
    p.grid.hidden = true;
  }

  #drawBars(s, compact) {
    const list = this.#parts.bars;
    list.hidden = compact || s.result.kind !== 'attribution';
    if (list.hidden) return;
    const parts = attributionParts(s.result, s.model).slice(0, MAX_BARS);
    const largest = Math.max(...parts.map((x) => Math.abs(x.value)), 1e-12);
    list.setAttribute('aria-label', `The ${parts.length} largest parts of the logit difference`);
    list.replaceChildren(...parts.map(({ name, value }) => {
      const item = el('li', 'snapshot-bar');
      item.dataset.value = String(value);
      const track = el('span', 'snapshot-bar-track');
      track.setAttribute('aria-hidden', 'true');
      const bar = el('span', `snapshot-bar-fill ${value < 0 ? 'negative' : 'positive'}`);
      bar.style.width = `${((Math.abs(value) / largest) * 50).toFixed(2)}%`;
      track.append(bar);
      item.append(el('span', 'snapshot-bar-name', name), el('span', 'num', signed(value)), track);
      return item;
    }));
  }

  /** The line under the heatmap: the hovered or focused cell, its value (a lens cell: its top 5); the chips of its tokens marked. */
  #hover(cell) {
    const line = this.#parts.readout;
    const s = this.#snapshot;
    const m = this.#matrix;
    if (!cell || !m) {
      line.className = 'readout hint';
      line.textContent = this.#options.compact ? '' : 'Hover over a cell, or focus the heatmap and use the arrow keys, to read its value.';
      if (s) this.#chips.render(s.tokens, 0, []);
      return;
    }
    line.className = 'readout';
    const v = m.data[cell.row * m.cols + cell.col];
    if (s.kind === 'circuits' && s.result.kind === 'lens') {
      const { top, token } = lensCell(s.result, cell.row, cell.col);
      const tops = top.map((t, j) => `${j + 1}. “${displayToken(t.text)}” ${percent(t.probability)}`).join(' · ');
      line.textContent = `${lensRowLabels(s.result.rows - 1)[cell.row]}, position ${cell.col + 1} (“${m.colLabels[cell.col]}”): ${tops}` +
        (token ? ` — answer a “${displayToken(token.text)}”: rank ${token.rank + 1}, ${percent(token.probability)}` : '');
    } else {
      line.textContent = `${cellWords(m, cell.row, cell.col)}: ${formatPrecise(v)}${s.bound > 0 && m.scale === 'probability' ? ` (${boundText(s.bound)})` : ''}`;
    }
    // The query's and the key's chips marked (a token × token matrix).
    if (m.rowAxis === 'query' || (m.rowAxis === 'position' && m.colAxis === 'token')) this.#chips.render(s.tokens, 0, [cell.row, cell.col]);
    else if (m.colAxis === 'position') this.#chips.render(s.tokens, 0, [cell.col]);
  }
}
