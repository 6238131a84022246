// The cell inspector: shows the core's explanation of one cell (layer.explain): the equation
// with its indices, every term of the dot product or weighted sum, and the other quantities.
import { el } from '../../shared/dom.js';
import { formatPrecise } from '../../shared/format.js';
import { scrollCue } from '../../shared/scroll-cue.js';
import { fitEquations, typeset } from '../../shared/typeset.js';

const MAX_TERMS = 64;
/**
 * @param {HTMLElement} host
 * @param {object} explanation  from layer.explain({ step, head, row, col })
 * @param {{rowLabel: string, colLabel: string, rowAxis: string, colAxis: string, pinned: boolean,
 *   rowTyped?: string, colTyped?: string}} where  (…Typed: labels.js typedNote of a mapped token)
 */
function renderExplanation(host, explanation, where) {
  const e = explanation;
  const title = el('p', 'inspector-where');
  const head = e.head >= 0 ? ` · head ${e.head + 1}` : '';
  // Indices count from 0, as in the equation below.
  const index = (axis, fallback) => ({ query: 'i', key: 'j', token: 'i', dimension: 'c' }[axis] ?? fallback);
  // A token a shipped model read in place of what was typed says so: query “t” (typed “T”, …).
  const typed = (note) => (note ? `, ${note}` : '');
  title.textContent = `${e.step}: ${where.rowAxis} “${where.rowLabel}” (${index(where.rowAxis, 'row')} = ${e.row}${typed(where.rowTyped)}), ` +
    `${where.colAxis} “${where.colLabel}” (${index(where.colAxis, 'col')} = ${e.col}${typed(where.colTyped)})${head}${where.pinned ? ' · pinned' : ''}`;
  const value = el('p', 'inspector-value');
  value.append('value = ');
  const number = el('strong', '', formatPrecise(e.value));
  number.dataset.testid = 'cell-value';
  number.dataset.value = String(e.value);
  value.append(number);
  const parts = [title, value];
  const fits = []; // after drawing: the equation scaled to its box, the cues of what still scrolls
  if (e.equation) {
    const eq = el('div', 'inspector-equation');
    typeset(e.equation, eq);
    const cue = scrollCue(eq);
    parts.push(cue.frame);
    fits.push(() => {
      fitEquations(eq);
      cue.update();
    });
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
    // It scrolls when the terms are many: focusable (a named region) so a keyboard can scroll it.
    const scroller = el('div', 'terms-scroll');
    scroller.tabIndex = 0;
    scroller.setAttribute('role', 'region');
    scroller.setAttribute('aria-label', `The terms of the sum: ${caption.textContent}`);
    scroller.append(table);
    const cue = scrollCue(scroller);
    parts.push(cue.frame);
    fits.push(cue.update);
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
  for (const fit of fits) fit();
}

/**
 * The inspector of the page's walkthrough: show(step, matrix, cell, pinned) asks the engine to
 * explain the cell and draws the answer, unless another cell was asked for meanwhile.
 */
export function createInspector(engine, host) {
  let latest = 0; // the newest request; older answers are dropped
  return async function show(step, matrix, cell, pinned) {
    if (!cell) return; // leaving a heatmap keeps the last explanation (and a pinned one)
    const ticket = ++latest;
    try {
      const explanation = await engine.explain({ step: step.id, head: step.head, row: cell.row, col: cell.col });
      if (ticket !== latest) return;
      renderExplanation(host, explanation, {
        rowLabel: matrix.rowLabels[cell.row], colLabel: matrix.colLabels[cell.col],
        rowTyped: matrix.rowTyped?.[cell.row], colTyped: matrix.colTyped?.[cell.col],
        rowAxis: matrix.rowAxis, colAxis: matrix.colAxis, pinned,
      });
    } catch (error) {
      if (ticket === latest) host.replaceChildren(el('p', 'error-inline', error.message));
    }
  };
}
