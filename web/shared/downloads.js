// Files the page hands the reader: a Blob downloaded under a name, and CSV written so that a
// spreadsheet never runs a cell as a formula (labels come from user text). Shared by the
// walkthrough's exports and the Your model view's.
import { el } from './dom.js';

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
