// The Your model view's generation drawing: the prompt's and the new tokens' chips (each new one
// a button whose title gives its probability), tokens/s, and where a new token looked — its query
// row in every layer and head as a strip over the text (one canvas row per head, viridis), one
// chosen head's row as highlights on the chips, and that head's whole generation as a heatmap grown
// row by row (rows: the new tokens; columns: the positions they looked at; shared/heatmap.js, with
// its caption, keyboard reading and screen-reader table). Text only ever goes in as textContent.
// Draws the worker's numbers (each step's attention: per layer [heads * t], from m.generate).
import { $, el } from '../../shared/dom.js';
import { Heatmap } from '../../shared/heatmap.js';
import { displayToken } from '../../shared/labels.js';
import { makeScale } from '../../shared/colors.js';
import { generationMatrix, percent } from './model-data.js';

/** px per strip row and the most px per column. */
const ROW_PX = 6;
const MAX_COL_PX = 14;

/**
 * The generation's drawing; its state (the prompt's tokens, the steps, the token looked at, the
 * chosen head) lives here only as what is drawn now, the controller owns the run.
 */
export function generationDrawing() {
  let prompt = [];
  let steps = [];
  let focused = -1; // the step looked at (-1: the latest)
  let chosen = { layer: 0, head: 0 };
  let shape = { layers: 0, heads: 0 };

  const text = $('model-gen-text');
  const strip = $('model-gen-strip');
  const canvas = el('canvas', 'model-gen-canvas');
  const caption = el('p', 'muted small model-gen-caption');
  const pick = el('select', 'model-gen-head');
  pick.id = 'model-gen-head';
  const pickLabel = el('label', 'small', 'Head drawn on the tokens and in the heatmap below ');
  pickLabel.append(pick);
  canvas.setAttribute('role', 'img');
  strip.append(caption, canvas, pickLabel);
  pick.addEventListener('change', () => {
    const [layer, head] = pick.value.split(':').map(Number);
    chosen = { layer, head };
    drawLooked();
    drawMap();
  });

  // The chosen head's whole generation: a heatmap redrawn at most once a frame while tokens stream.
  const mapHost = $('model-gen-map');
  let map = null;
  let mapQueued = false;
  function drawMap() {
    mapQueued = false;
    const { layer, head } = chosen;
    mapHost.hidden = steps.length === 0;
    Object.assign(mapHost.dataset, { rows: String(steps.length), layer: String(layer), head: String(head) });
    if (!steps.length) return;
    map ??= new Heatmap(mapHost, { maxCell: 26, minCell: 3, onHover: (cell) => {
      if (!cell) return;
      focused = cell.row;
      drawLooked();
    } });
    const m = generationMatrix(prompt, steps, layer, head, shape.heads);
    map.render({ data: m.data, rows: m.rows, cols: m.cols, rowLabels: m.rowTokens.map(displayToken),
      colLabels: m.colTokens.map(displayToken), rowAxis: 'new token', colAxis: 'position', scale: 'probability',
      missing: 'not written yet',
      title: `Layer ${layer + 1}, head ${head + 1}: where each new token looked (a row per new token, over the text before it)` });
  }
  function queueMap() {
    if (mapQueued) return;
    mapQueued = true;
    // A frame, or a moment when frames are not drawn (a hidden tab): whichever comes first.
    const run = () => mapQueued && drawMap();
    requestAnimationFrame(run);
    setTimeout(run, 250);
  }

  const current = () => (focused >= 0 && focused < steps.length ? focused : steps.length - 1);

  function chip(token, className) {
    return el('span', className, displayToken(token));
  }

  function stepChip(step, k) {
    const b = el('button', 'model-gen-chip', displayToken(step.token));
    b.type = 'button';
    b.title = `p = ${percent(step.probability)}`;
    b.dataset.id = String(step.id);
    b.dataset.probability = String(step.probability);
    b.dataset.k = String(k);
    const look = () => {
      focused = k;
      drawLooked();
    };
    b.addEventListener('mouseenter', look);
    b.addEventListener('focus', look);
    return b;
  }

  /** The chosen step's query rows: the canvas strip (rows: layer × head; columns: the text so far), the chips' highlights. */
  function drawLooked() {
    const k = current();
    const chips = [...text.children];
    for (const c of chips) {
      c.style.removeProperty('--look');
      c.classList.remove('looking');
      delete c.dataset.look;
    }
    if (k < 0) {
      strip.hidden = true;
      return;
    }
    const step = steps[k];
    const t = prompt.length + k;
    const { layers, heads } = shape;
    strip.hidden = false;
    chips[t]?.classList.add('looking');
    const width = Math.max(1, Math.min(MAX_COL_PX, Math.floor((text.clientWidth || 600) / t)));
    canvas.width = t * width;
    canvas.height = layers * heads * ROW_PX;
    canvas.style.width = `${t * width}px`;
    canvas.style.height = `${layers * heads * ROW_PX}px`;
    const ctx = canvas.getContext('2d');
    if (ctx) {
      const image = ctx.createImageData(canvas.width, canvas.height);
      const pixels = new Uint32Array(image.data.buffer);
      const { table } = makeScale('probability');
      for (let layer = 0; layer < layers; ++layer) {
        for (let head = 0; head < heads; ++head) {
          const row = (layer * heads + head) * ROW_PX;
          for (let j = 0; j < t; ++j) {
            const p = step.attention[layer][head * t + j];
            const colour = table[Math.max(0, Math.min(255, Math.round(p * 255)))];
            for (let y = row; y < row + ROW_PX - 1; ++y) pixels.fill(colour, y * canvas.width + j * width, y * canvas.width + (j + 1) * width - (width > 2 ? 1 : 0));
          }
        }
      }
      ctx.putImageData(image, 0, 0);
    }
    canvas.setAttribute('aria-label', `Where new token ${k + 1} (${displayToken(step.token)}) looked: its attention over the ${t} tokens before it, ` +
      `one row per layer and head (${layers} × ${heads})`);
    caption.textContent = `New token ${k + 1}, “${displayToken(step.token)}” (p = ${percent(step.probability)}): its attention over the ` +
      `${t} tokens before it, one row per layer × head (layer 1 head 1 at the top), brighter = more. Hover or focus a token to see its row.`;
    const row = step.attention[chosen.layer]?.subarray(chosen.head * t, (chosen.head + 1) * t);
    if (!row) return;
    let max = 0;
    for (const p of row) max = Math.max(max, p);
    for (let j = 0; j < t; ++j) {
      if (chips[j]) chips[j].style.setProperty('--look', `${Math.round((row[j] / (max || 1)) * 50)}%`);
      chips[j]?.setAttribute('data-look', row[j].toFixed(4));
    }
  }

  return {
    /** A model's shape: the head picker's options. */
    build(layers, heads) {
      if (shape.layers === layers && shape.heads === heads) return;
      shape = { layers, heads };
      chosen = { layer: 0, head: 0 };
      mapHost.hidden = true;
      pick.replaceChildren(...Array.from({ length: layers * heads }, (_, i) => {
        const layer = Math.floor(i / heads);
        const head = i % heads;
        const option = el('option', '', `Layer ${layer + 1}, head ${head + 1}`);
        option.value = `${layer}:${head}`;
        return option;
      }));
    },
    /** A new generation after `tokens` (the prompt's). */
    start(tokens) {
      prompt = tokens;
      steps = [];
      focused = -1;
      text.replaceChildren(...tokens.map((token) => chip(token, 'model-gen-prompt')));
      drawLooked();
      drawMap();
    },
    /** One new token. */
    add(step) {
      steps.push(step);
      text.append(stepChip(step, steps.length - 1));
      if (focused < 0) drawLooked();
      queueMap();
    },
    /** The heatmap drawn again (the theme or the width changed). */
    redraw() {
      if (steps.length) drawMap();
    },
    /** The tokens so far (ids). */
    ids: () => steps.map((s) => s.id),
    count: () => steps.length,
  };
}

/** The generation's line: what is running, how many tokens, tokens/s. */
export function genInfo(message) {
  $('model-gen-info').textContent = message;
}

/** Generate / Stop enabled while (not) running. */
export function genRunning(running) {
  $('model-gen-start').disabled = false;
  $('model-gen-stop').disabled = !running;
  document.body.dataset.modelGenerating = String(running);
}
