// The walkthrough's stage: the numbered list of stages, the stage on screen (title, sentence,
// equations, head picker) and its matrices as zoomable heatmaps, with their downloads and the
// cell inspector. Reads the store; writes the stage, head, cells, pinned cell and zoom to it.
// What it drew last is remembered here (memo keys), so typing redraws numbers in place.
import { queryKeySteps } from '../../shared/catalog.js';
import { $, button, el } from '../../shared/dom.js';
import { HeadPicker } from '../../shared/head-picker.js';
import { Heatmap } from '../../shared/heatmap.js';
import { matrixOf } from '../../shared/labels.js';
import { scaleFor, stageFor } from '../../shared/stages.js';
import { scrollCue } from '../../shared/scroll-cue.js';
import { fitEquations, typeset } from '../../shared/typeset.js';
import { availableStages, pickStage, stepsOfStage } from '../../shared/view-model.js';
import { drawExports } from './exporting.js';
import { createInspector } from './inspector.js';

const GAP = 13; // px between heatmaps side by side
const MIN_COLUMN = 260; // px: narrower than this, heatmaps stack

/** The stages the result offers and the one on screen. */
export function stagesOf({ steps, settings }) {
  const stages = availableStages(steps);
  return { stages, current: pickStage(stages, settings.stage) };
}

export class StageView {
  #store;
  #setSettings;
  #queryKey; // ids of the steps whose cells can be masked by a click
  #inspect;
  #picker;
  #maps = []; // [{ slot, map, step, matrix }] of the stage on screen
  #listKey = null; // what the stage list shows
  #equationKey = null; // the equations typeset
  #mapsKey = null; // which steps the heatmaps are of
  #equationCue; // the stage's equations' scroll cue

  constructor(store, engine, catalog, setSettings) {
    this.#store = store;
    this.#queryKey = queryKeySteps(catalog);
    this.#setSettings = setSettings;
    this.#inspect = createInspector(engine, $('inspector'));
    // The stage's equations scaled to their box; wider still, they scroll with a cue.
    const equation = $('equation');
    const [parent, next] = [equation.parentNode, equation.nextSibling];
    this.#equationCue = scrollCue(equation);
    parent.insertBefore(this.#equationCue.frame, next);
    this.#picker = new HeadPicker($('head-picker'), { label: 'Head: ', labelClass: 'muted small', buttonClass: 'head-chip',
      onPick: (h) => setSettings({ head: h }) /* the trace holds the head on screen */ });
  }

  /** Draws the stage list and the stage; `available` is the matrices' width if measured already. */
  render(available) {
    const { stages, current } = stagesOf(this.#store.get());
    const model = this.#store.get().result?.model ?? null;
    this.#drawList(stages.map((stage) => stageFor(stage, { model })), current);
    if (!current) {
      $('matrices').replaceChildren(el('p', 'muted', 'No steps to show.'));
      return;
    }
    const { steps: all, settings, result } = this.#store.get();
    const steps = stepsOfStage(current, all, settings.head);
    this.#drawHeader(stageFor(current, { model: result.model, config: result.config }), steps);
    this.#picker.render({ heads: result.config.heads, head: settings.head,
      visible: steps.some((s) => s.head >= 0) && result.config.heads > 1 });
    const rebuilt = this.#ensureMaps(steps);
    this.#fillMaps(steps, available ?? $('matrices').clientWidth);
    if (rebuilt) drawExports($('exports'), this.#maps, () => this.#store.get());
    this.#explainPinned();
  }

  #drawList(stages, current) {
    const key = `${stages.map((s) => `${s.id}:${s.label}`)}|${current?.id}`;
    if (key === this.#listKey) return;
    this.#listKey = key;
    $('stage-list').replaceChildren(...stages.map((stage, i) => {
      const li = el('li');
      const b = button('stage-button', `${i + 1}. ${stage.label}`, () => this.#setSettings({ stage: stage.id }));
      b.dataset.stage = stage.id;
      if (stage.id === current?.id) b.setAttribute('aria-current', 'step');
      li.append(b);
      return li;
    }));
  }

  #drawHeader(stage, steps) {
    $('stage-title').textContent = stage.title;
    $('stage-text').textContent = stage.text;
    const equations = [...new Set(steps.map((s) => s.equation))];
    const key = JSON.stringify(equations);
    if (key === this.#equationKey) return; // typeset only when they change
    this.#equationKey = key;
    $('equation').replaceChildren(...equations.map((latex) => {
      const line = el('div');
      typeset(latex, line);
      return line;
    }));
    fitEquations($('equation'));
    this.#equationCue.update();
  }

  // The same steps as last time (typing): keep the heatmaps; else build them anew. Returns
  // whether they were rebuilt.
  #ensureMaps(steps) {
    const key = steps.map((step) => `${step.id}/${step.head}`).join(',');
    if (key === this.#mapsKey && this.#maps.length) return false;
    this.#mapsKey = key;
    const host = $('matrices');
    host.replaceChildren();
    host.classList.toggle('multi', steps.length > 1);
    this.#maps = steps.map((step) => {
      const slot = el('div', 'matrix-slot');
      slot.dataset.step = step.id;
      slot.dataset.head = String(step.head);
      host.append(slot);
      return { slot };
    });
    for (const entry of this.#maps) {
      entry.map = new Heatmap(entry.slot, {
        zoomable: true,
        minCell: 1,
        onZoom: (zoom) => this.#store.set({ zoom }),
        onHover: (cell) => this.#inspect(entry.step, entry.matrix, cell, false),
        onActivate: (cell) => this.#activate(entry.step, entry.matrix, cell),
      });
    }
    return true;
  }

  // Draws the steps' numbers into the heatmaps, side by side in as many columns as fit.
  #fillMaps(steps, available) {
    const { result, settings, pinned, zoom } = this.#store.get();
    const columns = Math.min(steps.length > 1 ? Math.max(1, Math.floor((available + GAP) / (MIN_COLUMN + GAP))) : 1, steps.length);
    const fitWidth = Math.floor((available - GAP * (columns - 1)) / columns);
    const { n, kvN } = result;
    const marked = new Set(settings.cells.filter(([i, j]) => i < n && j < kvN).map(([i, j]) => i * kvN + j));
    steps.forEach((step, index) => {
      const entry = this.#maps[index];
      entry.step = step;
      entry.matrix = { ...matrixOf(step, result, scaleFor(step.id), this.#queryKey.has(step.id) ? marked : undefined),
        colorScale: settings.colorScale };
      entry.map.zoom = zoom; // the reader's zoom survives recomputes
      entry.map.pinned = pinned && pinned.stepId === step.id && pinned.head === step.head
        ? { row: pinned.row, col: pinned.col } : null;
      entry.map.render(entry.matrix, { width: fitWidth || undefined });
    });
  }

  // A pinned cell stays explained across recomputes.
  #explainPinned() {
    const { pinned } = this.#store.get();
    if (!pinned) return;
    const entry = this.#maps.find((m) => m.step.id === pinned.stepId && m.step.head === pinned.head);
    if (entry && pinned.row < entry.matrix.rows && pinned.col < entry.matrix.cols) this.#inspect(entry.step, entry.matrix, pinned, true);
  }

  // A click on a cell: masks or unmasks it (with "click cells to mask them"), else pins or unpins it.
  #activate(step, matrix, cell) {
    const { settings, pinned, maskByClick } = this.#store.get();
    if (maskByClick && this.#queryKey.has(step.id)) {
      const exists = settings.cells.some(([i, j]) => i === cell.row && j === cell.col);
      const cells = exists ? settings.cells.filter(([i, j]) => !(i === cell.row && j === cell.col))
        : [...settings.cells, [cell.row, cell.col]];
      this.#setSettings({ cells });
      return;
    }
    const same = pinned && pinned.stepId === step.id && pinned.head === step.head && pinned.row === cell.row && pinned.col === cell.col;
    this.#store.set({ pinned: same ? null : { stepId: step.id, head: step.head, row: cell.row, col: cell.col } });
    for (const m of this.#maps) {
      m.map.pinned = !same && m.step === step ? cell : null;
      m.map.draw();
    }
    this.#inspect(step, matrix, cell, !same);
  }
}
