// Downloads: a step's data as JSON or CSV, and the walkthrough's row of export buttons (SVG, PNG,
// Copy figure, JSON, CSV: shared/exporting.js's exportButtons, which every view uses).
import { download, exportButtons, matrixCsv } from '../../shared/exporting.js';

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
export const stepCsv = matrixCsv;

/** "weights-head2" style file names. */
export const fileStem = (step) => (step.head >= 0 ? `${step.id}-head${step.head + 1}` : step.id);

/**
 * A walkthrough figure's provenance, all from the result that drew it (the engine's `drawn`: the
 * settings the forward used, a trained model's or a tutorial's own in place of the reader's): the
 * model (a shipped one, a layer opened from another view, a weights file or random weights), the
 * text, the step and head, those settings, and the colour scale it is painted with.
 */
export function walkthroughProvenance(step, { settings, result }) {
  const { text, ...drawn } = result.drawn;
  return {
    view: 'walkthrough',
    model: result.model ? { name: result.model.name, title: result.model.title, layer: result.model.layer + 1 }
      : result.weightsFile ? { weightsFile: result.weightsFile } : drawn.preset ? `the tutorial's weights (${drawn.preset})`
      : `random weights (seed ${drawn.seed})`,
    text,
    step: step.id,
    ...(step.head >= 0 ? { head: step.head + 1 } : {}),
    settings: { ...drawn, colorScale: settings.colorScale },
  };
}

/**
 * One group of SVG / PNG / Copy figure / JSON / CSV buttons per heatmap of the stage. `entries` are
 * the stage's live { step, matrix, map }: a step's id and head stay, its numbers are read at click
 * time; `state()` is the store's state then (the figure's provenance).
 */
export function drawExports(host, entries, state) {
  exportButtons(host, entries.map((entry) => ({
    id: fileStem(entry.step),
    key: entry.step.id,
    label: `${entry.step.id}${entry.step.head >= 0 ? ` (head ${entry.step.head + 1})` : ''}`,
    title: entry.step.title,
    map: entry.map,
    provenance: () => walkthroughProvenance(entry.step, state()),
    json: () => stepJson(entry.step, entry.matrix),
    matrix: () => entry.matrix,
  })));
}
