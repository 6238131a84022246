// The Circuits view's results drawn: the chosen analysis as one shared Heatmap (patching: diverging,
// centred on 0; the logit lens: each cell's top token, coloured by its probability; rollout: the
// layer the slider picks), the metric line, the logit lens's top-k and answer rank of the cell under
// the pointer or keyboard focus, direct attribution's largest parts as bars, and the PNG / JSON /
// CSV exports. Draws the API's numbers as given; text only ever goes in as textContent.
import { $, el } from '../../shared/dom.js';
import { exportButtons, knockedOutFacts } from '../../shared/exporting.js';
import { formatPrecise } from '../../shared/format.js';
import { Heatmap } from '../../shared/heatmap.js';
import { displayToken } from '../../shared/labels.js';
import { attributionParts, lensCell, lensRowLabels, resultJson, resultMatrix } from '../../shared/circuit-matrices.js';
import { percent, signed } from '../../shared/circuit-format.js';

/** What each analysis shows, under its heading. */
export const EXPLAIN = {
  heads: 'Each head\u2019s output (before the output projection, at every position) copied from the clean run into the corrupted ' +
    'run: 1 = that head alone restores the clean logit difference, 0 = it changes nothing, below 0 = it moves the other way. ' +
    'Click a head to see where it looks.',
  residual: 'The residual stream entering each layer at one position copied from the clean run into the corrupted run: where ' +
    '(which position) and when (which layer) the information that separates the answers lives.',
  layers: 'Each attention sublayer\u2019s and MLP\u2019s whole output, at every position, copied from the clean run into the corrupted run.',
  attribution: 'How much each part of the last position\u2019s residual stream adds to logit[a] − logit[b] directly, through the final ' +
    'norm with its scale frozen from this run (clean prompt). The parts sum to the total. Click a head to see where it looks.',
  lens: 'The residual stream entering each layer, read as if it were the last one (final norm, unembedding): the top next token ' +
    'at every position, coloured by its probability. Point at or focus a cell for its top 5 and answer a\u2019s rank.',
  rollout: 'Attention rollout (Abnar & Zuidema 2020): each layer\u2019s mean attention plus the residual identity, multiplied from ' +
    'the first layer up: how much each position draws on each input token after a layer. Clean prompt.',
};

const MAX_BARS = 12;
const LENS_MIN_CELL = 26; // px: room for a token of two or three letters
const VALUE_CELL = 16; // px: a cell this wide holds its number when it fits (a phone's 12 heads)
/** The line under the map before a cell is pointed at: how to read a cell. */
const HINT = { lens: 'Point at, tap or focus a cell for its top 5 tokens.', other: 'Point at, tap or focus a cell to read its number.' };

/** A Circuits figure's provenance: the model, the analysis, the prompts and answers (and the rollout's layer). */
function circuitProvenance(result, { model, source, clean, corrupted, answers, layer }) {
  return { view: 'circuits', analysis: result.kind, model: source ?? model, ...knockedOutFacts(result.ablated), prompts: { clean, corrupted }, answers,
    ...(result.kind === 'rollout' ? { layer: Math.max(0, Math.min(result.layers - 1, layer)) + 1 } : {}) };
}

export class CircuitsDrawing {
  #map;
  #shown = null; // { result, matrix, context }
  #onHead;

  /** @param {{onHead: (layer: number, head: number) => void}} actions a head's cell clicked (patching or attribution map) */
  constructor({ onHead }) {
    this.#onHead = onHead;
    this.#map = new Heatmap($('circuits-map'), { maxCell: 44, minCell: 3, valueCell: VALUE_CELL, zoomable: true,
      onHover: (cell) => this.#detail(cell), onActivate: (cell) => this.#activate(cell) });
  }

  /** What is drawn: { result, context, config } (the view's snapshot), or null. */
  get shown() {
    return this.#shown;
  }

  /** The shown result's matrix (tests and exports), or null. */
  get matrix() {
    return this.#shown?.matrix ?? null;
  }

  /** Nothing drawn (no model, inputs changed): the map, bars and exports emptied. */
  clear(message = '') {
    this.#shown = null;
    $('circuits-map').hidden = true;
    $('circuits-metric').hidden = true;
    $('circuits-bars').hidden = true;
    $('circuits-detail').textContent = message;
    $('circuits-exports').replaceChildren();
    $('circuits-rollout-row').hidden = true;
  }

  /**
   * A result of the session's 'circuit' call, for the model `config` ({ layers, heads }), with
   * `context` { model, clean, corrupted, answers: [{ text, id }], layer (rollout) }.
   */
  draw(result, config, context) {
    const matrix = resultMatrix(result, config, context.layer);
    this.#shown = { result, matrix, context, config };
    $('circuits-map').hidden = false;
    // The logit lens's cells hold their top token: never narrower than a short token (its frame scrolls on a phone).
    this.#map.options.minCell = result.kind === 'lens' ? LENS_MIN_CELL : 3;
    this.#map.render(matrix);
    this.#map.flushTable();
    $('circuits-detail').textContent = HINT[result.kind === 'lens' ? 'lens' : 'other'];
    this.#metric(result);
    this.#bars(result, config);
    const rollout = result.kind === 'rollout';
    $('circuits-rollout-row').hidden = !rollout;
    if (rollout) {
      const slider = $('circuits-rollout-layer');
      slider.max = String(result.layers - 1);
      slider.value = String(Math.min(result.layers - 1, context.layer));
      $('circuits-rollout-value').textContent = String(Number(slider.value) + 1);
      slider.setAttribute('aria-valuetext', `after layer ${Number(slider.value) + 1} of ${result.layers}`);
    }
    exportButtons($('circuits-exports'), [{ id: `circuits-${result.kind}`, label: result.kind, title: matrix.title, map: this.#map,
      provenance: () => circuitProvenance(this.#shown.result, this.#shown.context),
      json: () => resultJson(result, this.#shown.matrix, this.#shown.context), matrix: () => this.#shown.matrix }]);
  }

  /** The rollout's layer (0-based) chosen: the same result drawn at it. */
  setLayer(layer) {
    const shown = this.#shown;
    if (shown?.result.kind !== 'rollout') return;
    this.draw(shown.result, shown.config, { ...shown.context, layer });
  }

  /** The same result again (theme, size). */
  redraw() {
    if (this.#shown) this.#map.render(this.#shown.matrix);
  }

  #metric(result) {
    const line = $('circuits-metric');
    const answers = this.#shown.context.answers.map((a) => (a ? `“${displayToken(a.text)}”` : '(none)'));
    if (['heads', 'residual', 'layers'].includes(result.kind)) {
      line.textContent = `logit[a] − logit[b] (a = ${answers[0]}, b = ${answers[1]}): clean ${signed(result.clean)}, ` +
        `corrupted ${signed(result.corrupted)}.` + (Math.abs(result.clean - result.corrupted) < 1e-3
        ? ' The two runs barely differ: the shares are unreliable; choose prompts or answers that separate them.' : '');
    } else if (result.kind === 'attribution') {
      line.textContent = `logit[a] − logit[b] (a = ${answers[0]}, b = ${answers[1]}) on the clean prompt: ${signed(result.total)} = ` +
        `embeddings ${signed(result.embed)} + constant ${signed(result.constant)} + the heads, biases and MLPs drawn.`;
    } else {
      line.textContent = '';
    }
    line.dataset.clean = String(result.clean ?? '');
    line.dataset.corrupted = String(result.corrupted ?? '');
    line.dataset.total = String(result.total ?? '');
    line.hidden = !line.textContent;
  }

  /** Direct attribution's largest parts as bars (sorted by size; the widths are the values scaled to the largest). */
  #bars(result, config) {
    const list = $('circuits-bars');
    if (result.kind !== 'attribution') {
      list.hidden = true;
      list.replaceChildren();
      return;
    }
    const parts = attributionParts(result, config).slice(0, MAX_BARS);
    const largest = Math.max(...parts.map((p) => Math.abs(p.value)), 1e-12);
    list.setAttribute('aria-label', `The ${parts.length} largest parts of the logit difference`);
    list.replaceChildren(...parts.map(({ name, value }) => {
      const item = el('li', 'circuits-bar');
      item.dataset.value = String(value);
      const track = el('span', 'circuits-bar-track');
      track.setAttribute('aria-hidden', 'true');
      const bar = el('span', `circuits-bar-fill ${value < 0 ? 'negative' : 'positive'}`);
      bar.style.width = `${((Math.abs(value) / largest) * 50).toFixed(2)}%`;
      track.append(bar);
      item.append(el('span', 'circuits-bar-name', name), el('span', 'num', signed(value)), track);
      return item;
    }));
    list.hidden = false;
  }

  /** The cell under the pointer or focus: its number (the logit lens's: its top-k and answer a's rank). */
  #detail(cell) {
    const shown = this.#shown;
    if (!shown || !cell) return;
    const { result, matrix } = shown;
    if (result.kind !== 'lens') {
      $('circuits-detail').textContent = `${matrix.rowAxis} ${matrix.rowLabels[cell.row]}, ${matrix.colAxis} ${matrix.colLabels[cell.col]}: ` +
        formatPrecise(matrix.data[cell.row * matrix.cols + cell.col]);
      return;
    }
    const { top, token } = lensCell(result, cell.row, cell.col);
    const where = `${lensRowLabels(result.rows - 1)[cell.row]}, position ${cell.col + 1} (“${matrix.colLabels[cell.col]}”)`;
    const tops = top.map((t, j) => `${j + 1}. “${displayToken(t.text)}” ${percent(t.probability)}`).join(' · ');
    $('circuits-detail').textContent = `${where}: ${tops}` +
      (token ? ` — answer a “${displayToken(token.text)}”: rank ${token.rank + 1}, ${percent(token.probability)}` : '');
  }

  /** A click or Enter on a cell: a head's cell opens its pattern. */
  #activate(cell) {
    const shown = this.#shown;
    if (!shown || !cell) return;
    const { kind } = shown.result;
    if (kind === 'heads' || (kind === 'attribution' && cell.col < shown.config.heads)) this.#onHead(cell.row, cell.col);
    else this.#detail(cell);
  }
}
