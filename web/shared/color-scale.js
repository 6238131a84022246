// How attention weights in [0, 1] become positions on the colour bar (0 = its first colour, 1 =
// its last): linear (the weight itself), log (log10 of the weight between a floor and 1) or per-row
// max (each weight over the largest weight of its row). Pure functions, no DOM: the heatmaps, the
// small multiples and the <attention-lens> element colour with them. Only colours change: every
// number shown stays the true weight.

/** The colour scales a reader can pick (URL key `colorScale`, element attribute `color-scale`). */
export const COLOR_SCALES = ['linear', 'log', 'row'];

/** Words for a colour scale in a menu. */
export const COLOR_SCALE_LABELS = { linear: 'linear', log: 'log', row: 'per-row max' };

/**
 * The smallest weight the log scale tells apart from 0, for rows of `keys` keys: a power of ten,
 * at most 1e-3 and at most 1 / (10 · keys) (a tenth of a uniform row's weight), so that a row
 * spread evenly over every key still sits well above the bottom colour. 6 keys: 1e-3;
 * 300 keys: 1e-4; 2 048 keys: 1e-5.
 */
export function logFloor(keys) {
  const bound = 1 / (10 * Math.max(1, Number.isFinite(keys) ? keys : 1));
  const exponent = Math.min(-3, Math.floor(Math.log10(bound) + 1e-9));
  return Number(`1e${exponent}`); // exact decimal powers of ten (10 ** -5 is not 1e-5 in binary)
}

/**
 * A weight's position on the log scale: (log10 w − log10 floor) / (−log10 floor), clamped to
 * [0, 1] (w ≤ floor, 0 included, gives 0; w ≥ 1 gives 1). −∞ and NaN are returned unchanged
 * (drawn as masked, never as a colour).
 */
export function logPosition(w, floor) {
  if (!(w > -Infinity)) return w; // −∞, NaN
  if (w <= floor) return 0;
  if (w >= 1) return 1;
  const top = -Math.log10(floor);
  return (Math.log10(w) + top) / top;
}

/**
 * Per-row max: each value of a [rows, cols] matrix over the largest finite value of its row, so
 * every row's peak gets the top colour. A row whose largest value is 0 or less (no visible key)
 * stays 0; −∞ and NaN are kept. Writes into `out` (a new Float32Array by default).
 */
export function rowMaxPositions(data, rows, cols, out = new Float32Array(rows * cols)) {
  for (let r = 0; r < rows; ++r) {
    const base = r * cols;
    let peak = 0;
    for (let c = 0; c < cols; ++c) {
      const v = data[base + c];
      if (v > peak && v < Infinity) peak = v;
    }
    const scale = peak > 0 ? 1 / peak : 0;
    for (let c = 0; c < cols; ++c) {
      const v = data[base + c];
      out[base + c] = v > -Infinity ? Math.min(1, Math.max(0, v * scale)) : v;
    }
  }
  return out;
}

/**
 * The colour positions of a weights matrix {data, rows, cols} under a colour scale: `data` itself
 * for linear (weights are already in [0, 1]), else a new Float32Array (logPosition with
 * `floor`, or rowMaxPositions). Max-pooled previews are mapped as given (each pooled row is the
 * block's row-wise maximum).
 */
export function colorPositions({ data, rows, cols }, colorScale, floor) {
  const count = rows * cols;
  if (colorScale === 'row') return rowMaxPositions(data, rows, cols);
  if (colorScale !== 'log') return data;
  const out = new Float32Array(count);
  for (let i = 0; i < count; ++i) out[i] = logPosition(data[i], floor);
  return out;
}

/**
 * The legend's ticks for a colour scale: [{ at, label }] with `at` the position on the bar.
 * Log: one tick per decade from the floor to 1 (0.001, 0.01, 0.1, 1); per-row: 0, half and the
 * row's max; linear: 0, 0.5, 1.
 */
export function scaleTicks(colorScale, floor) {
  if (colorScale === 'log') {
    const decades = Math.round(-Math.log10(floor));
    return Array.from({ length: decades + 1 }, (_, i) => {
      const exponent = i - decades;
      return { at: i / decades, label: exponent === 0 ? '1' : Number(`1e${exponent}`).toFixed(-exponent) };
    });
  }
  if (colorScale === 'row') return [{ at: 0, label: '0' }, { at: 0.5, label: '½ max' }, { at: 1, label: 'row max' }];
  return [{ at: 0, label: '0' }, { at: 0.5, label: '0.5' }, { at: 1, label: '1' }];
}

/** What the colour bar means under a colour scale, one sentence for the legend. */
export function scaleDescription(colorScale, floor) {
  if (colorScale === 'log') {
    return `weight, log scale (${scaleTicks('log', floor)[0].label} and below share the darkest colour)`;
  }
  if (colorScale === 'row') return 'weight ÷ the largest weight of its row';
  return 'weight (probability)';
}
