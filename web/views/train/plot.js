// A line plot on a canvas: series of (step, value) points against steps, with axes, ticks,
// labels, a legend and an optional log-scaled y axis. Used for the loss / accuracy plot and the
// heads' score curves. It draws the numbers it is given, nothing else.
import { el } from '../../shared/dom.js';

const niceStep = (span, count) => {
  const raw = span / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
};

const tickText = (v) => (Math.abs(v) >= 1e5 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(0)
  : Math.abs(v) >= 1000 ? `${Math.round(v / 100) / 10}k` : Number(v.toPrecision(3)).toString());

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
    const o = this.options;
    const cssWidth = Math.max(120, width ?? this.canvas.parentElement?.clientWidth ?? 400);
    const ratio = window.devicePixelRatio || 1;
    if (this.canvas.width !== Math.round(cssWidth * ratio) || this.canvas.height !== Math.round(o.height * ratio)) {
      this.canvas.width = Math.round(cssWidth * ratio);
      this.canvas.height = Math.round(o.height * ratio);
      this.canvas.style.width = `${cssWidth}px`;
      this.canvas.style.height = `${o.height}px`;
    }
    const style = getComputedStyle(this.canvas);
    const ink = style.getPropertyValue('--ink').trim() || '#222';
    const muted = style.getPropertyValue('--muted').trim() || '#666';
    const line = style.getPropertyValue('--line').trim() || '#ddd';
    const font = style.fontFamily || 'sans-serif';
    const ctx = this.ctx;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, cssWidth, o.height);

    const left = series.filter((s) => s.axis !== 'right');
    const right = series.filter((s) => s.axis === 'right');
    const fontPx = o.compact ? 9 : 11;
    const pad = { left: o.compact ? 26 : 48, right: right.length ? 40 : 10, top: 6, bottom: o.compact ? 14 : 30 };
    const w = cssWidth - pad.left - pad.right;
    const h = o.height - pad.top - pad.bottom;
    const all = series.flatMap((s) => s.points);
    const xMax = Math.max(1, ...all.map((p) => p[0]));
    const x = (v) => pad.left + (v / xMax) * w;

    const values = left.flatMap((s) => s.points.map((p) => p[1])).filter((v) => Number.isFinite(v) && (!log || v > 0));
    let [y0, y1] = o.yRange ?? [Math.min(...values), Math.max(...values)];
    if (!values.length && !o.yRange) [y0, y1] = log ? [0.1, 10] : [0, 1];
    if (log) {
      y0 = 10 ** Math.floor(Math.log10(y0));
      y1 = 10 ** Math.ceil(Math.log10(y1));
      if (y1 <= y0) y1 = y0 * 10;
    } else if (!o.yRange) {
      y0 = Math.min(0, y0);
      if (y1 <= y0) y1 = y0 + 1;
    }
    const t = (v) => (log ? (Math.log10(v) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0)) : (v - y0) / (y1 - y0));
    const y = (v) => pad.top + h - t(v) * h;
    const yRight = (v) => pad.top + h - v * h;

    // Grid, ticks and axis labels.
    ctx.font = `${fontPx}px ${font}`;
    ctx.lineWidth = 1;
    ctx.strokeStyle = line;
    ctx.fillStyle = muted;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    const yTicks = log
      ? (() => { // one tick per decade, or per k decades over a wide range (a diverging loss)
        const decades = Math.round(Math.log10(y1 / y0));
        const every = Math.ceil(decades / (o.compact ? 2 : 5));
        return Array.from({ length: Math.floor(decades / every) + 1 }, (_, i) => y0 * 10 ** (i * every));
      })()
      : (() => {
        const s = niceStep(y1 - y0, o.compact ? 2 : 5);
        return Array.from({ length: Math.floor((y1 - y0) / s + 1e-9) + 1 }, (_, i) => y0 + i * s);
      })();
    for (const v of yTicks) {
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
    if (!o.compact) {
      ctx.fillText(o.xLabel, pad.left + w / 2, pad.top + h + 16);
      if (o.yLabel) {
        ctx.save();
        ctx.translate(11, pad.top + h / 2);
        ctx.rotate(-Math.PI / 2);
        ctx.textBaseline = 'middle';
        ctx.fillText(`${o.yLabel}${log ? ' (log)' : ''}`, 0, 0);
        ctx.restore();
      }
    }

    // The series.
    ctx.save();
    ctx.beginPath();
    ctx.rect(pad.left, pad.top, w, h);
    ctx.clip();
    for (const s of series) {
      const yOf = s.axis === 'right' ? yRight : y;
      ctx.strokeStyle = s.color;
      ctx.lineWidth = o.compact ? 1.25 : 1.75;
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
    ctx.setLineDash([]);
    if (marker !== undefined) {
      ctx.strokeStyle = ink;
      ctx.setLineDash([3, 3]);
      ctx.beginPath();
      ctx.moveTo(x(marker), pad.top);
      ctx.lineTo(x(marker), pad.top + h);
      ctx.stroke();
      ctx.setLineDash([]);
    }
    ctx.restore();

    if (o.legend) this.#legend(series);
  }
}
