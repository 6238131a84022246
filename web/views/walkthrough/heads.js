// "Every head": small multiples of each head's attention weights, and a line view (token-to-
// token links weighted by attention, as BertViz draws them). Draws the core's weights as given.
import { HEAD_COLORS } from '../../shared/colors.js';
import { formatNumber } from '../../shared/format.js';
import { button, el } from '../../shared/dom.js';
import { PREVIEW_SIDE } from '../../shared/engine.js';
import { kvGroupLabel, kvHeadOf } from '../../shared/head-grid.js';
import { Heatmap } from '../../shared/heatmap.js';
import { displayToken } from '../../shared/labels.js';

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, attributes = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, String(v));
  return node;
}

/** The [n, kvN] weights of one head from the forward's attention [heads, n, kvN]. */
export const headWeights = (result, h) => result.attention.subarray(h * result.n * result.kvN, (h + 1) * result.n * result.kvN);

/**
 * Small multiples: one compact heatmap per head; click (or Enter) focuses that head. With
 * grouped-query attention (a model's layer whose query heads share fewer K/V heads), the heads
 * that read one K/V head sit in one labelled group ("K/V head 2 · heads 4–6"), as in the Your model
 * view. The tiles are kept between renders with the same heads (only redrawn), so typing does not
 * rebuild them.
 */
class HeadGrid {
  #host;
  #onFocus;
  #tiles = []; // [{ tile, button, figure, map }]
  #shape = ''; // heads/kvHeads the tiles were built for

  constructor(host, onFocus) {
    this.#host = host;
    this.#onFocus = onFocus;
  }

  /** A tile's width (0 without tiles): the caller reads it before changing the page. */
  tileWidth() {
    return this.#tiles[0]?.figure.clientWidth;
  }

  #build(heads, kvHeads) {
    const host = this.#host;
    host.replaceChildren();
    this.#shape = `${heads}/${kvHeads}`;
    const grouped = kvHeadOf(0, heads, kvHeads) !== null;
    const size = grouped ? heads / kvHeads : heads;
    const groups = grouped ? Array.from({ length: kvHeads }, (_, kv) => {
      const group = el('div', 'head-group');
      const label = el('p', 'head-group-label', kvGroupLabel(kv, size));
      label.id = `heads-kv-${kv}`;
      group.setAttribute('role', 'group');
      group.setAttribute('aria-labelledby', label.id);
      group.dataset.kvHead = String(kv);
      const tiles = el('div', 'head-group-tiles');
      group.append(label, tiles);
      host.append(group);
      return tiles;
    }) : null;
    this.#tiles = Array.from({ length: heads }, (_, h) => {
      const tile = el('div');
      const figure = el('div');
      tile.append(button('head-button', `Head ${h + 1}`, () => this.#onFocus(h)), figure);
      (groups ? groups[Math.floor(h / size)] : host).append(tile);
      return { tile, button: tile.firstChild, figure, map: null };
    });
    // Every tile is in the document before the first is measured: one layout, not one per tile.
    this.#tiles.forEach((entry, h) => {
      entry.map = new Heatmap(entry.figure, { maxCell: 16, minCell: 0, labels: false, legend: false,
        caption: false, table: false, onActivate: () => this.#onFocus(h) });
    });
  }

  /** tileWidth: a tile's width if the caller measured it already. */
  render(result, focusedHead, tileWidth, colorScale) {
    const { heads, kvHeads = heads } = result.config;
    this.#host.className = `heads heads-grid${kvHeadOf(0, heads, kvHeads) === null ? '' : ' heads-grouped'}`;
    if (this.#shape !== `${heads}/${kvHeads}` || !this.#host.contains(this.#tiles[0]?.tile)) this.#build(heads, kvHeads);
    // All tiles are as wide: one layout read (none when the caller measured before drawing).
    const width = tileWidth || this.tileWidth();
    this.#tiles.forEach(({ tile, button: b, map }, h) => {
      tile.className = `head-tile${h === focusedHead ? ' focused' : ''}`;
      b.setAttribute('aria-pressed', String(h === focusedHead));
      map.render({ ...headMatrix(result, h), colorScale }, { width });
    });
  }
}

// One head's weights as a heatmap: from the engine's max-pooled preview for long inputs (the
// same image, far fewer cells), else the full [n, kvN] weights.
function headMatrix(result, h) {
  const preview = result.headPreviews;
  const step = preview?.step ?? 1;
  const everyStep = (labels) => labels.filter((_, i) => i % step === 0);
  return {
    ...(preview
      ? { data: preview.data.subarray(h * preview.rows * preview.cols, (h + 1) * preview.rows * preview.cols),
        rows: preview.rows, cols: preview.cols, shape: [result.n, result.kvN] }
      : { data: headWeights(result, h), rows: result.n, cols: result.kvN }),
    rowLabels: everyStep(result.queryTokens),
    colLabels: everyStep(result.keyTokens),
    rowAxis: 'query',
    colAxis: 'key',
    title: `Head ${h + 1}`,
    scale: 'probability',
  };
}

/**
 * The "Every head" panel: the grid of heads or the line view, as the settings say; the line
 * view's "overlay all heads" box writes `allHeads` to the store.
 */
export class HeadsView {
  #host;
  #store;
  #grid;

  constructor(host, store, onFocusHead) {
    this.#host = host;
    this.#store = store;
    this.#grid = new HeadGrid(host, onFocusHead);
  }

  /** A grid tile's width, read before the page changes (see render). */
  tileWidth() {
    return this.#grid.tileWidth();
  }

  render(tileWidth) {
    const { result, settings, allHeads } = this.#store.get();
    const host = this.#host;
    if (!result.attention && !result.headPreviews) {
      host.replaceChildren(el('p', 'muted', 'No attention weights.'));
    } else if (settings.view === 'lines' && !result.attention) { // long inputs: the core kept the weights
      host.className = 'heads';
      host.replaceChildren(el('p', 'muted', `The line view draws inputs of up to ${PREVIEW_SIDE} tokens ` +
        `(these are ${result.n}); the heatmaps show every head.`));
    } else if (settings.view === 'lines') {
      const toggle = el('label', 'inline small');
      const box = el('input');
      box.type = 'checkbox';
      box.checked = allHeads;
      box.addEventListener('change', () => this.#store.set({ allHeads: box.checked }));
      toggle.append(box, ' overlay all heads');
      const lines = el('div');
      host.replaceChildren(toggle, lines);
      host.className = 'heads';
      drawHeadLines(lines, result, settings.head, allHeads);
    } else {
      this.#grid.render(result, settings.head, tileWidth, settings.colorScale);
    }
  }
}

/**
 * Line view: queries on the left, keys on the right, one line per (query, key) pair with
 * opacity and width from the weight. Hovering or focusing a query shows only its lines.
 */
function drawHeadLines(host, result, focusedHead, allHeads) {
  host.replaceChildren();
  host.className = 'heads heads-lines';
  const { n, kvN } = result;
  const rowHeight = 22;
  const width = Math.min(520, Math.max(280, (host.clientWidth || 520) - 8));
  const height = Math.max(n, kvN) * rowHeight + 30;
  const root = svg('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img',
    'aria-label': `Attention lines for ${allHeads ? 'all heads' : `head ${focusedHead + 1}`}: queries on the left, keys on the right` });
  const leftX = 110;
  const rightX = width - 110;
  const y = (i) => 24 + i * rowHeight + rowHeight / 2;
  const heads = allHeads ? [...Array(result.config.heads).keys()] : [focusedHead];
  const lines = svg('g', { class: 'lines' });
  for (const h of heads) {
    const weights = headWeights(result, h);
    const colour = HEAD_COLORS[h % HEAD_COLORS.length];
    for (let i = 0; i < n; ++i) {
      for (let j = 0; j < kvN; ++j) {
        const w = weights[i * kvN + j];
        if (!(w > 0.01)) continue;
        const line = svg('line', { x1: leftX + 4, y1: y(i), x2: rightX - 4, y2: y(j), stroke: colour,
          'stroke-opacity': Math.min(1, w * (allHeads ? 0.9 : 1.1)).toFixed(3), 'stroke-width': (0.5 + 4 * w).toFixed(2),
          'data-query': i });
        const tip = svg('title');
        tip.textContent = `head ${h + 1}: ${result.queryTokens[i]} → ${result.keyTokens[j]} ${formatNumber(w, 3)}`;
        line.append(tip);
        lines.append(line);
      }
    }
  }
  const queryTitle = svg('text', { x: leftX, y: 12, 'text-anchor': 'end', class: 'axis-name' });
  queryTitle.textContent = 'query';
  const keyTitle = svg('text', { x: rightX, y: 12, class: 'axis-name' });
  keyTitle.textContent = 'key';
  root.append(queryTitle, keyTitle, lines);
  const highlight = (i) => {
    for (const line of lines.children) line.classList.toggle('dim', i !== null && Number(line.dataset.query) !== i);
  };
  result.queryTokens.forEach((token, i) => {
    const label = svg('text', { x: leftX - 6, y: y(i), 'text-anchor': 'end', 'dominant-baseline': 'middle',
      class: 'token-label', tabindex: 0 });
    const shown = displayToken(token);
    label.textContent = shown.length > 14 ? `${shown.slice(0, 13)}…` : shown;
    for (const [event, value] of [['mouseenter', i], ['focus', i], ['mouseleave', null], ['blur', null]]) {
      label.addEventListener(event, () => highlight(value));
    }
    root.append(label);
  });
  result.keyTokens.forEach((token, j) => {
    const label = svg('text', { x: rightX + 6, y: y(j), 'dominant-baseline': 'middle', class: 'token-label' });
    const shown = displayToken(token);
    label.textContent = shown.length > 14 ? `${shown.slice(0, 13)}…` : shown;
    root.append(label);
  });
  host.append(root);
  if (allHeads) {
    const key = el('p', 'small');
    for (const h of heads) {
      const swatch = el('span', 'swatch');
      swatch.style.background = HEAD_COLORS[h % HEAD_COLORS.length];
      key.append(swatch, ` head ${h + 1}  `);
    }
    host.append(key);
  }
}
