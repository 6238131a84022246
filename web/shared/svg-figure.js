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

/**
 * The whole figure as SVG markup.
 * @param {object} figure what heatmap.js's svgFigure() returns:
 *   matrix {data, rows, cols, rowLabels, colLabels, rowAxis, colAxis, title, markedCells?, cellLabels?, shape?},
 *   positions (the cells' colour positions), scale (colors.js makeScale), colorScale, logFloor,
 *   layout {left, top, cell, width, height, labelPx, showRowLabels, showColLabels, shortColLabels,
 *   colLabelEvery, axisNames, hatch, marked, values, cellLabels} (what the canvas drew and where),
 *   style {family, '--surface', '--ink', '--muted', '--masked'}, label (the row / column labels as
 *   drawn: shortened), measure(text, px, weight) → width, provenance (any JSON object).
 * @returns {string} a standalone SVG document
 */
export function heatmapSvg(figure) {
  const { matrix: m, scale, layout: L, style, provenance = {} } = figure;
  const measure = figure.measure ?? ((label, px) => estimateWidth(label, px));
  const shorten = figure.label ?? ((label) => label);
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
        }
        cells += text(content, { x: L.left + (c + 0.5) * L.cell, y: middle(L.top + (r + 0.5) * L.cell, px),
          fill: cellTextColor(scale, figure.positions[i]) });
      }
    }
    parts.push(tag('g', { 'font-size': px, 'text-anchor': 'middle' }, cells));
  }

  // Token labels: rows at the left, columns above (upright when short, else at 45°).
  let labels = '';
  if (L.showRowLabels) {
    m.rowLabels.forEach((label, r) => {
      labels += text(shorten(label), { x: L.left - 6, y: middle(L.top + (r + 0.5) * L.cell, L.labelPx), 'text-anchor': 'end' });
    });
  }
  if (L.showColLabels && L.shortColLabels) {
    m.colLabels.forEach((label, c) => {
      if (c % L.colLabelEvery === 0) labels += text(label, { x: L.left + (c + 0.5) * L.cell, y: middle(L.top - 9, L.labelPx), 'text-anchor': 'middle' });
    });
  } else if (L.showColLabels) {
    m.colLabels.forEach((label, c) => {
      labels += text(shorten(label), { transform: `translate(${num(L.left + (c + 0.5) * L.cell)} ${num(L.top - 6)}) rotate(-45)`,
        y: middle(0, L.labelPx) });
    });
  }
  if (labels) parts.push(tag('g', { class: 'labels', 'font-size': L.labelPx, fill: ink }, labels));
  if (L.axisNames) {
    parts.push(tag('g', { class: 'axis-names', 'font-size': 12, 'font-style': 'italic', fill: style['--muted'] },
      text(`${m.colAxis} →`, { x: L.left, y: middle(10, 12) }) +
      text(`${m.rowAxis} →`, { transform: `translate(10 ${num(L.top)}) rotate(90)`, y: middle(0, 12) })));
  }

  // The figure around the matrix: the title above, the colour bar below.
  const y0 = FIGURE_PAD + FIGURE_TITLE;
  const legendY = y0 + L.height + 8;
  const probability = scale.kind === 'probability';
  const minText = probability ? '' : formatNumber(scale.min);
  const barX = FIGURE_PAD + (probability ? 24 : Math.ceil(measure(minText, 11)) + 8);
  const barWidth = 240;
  const stops = legendStops(scale, 32).map(({ at, css }) => tag('stop', { offset: at, 'stop-color': css })).join('');
  let legend = tag('defs', {}, tag('linearGradient', { id: 'colour-bar' }, stops));
  legend += tag('rect', { x: barX, y: legendY, width: barWidth, height: 12, fill: 'url(#colour-bar)' });
  const words = probability ? scaleDescription(figure.colorScale, figure.logFloor)
    : scale.kind === 'diverging' ? 'blue < 0 < red' : 'value';
  let right = barX + barWidth;
  if (probability) {
    for (const { at, label } of scaleTicks(figure.colorScale, figure.logFloor)) {
      legend += text(label, { x: barX + at * barWidth, y: legendY + 25, 'text-anchor': 'middle' });
      right = Math.max(right, barX + at * barWidth + measure(label, 11) / 2);
    }
  } else {
    const maxText = formatNumber(scale.max);
    legend += text(minText, { x: barX - 6, y: legendY + 10, 'text-anchor': 'end' });
    legend += text(maxText, { x: barX + barWidth + 6, y: legendY + 10 });
    right += 6 + measure(maxText, 11);
  }
  let wordsWidth = measure(words, 11);
  legend += text(words, { x: FIGURE_PAD, y: legendY + 41, fill: style['--muted'] });
  if (!probability && scale.masked) {
    const x = FIGURE_PAD + wordsWidth + 16;
    legend += tag('rect', { x, y: legendY + 31, width: 12, height: 12, fill: style['--masked'] });
    legend += tag('path', { d: `M${num(x)} ${legendY + 43}l12 -12`, stroke: '#fff', 'stroke-opacity': 0.55, fill: 'none' });
    legend += text('masked (−∞)', { x: x + 16, y: legendY + 41 });
    wordsWidth += 32 + measure('masked (−∞)', 11);
  }
  const width = Math.ceil(Math.max(L.width + 2 * FIGURE_PAD, measure(m.title, 14, 'bold') + 2 * FIGURE_PAD, right + FIGURE_PAD,
    wordsWidth + 2 * FIGURE_PAD));
  const height = Math.ceil(legendY + 50);

  const [rows, cols] = m.shape ?? [m.rows, m.cols];
  const description = `${rows} ${m.rowAxis} rows by ${cols} ${m.colAxis} columns` +
    `${m.shape || step > 1 ? `, drawn max-pooled to ${pooled.rows} × ${pooled.cols}` : ''}; colour: ${words}.`;
  return `${tag('svg', { xmlns: SVG_NS, width, height, viewBox: `0 0 ${width} ${height}`, 'font-family': style.family,
    'xml:space': 'preserve', role: 'img', 'aria-labelledby': 'figure-title figure-desc' },
  tag('title', { id: 'figure-title' }, escapeXml(m.title)) +
    tag('desc', { id: 'figure-desc' }, escapeXml(description)) +
    tag('metadata', { id: 'provenance' }, escapeXml(JSON.stringify(provenance))) +
    tag('rect', { width, height, fill: style['--surface'] }) +
    text(m.title, { x: FIGURE_PAD, y: FIGURE_PAD + 13, 'font-size': 14, 'font-weight': 'bold', fill: ink }) +
    tag('g', { class: 'matrix', transform: `translate(${FIGURE_PAD} ${y0})` }, parts.join('')) +
    tag('g', { class: 'legend', 'font-size': 11, fill: ink }, legend))}\n`;
}
