// The Your model view's drawing: load progress and status, the typed text's chips, every head, next tokens, head finder.
import { $, el } from '../../shared/dom.js';
import { formatBytes } from '../../shared/format.js';
import { displayToken } from '../../shared/labels.js';
import { TokenChips } from '../../shared/token-chips.js';
import { percent } from './model-data.js';
import { HeadFinder } from './head-finder.js';
import { MAX_TABLE_HEADS, modelHeads } from './model-heads.js';

export const showError = (message) => {
  $('model-error').hidden = !message;
  $('model-error').textContent = message ?? '';
};

export const textInfo = (message, error = false) => {
  $('model-text-info').className = error ? 'small error-inline' : 'muted small';
  $('model-text-info').textContent = message;
};

/** The progress bar at `fraction` of the checkpoint read. */
export function drawProgress(fraction) {
  $('model-progress').value = fraction;
  $('model-progress').textContent = `${Math.round(fraction * 100)}%`;
}

/** A load begins: the bar at 0 and shown, the weights file named. */
export function drawLoading(weights) {
  drawProgress(0);
  $('model-progress').hidden = false;
  $('model-status').textContent = `Loading ${weights.name} (${formatBytes(weights.size)})…`;
  document.body.dataset.modelLoading = 'true';
}

/** The loaded checkpoint's size, shape and memory in the status line (its numbers for the tests). */
export function drawLoaded({ fileName, fileBytes, config, memory }) {
  $('model-status').textContent = `${fileName}: ${formatBytes(fileBytes)} · ${config.layers} layers × ` +
    `${config.heads} heads · d_model ${config.dModel} · ${config.vocab} tokens · context ${config.context} · ` +
    `wasm memory ${formatBytes(memory.heapBytes)} (${formatBytes(memory.allocatedBytes)} in use)`;
  Object.assign($('model-status').dataset, { fileBytes, heapBytes: memory.heapBytes });
}

/** A refused load: the model still loaded (or null) named in the status line. */
export function drawKept(model) {
  $('model-status').textContent = model ? `Kept ${model.fileName}.` : 'No model loaded.';
}

/** A load ended (loaded or refused): the bar hidden. */
export function drawLoadEnded() {
  $('model-progress').hidden = true;
  document.body.dataset.modelLoading = 'false';
}

function drawNext({ n, top }) {
  $('model-next-info').textContent = `After token ${n} of your text (softmax of the model's logits):`;
  $('model-next').replaceChildren(...top.map(({ id, token, probability }) => {
    const item = el('li', 'model-next-item');
    item.dataset.id = String(id);
    item.dataset.probability = String(probability);
    const bar = el('span', 'model-next-bar');
    bar.style.width = `${(probability * 100).toFixed(1)}%`;
    item.append(el('span', 'model-next-token', displayToken(token)), el('span', 'num', percent(probability)), bar);
    return item;
  }));
}

/**
 * The view's parts that keep state (chips, the head grid, the finder): build(config) lays out the
 * grid for a loaded model; drawRun(run, model) draws a run on the typed text; drawHeads(run) redraws
 * the grid (theme, size); drawFinder / finderError: the head finder's scores or why there are none.
 * @param {(layer: number, head: number) => void} onOpen a head clicked in the grid
 */
export function modelDrawing(onOpen) {
  const chips = new TokenChips($('model-tokens'));
  const heads = modelHeads($('model-head-grid'), onOpen);
  const finder = new HeadFinder($('model-finder'), (layer, head) => heads.highlight(layer, head));
  return {
    build(config) {
      heads.build(config.layers, config.heads, config.layers * config.heads <= MAX_TABLE_HEADS);
    },
    /** A run on the typed text: chips, every head, the next tokens. */
    drawRun(run, model) {
      chips.render(run.tokens);
      textInfo(`${run.n} tokens${run.cut ? ` (the last ${run.cut} cut: the model's context is ${model.config.context})` : ''}`);
      heads.render(run);
      drawNext(run);
    },
    drawHeads(run) {
      heads.render(run);
    },
    drawFinder({ scores, probeLength }) {
      $('model-finder-info').textContent = `Each head's mean attention to the previous token, and to the token after an ` +
        `earlier copy of the current one (induction), on ${probeLength / 2} seeded random tokens repeated once. ` +
        'Click a column to sort, a head to highlight it in the grid.';
      finder.render(scores);
    },
    finderError(message) {
      $('model-finder-info').textContent = `Head finder: ${message}`;
    },
  };
}
