// Row and column labels of a traced step, from its axis meaning and the tokens.

const dimensions = (count) => Array.from({ length: count }, (_, i) => String(i));

const VISIBLE = { ' ': '␣', '\n': '⏎', '\t': '⇥', '\r': '␍' };

/** A token as shown on a chip or axis: whitespace made visible (character tokenizer). */
export const displayToken = (token) => (token.trim() === '' ? token.replace(/[ \n\t\r]/g, (c) => VISIBLE[c]) || '∅' : token);

const HOW = { lowercase: 'as lowercase', similar: 'the nearest character', replaced: 'not in the alphabet' };

/**
 * "typed “€”, read as “␣” (not in the alphabet)": what a token a shipped model read in place of
 * another character was typed as ({ typed, read, how } of its tokenize with unknown: 'map').
 */
export function typedNote({ typed, read, how }) {
  return `typed “${displayToken(typed)}”, read as “${displayToken(read)}” (${HOW[how] ?? how})`;
}

/** For each label of an axis, typedNote of a token read as another character, else ''; null if none was. */
function typedLabels(axis, count, result) {
  if (!result.mapped?.length || !['query', 'key', 'position'].includes(axis)) return null;
  const notes = Array(count).fill('');
  for (const m of result.mapped) if (m.position < count) notes[m.position] = typedNote(m);
  return notes;
}

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
    rowTyped: typedLabels(step.rows, rows, result),
    colTyped: typedLabels(step.cols, cols, result),
    rowAxis,
    colAxis: step.cols,
    title: step.title,
    scale,
    markedCells,
  };
}
