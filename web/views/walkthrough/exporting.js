// Downloads: a heatmap as PNG, a step's data as JSON or CSV, and the walkthrough's row of
// download buttons. Labels come from user text, so CSV cells that a spreadsheet would run as a
// formula are neutralised.
import { button, el } from '../../shared/dom.js';
import { csvText, download } from '../../shared/downloads.js';

export { download };

/** A step as JSON: masked cells (−∞) are written as null, with a note. */
export function stepJson(step, matrix) {
  const data = [];
  for (let r = 0; r < matrix.rows; ++r) {
    const row = [];
    for (let c = 0; c < matrix.cols; ++c) {
      const v = matrix.data[r * matrix.cols + c];
      row.push(Number.isFinite(v) ? v : null);
    }
    data.push(row);
  }
  return JSON.stringify({
    id: step.id,
    title: step.title,
    equation: step.equation,
    head: step.head,
    shape: step.shape,
    rows: { axis: step.rows, labels: matrix.rowLabels },
    cols: { axis: step.cols, labels: matrix.colLabels },
    note: 'null marks a masked cell (−∞ before the softmax)',
    data,
  }, null, 2);
}

/** A step as CSV: a header row of column labels, then one row per row label. */
export function stepCsv(matrix) {
  const rows = [[`${matrix.rowAxis} \\ ${matrix.colAxis}`, ...matrix.colLabels]];
  for (let r = 0; r < matrix.rows; ++r) {
    const cells = [matrix.rowLabels[r]];
    for (let c = 0; c < matrix.cols; ++c) {
      const v = matrix.data[r * matrix.cols + c];
      cells.push(v === -Infinity ? '-inf' : String(v));
    }
    rows.push(cells);
  }
  return csvText(rows);
}

/** "weights-head2" style file names. */
export const fileStem = (step) => (step.head >= 0 ? `${step.id}-head${step.head + 1}` : step.id);

/**
 * One group of PNG / JSON / CSV buttons per heatmap of the stage. `entries` are the stage's
 * live { step, matrix, map }: a step's id and head stay, its numbers are read at click time.
 */
export function drawExports(host, entries) {
  host.replaceChildren(...entries.map((entry) => {
    const { step, map } = entry;
    const group = el('div', 'export-group');
    group.append(el('span', 'muted small', `${step.id}${step.head >= 0 ? ` (head ${step.head + 1})` : ''}:`));
    const stem = fileStem(step);
    const actions = [
      ['PNG', async () => download(await map.toPngBlob(), `${stem}.png`)],
      ['JSON', () => download(new Blob([stepJson(entry.step, entry.matrix)], { type: 'application/json' }), `${stem}.json`)],
      ['CSV', () => download(new Blob([stepCsv(entry.matrix)], { type: 'text/csv' }), `${stem}.csv`)],
    ];
    for (const [label, action] of actions) {
      const b = button('small-button', label, action);
      b.dataset.export = `${step.id}-${label.toLowerCase()}`;
      b.setAttribute('aria-label', `Download ${step.title} as ${label}`);
      group.append(b);
    }
    return group;
  }));
}
