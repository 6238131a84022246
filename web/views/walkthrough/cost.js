// The cost panel: how big the attention matrices are for this n (the seeds' O(n²) point) and
// how long the last compute took.
import { FRAME_ENTRIES, FRAME_FLOPS, FRAME_MAX_D_MODEL, forwardFlops } from '../../shared/engine.js';
import { formatBytes, formatCount } from '../../shared/format.js';

/** Where the result was computed, as a phrase ('on the main thread' | 'in the worker'). */
export const placeOf = (result) => (result.computedIn === 'worker' ? 'in the worker' : 'on the main thread');

// One row's cells [label, value, note] as text; the table keeps its rows between renders and
// changes only the text that changed (typing redraws this panel on every keystroke).
function setRows(table, rows) {
  while (table.rows.length > rows.length) table.deleteRow(-1);
  rows.forEach((cells, r) => {
    const tr = table.rows[r] ?? table.insertRow();
    if (!tr.cells.length) {
      const th = document.createElement('th');
      th.scope = 'row';
      const note = document.createElement('td');
      note.className = 'muted small';
      tr.append(th, document.createElement('td'), note);
    }
    cells.forEach((text, c) => {
      if (tr.cells[c].textContent !== text) tr.cells[c].textContent = text;
    });
  });
}

export function renderCost(host, result) {
  const { n, kvN } = result;
  const { heads, headDim, dModel, outProj } = result.config;
  const perHead = n * kvN;
  const all = perHead * heads;
  const flops = forwardFlops({ n, kvN, dModel, heads, headDim, outProj });
  let table = host.querySelector(':scope > table.cost-table');
  if (!table) {
    table = document.createElement('table');
    table.className = 'cost-table';
    host.replaceChildren(table);
  }
  setRows(table, [
    ['tokens', `n = ${n}${result.cross ? `, source kvN = ${kvN}` : ''}`, ''],
    ['one attention matrix', `${formatCount(perHead)} entries · ${formatBytes(perHead * 4)}`, `n × kvN float32`],
    [heads === 1 ? 'the one head' : `all ${heads} heads`, `${formatCount(all)} entries · ${formatBytes(all * 4)}`,
      `doubling n makes this ${result.cross ? '2×' : '4×'} larger`],
    ['at 1024 tokens', `${formatBytes(1024 * 1024 * heads * 4)}`, 'per layer, weights only'],
    ['arithmetic', `${formatCount(Math.round(flops))} flops`, 'projections + QKᵀ + A·V (+ W_O)'],
    ['last compute', `${result.computeMs.toFixed(2)} ms`, `core forward with the shown head's trace, ${placeOf(result)}`],
    ['where', placeOf(result), result.computedIn === 'worker'
      ? `over ${formatCount(FRAME_FLOPS)} flops or ${formatCount(FRAME_ENTRIES)} attention entries, or d_model over ${FRAME_MAX_D_MODEL}: ` +
        'off the main thread, so typing never waits'
      : `up to ${formatCount(FRAME_FLOPS)} flops and ${formatCount(FRAME_ENTRIES)} attention entries: computed and drawn ` +
        'in the frame of the keystroke'],
    ['whole update', `${result.totalMs.toFixed(2)} ms`, 'tokenize, embed, forward, copy out'],
  ]);
}
