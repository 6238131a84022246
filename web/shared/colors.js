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

// 256 colours of a palette, evenly from its first to its last stop, as RGBA pixels
// (little-endian: 0xAABBGGRR) for drawing images. A scale maps [min, max] onto the whole table.
function pixelTable(stops) {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; ++i) {
    const [r, g, b] = sample(stops, i / 255);
    table[i] = (255 << 24 | b << 16 | g << 8 | r) >>> 0;
  }
  return table;
}
const VIRIDIS_TABLE = pixelTable(VIRIDIS_RGB);
const BLUE_RED_TABLE = pixelTable(BLUE_RED_RGB);

/**
 * A colour scale for one matrix. kind 'sequential' maps [min, max] (probabilities: [0, 1]);
 * 'diverging' maps [-m, m] with m = max |value|, white at 0. `table` holds 256 of its colours
 * as RGBA pixels from min to max (shared: never modify it); `masked` says whether any value is −∞.
 */
export function makeScale(kind, data) {
  if (kind === 'probability') { // fixed [0, 1]: no pass over the data (weights are never −∞)
    const rgb = (v) => sample(VIRIDIS_RGB, v);
    return { kind, min: 0, max: 1, rgb, table: VIRIDIS_TABLE, masked: false };
  }
  let lo = Infinity;
  let hi = -Infinity;
  let masked = false;
  for (let i = 0; i < data.length; ++i) { // an indexed loop: 4 M cells at 2 048 tokens
    const v = data[i];
    if (v === -Infinity) masked = true;
    else if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (lo === Infinity) { lo = 0; hi = 1; }
  if (kind === 'sequential') {
    const span = hi - lo || 1;
    const rgb = (v) => sample(VIRIDIS_RGB, (v - lo) / span);
    return { kind, min: lo, max: hi, rgb, table: VIRIDIS_TABLE, masked };
  }
  const m = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
  const rgb = (v) => sample(BLUE_RED_RGB, (v + m) / (2 * m));
  return { kind: 'diverging', min: -m, max: m, rgb, table: BLUE_RED_TABLE, masked };
}

/**
 * A matrix {data, rows, cols} shrunk by `step`: each cell of the result is the largest value of
 * a step × step block (partial blocks at the last row and column), so a peak of attention never
 * disappears when the matrix is drawn smaller than one pixel per cell. −∞ stays −∞ only where a
 * whole block is masked. Plain indexed loops over typed arrays: 4 M cells per head at 2 048 tokens.
 */
export function maxPool({ data, rows, cols }, step) {
  const width = Math.ceil(cols / step);
  const height = Math.ceil(rows / step);
  const peak = new Float32Array(width * height).fill(-Infinity);
  for (let r = 0; r < rows; ++r) {
    const out = Math.floor(r / step) * width;
    const base = r * cols;
    for (let b = 0, c = 0; b < width; ++b) {
      const end = Math.min(c + step, cols);
      let best = peak[out + b];
      for (; c < end; ++c) {
        const v = data[base + c];
        if (v > best) best = v;
      }
      peak[out + b] = best;
    }
  }
  return { data: peak, rows: height, cols: width };
}

/**
 * A matrix {data, rows, cols} as RGBA pixels through scale.table, one pixel per step × step
 * block of cells (maxPool). −∞ (masked) pixels stay transparent (0). `pixels` holds
 * ceil(rows / step) · ceil(cols / step) values and is overwritten.
 */
export function matrixPixels(matrix, scale, step, pixels) {
  const { data, rows, cols } = step === 1 ? matrix : maxPool(matrix, step);
  const values = data.length === rows * cols ? data : data.subarray(0, rows * cols);
  for (let i = 0; i < values.length; ++i) pixels[i] = cellPixel(scale, values[i]);
  return pixels;
}

/**
 * The colour of one cell of value (colour position) `v` as an RGBA pixel of scale.table
 * (0xAABBGGRR), or 0 (transparent: drawn as masked) for −∞ and NaN. The one place a cell's colour
 * is chosen: the canvas (matrixPixels) and the SVG figure (cellColor) both call it.
 */
export function cellPixel({ table, min, max }, v) {
  if (!(v > -Infinity)) return 0; // −∞ (and NaN)
  const k = ((v - min) * (255 / (max - min || 1)) + 0.5) | 0; // Math.round, once clamped to [0, 255]
  return table[k < 0 ? 0 : k > 255 ? 255 : k];
}

/** cellPixel as a CSS hex colour ("#rrggbb"), or null for a masked (transparent) cell. */
export function cellColor(scale, v) {
  const pixel = cellPixel(scale, v);
  if (pixel === 0) return null;
  const hex = (shift) => ((pixel >>> shift) & 255).toString(16).padStart(2, '0');
  return `#${hex(0)}${hex(8)}${hex(16)}`;
}

/** The colour of a number drawn inside a cell of colour position `v`: dark ink on light cells, white elsewhere. */
export const cellTextColor = (scale, v) => (Number.isFinite(v) && !cssOf(scale.rgb(v)).dark ? '#111' : '#fff');

/** CSS colour and whether text on it should be light. */
export function cssOf(rgb) {
  return { css: `rgb(${rgb[0]},${rgb[1]},${rgb[2]})`, dark: rgb[0] * 0.299 + rgb[1] * 0.587 + rgb[2] * 0.114 < 140 };
}

/** Okabe–Ito: distinguishable line colours for heads (colour-blind safe). */
export const HEAD_COLORS = ['#0072b2', '#e69f00', '#009e73', '#cc79a7', '#56b4e9', '#d55e00',
  '#f0e442', '#000000'];

/**
 * The legend bar's colours: `count` + 1 stops { at (0…1 along the bar), css } from the scale's min
 * to its max. The page's CSS gradient and the SVG figure's <linearGradient> are both built from them.
 */
export function legendStops(scale, count = 10) {
  return Array.from({ length: count + 1 }, (_, i) => ({
    at: i / count,
    css: cssOf(scale.rgb(scale.min + ((scale.max - scale.min) * i) / count)).css,
  }));
}

/** A CSS linear-gradient for the scale's legend bar. */
export function legendGradient(scale) {
  const stops = legendStops(scale).map(({ at, css }) => `${css} ${Math.round(at * 100)}%`);
  return `linear-gradient(to right, ${stops.join(', ')})`;
}
