// Row and column labels of a traced step, from its axis meaning and the tokens.

const dimensions = (count) => Array.from({ length: count }, (_, i) => String(i));

const VISIBLE = { ' ': '␣', '\n': '⏎', '\t': '⇥', '\r': '␍' };

/** A token as shown on a chip or axis: whitespace made visible (character tokenizer). */
export const displayToken = (token) => (token.trim() === '' ? token.replace(/[ \n\t\r]/g, (c) => VISIBLE[c]) || '∅' : token);

/** Labels for one axis ("query", "key", "position" or "dimension") of a step. */
export function axisLabels(axis, count, result, stepId) {
  if (axis === 'query') return result.queryTokens.slice(0, count).map(displayToken);
  if (axis === 'key') return result.keyTokens.slice(0, count).map(displayToken);
  if (axis === 'position') {
    const tokens = stepId === 'source' ? result.keyTokens : result.queryTokens;
    return tokens.slice(0, count).map(displayToken);
  }
  return dimensions(count);
}

/** The heatmap description of a traced step. */
export function matrixOf(step, result, scale, markedCells) {
  const [rows, cols] = step.shape;
  const rowAxis = step.rows === 'position' ? 'token' : step.rows;
  return {
    data: step.data,
    rows,
    cols,
    rowLabels: axisLabels(step.rows, rows, result, step.id),
    colLabels: axisLabels(step.cols, cols, result, step.id),
    rowAxis,
    colAxis: step.cols,
    title: step.title,
    scale,
    markedCells,
  };
}
