// Colour scales for heatmaps: sequential viridis for probabilities and diverging blue–red for
// signed values. Both are colour-blind safe (viridis; ColorBrewer RdBu).

const VIRIDIS = ['#440154', '#472d7b', '#3b528b', '#2c728e', '#21918c', '#28ae80', '#5ec962',
  '#addc30', '#fde725'];
// Blue for negative, white at zero, red for positive.
const BLUE_RED = ['#053061', '#2166ac', '#4393c3', '#92c5de', '#d1e5f0', '#f7f7f7', '#fddbc7',
  '#f4a582', '#d6604d', '#b2182b', '#67001f'];

const toRgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
const VIRIDIS_RGB = VIRIDIS.map(toRgb);
const BLUE_RED_RGB = BLUE_RED.map(toRgb);

function sample(stops, t) {
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  const f = x - i;
  return stops[i].map((c, k) => Math.round(c + (stops[i + 1][k] - c) * f));
}

/**
 * A colour scale for one matrix. kind 'sequential' maps [min, max] (probabilities: [0, 1]);
 * 'diverging' maps [-m, m] with m = max |value|, white at 0.
 */
export function makeScale(kind, data) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of data) {
    if (!Number.isFinite(v)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (lo === Infinity) { lo = 0; hi = 1; }
  if (kind === 'probability') {
    return { kind, min: 0, max: 1, rgb: (v) => sample(VIRIDIS_RGB, v) };
  }
  if (kind === 'sequential') {
    const span = hi - lo || 1;
    return { kind, min: lo, max: hi, rgb: (v) => sample(VIRIDIS_RGB, (v - lo) / span) };
  }
  const m = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
  return { kind: 'diverging', min: -m, max: m, rgb: (v) => sample(BLUE_RED_RGB, (v + m) / (2 * m)) };
}

/** CSS colour and whether text on it should be light. */
export function cssOf(rgb) {
  return { css: `rgb(${rgb[0]},${rgb[1]},${rgb[2]})`, dark: rgb[0] * 0.299 + rgb[1] * 0.587 + rgb[2] * 0.114 < 140 };
}

/** Okabe–Ito: distinguishable line colours for heads (colour-blind safe). */
export const HEAD_COLORS = ['#0072b2', '#e69f00', '#009e73', '#cc79a7', '#56b4e9', '#d55e00',
  '#f0e442', '#000000'];

/** A CSS linear-gradient for the scale's legend bar. */
export function legendGradient(scale) {
  const stops = [];
  for (let i = 0; i <= 10; ++i) {
    const v = scale.min + ((scale.max - scale.min) * i) / 10;
    stops.push(`${cssOf(scale.rgb(v)).css} ${i * 10}%`);
  }
  return `linear-gradient(to right, ${stops.join(', ')})`;
}
