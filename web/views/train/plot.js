// A line plot on a canvas: series of (step, value) points against steps, with axes, ticks,
// labels, a legend and an optional log-scaled y axis. Used for the loss / accuracy plot and the
// heads' score curves. It draws the numbers it is given, nothing else; the same drawing goes into
// an SVG figure through svg-figure.js's SvgContext (toSvg).
import { el } from '../../shared/dom.js';
import { plotSvg, SvgContext } from '../../shared/svg-figure.js';

const niceStep = (span, count) => {
  const raw = span / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
};

const tickText = (v) => (Math.abs(v) >= 1e5 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(0)
  : Math.abs(v) >= 1000 ? `${Math.round(v / 100) / 10}k` : Number(v.toPrecision(3)).toString());

/** The theme's colours and font, read from the canvas's computed style. */
function themeColors(canvas) {
  const style = getComputedStyle(canvas);
  return {
    ink: style.getPropertyValue('--ink').trim() || '#222',
    muted: style.getPropertyValue('--muted').trim() || '#666',
    line: style.getPropertyValue('--line').trim() || '#ddd',
    font: style.fontFamily || 'sans-serif',
  };
}

/**
 * Where things go: the padding around the plotting area (w × h), the steps' range and the left
 * axis's (fitted to the left series, log-scaled to whole decades), and the maps from a step and
 * a value to pixels (x, y, and yRight for the right axis's [0, 1]).
 */
function plotFrame(series, o, { log, cssWidth }) {
  const left = series.filter((s) => s.axis !== 'right');
  const right = series.filter((s) => s.axis === 'right');
  const pad = { left: o.compact ? 26 : 48, right: right.length ? 40 : 10, top: 6, bottom: o.compact ? 14 : 30 };
  const w = cssWidth - pad.left - pad.right;
  const h = o.height - pad.top - pad.bottom;
  const all = series.flatMap((s) => s.points);
  const xMax = Math.max(1, ...all.map((p) => p[0]));
  const x = (v) => pad.left + (v / xMax) * w;
  const [y0, y1] = yRange(left, o.yRange, log);
  const t = (v) => (log ? (Math.log10(v) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0)) : (v - y0) / (y1 - y0));
  const y = (v) => pad.top + h - t(v) * h;
  const yRight = (v) => pad.top + h - v * h;
  return { pad, w, h, x, y, yRight, y0, y1, xMax, log, right };
}

/** The left axis's range: `fixed`, or the values' (from 0 on a linear axis, whole decades on a log one). */
function yRange(left, fixed, log) {
  const values = left.flatMap((s) => s.points.map((p) => p[1])).filter((v) => Number.isFinite(v) && (!log || v > 0));
  let [y0, y1] = fixed ?? [Math.min(...values), Math.max(...values)];
  if (!values.length && !fixed) [y0, y1] = log ? [0.1, 10] : [0, 1];
  if (log) {
    y0 = 10 ** Math.floor(Math.log10(y0));
    y1 = 10 ** Math.ceil(Math.log10(y1));
    if (y1 <= y0) y1 = y0 * 10;
  } else if (!fixed) {
    y0 = Math.min(0, y0);
    if (y1 <= y0) y1 = y0 + 1;
  }
  return [y0, y1];
}

/** The left axis's ticks: one per decade (or per k decades over a wide range: a diverging loss), else nice steps. */
function yTicks(y0, y1, log, compact) {
  if (log) {
    const decades = Math.round(Math.log10(y1 / y0));
    const every = Math.ceil(decades / (compact ? 2 : 5));
    return Array.from({ length: Math.floor(decades / every) + 1 }, (_, i) => y0 * 10 ** (i * every));
  }
  const s = niceStep(y1 - y0, compact ? 2 : 5);
  return Array.from({ length: Math.floor((y1 - y0) / s + 1e-9) + 1 }, (_, i) => y0 + i * s);
}

/** A legend's entries (a line swatch and the label, as text) for series { label, color, dash? }. */
export const legendItems = (series) => series.map((s) => {
  const item = el('span', 'plot-key');
  const swatch = el('span', `plot-swatch${s.dash ? ' dashed' : ''}`);
  swatch.style.borderColor = s.color;
  item.append(swatch, el('span', '', s.label));
  return item;
});

export class LinePlot {
  /**
   * @param {HTMLElement} host emptied and filled with the plot
   * @param {{height?: number, yLabel?: string, xLabel?: string, yRange?: [number, number],
   *   legend?: boolean, compact?: boolean, label: string}} options  yRange: a fixed y range
   *   (else fitted); compact: small ticks, no axis names (small multiples)
   */
  constructor(host, options) {
    this.options = { height: 220, xLabel: 'step', legend: true, compact: false, ...options };
    this.canvas = el('canvas', 'plot');
    this.canvas.setAttribute('role', 'img');
    this.canvas.setAttribute('aria-label', options.label);
    this.legendEl = el('div', 'plot-legend');
    host.replaceChildren(...(this.options.legend ? [this.legendEl] : []), this.canvas);
    this.ctx = this.canvas.getContext('2d');
  }

  // The legend as text above the canvas (it wraps on a narrow screen); rebuilt when it changes.
  #legend(series) {
    const key = series.map((s) => `${s.label}|${s.color}|${s.dash ?? ''}`).join(';');
    if (key === this.legendKey) return;
    this.legendKey = key;
    this.legendEl.replaceChildren(...legendItems(series));
  }

  /**
   * @param {{label: string, color: string, points: number[][], dash?: number[], axis?: 'right'}[]} series
   *   points: [[step, value], …]; axis 'right': drawn against a second axis in [0, 1]
   * @param {{log?: boolean, width?: number, marker?: number}} view log: log-scaled left axis;
   *   marker: a step drawn as a vertical line (the timeline's position)
   */
  render(series, { log = false, width, marker } = {}) {
    const cssWidth = this.#resize(width);
    this.last = { series, log, marker, cssWidth };
    this.#paint(this.last);
    if (this.options.legend) this.#legend(series);
  }

  // The plot of { series, log, marker, cssWidth } into this.ctx (the canvas's, or drawTo's).
  #paint({ series, log, marker, cssWidth }) {
    const colors = themeColors(this.canvas);
    const frame = plotFrame(series, this.options, { log, cssWidth });
    this.#axes(frame, colors);
    const ctx = this.ctx;
    ctx.save();
    ctx.beginPath();
    ctx.rect(frame.pad.left, frame.pad.top, frame.w, frame.h);
    ctx.clip();
    for (const s of series) this.#line(s, frame);
    ctx.setLineDash([]);
    if (marker !== undefined) this.#marker(marker, frame, colors.ink);
    ctx.restore();
  }

  /**
   * The last render drawn again into another 2D context (svg-figure.js's SvgContext: the same
   * drawing as SVG), at its origin; returns its { width, height } in CSS px, or null before a render.
   */
  drawTo(ctx) {
    if (!this.last) return null;
    const canvasContext = this.ctx;
    this.ctx = ctx;
    try {
      this.#paint(this.last);
    } finally {
      this.ctx = canvasContext;
    }
    return { width: this.last.cssWidth, height: this.options.height };
  }

  /** The theme's colours and font as an SVG figure needs them (svg-figure.js style). */
  figureStyle() {
    const style = getComputedStyle(this.canvas);
    const colors = themeColors(this.canvas);
    return { family: colors.font, '--surface': style.getPropertyValue('--surface').trim() || '#fff', '--ink': colors.ink,
      '--muted': colors.muted, '--masked': '#9a9a9a' };
  }

  /** The last render as a standalone SVG figure (title: the plot's label; its series' key below it). */
  toSvg(provenance = {}) {
    const style = this.figureStyle();
    const measure = (text, px, weight = '') => {
      this.ctx.font = `${weight} ${px}px ${style.family}`.trim();
      return this.ctx.measureText(text).width;
    };
    const recorder = new SvgContext({ measure });
    const size = this.drawTo(recorder);
    if (!size) return '';
    const title = this.options.title ?? this.options.label;
    return plotSvg({ title, ...size, drawing: recorder.toMarkup(), series: this.last.series, style, measure,
      provenance: { title, ...provenance } });
  }

  // The canvas sized to the CSS width (at the device's pixel ratio) and cleared; returns the width.
  #resize(width) {
    const o = this.options;
    const cssWidth = Math.max(120, width ?? this.canvas.parentElement?.clientWidth ?? 400);
    const ratio = window.devicePixelRatio || 1;
    if (this.canvas.width !== Math.round(cssWidth * ratio) || this.canvas.height !== Math.round(o.height * ratio)) {
      this.canvas.width = Math.round(cssWidth * ratio);
      this.canvas.height = Math.round(o.height * ratio);
      this.canvas.style.width = `${cssWidth}px`;
      this.canvas.style.height = `${o.height}px`;
    }
    this.ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    this.ctx.clearRect(0, 0, cssWidth, o.height);
    return cssWidth;
  }

  // Grid, ticks and axis labels, and the frame around the plotting area.
  #axes({ pad, w, h, x, y, yRight, y0, y1, xMax, log, right }, { muted, line, font }) {
    const o = this.options;
    const ctx = this.ctx;
    ctx.font = `${o.compact ? 9 : 11}px ${font}`;
    ctx.lineWidth = 1;
    ctx.strokeStyle = line;
    ctx.fillStyle = muted;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (const v of yTicks(y0, y1, log, o.compact)) {
      ctx.beginPath();
      ctx.moveTo(pad.left, Math.round(y(v)) + 0.5);
      ctx.lineTo(pad.left + w, Math.round(y(v)) + 0.5);
      ctx.stroke();
      ctx.fillText(tickText(v), pad.left - 4, y(v));
    }
    if (right.length) {
      ctx.textAlign = 'left';
      for (const v of [0, 0.5, 1]) ctx.fillText(String(v), pad.left + w + 4, yRight(v));
    }
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    const xs = Math.max(1, niceStep(xMax, o.compact ? 2 : Math.max(2, Math.floor(w / 80)))); // whole steps
    for (let v = 0; v <= xMax + 1e-9; v += xs) ctx.fillText(tickText(v), x(v), pad.top + h + 3);
    ctx.strokeStyle = muted;
    ctx.strokeRect(pad.left + 0.5, pad.top + 0.5, w, h);
    if (!o.compact) this.#axisNames(pad, w, h, log);
  }

  // The x axis's name below it, the y axis's turned along it.
  #axisNames(pad, w, h, log) {
    const o = this.options;
    const ctx = this.ctx;
    ctx.fillText(o.xLabel, pad.left + w / 2, pad.top + h + 16);
    if (!o.yLabel) return;
    ctx.save();
    ctx.translate(11, pad.top + h / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textBaseline = 'middle';
    ctx.fillText(`${o.yLabel}${log ? ' (log)' : ''}`, 0, 0);
    ctx.restore();
  }

  // One series' line, broken where a value is missing (or not positive on a log axis); one point: a dot.
  #line(s, { x, y, yRight, log }) {
    const ctx = this.ctx;
    const yOf = s.axis === 'right' ? yRight : y;
    ctx.strokeStyle = s.color;
    ctx.lineWidth = this.options.compact ? 1.25 : 1.75;
    ctx.setLineDash(s.dash ?? []);
    ctx.beginPath();
    let open = false;
    for (const [px, py] of s.points) {
      if (!Number.isFinite(py) || (log && s.axis !== 'right' && py <= 0)) {
        open = false;
        continue;
      }
      if (open) ctx.lineTo(x(px), yOf(py));
      else ctx.moveTo(x(px), yOf(py));
      open = true;
    }
    ctx.stroke();
    if (s.points.length === 1 && Number.isFinite(s.points[0][1])) { // one step so far: a dot
      ctx.fillStyle = s.color;
      ctx.beginPath();
      ctx.arc(x(s.points[0][0]), yOf(s.points[0][1]), 3, 0, 2 * Math.PI);
      ctx.fill();
    }
  }

  // The timeline's step as a dashed vertical line.
  #marker(step, { x, pad, h }, ink) {
    const ctx = this.ctx;
    ctx.strokeStyle = ink;
    ctx.setLineDash([3, 3]);
    ctx.beginPath();
    ctx.moveTo(x(step), pad.top);
    ctx.lineTo(x(step), pad.top + h);
    ctx.stroke();
    ctx.setLineDash([]);
  }
}
