// A matrix drawn on a canvas: labelled rows and columns, a colour legend, hover and keyboard
// focus on cells, and a screen-reader table of the same numbers. Used by the page and the
// <attention-lens> element; it only draws the data it is given.
import { AXIS_ROOM, hiddenLabelsNote, LABEL_MARGIN, labelBoxes, labelPlan, lineHeight } from './axis-labels.js';
import { colorPositions, COLOR_SCALES, logFloor, scaleDescription, scaleTicks } from './color-scale.js';
import { cellTextColor, legendGradient, makeScale, matrixPixels } from './colors.js';
import { cancelIdle, el, whenIdle } from './dom.js';
import { formatNumber } from './format.js';
import { scrollCue } from './scroll-cue.js';
import { heatmapSvg, valueFits } from './svg-figure.js';

const MAX_LABEL = 12; // characters of a token label drawn on an axis
const MAX_LABEL_PX = 110; // and its most px
const FOCUS_COLOUR = '#ff8c00'; // the focused cell's ring and its labels' background
const MAX_TABLE_CELLS = 4096; // larger matrices get a summary instead of a screen-reader table

const styleCache = new WeakMap(); // document or shadow root -> { theme, style }


const shorten = (label) => (label.length > MAX_LABEL ? `${label.slice(0, MAX_LABEL - 1)}…` : label);

/**
 * The colour legend of attention weights into `legend` (a `.legend` element): the bar with its
 * colour scale's ticks under it (0.0001 … 1 on a log scale) and what it means. A heatmap draws its
 * own; a grid of small multiples draws one for all of them.
 * @param {'linear'|'log'|'row'} colorScale
 * @param {number} floor the log scale's floor (color-scale.js's logFloor)
 */
export function probabilityLegend(legend, colorScale = 'linear', floor = 1e-3) {
  const bar = el('div', 'legend-bar');
  bar.style.background = legendGradient(makeScale('probability'));
  const ticks = el('div', 'legend-ticks');
  for (const { at, label } of scaleTicks(colorScale, floor)) {
    const tick = el('span', `legend-tick${at === 0 ? ' first' : at === 1 ? ' last' : ''}`, label);
    tick.style.left = `${at * 100}%`;
    ticks.append(tick);
  }
  const scaleBox = el('div', 'legend-scale');
  scaleBox.style.width = `${Math.max(220, 56 * ticks.childElementCount)}px`; // room for each tick's label
  scaleBox.append(bar, ticks);
  const words = el('span', 'legend-name muted', scaleDescription(colorScale, floor));
  legend.dataset.colorScale = colorScale;
  legend.replaceChildren(scaleBox, words);
}

export class Heatmap {
  /**
   * @param {HTMLElement} host  emptied and filled with the figure
   * @param {{onHover?: Function, onActivate?: Function, maxCell?: number, minCell?: number,
   *   labels?: boolean, legend?: boolean, caption?: boolean, table?: boolean, zoomable?: boolean,
   *   compact?: boolean}} options
   *   onHover({row, col} | null) on pointer or keyboard focus; onActivate({row, col}) on click / Enter.
   *   labels / legend / caption / table: false leaves them out (small multiples).
   *   compact (with labels: false): no axis names and no margins; the whole matrix scaled to the
   *   width it is given (cells of a fraction of a pixel if need be), so a small tile never scrolls.
   *   zoomable: zoom buttons (and + / − keys) and drag-to-pan, for matrices of thousands of cells.
   */
  constructor(host, options = {}) {
    this.options = { maxCell: 44, minCell: 3, valueCell: 34, labels: true, legend: true, caption: true, table: true,
      zoomable: false, ...options };
    this.figure = el('figure', 'heatmap');
    this.caption = el('figcaption', 'heatmap-caption');
    this.zoom = 1; // multiplies the fitted cell size
    this.scroller = el('div', 'heatmap-scroll');
    this.canvas = el('canvas');
    this.ctx = this.canvas.getContext('2d');
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute('role', 'img');
    this.scroller.append(this.canvas);
    // A matrix wider or taller than its frame says so (a phone's scrollbars are not drawn until touched).
    this.cue = this.options.labels ? scrollCue(this.scroller, this.canvas) : null; // not on small multiples
    this.labelsNote = el('p', 'heatmap-labels-note muted small');
    this.labelsNote.hidden = true;
    this.legend = el('div', 'legend');
    this.live = el('p', 'sr-only');
    this.live.setAttribute('aria-live', 'polite');
    this.table = el('div', 'sr-only sr-table');
    this.toolbar = el('div', 'heatmap-zoom');
    if (this.options.zoomable) this.#buildZoom();
    this.figure.append(...(this.options.caption ? [this.caption] : []),
      ...(this.options.zoomable ? [this.toolbar] : []), this.cue?.frame ?? this.scroller, this.labelsNote,
      ...(this.options.legend ? [this.legend] : []), this.live, this.table);
    host.replaceChildren(this.figure);
    this.focus = null; // {row, col} of the keyboard / pointer cell
    this.pinned = null;
    this.canvas.addEventListener('mousemove', (e) => this.#pointer(e, false));
    this.canvas.addEventListener('click', (e) => {
      if (this.dragged) return; // the end of a pan, not a click on a cell
      this.#pointer(e, true);
    });
    this.canvas.addEventListener('mouseleave', () => {
      this.focus = null;
      this.draw();
      this.options.onHover?.(null);
    });
    this.canvas.addEventListener('keydown', (e) => this.#key(e));
    this.canvas.addEventListener('focus', () => {
      if (!this.focus && this.matrix) this.#moveTo(0, 0);
    });
  }

  /**
   * @param {{data: Float32Array, rows: number, cols: number, rowLabels: string[],
   *   colLabels: string[], rowAxis: string, colAxis: string, title: string,
   *   scale: 'probability'|'sequential'|'diverging', markedCells?: Set<number>,
   *   shape?: [number, number], colorScale?: 'linear'|'log'|'row', missing?: string,
   *   cellLabels?: string[]}} matrix  cellLabels: a text per cell (the logit lens's top token), drawn in
   *   the cell in place of its number and read before it in the table and on focus; shape: the full
   *   matrix's when `data` is a max-pooled preview; colorScale: how probabilities are coloured
   *   (color-scale.js; the numbers read out stay the weights); missing: what a NaN cell (one
   *   that has no value, drawn hatched like a masked one) reads as in the table and when focused
   * @param {{width?: number}} [fit] the width to fit in, when the caller measured it already
   *   (several heatmaps in a row: one layout read instead of one per heatmap)
   */
  render(matrix, fit = {}) {
    this.matrix = matrix;
    this.fitWidth = fit.width;
    this.#readStyle();
    this.bitmap = null;
    this.scale = makeScale(matrix.scale, matrix.data);
    // Probabilities may be coloured on a log or per-row scale: the cells' colours are drawn from
    // their positions on the bar (colorData), the numbers from the weights (matrix.data).
    this.colorScale = matrix.scale === 'probability' && COLOR_SCALES.includes(matrix.colorScale)
      ? matrix.colorScale : 'linear';
    this.logFloor = logFloor((matrix.shape ?? [matrix.rows, matrix.cols])[1]);
    this.colorData = colorPositions(matrix, this.colorScale, this.logFloor);
    if (this.focus && (this.focus.row >= matrix.rows || this.focus.col >= matrix.cols)) this.focus = null;
    this.caption.textContent = matrix.title;
    const [rows, cols] = matrix.shape ?? [matrix.rows, matrix.cols];
    this.canvas.setAttribute('aria-label',
      `${matrix.title}: ${rows} ${matrix.rowAxis} rows by ${cols} ${matrix.colAxis} columns` +
      `${matrix.shape ? `, drawn max-pooled to ${matrix.rows} × ${matrix.cols}` : ''}` +
      `${this.colorScale === 'linear' ? '' : `, coloured by ${scaleDescription(this.colorScale, this.logFloor)}`}` +
      '. Use the arrow keys to read cells.');
    this.#layout();
    this.draw();
    if (this.zoomLabel) {
      this.zoomLabel.textContent = `${this.cell} px per cell`;
      this.toolbar.hidden = this.zoom === 1 && this.cell >= this.options.maxCell; // only where cells could be larger
    }
    if (this.options.legend) this.#drawLegend();
    // The screen-reader table is built when the browser is idle: a 64×64 table is 4 096 cells,
    // too many to create inside the keystroke that changed them.
    if (this.options.table) {
      cancelIdle(this.tableJob);
      this.table.replaceChildren(); // never leave the previous numbers behind
      this.figure.dataset.table = 'pending';
      this.tableJob = whenIdle(() => this.#buildTable(), 500, 50);
    }
  }

  /** Builds the screen-reader table now (tests and exports read it). */
  flushTable() {
    if (!this.options.table || !this.matrix) return;
    cancelIdle(this.tableJob);
    this.#buildTable();
  }

  // A label as drawn at `px`: cut to MAX_LABEL characters and MAX_LABEL_PX, with its width (whole
  // px); remembered, since typing changes one label at a time.
  #labelAt(label, px) {
    const font = this.#font(px);
    this.labelCaches ??= new Map(); // font → label → drawn
    let cache = this.labelCaches.get(font);
    if (!cache || cache.size > 8192) this.labelCaches.set(font, cache = new Map());
    let drawn = cache.get(label);
    if (!drawn) {
      this.ctx.font = font;
      let text = shorten(label);
      let width = this.ctx.measureText(text).width;
      while (width > MAX_LABEL_PX && text.length > 2) {
        text = `${text.slice(0, -2)}…`;
        width = this.ctx.measureText(text).width;
      }
      drawn = { text, width: Math.ceil(width) };
      cache.set(label, drawn);
    }
    return drawn;
  }

  #layout() {
    if (this.options.compact && !this.options.labels) {
      this.#compactLayout();
      return;
    }
    const m = this.matrix;
    const available = Math.max(120, (this.fitWidth ?? this.figure.parentElement?.clientWidth ?? 600) - 8);
    const labels = this.options.labels;
    const widest = (list) => list.reduce((most, l) => Math.max(most, this.#labelAt(l, 12).width), 0);
    // The cell size from the room left of the widest row label at 12 px (labels are never larger),
    // and below the column labels within the frame's height (its max-height; none: any height).
    const room = (available - (labels ? widest(m.rowLabels) + AXIS_ROOM + 4 : 18) - 8) / m.cols;
    const frameHeight = parseFloat(getComputedStyle(this.scroller).maxHeight);
    const above = labels ? AXIS_ROOM + LABEL_MARGIN + Math.max(lineHeight(12), widest(m.colLabels)) : AXIS_ROOM;
    const tall = Number.isFinite(frameHeight) ? Math.max(1, Math.floor((frameHeight - above - lineHeight(12)) / m.rows)) : Infinity;
    // Below one pixel per cell (allowed with minCell < 1, for small multiples) the cell size
    // stays fractional and the image is pooled to the pixels there are.
    const fitted = Math.max(this.options.minCell, Math.min(this.options.maxCell, tall, room < 1 ? room : Math.floor(room)));
    // Zoomed cells stay within what a canvas can hold (16 384 px a side).
    const largest = Math.max(fitted, Math.floor(16000 / Math.max(m.rows, m.cols, 1)));
    this.cell = fitted < 1 ? fitted : Math.max(1, Math.min(largest, Math.round(fitted * this.zoom)));
    this.labelPx = Math.max(9, Math.min(12, this.cell - 3)); // label font: smaller in small cells (a label a row from 14 px)
    // Which labels fit without touching (axis-labels.js): every k-th of each axis, upright or turned.
    const rows = labels ? m.rowLabels.map((l) => this.#labelAt(l, this.labelPx)) : [];
    const cols = labels ? m.colLabels.map((l) => this.#labelAt(l, this.labelPx)) : [];
    this.labelTexts = { rowTexts: rows.map((l) => l.text), colTexts: cols.map((l) => l.text),
      rowWidths: rows.map((l) => l.width), colWidths: cols.map((l) => l.width) };
    this.plan = labels ? labelPlan({ ...this.labelTexts, cell: this.cell, px: this.labelPx }) : null;
    this.left = this.plan?.left ?? 18;
    this.top = this.plan?.top ?? AXIS_ROOM;
    // Wide enough for the column axis's name ("dimension →") over a narrow matrix.
    this.width = Math.max(this.left + this.cell * m.cols + Math.max(8, this.plan?.right ?? 0),
      this.left + this.#labelAt(`${m.colAxis} →`, 12).width + 8);
    // Tall enough for the row axis's name ("new token →", drawn down the left side) on a short
    // matrix, and for the last row's label below a small cell.
    this.height = this.top + Math.max(this.cell * m.rows, Math.ceil(this.#labelAt(`${m.rowAxis} →`, 12).width)) +
      Math.max(4, Math.ceil(lineHeight(this.labelPx) / 2));
    this.labelsNote.textContent = this.plan ? hiddenLabelsNote(this.plan, m.rowAxis, m.colAxis) : '';
    this.labelsNote.hidden = !this.labelsNote.textContent;
    this.#sizeCanvas();
  }

  // Small multiples: the cells fill the width given (a fraction of a pixel each if need be, the
  // image then pooled to the pixels there are), no labels, no axis names, no margins.
  #compactLayout() {
    const m = this.matrix;
    const given = this.fitWidth || this.figure.parentElement?.clientWidth || 0;
    const available = given > 0 ? given : 120; // not laid out yet (a hidden tab): drawn again when shown
    this.left = 0;
    this.top = 0;
    this.cell = Math.min(this.options.maxCell, available / Math.max(m.cols, 1));
    this.labelPx = 9;
    this.plan = null; // no labels
    this.width = this.cell * m.cols;
    this.height = this.cell * m.rows;
    this.#sizeCanvas();
  }

  // The canvas at the layout's size (CSS pixels × the device's pixel ratio), and its geometry.
  #sizeCanvas() {
    const m = this.matrix;
    const ratio = window.devicePixelRatio || 1;
    // Resizing a canvas reallocates and resets it even to the same size: only when it changed.
    const size = `${this.width}x${this.height}@${ratio}`;
    if (this.canvasSize !== size) {
      this.canvasSize = size;
      this.canvas.width = Math.round(this.width * ratio);
      this.canvas.height = Math.round(this.height * ratio);
      this.canvas.style.width = `${this.width}px`;
      this.canvas.style.height = `${this.height}px`;
    }
    this.ratio = ratio;
    // Geometry for tests and tools that locate a cell: x = left + (col + 0.5) * cell.
    Object.assign(this.canvas.dataset, { rows: m.rows, cols: m.cols, left: this.left, top: this.top, cell: this.cell,
      colorScale: this.colorScale });
  }

  // The theme's font and colours, read once per render (reading computed style is a layout
  // flush when the page just changed).
  #readStyle() {
    // Shared by every heatmap in the same document or shadow root until the theme changes.
    const root = this.figure.getRootNode();
    const theme = `${document.documentElement.dataset.theme ?? ''}/${matchMedia('(prefers-color-scheme: dark)').matches}`;
    const cached = styleCache.get(root);
    if (cached?.theme === theme) {
      this.style = cached.style;
      return;
    }
    const style = getComputedStyle(this.figure);
    const read = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
    this.style = {
      family: style.fontFamily || 'system-ui, sans-serif',
      '--surface': read('--surface', '#fff'),
      '--ink': read('--ink', '#111'),
      '--muted': read('--muted', '#666'),
      '--masked': read('--masked', '#9a9a9a'),
    };
    styleCache.set(root, { theme, style: this.style });
  }

  #font(px, weight = '') {
    return `${weight} ${px}px ${this.style.family}`.trim();
  }

  #color(name) {
    return this.style[name];
  }

  #buildZoom() {
    const button = (label, name, action) => {
      const b = el('button', 'small-button', label);
      b.type = 'button';
      b.setAttribute('aria-label', name);
      b.title = name;
      b.addEventListener('click', action);
      return b;
    };
    this.zoomLabel = el('span', 'muted small');
    this.toolbar.append(button('−', 'Zoom out', () => this.setZoom(this.zoom / 2)),
      button('Fit', 'Fit the width', () => this.setZoom(1)),
      button('+', 'Zoom in', () => this.setZoom(this.zoom * 2)), this.zoomLabel);
    // Drag to pan when the matrix is larger than its frame.
    let start = null;
    this.canvas.addEventListener('pointerdown', (e) => {
      start = { x: e.clientX, y: e.clientY, left: this.scroller.scrollLeft, top: this.scroller.scrollTop };
      this.dragged = false;
    });
    this.canvas.addEventListener('pointermove', (e) => {
      if (!start || !(e.buttons & 1)) return;
      const dx = e.clientX - start.x;
      const dy = e.clientY - start.y;
      if (Math.abs(dx) + Math.abs(dy) > 4) this.dragged = true;
      if (this.dragged) {
        this.scroller.scrollLeft = start.left - dx;
        this.scroller.scrollTop = start.top - dy;
      }
    });
    window.addEventListener('pointerup', () => {
      start = null;
      setTimeout(() => { this.dragged = false; }, 0);
    });
  }

  /** Zooms about the centre of the visible part (1 = fit the width). */
  setZoom(zoom) {
    if (!this.matrix) return;
    const before = this.cell;
    const centre = { x: this.scroller.scrollLeft + this.scroller.clientWidth / 2, y: this.scroller.scrollTop + this.scroller.clientHeight / 2 };
    this.zoom = Math.max(1, Math.min(64, zoom));
    this.#layout();
    this.draw();
    const ratio = this.cell / before;
    this.scroller.scrollLeft = centre.x * ratio - this.scroller.clientWidth / 2;
    this.scroller.scrollTop = centre.y * ratio - this.scroller.clientHeight / 2;
    this.zoomLabel.textContent = `${this.cell} px per cell`;
    this.options.onZoom?.(this.zoom);
  }

  // The matrix as an image of one pixel per cell (or per block of cells, when cells are smaller
  // than a pixel), through the scale's 256-colour table (matrixPixels).
  #bitmap() {
    const m = this.matrix;
    const step = this.cell < 1 ? Math.ceil(1 / this.cell) : 1;
    const width = Math.max(1, Math.ceil(m.cols / step));
    const height = Math.max(1, Math.ceil(m.rows / step));
    // The image and its canvas are kept while the size stays (typing redraws the same shape).
    if (this.image?.width !== width || this.image.height !== height) {
      this.image = new ImageData(width, height);
      this.imageCanvas = new OffscreenCanvas(width, height);
    }
    matrixPixels({ ...m, data: this.colorData }, this.scale, step, new Uint32Array(this.image.data.buffer));
    this.imageCanvas.getContext('2d').putImageData(this.image, 0, 0);
    return this.imageCanvas;
  }

  // What the drawing holds besides the cells at this layout (the SVG figure writes the same).
  #draws() {
    const { cell, matrix: m } = this;
    const count = m.rows * m.cols;
    return {
      hatch: cell >= 6 && count <= 65536, // masked cells hatched
      marked: cell >= 6, // cells the reader masked, outlined
      values: !m.cellLabels && cell >= this.options.valueCell && count <= 4096, // numbers in cells (those that fit)
      cellLabels: Boolean(m.cellLabels) && cell >= 20 && count <= 4096, // a text per cell
      axisNames: !(this.options.compact && !this.options.labels),
    };
  }

  /** Redraws the matrix (cheap: called on every hover). */
  draw() {
    if (!this.matrix) return;
    const { ctx } = this;
    ctx.setTransform(this.ratio, 0, 0, this.ratio, 0, 0);
    ctx.fillStyle = this.#color('--surface');
    ctx.fillRect(0, 0, this.width, this.height);
    this.#drawCells();
    this.#drawMasked();
    this.#drawMarked();
    this.#drawValues();
    this.#drawLabels();
    this.#drawAxisNames();
    this.#drawHighlights();
  }

  // Cells: one pixel per cell (built once per render), scaled up without smoothing, over the
  // masked colour (masked cells are transparent in the bitmap).
  #drawCells() {
    const { ctx, cell, left, top, matrix: m } = this;
    this.bitmap ??= this.#bitmap();
    ctx.imageSmoothingEnabled = false;
    ctx.fillStyle = this.#color('--masked');
    ctx.fillRect(left, top, cell * m.cols, cell * m.rows);
    ctx.drawImage(this.bitmap, left, top, cell * m.cols, cell * m.rows);
  }

  // Masked cells: hatched grey, so "−∞" never reads as a colour on the scale.
  #drawMasked() {
    const { ctx, cell, left, top, matrix: m } = this;
    if (!this.#draws().hatch) return;
    ctx.strokeStyle = 'rgba(255,255,255,0.55)';
    ctx.lineWidth = 1;
    for (let r = 0; r < m.rows; ++r) {
      for (let c = 0; c < m.cols; ++c) {
        if (Number.isFinite(m.data[r * m.cols + c])) continue;
        const x = left + c * cell;
        const y = top + r * cell;
        ctx.beginPath();
        ctx.moveTo(x, y + cell);
        ctx.lineTo(x + cell, y);
        ctx.stroke();
      }
    }
  }

  // Cells the reader masked by hand: outlined in ink.
  #drawMarked() {
    const { ctx, cell, left, top, matrix: m } = this;
    if (!m.markedCells?.size || !this.#draws().marked) return;
    ctx.strokeStyle = this.#color('--ink');
    ctx.lineWidth = 2;
    for (const index of m.markedCells) {
      const r = Math.floor(index / m.cols);
      const c = index % m.cols;
      if (r < m.rows) ctx.strokeRect(left + c * cell + 2, top + r * cell + 2, cell - 4, cell - 4);
    }
  }

  // Values inside cells when they fit (a cell's label in place of its number, cut to the cell).
  #drawValues() {
    const { ctx, cell, left, top, matrix: m } = this;
    if (m.cellLabels) {
      this.#drawCellLabels();
      return;
    }
    if (!this.#draws().values) return;
    ctx.font = this.#font(cell >= 40 ? 11 : 10);
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    for (let r = 0; r < m.rows; ++r) {
      for (let c = 0; c < m.cols; ++c) {
        const v = m.data[r * m.cols + c];
        if (Number.isNaN(v)) continue; // no value (matrix.missing)
        const number = formatNumber(v, 2);
        if (!valueFits(ctx.measureText(number).width, cell)) continue;
        ctx.fillStyle = cellTextColor(this.scale, this.colorData[r * m.cols + c]);
        ctx.fillText(number, left + (c + 0.5) * cell, top + (r + 0.5) * cell);
      }
    }
  }

  #drawCellLabels() {
    const { ctx, cell, left, top, matrix: m } = this;
    if (!this.#draws().cellLabels) return;
    ctx.font = this.#font(cell >= 40 ? 11 : 10);
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    for (let r = 0; r < m.rows; ++r) {
      for (let c = 0; c < m.cols; ++c) {
        const i = r * m.cols + c;
        let label = m.cellLabels[i] ?? '';
        while (label.length > 1 && ctx.measureText(label).width > cell - 4) label = `${label.slice(0, -2)}…`;
        ctx.fillStyle = cellTextColor(this.scale, this.colorData[i]);
        ctx.fillText(label, left + (c + 0.5) * cell, top + (r + 0.5) * cell);
      }
    }
  }

  // The labels drawn at this layout with `focus`'s row and column (axis-labels.js's boxes).
  #labelBoxes(focus) {
    if (!this.plan) return [];
    return labelBoxes({ ...this.labelTexts, left: this.left, top: this.top, cell: this.cell, width: this.width }, this.plan, focus);
  }

  // Row labels at the left, column labels above (upright, or turned to read upwards): every one
  // that fits, and the focused cell's two on the focus colour. What is drawn is left on the canvas
  // (canvas.drawnLabels: the boxes, and the axis names') for tests and tools.
  #drawLabels() {
    const { ctx } = this;
    const boxes = this.#labelBoxes(this.focus);
    ctx.font = this.#font(this.labelPx);
    ctx.textAlign = 'left';
    ctx.textBaseline = 'middle';
    const ink = this.#color('--ink');
    for (const box of boxes) {
      if (box.focus) {
        ctx.fillStyle = FOCUS_COLOUR;
        ctx.fillRect(box.x - 1, box.y, box.w + 2, box.h);
      }
      ctx.fillStyle = box.focus ? '#000' : ink;
      if (box.turned) {
        ctx.save();
        ctx.translate(box.x + box.w / 2, box.y + box.h);
        ctx.rotate(-Math.PI / 2);
        ctx.fillText(box.text, 0, 0);
        ctx.restore();
      } else {
        ctx.fillText(box.text, box.x, box.y + box.h / 2);
      }
    }
    this.canvas.drawnLabels = boxes;
  }

  // "key →" along the top, "query →" down the left side.
  #drawAxisNames() {
    const { ctx, left, top, matrix: m } = this;
    if (!this.#draws().axisNames) return;
    ctx.fillStyle = this.#color('--muted');
    ctx.font = this.#font(12, 'italic');
    ctx.textAlign = 'left';
    ctx.textBaseline = 'middle';
    const [colName, rowName] = [`${m.colAxis} →`, `${m.rowAxis} →`];
    ctx.fillText(colName, left, 10);
    ctx.save();
    ctx.translate(10, top);
    ctx.rotate(Math.PI / 2);
    ctx.fillText(rowName, 0, 0);
    ctx.restore();
    const line = lineHeight(12);
    this.canvas.drawnLabels?.push(
      { text: colName, x: left, y: 10 - line / 2, w: Math.ceil(ctx.measureText(colName).width), h: line, axis: 'name' },
      { text: rowName, x: 10 - line / 2, y: top, w: line, h: Math.ceil(ctx.measureText(rowName).width), axis: 'name' });
  }

  // The pinned cell (ink) and the focused one (orange).
  #drawHighlights() {
    const { ctx, cell, left, top } = this;
    for (const [target, colour, width] of [[this.pinned, this.#color('--ink'), 2], [this.focus, FOCUS_COLOUR, 3]]) {
      if (!target) continue;
      ctx.strokeStyle = colour;
      ctx.lineWidth = width;
      ctx.strokeRect(left + target.col * cell + 0.5, top + target.row * cell + 0.5, cell - 1, cell - 1);
    }
  }

  #drawLegend() {
    const { scale } = this;
    const shown = `${scale.kind}|${formatNumber(scale.min)}|${formatNumber(scale.max)}|${scale.masked}|` +
      `${this.colorScale}|${this.logFloor}`;
    if (this.legendShown === shown) return; // same labels and gradient as drawn
    this.legendShown = shown;
    const bar = el('div', 'legend-bar');
    bar.style.background = legendGradient(scale);
    if (scale.kind === 'probability') {
      probabilityLegend(this.legend, this.colorScale, this.logFloor);
      return;
    }
    const name = scale.kind === 'diverging'
      ? 'blue < 0 < red'
      : scale.kind === 'probability' ? 'probability' : 'value';
    const items = [el('span', 'legend-min', formatNumber(scale.min)), bar,
      el('span', 'legend-max', formatNumber(scale.max)), el('span', 'legend-name muted', name)];
    if (scale.masked) items.push(el('span', 'legend-masked', 'masked (−∞)'));
    this.legend.replaceChildren(...items);
  }

  /** A cell's number as read out (the table, keyboard focus); a NaN cell: matrix.missing when given. */
  #cellText(v, index) {
    const number = Number.isNaN(v) && this.matrix.missing !== undefined ? this.matrix.missing : formatNumber(v, 4);
    const label = this.matrix.cellLabels?.[index];
    return label === undefined ? number : `${label} · ${number}`;
  }

  #buildTable() {
    this.figure.dataset.table = 'ready';
    const m = this.matrix;
    if (m.rows * m.cols > MAX_TABLE_CELLS) {
      this.table.replaceChildren(el('p', '', `${m.title}: ${m.rows} by ${m.cols} values; the table is left out ` +
        'because it is too large to read aloud. Use the arrow keys on the heatmap, or export CSV.'));
      return;
    }
    const table = el('table');
    table.append(el('caption', '', `${m.title} (rows: ${m.rowAxis}, columns: ${m.colAxis})`));
    const head = el('tr');
    head.append(el('th', '', `${m.rowAxis} \\ ${m.colAxis}`));
    for (const label of m.colLabels) {
      const th = el('th', '', label);
      th.scope = 'col';
      head.append(th);
    }
    const thead = el('thead');
    thead.append(head);
    const body = el('tbody');
    for (let r = 0; r < m.rows; ++r) {
      const tr = el('tr');
      const th = el('th', '', m.rowLabels[r]);
      th.scope = 'row';
      tr.append(th);
      for (let c = 0; c < m.cols; ++c) tr.append(el('td', '', this.#cellText(m.data[r * m.cols + c], r * m.cols + c)));
      body.append(tr);
    }
    table.append(thead, body);
    this.table.replaceChildren(table);
  }

  /** The cell under a pointer event, or null. */
  cellAt(event) {
    const rect = this.canvas.getBoundingClientRect();
    const x = event.clientX - rect.left - this.left;
    const y = event.clientY - rect.top - this.top;
    const col = Math.floor(x / this.cell);
    const row = Math.floor(y / this.cell);
    if (!this.matrix || x < 0 || y < 0 || row >= this.matrix.rows || col >= this.matrix.cols) return null;
    return { row, col };
  }

  /** Page coordinates of a cell's centre (for tests and tooltips). */
  cellCenter(row, col) {
    const rect = this.canvas.getBoundingClientRect();
    return { x: rect.left + this.left + (col + 0.5) * this.cell, y: rect.top + this.top + (row + 0.5) * this.cell };
  }

  #pointer(event, activate) {
    const target = this.cellAt(event);
    if (!target) return;
    const moved = !this.focus || this.focus.row !== target.row || this.focus.col !== target.col;
    this.focus = target;
    // The ring and the cell's labels drawn again: at once, or for a very large matrix once a frame
    // (its cells are one scaled image, but a mouse moves more often than frames are drawn).
    if (activate || (moved && this.matrix.rows * this.matrix.cols <= 65536)) this.draw();
    else if (moved && !this.drawQueued) {
      this.drawQueued = true;
      requestAnimationFrame(() => {
        this.drawQueued = false;
        this.draw();
      });
    }
    if (moved) this.options.onHover?.(target);
    if (activate) this.options.onActivate?.(target);
  }

  #moveTo(row, col) {
    const m = this.matrix;
    this.focus = { row: Math.max(0, Math.min(m.rows - 1, row)), col: Math.max(0, Math.min(m.cols - 1, col)) };
    this.draw();
    const index = this.focus.row * m.cols + this.focus.col;
    this.live.textContent = `${m.rowAxis} ${m.rowLabels[this.focus.row]} (row ${this.focus.row + 1}), ` +
      `${m.colAxis} ${m.colLabels[this.focus.col]} (column ${this.focus.col + 1}): ${this.#cellText(m.data[index], index)}`;
    this.options.onHover?.(this.focus);
  }

  #key(event) {
    if (!this.matrix) return;
    const f = this.focus ?? { row: 0, col: 0 };
    const moves = {
      ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1],
      PageUp: [-8, 0], PageDown: [8, 0],
    };
    if (moves[event.key]) {
      this.#moveTo(f.row + moves[event.key][0], f.col + moves[event.key][1]);
    } else if (event.key === 'Home') {
      this.#moveTo(f.row, 0);
    } else if (event.key === 'End') {
      this.#moveTo(f.row, this.matrix.cols - 1);
    } else if (this.options.zoomable && (event.key === '+' || event.key === '=')) {
      this.setZoom(this.zoom * 2);
    } else if (this.options.zoomable && event.key === '-') {
      this.setZoom(this.zoom / 2);
    } else if (event.key === 'Enter' || event.key === ' ') {
      this.options.onActivate?.(f);
    } else {
      return;
    }
    event.preventDefault();
    event.stopPropagation();
  }

  /**
   * The figure as an SVG document (svg-figure.js): the cells, labels and axis names where this
   * canvas draws them, with the title, the colour bar and `provenance` (a JSON object) in its <metadata>.
   */
  toSvg(provenance = {}) {
    const { matrix: m } = this;
    if (!m) return '';
    const measure = (text, px, weight = '') => {
      this.ctx.font = this.#font(px, weight);
      return this.ctx.measureText(text).width;
    };
    return heatmapSvg({
      matrix: m, positions: this.colorData, scale: this.scale, colorScale: this.colorScale, logFloor: this.logFloor,
      layout: { left: this.left, top: this.top, cell: this.cell, width: this.width, height: this.height, labelPx: this.labelPx,
        labels: this.#labelBoxes(null), ...this.#draws() },
      style: this.style, measure, provenance: { title: m.title, ...provenance },
    });
  }
}
