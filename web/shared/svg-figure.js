// A heatmap as an SVG figure (a file for a paper or a post): its cells as one <path> per colour
// (the commonest colour as one background rectangle), the masked cells' hatching, the numbers or
// per-cell tokens the canvas writes in cells, the token labels and axis names as <text>, the title,
// the colour bar with its ticks, and the provenance in <metadata>. It is given the heatmap's own
// layout, matrix, colour scale and positions (heatmap.js's svgFigure()), and colours every cell with
// colors.js's cellColor, the function the canvas draws with. Every string is escaped (escapeXml):
// token text is user input and never becomes markup. Pure: no DOM, so node tests run it as is.
import { cellColor, cellTextColor, legendStops, maxPool } from './colors.js';
import { scaleDescription, scaleTicks } from './color-scale.js';
import { formatNumber } from './format.js';

export const SVG_NS = 'http://www.w3.org/2000/svg';
export const FIGURE_PAD = 12; // px around the figure
export const FIGURE_TITLE = 24; // px the title takes above the matrix
export const MAX_SVG_SIDE = 256; // cells a side written; larger matrices are max-pooled to this (as the canvas pools)

// Characters XML 1.0 cannot hold even as references (C0 controls but tab / line breaks, U+FFFE/F,
// unpaired surrogates): written as U+FFFD so the file still parses.
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const ENTITIES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/** Text (user text included) safe inside an XML element or a quoted attribute: & < > " ' as entities. */
export const escapeXml = (text) => String(text).replace(NOT_XML, '\uFFFD').replace(/[&<>"']/g, (c) => ENTITIES[c]);

/** A number as written in the file: at most 2 decimals, no trailing zeros. */
const num = (v) => String(Math.round(v * 100) / 100);

/** One element: attributes escaped (null / undefined / false left out); `inner` is markup already built here. */
function tag(name, attributes = {}, inner = null) {
  let out = `<${name}`;
  for (const [key, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    out += ` ${key}="${escapeXml(typeof value === 'number' ? num(value) : value)}"`;
  }
  return inner === null ? `${out}/>` : `${out}>${inner}</${name}>`;
}

/** A <text> of user text. */
const text = (content, attributes) => tag('text', attributes, escapeXml(content));

// The alphabetic baseline for text a canvas draws with textBaseline 'middle' at y (≈ 0.35 em below).
const middle = (y, px) => y + 0.35 * px;

/** A rough width of `label` at `px` (no canvas to measure with: node, tests). */
export const estimateWidth = (label, px) => [...String(label)].length * px * 0.6;

/**
 * The cells as SVG: one rectangle of the commonest colour under the whole matrix, then one <path>
 * per other colour, each a run of equal cells in a row as "m dx dy h len v1 h-len z" in cell units
 * (the group is scaled by the cell's size). Masked cells (−∞, NaN: transparent in cellColor) take
 * `masked`, as the canvas's masked colour shows through its transparent pixels.
 */
export function cellsSvg({ positions, rows, cols, scale, masked, cell, left, top }) {
  const colorOf = new Array(rows * cols);
  const counts = new Map();
  for (let i = 0; i < rows * cols; ++i) {
    const color = cellColor(scale, positions[i]) ?? masked;
    colorOf[i] = color;
    counts.set(color, (counts.get(color) ?? 0) + 1);
  }
  let common = masked;
  let most = -1;
  for (const [color, count] of counts) if (count > most) [common, most] = [color, count];
  const paths = new Map(); // colour -> { d, x, y } (x, y: where the last run began)
  for (let r = 0; r < rows; ++r) {
    for (let c = 0; c < cols;) {
      const color = colorOf[r * cols + c];
      let end = c + 1;
      while (end < cols && colorOf[r * cols + end] === color) ++end;
      if (color !== common) {
        let p = paths.get(color);
        const move = p ? `m${c - p.x} ${r - p.y}` : `M${c} ${r}`;
        if (!p) paths.set(color, (p = { d: '', x: 0, y: 0 }));
        p.d += `${move}h${end - c}v1h-${end - c}z`;
        p.x = c;
        p.y = r;
      }
      c = end;
    }
  }
  let inner = tag('rect', { width: cols, height: rows, fill: common });
  for (const [color, { d }] of paths) inner += tag('path', { fill: color, d });
  return tag('g', { transform: `translate(${num(left)} ${num(top)}) scale(${num(cell)})`, 'shape-rendering': 'crispEdges' }, inner);
}

/**
 * Masked cells' hatching as the canvas strokes it: a line from each cell's bottom-left to its
 * top-right corner, the lines of masked cells along an anti-diagonal joined into one.
 */
function hatchingSvg({ data, rows, cols, cell, left, top }) {
  const masked = (r, c) => r >= 0 && r < rows && c >= 0 && c < cols && !Number.isFinite(data[r * cols + c]);
  let d = '';
  for (let r = 0; r < rows; ++r) {
    for (let c = 0; c < cols; ++c) {
      if (!masked(r, c) || masked(r + 1, c - 1)) continue; // drawn from the run's lower-left cell
      let length = 1;
      while (masked(r - length, c + length)) ++length;
      d += `M${num(left + c * cell)} ${num(top + (r + 1) * cell)}l${num(length * cell)} -${num(length * cell)}`;
    }
  }
  return d ? tag('path', { d, stroke: '#fff', 'stroke-opacity': 0.55, 'stroke-width': 1, fill: 'none' }) : '';
}

/** Whether a cell's number `width` px wide is written in a `cell`-px cell (large cells: always). */
export const valueFits = (width, cell) => cell >= 34 || width <= cell - 2;

/**
 * The whole figure as SVG markup.
 * @param {object} figure what heatmap.js's svgFigure() returns:
 *   matrix {data, rows, cols, rowLabels, colLabels, rowAxis, colAxis, title, markedCells?, cellLabels?, shape?},
 *   positions (the cells' colour positions), scale (colors.js makeScale), colorScale, logFloor,
 *   layout {left, top, cell, width, height, labelPx, labels (axis-labels.js's boxes), axisNames, hatch,
 *   marked, values, cellLabels} (what the canvas drew and where),
 *   style {family, '--surface', '--ink', '--muted', '--masked'}, measure(text, px, weight) → width,
 *   provenance (any JSON object).
 * @returns {string} a standalone SVG document
 */
export function heatmapSvg(figure) {
  const { matrix: m, scale, layout: L, style, provenance = {} } = figure;
  const measure = figure.measure ?? ((label, px) => estimateWidth(label, px));
  const ink = style['--ink'];
  const parts = [];

  // Cells (max-pooled beyond MAX_SVG_SIDE a side, as the canvas pools cells smaller than a pixel).
  const step = Math.max(1, Math.ceil(Math.max(m.rows, m.cols) / MAX_SVG_SIDE));
  const pooled = step === 1 ? { data: figure.positions, rows: m.rows, cols: m.cols }
    : maxPool({ data: figure.positions, rows: m.rows, cols: m.cols }, step);
  parts.push(cellsSvg({ positions: pooled.data, rows: pooled.rows, cols: pooled.cols, scale, masked: style['--masked'],
    cell: L.cell * step, left: L.left, top: L.top }));
  if (L.hatch && step === 1) parts.push(hatchingSvg({ data: m.data, rows: m.rows, cols: m.cols, cell: L.cell, left: L.left, top: L.top }));
  if (L.marked && m.markedCells?.size) {
    let d = '';
    for (const index of m.markedCells) {
      const r = Math.floor(index / m.cols);
      if (r < m.rows) d += `M${num(L.left + (index % m.cols) * L.cell + 2)} ${num(L.top + r * L.cell + 2)}h${num(L.cell - 4)}v${num(L.cell - 4)}h-${num(L.cell - 4)}z`;
    }
    if (d) parts.push(tag('path', { d, fill: 'none', stroke: ink, 'stroke-width': 2 }));
  }

  // Numbers, or the per-cell labels (the logit lens's top token), cut to the cell as the canvas cuts them.
  if (L.values || L.cellLabels) {
    const px = L.cell >= 40 ? 11 : 10;
    let cells = '';
    for (let r = 0; r < m.rows; ++r) {
      for (let c = 0; c < m.cols; ++c) {
        const i = r * m.cols + c;
        let content;
        if (L.cellLabels) {
          content = m.cellLabels[i] ?? '';
          while (content.length > 1 && measure(content, px) > L.cell - 4) content = `${content.slice(0, -2)}…`;
        } else {
          if (Number.isNaN(m.data[i])) continue;
          content = formatNumber(m.data[i], 2);
          if (!valueFits(measure(content, px), L.cell)) continue;
        }
        cells += text(content, { x: L.left + (c + 0.5) * L.cell, y: middle(L.top + (r + 0.5) * L.cell, px),
          fill: cellTextColor(scale, figure.positions[i]) });
      }
    }
    parts.push(tag('g', { 'font-size': px, 'text-anchor': 'middle' }, cells));
  }

  // Token labels where the canvas draws them (axis-labels.js's boxes; a turned one reads upwards).
  let labels = '';
  for (const box of L.labels ?? []) {
    labels += box.turned
      ? text(box.text, { transform: `translate(${num(box.x + box.w / 2)} ${num(box.y + box.h)}) rotate(-90)`, y: middle(0, L.labelPx) })
      : text(box.text, { x: num(box.x), y: middle(box.y + box.h / 2, L.labelPx) });
  }
  if (labels) parts.push(tag('g', { class: 'labels', 'font-size': L.labelPx, fill: ink }, labels));
  if (L.axisNames) {
    parts.push(tag('g', { class: 'axis-names', 'font-size': 12, 'font-style': 'italic', fill: style['--muted'] },
      text(`${m.colAxis} →`, { x: L.left, y: middle(10, 12) }) +
      text(`${m.rowAxis} →`, { transform: `translate(10 ${num(L.top)}) rotate(90)`, y: middle(0, 12) })));
  }

  // The figure around the matrix: the title above, the colour bar below.
  const y0 = FIGURE_PAD + FIGURE_TITLE;
  const legend = colourBarSvg({ scale, colorScale: figure.colorScale, logFloor: figure.logFloor, y: y0 + L.height + 8, measure, style });
  const width = Math.max(L.width + 2 * FIGURE_PAD, measure(m.title, 14, 'bold') + 2 * FIGURE_PAD, legend.width);
  const [rows, cols] = m.shape ?? [m.rows, m.cols];
  const description = `${rows} ${m.rowAxis} rows by ${cols} ${m.colAxis} columns` +
    `${m.shape || step > 1 ? `, drawn max-pooled to ${pooled.rows} × ${pooled.cols}` : ''}; colour: ${legend.words}.`;
  return svgDocument({ width, height: legend.bottom, title: m.title, description, provenance, style },
    tag('g', { class: 'matrix', transform: `translate(${FIGURE_PAD} ${y0})` }, parts.join('')) + legend.markup);
}

/**
 * A standalone SVG document of `width` × `height` px: its <title>, <desc>, the provenance (JSON)
 * in <metadata>, the theme's surface behind everything, the title drawn at the top, then `inner`.
 */
export function svgDocument({ width, height, title, description, provenance = {}, style }, inner) {
  width = Math.ceil(width);
  height = Math.ceil(height);
  return `${tag('svg', { xmlns: SVG_NS, width, height, viewBox: `0 0 ${width} ${height}`, 'font-family': style.family,
    'xml:space': 'preserve', role: 'img', 'aria-labelledby': 'figure-title figure-desc' },
  tag('title', { id: 'figure-title' }, escapeXml(title)) +
    tag('desc', { id: 'figure-desc' }, escapeXml(description)) +
    tag('metadata', { id: 'provenance' }, escapeXml(JSON.stringify(provenance))) +
    tag('rect', { width, height, fill: style['--surface'] }) +
    text(title, { x: FIGURE_PAD, y: FIGURE_PAD + 13, 'font-size': 14, 'font-weight': 'bold', fill: style['--ink'] }) +
    inner)}\n`;
}

/**
 * The colour bar at `y`: the scale's gradient (colors.js legendStops, as the page's legend), its
 * ticks (probabilities: color-scale.js scaleTicks) or its min and max, and what it means (with the
 * masked cells' swatch when any is masked). Returns { markup, width (the figure width it needs),
 * bottom, words }.
 */
export function colourBarSvg({ scale, colorScale = 'linear', logFloor = 1e-3, y, measure = estimateWidth, style }) {
  const probability = scale.kind === 'probability';
  const minText = probability ? '' : formatNumber(scale.min);
  const barX = FIGURE_PAD + (probability ? 24 : Math.ceil(measure(minText, 11)) + 8);
  const barWidth = 240;
  const stops = legendStops(scale, 32).map(({ at, css }) => tag('stop', { offset: at, 'stop-color': css })).join('');
  let legend = tag('defs', {}, tag('linearGradient', { id: 'colour-bar' }, stops));
  legend += tag('rect', { x: barX, y, width: barWidth, height: 12, fill: 'url(#colour-bar)' });
  const words = probability ? scaleDescription(colorScale, logFloor) : scale.kind === 'diverging' ? 'blue < 0 < red' : 'value';
  let right = barX + barWidth;
  if (probability) {
    for (const { at, label } of scaleTicks(colorScale, logFloor)) {
      legend += text(label, { x: barX + at * barWidth, y: y + 25, 'text-anchor': 'middle' });
      right = Math.max(right, barX + at * barWidth + measure(label, 11) / 2);
    }
  } else {
    const maxText = formatNumber(scale.max);
    legend += text(minText, { x: barX - 6, y: y + 10, 'text-anchor': 'end' });
    legend += text(maxText, { x: barX + barWidth + 6, y: y + 10 });
    right += 6 + measure(maxText, 11);
  }
  let wordsWidth = measure(words, 11);
  legend += text(words, { x: FIGURE_PAD, y: y + 41, fill: style['--muted'] });
  if (!probability && scale.masked) {
    const x = FIGURE_PAD + wordsWidth + 16;
    legend += tag('rect', { x, y: y + 31, width: 12, height: 12, fill: style['--masked'] });
    legend += tag('path', { d: `M${num(x)} ${num(y + 43)}l12 -12`, stroke: '#fff', 'stroke-opacity': 0.55, fill: 'none' });
    legend += text('masked (−∞)', { x: x + 16, y: y + 41 });
    wordsWidth += 32 + measure('masked (−∞)', 11);
  }
  return { markup: tag('g', { class: 'legend', 'font-size': 11, fill: style['--ink'] }, legend),
    width: Math.max(right + FIGURE_PAD, wordsWidth + 2 * FIGURE_PAD), bottom: y + 50, words };
}

export const MAX_TILE_SIDE = 64; // cells a side of a small multiple; larger ones max-pooled to this

/**
 * Small multiples as one SVG figure (the Your model view's head grid, the Across-training strip's
 * maps): a grid of tiles, each its matrix's cells (cellsSvg, coloured by cellColor as the tiles'
 * canvases are; max-pooled beyond MAX_TILE_SIDE a side) under its label, a name at the left of
 * each row of tiles, and one colour bar for all.
 * @param {{title: string, tiles: {label: string, row: number, col: number, positions: ArrayLike<number>,
 *   rows: number, cols: number}[], rowNames?: string[], tile?: number, scale: object, colorScale?: string,
 *   logFloor?: number, style: object, measure?: Function, provenance?: object, description?: string}} grid
 *   tile: the px of a tile's longer side; positions: the cells' colour positions (a Heatmap's colorData)
 */
export function gridSvg({ title, tiles, rowNames = [], tile = 96, scale, colorScale, logFloor, style, measure = estimateWidth,
  provenance = {}, description = '' }) {
  const GAP = 10;
  const LABEL = 16;
  // At most ~150 000 cells in all: a 12 × 12-head model's tiles pooled to 32 a side, a few heads' to 64.
  const side = Math.max(8, Math.min(MAX_TILE_SIDE, Math.floor(Math.sqrt(150000 / Math.max(1, tiles.length)))));
  const left = FIGURE_PAD + (rowNames.length ? Math.ceil(Math.max(...rowNames.map((n) => measure(n, 11)))) + 10 : 0);
  const top = FIGURE_PAD + FIGURE_TITLE;
  let inner = '';
  let right = 0;
  let bottom = top;
  let pooledAny = false;
  for (const t of tiles) {
    const step = Math.max(1, Math.ceil(Math.max(t.rows, t.cols) / side));
    pooledAny ||= step > 1;
    const pooled = step === 1 ? { data: t.positions, rows: t.rows, cols: t.cols }
      : maxPool({ data: t.positions, rows: t.rows, cols: t.cols }, step);
    const cell = tile / Math.max(pooled.rows, pooled.cols);
    const x = left + t.col * (tile + GAP);
    const y = top + t.row * (tile + LABEL + GAP);
    inner += text(t.label, { x, y: y + 11, 'font-size': 11, fill: style['--ink'] });
    inner += cellsSvg({ positions: pooled.data, rows: pooled.rows, cols: pooled.cols, scale, masked: style['--masked'], cell,
      left: x, top: y + LABEL });
    right = Math.max(right, x + tile, x + measure(t.label, 11));
    bottom = Math.max(bottom, y + LABEL + tile);
  }
  rowNames.forEach((name, r) => {
    inner += text(name, { x: left - 10, y: top + r * (tile + LABEL + GAP) + LABEL + tile / 2, 'font-size': 11, 'text-anchor': 'end',
      fill: style['--muted'] });
  });
  const legend = colourBarSvg({ scale, colorScale, logFloor, y: bottom + 12, measure, style });
  const width = Math.max(right + FIGURE_PAD, measure(title, 14, 'bold') + 2 * FIGURE_PAD, legend.width);
  const pooling = pooledAny ? ` (max-pooled to at most ${side} cells a side)` : '';
  return svgDocument({ width, height: legend.bottom, title,
    description: `${description || `${tiles.length} small heatmaps`}${pooling}; colour: ${legend.words}.`,
    provenance, style }, tag('g', { class: 'tiles' }, inner) + legend.markup);
}

// ---- a canvas 2D context that writes SVG: line plots drawn once, to the canvas or to a figure ----

const ALIGN = { left: 'start', start: 'start', center: 'middle', right: 'end', end: 'end' };

/**
 * The part of CanvasRenderingContext2D a plot draws with (paths, rectangles, arcs, text, dashes,
 * save / restore, translate / rotate, a rectangular clip), recording SVG instead of pixels: a
 * drawing function written for a canvas (train/plot.js's LinePlot) writes the same figure into an
 * SVG by being handed this. Text is escaped like every other string here.
 */
export class SvgContext {
  constructor({ measure = estimateWidth } = {}) {
    this.measureWidth = measure;
    this.markup = '';
    this.defs = '';
    this.clips = 0;
    this.state = { font: '10px sans-serif', fillStyle: '#000', strokeStyle: '#000', lineWidth: 1, textAlign: 'start',
      textBaseline: 'alphabetic', dash: [], matrix: [1, 0, 0, 1, 0, 0], clip: null };
    this.stack = [];
    this.path = '';
  }

  get font() { return this.state.font; }
  set font(v) { this.state.font = v; }
  get fillStyle() { return this.state.fillStyle; }
  set fillStyle(v) { this.state.fillStyle = v; }
  get strokeStyle() { return this.state.strokeStyle; }
  set strokeStyle(v) { this.state.strokeStyle = v; }
  get lineWidth() { return this.state.lineWidth; }
  set lineWidth(v) { this.state.lineWidth = v; }
  get textAlign() { return this.state.textAlign; }
  set textAlign(v) { this.state.textAlign = v; }
  get textBaseline() { return this.state.textBaseline; }
  set textBaseline(v) { this.state.textBaseline = v; }

  save() { this.stack.push({ ...this.state, dash: [...this.state.dash], matrix: [...this.state.matrix] }); }
  restore() { if (this.stack.length) this.state = this.stack.pop(); }
  setLineDash(dash) { this.state.dash = [...dash]; }
  getLineDash() { return [...this.state.dash]; }
  setTransform(a, b, c, d, e, f) { this.state.matrix = [a, b, c, d, e, f]; }

  #multiply([a2, b2, c2, d2, e2, f2]) {
    const [a, b, c, d, e, f] = this.state.matrix;
    this.state.matrix = [a * a2 + c * b2, b * a2 + d * b2, a * c2 + c * d2, b * c2 + d * d2, a * e2 + c * f2 + e, b * e2 + d * f2 + f];
  }

  translate(x, y) { this.#multiply([1, 0, 0, 1, x, y]); }
  rotate(angle) { this.#multiply([Math.cos(angle), Math.sin(angle), -Math.sin(angle), Math.cos(angle), 0, 0]); }

  // The transform of what is drawn now, as attributes.
  #placed(attributes) {
    const [a, b, c, d, e, f] = this.state.matrix;
    const identity = a === 1 && b === 0 && c === 0 && d === 1 && e === 0 && f === 0;
    return { ...attributes, ...(identity ? {} : { transform: `matrix(${[a, b, c, d, e, f].map((v) => num(Math.round(v * 1e4) / 1e4)).join(' ')})` }) };
  }

  // One element drawn, inside a group clipped by the clip in force (its path placed as it was when set).
  #emit(element) {
    this.markup += this.state.clip ? tag('g', { 'clip-path': `url(#${this.state.clip})` }, element) : element;
  }

  beginPath() { this.path = ''; }
  moveTo(x, y) { this.path += `M${num(x)} ${num(y)}`; }
  lineTo(x, y) { this.path += `L${num(x)} ${num(y)}`; }
  closePath() { this.path += 'z'; }
  rect(x, y, w, h) { this.path += `M${num(x)} ${num(y)}h${num(w)}v${num(h)}h${num(-w)}z`; }
  arc(x, y, r, start, end) {
    if (Math.abs(end - start) >= 2 * Math.PI - 1e-9) { // a whole circle: two half arcs
      this.path += `M${num(x + r)} ${num(y)}A${num(r)} ${num(r)} 0 1 1 ${num(x - r)} ${num(y)}A${num(r)} ${num(r)} 0 1 1 ${num(x + r)} ${num(y)}z`;
      return;
    }
    const [x0, y0, x1, y1] = [x + r * Math.cos(start), y + r * Math.sin(start), x + r * Math.cos(end), y + r * Math.sin(end)];
    this.path += `${this.path ? 'L' : 'M'}${num(x0)} ${num(y0)}A${num(r)} ${num(r)} 0 ${end - start > Math.PI ? 1 : 0} 1 ${num(x1)} ${num(y1)}`;
  }

  #stroke(d) {
    const { strokeStyle, lineWidth, dash } = this.state;
    this.#emit(tag('path', this.#placed({ d, fill: 'none', stroke: strokeStyle, 'stroke-width': lineWidth,
      'stroke-dasharray': dash.length ? dash.join(' ') : null })));
  }

  stroke() { if (this.path) this.#stroke(this.path); }
  fill() { if (this.path) this.#emit(tag('path', this.#placed({ d: this.path, fill: this.state.fillStyle }))); }
  strokeRect(x, y, w, h) { this.#stroke(`M${num(x)} ${num(y)}h${num(w)}v${num(h)}h${num(-w)}z`); }
  fillRect(x, y, w, h) { this.#emit(tag('rect', this.#placed({ x, y, width: w, height: h, fill: this.state.fillStyle }))); }
  clearRect() {} // the figure's surface is already behind everything

  /** The current path as the clip of what follows (until restore). */
  clip() {
    const id = `clip-${++this.clips}`;
    this.defs += tag('clipPath', { id }, tag('path', this.#placed({ d: this.path })));
    this.state.clip = id;
  }

  // "italic bold 12px family" → its parts.
  #fontParts() {
    const match = /^\s*(italic\s+)?(bold\s+|\d00\s+)?([\d.]+)px\s+(.+)$/.exec(this.state.font);
    if (!match) return { size: 10, family: null };
    return { italic: Boolean(match[1]), weight: match[2]?.trim(), size: Number(match[3]), family: match[4] };
  }

  measureText(content) {
    const { size, weight } = this.#fontParts();
    return { width: this.measureWidth(content, size, weight ?? '') };
  }

  fillText(content, x, y) {
    const { italic, weight, size, family } = this.#fontParts();
    const shift = { middle: 0.35, top: 0.8, hanging: 0.8, bottom: -0.2, ideographic: -0.2 }[this.state.textBaseline] ?? 0;
    this.#emit(text(content, this.#placed({ x, y: y + shift * size, 'font-size': size, 'font-family': family,
      'font-style': italic ? 'italic' : null, 'font-weight': weight ?? null, fill: this.state.fillStyle,
      'text-anchor': ALIGN[this.state.textAlign] === 'start' ? null : ALIGN[this.state.textAlign] })));
  }

  /** What was drawn, as SVG markup (clip paths first). */
  toMarkup() {
    return (this.defs ? tag('defs', {}, this.defs) : '') + this.markup;
  }
}

/**
 * A drawing recorded by SvgContext as a standalone figure: the title above it and, when given, a
 * key of its series (a line swatch, dashed as drawn, and the label) below it.
 * @param {{title: string, width: number, height: number, drawing: string, series?: {label: string, color: string,
 *   dash?: number[]}[], style: object, measure?: Function, provenance?: object, description?: string}} figure
 */
export function plotSvg({ title, width, height, drawing, series = [], style, measure = estimateWidth, provenance = {}, description = '' }) {
  const top = FIGURE_PAD + FIGURE_TITLE;
  let key = '';
  let x = FIGURE_PAD;
  let y = top + height + 14;
  const right = FIGURE_PAD + width;
  for (const s of series) {
    const itemWidth = 28 + measure(s.label, 11) + 16;
    if (x > FIGURE_PAD && x + itemWidth > right) {
      x = FIGURE_PAD;
      y += 18;
    }
    key += tag('path', { d: `M${num(x)} ${num(y - 4)}h22`, stroke: s.color, 'stroke-width': 2.5,
      'stroke-dasharray': s.dash?.length ? s.dash.join(' ') : null });
    key += text(s.label, { x: x + 28, y });
    x += itemWidth;
  }
  const bottom = series.length ? y + 10 : top + height + FIGURE_PAD;
  return svgDocument({ width: Math.max(width + 2 * FIGURE_PAD, measure(title, 14, 'bold') + 2 * FIGURE_PAD), height: bottom, title,
    description: description || title, provenance, style },
  tag('g', { class: 'plot', transform: `translate(${FIGURE_PAD} ${top})` }, drawing) +
    (key ? tag('g', { class: 'key', 'font-size': 11, fill: style['--ink'] }, key) : ''));
}
