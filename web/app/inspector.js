// The cell inspector: shows the core's explanation of one cell (layer.explain): the equation
// with its indices, every term of the dot product or weighted sum, and the other quantities.
import { formatPrecise } from './format.js';

const MAX_TERMS = 64;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * @param {HTMLElement} host
 * @param {object} explanation  from layer.explain({ step, head, row, col })
 * @param {{rowLabel: string, colLabel: string, rowAxis: string, colAxis: string, pinned: boolean}} where
 * @param {(latex: string, el: HTMLElement) => void} typeset
 */
export function renderExplanation(host, explanation, where, typeset) {
  const e = explanation;
  const title = el('p', 'inspector-where');
  const head = e.head >= 0 ? ` · head ${e.head + 1}` : '';
  // Indices count from 0, as in the equation below.
  const index = (axis, fallback) => ({ query: 'i', key: 'j', token: 'i', dimension: 'c' }[axis] ?? fallback);
  title.textContent = `${e.step}: ${where.rowAxis} “${where.rowLabel}” (${index(where.rowAxis, 'row')} = ${e.row}), ` +
    `${where.colAxis} “${where.colLabel}” (${index(where.colAxis, 'col')} = ${e.col})${head}${where.pinned ? ' · pinned' : ''}`;
  const value = el('p', 'inspector-value');
  value.append('value = ');
  const number = el('strong', '', formatPrecise(e.value));
  number.dataset.testid = 'cell-value';
  number.dataset.value = String(e.value);
  value.append(number);
  const parts = [title, value];
  if (e.equation) {
    const eq = el('div', 'inspector-equation');
    typeset(e.equation, eq);
    parts.push(eq);
  }
  if (e.summary) parts.push(el('p', 'inspector-summary', e.summary));
  if (e.terms?.length) {
    const table = el('table', 'terms');
    const caption = el('caption', '', `${e.terms.length} terms` +
      (e.terms.length > MAX_TERMS ? ` (the ${MAX_TERMS} largest by |product| shown)` : ''));
    const header = el('tr');
    for (const label of ['t', e.leftLabel || 'left', e.rightLabel || 'right', 'product']) header.append(el('th', '', label));
    const body = el('tbody');
    let shown = e.terms;
    if (shown.length > MAX_TERMS) {
      shown = [...shown].sort((a, b) => Math.abs(b.product) - Math.abs(a.product)).slice(0, MAX_TERMS)
        .sort((a, b) => a.index - b.index);
    }
    for (const term of shown) {
      const tr = el('tr');
      for (const v of [term.index, formatPrecise(term.left), formatPrecise(term.right), formatPrecise(term.product)]) {
        tr.append(el('td', '', String(v)));
      }
      body.append(tr);
    }
    const thead = el('thead');
    thead.append(header);
    table.append(caption, thead, body);
    const scroller = el('div', 'terms-scroll');
    scroller.append(table);
    parts.push(scroller);
  }
  if (e.quantities?.length) {
    const list = el('dl', 'quantities');
    for (const q of e.quantities) {
      const dt = el('dt');
      if (q.latex) typeset(q.latex, dt, false);
      else dt.textContent = q.name;
      dt.title = q.name;
      const dd = el('dd', '', `${q.name}: ${formatPrecise(q.value)}`);
      list.append(dt, dd);
    }
    parts.push(list);
  }
  host.replaceChildren(...parts);
}
