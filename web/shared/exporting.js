// Downloads every view shares: a heatmap as PNG (heatmap.js's toPngBlob), its matrix as JSON or
// CSV, and a row of PNG / JSON / CSV buttons. Labels come from user text, so CSV cells that a
// spreadsheet would run as a formula are neutralised. Nothing here computes the numbers it writes.
import { button, el } from './dom.js';

/** Downloads `blob` as `filename` (a link clicked, its object URL revoked after). */
export function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = el('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** One CSV cell: a leading =, +, -, @, tab or CR that is not a number neutralised with ', quoted when it holds , " or a line break. */
export function csvCell(text) {
  let value = String(text);
  if (/^[=+\-@\t\r]/.test(value) && !/^-?\d/.test(value) && value !== '-inf') value = `'${value}`;
  return /[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** Rows of cells as CSV text, one line each, ending with a line break. */
export const csvText = (rows) => `${rows.map((cells) => cells.map(csvCell).join(',')).join('\n')}\n`;

/** A matrix as CSV: a header row of column labels, then one row per row label (NaN: an empty cell). */
export function matrixCsv(matrix) {
  const lines = [[`${matrix.rowAxis} \\ ${matrix.colAxis}`, ...matrix.colLabels].map(csvCell).join(',')];
  for (let r = 0; r < matrix.rows; ++r) {
    const cells = [matrix.rowLabels[r]];
    for (let c = 0; c < matrix.cols; ++c) {
      const v = matrix.data[r * matrix.cols + c];
      cells.push(v === -Infinity ? '-inf' : Number.isNaN(v) ? '' : String(v));
    }
    lines.push(cells.map(csvCell).join(','));
  }
  return `${lines.join('\n')}\n`;
}

/** A matrix's rows as arrays (a value that is not finite as null). */
export function matrixRows(matrix) {
  return Array.from({ length: matrix.rows }, (_, r) => Array.from({ length: matrix.cols }, (_, c) => {
    const v = matrix.data[r * matrix.cols + c];
    return Number.isFinite(v) ? v : null;
  }));
}

/**
 * Export buttons into `host`, one group per entry { id (the files' stem and data-export prefix),
 * title, map (a Heatmap), json: () => object (what the JSON file holds), matrix: () => the drawn
 * matrix (the CSV) }: the numbers are read at click time.
 */
export function exportButtons(host, entries) {
  host.replaceChildren(...entries.map((entry) => {
    const group = el('div', 'export-group');
    group.append(el('span', 'muted small', `${entry.label ?? entry.id}:`));
    const actions = [
      ['PNG', async () => download(await entry.map.toPngBlob(), `${entry.id}.png`)],
      ['JSON', () => download(new Blob([JSON.stringify(entry.json(), null, 2)], { type: 'application/json' }), `${entry.id}.json`)],
      ['CSV', () => download(new Blob([matrixCsv(entry.matrix())], { type: 'text/csv' }), `${entry.id}.csv`)],
    ];
    for (const [label, action] of actions) {
      const b = button('small-button', label, action);
      b.dataset.export = `${entry.id}-${label.toLowerCase()}`;
      b.setAttribute('aria-label', `Download ${entry.title} as ${label}`);
      group.append(b);
    }
    return group;
  }));
}
