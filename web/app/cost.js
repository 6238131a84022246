// The cost panel: how big the attention matrices are for this n (the seeds' O(n²) point) and
// how long the last compute took.
import { formatBytes, formatCount } from './format.js';

function row(label, value, note = '') {
  const tr = document.createElement('tr');
  const th = document.createElement('th');
  th.scope = 'row';
  th.textContent = label;
  const td = document.createElement('td');
  td.textContent = value;
  const tn = document.createElement('td');
  tn.className = 'muted small';
  tn.textContent = note;
  tr.append(th, td, tn);
  return tr;
}

export function renderCost(host, result, mode) {
  const { n, kvN } = result;
  const { heads, headDim, dModel } = result.config;
  const perHead = n * kvN;
  const all = perHead * heads;
  const inner = heads * headDim;
  const flops = 2 * n * dModel * inner + 2 * 2 * kvN * dModel * inner + 2 * 2 * all * headDim +
    (result.config.outProj ? 2 * n * inner * dModel : 0);
  const table = document.createElement('table');
  table.className = 'cost-table';
  table.append(
    row('tokens', `n = ${n}${result.cross ? `, source kvN = ${kvN}` : ''}`),
    row('one attention matrix', `${formatCount(perHead)} entries · ${formatBytes(perHead * 4)}`, `n × kvN float32`),
    row(heads === 1 ? 'the one head' : `all ${heads} heads`, `${formatCount(all)} entries · ${formatBytes(all * 4)}`,
      `doubling n makes this ${result.cross ? '2×' : '4×'} larger`),
    row('at 1024 tokens', `${formatBytes(1024 * 1024 * heads * 4)}`, 'per layer, weights only'),
    row('arithmetic', `${formatCount(Math.round(flops))} flops`, 'projections + QKᵀ + A·V (+ W_O)'),
    row('last compute', `${result.computeMs.toFixed(2)} ms`, `core forward with the shown head's trace, in the ${mode}`),
    row('whole update', `${result.totalMs.toFixed(2)} ms`, 'tokenize, embed, forward, copy out'),
  );
  host.replaceChildren(table);
}
