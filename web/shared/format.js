// Number formatting for cells, tooltips and NumPy-style printouts (the tutorials' print()).

/** A short, readable number: "0.235", "-1.2e-5", "−∞" for a masked score. */
export function formatNumber(value, digits = 3) {
  if (value === -Infinity) return '−∞';
  if (value === Infinity) return '∞';
  if (Number.isNaN(value)) return 'NaN';
  if (value === 0) return '0';
  const magnitude = Math.abs(value);
  if (magnitude >= 1e4 || magnitude < 1e-3) return value.toExponential(Math.max(1, digits - 1));
  return Number(value.toFixed(digits)).toString();
}

/** A value with more digits, for the cell inspector. */
export function formatPrecise(value) {
  if (!Number.isFinite(value)) return formatNumber(value);
  return Number(value.toPrecision(7)).toString();
}

const BYTE_UNITS = ['B', 'kB', 'MB', 'GB', 'TB'];

/**
 * A byte count in decimal units, as the Hugging Face Hub writes sizes, to 3 significant digits:
 * '512 B', '763 kB', '9.6 MB', '1.32 GB'. The page's and the element's one byte formatter.
 */
export function formatBytes(bytes) {
  if (!Number.isFinite(bytes) || bytes < 1000) return `${Number.isFinite(bytes) ? Math.round(bytes) : bytes} B`;
  let u = 0;
  let v = bytes;
  while (u < BYTE_UNITS.length - 1 && Number(v.toPrecision(3)) >= 1000) {
    v /= 1000;
    ++u;
  }
  return `${Number(v.toPrecision(3))} ${BYTE_UNITS[u]}`;
}

/**
 * A probability as a percentage: one decimal ('12.3%'); two significant digits from 0.01% to 0.1%
 * ('0.021%'); '< 0.01%' below that (never 1e-13 written out); two decimals near 100% ('99.95%', and
 * '> 99.99%' for what would round to 100); '0%' and '100%' exactly.
 */
export function formatPercent(p) {
  if (p === 0) return '0%';
  if (p === 1) return '100%';
  if (!Number.isFinite(p)) return String(p);
  if (p < 1e-4) return '< 0.01%';
  if (p < 1e-3) return `${Number((p * 100).toPrecision(2))}%`;
  if (p < 0.9995) return `${(p * 100).toFixed(1)}%`;
  const fine = (p * 100).toFixed(2);
  return fine === '100.00' ? '> 99.99%' : `${fine}%`;
}

/** 1234567 -> "1,234,567". */
export const formatCount = (n) => n.toLocaleString('en-US');

// ---- NumPy's array printing (numpy >= 1.14 defaults: floatmode 'maxprec', linewidth 75) -----

// The digits NumPy prints for one already-rounded value: the shortest repr, at most `precision`
// fractional digits.
function numpyDigits(value, precision) {
  let text = Number(value.toFixed(precision)).toString();
  if (text === '-0') text = '-0';
  if (text.includes('e')) text = value.toFixed(precision).replace(/0+$/, '');
  const [int, frac = ''] = text.split('.');
  return { int, frac };
}

/**
 * str(np.round(a, precision)) for a 1-D or 2-D float array, as NumPy prints it: every
 * element padded to a common width, decimal points aligned, rows wrapped at 75 characters.
 */
export function numpyArrayString(data, shape, precision) {
  const parts = Array.from(data, (v) => numpyDigits(Math.round(v * 10 ** precision) / 10 ** precision, precision));
  const intWidth = Math.max(...parts.map((p) => p.int.length));
  const fracWidth = Math.max(...parts.map((p) => p.frac.length));
  const cells = parts.map((p) => `${p.int.padStart(intWidth)}.${p.frac.padEnd(fracWidth)}`);
  const rows = shape.length === 1 ? 1 : shape[0];
  const cols = shape.length === 1 ? shape[0] : shape[1];
  const lines = [];
  for (let r = 0; r < rows; ++r) {
    const open = shape.length === 1 ? '[' : r === 0 ? '[[' : ' [';
    const indent = ' '.repeat(open.length);
    let line = open;
    let first = true;
    for (let c = 0; c < cols; ++c) {
      const cell = cells[r * cols + c];
      const piece = first ? cell : ` ${cell}`;
      if (!first && line.length + piece.length > 75 - 1) {
        lines.push(line);
        line = indent + cell;
      } else {
        line += piece;
      }
      first = false;
    }
    line += ']';
    if (shape.length === 2 && r === rows - 1) line += ']';
    lines.push(line);
  }
  return lines.join('\n');
}

/** Python's str() of a shape tuple: (4, 8) or (5,). */
export const pythonShape = (shape) => (shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`);
