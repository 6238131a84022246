// The Your model view's generation drawing: the prompt's and the new tokens' chips (each new one
// a button whose title gives its probability), tokens/s, and where a new token looked — its query
// row as a strip over the text (viridis, brighter = more attention), in rows the reader picks: one
// per layer (its heads max-pooled: the brightest head at each position, so 30 layers stay 30 rows),
// one per head of the chosen head's layer, or one per layer × head; one chosen head's row as
// highlights on the chips; and that head's whole generation as a heatmap grown row by row (rows:
// the new tokens; columns: the positions they looked at; shared/heatmap.js, with its caption,
// keyboard reading and screen-reader table). Text only ever goes in as textContent.
// Draws the worker's numbers (each step's attention: per layer [heads * t], from m.generate).
import { $, el } from '../../shared/dom.js';
import { exportButtons, matrixRows } from '../../shared/exporting.js';
import { Heatmap, probabilityLegend } from '../../shared/heatmap.js';
import { displayToken } from '../../shared/labels.js';
import { makeScale } from '../../shared/colors.js';
import { generationMatrix, percent, stripRows } from './model-data.js';

/** px per strip row (one per layer or per head of a layer; every layer × head), and the most px per column. */
export const ROW_PX = 10;
export const ALL_ROW_PX = 6;
const MAX_COL_PX = 14;
/** The strip's left gutter, where its rows are named (L1, L5 … or H1 …). */
const GUTTER_PX = 30;

/** The strip's row choices: [value, words]. */
const STRIP_ROWS = [['layers', 'one per layer (the brightest of its heads)'], ['layer', 'one per head of the chosen head\'s layer'],
  ['all', 'one per layer × head']];

/** The probability scale's 256 colours (viridis, 0 … 1) as CSS. */
const COLOURS = Array.from({ length: 256 }, (_, i) => `rgb(${makeScale('probability').rgb(i / 255).join(', ')})`);

/** A new token's probability, said in words (its chip's title, the strip's caption). */
export const probabilityWords = (p) => `probability ${percent(p)}`;

/**
 * The generation's drawing; its state (the prompt's tokens, the steps, the token looked at, the
 * chosen head) lives here only as what is drawn now, the controller owns the run.
 * @param {() => object} provenance the heatmap's figure exports' facts (model, sampling settings)
 */
export function generationDrawing(provenance = () => ({})) {
  let prompt = [];
  let steps = [];
  let focused = -1; // the step looked at (-1: the latest)
  let chosen = { layer: 0, head: 0 };
  let shape = { layers: 0, heads: 0 };

  const text = $('model-gen-text');
  const strip = $('model-gen-strip');
  const canvas = el('canvas', 'model-gen-canvas');
  const caption = el('p', 'muted small model-gen-caption');
  caption.id = 'model-gen-caption';
  const rowsPick = el('select', 'model-gen-rows');
  rowsPick.id = 'model-gen-rows';
  rowsPick.append(...STRIP_ROWS.map(([value, words]) => {
    const option = el('option', '', words);
    option.value = value;
    return option;
  }));
  const rowsLabel = el('label', 'small', 'Rows ');
  rowsLabel.append(rowsPick);
  const pick = el('select', 'model-gen-head');
  pick.id = 'model-gen-head';
  const pickLabel = el('label', 'small', 'Head drawn on the tokens and in the heatmap below ');
  pickLabel.append(pick);
  const controls = el('div', 'model-gen-controls');
  controls.append(rowsLabel, pickLabel);
  const frame = el('div', 'model-gen-frame');
  frame.append(canvas);
  const legend = el('div', 'legend model-gen-legend');
  probabilityLegend(legend);
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-describedby', caption.id);
  strip.append(caption, controls, frame, legend);
  pick.addEventListener('change', () => {
    const [layer, head] = pick.value.split(':').map(Number);
    chosen = { layer, head };
    drawLooked();
    drawMap();
  });
  rowsPick.addEventListener('change', () => drawLooked());

  // The chosen head's whole generation: a heatmap redrawn at most once a frame while tokens stream.
  const mapHost = $('model-gen-map');
  let map = null;
  let mapQueued = false;
  function drawMap() {
    mapQueued = false;
    const { layer, head } = chosen;
    mapHost.hidden = steps.length === 0;
    $('model-gen-exports').hidden = mapHost.hidden;
    Object.assign(mapHost.dataset, { rows: String(steps.length), layer: String(layer), head: String(head) });
    if (!steps.length) return;
    if (!map) {
      map = new Heatmap(mapHost, { maxCell: 26, minCell: 3, onHover: (cell) => {
        if (!cell) return;
        focused = cell.row;
        drawLooked();
      } });
      // Built once: the figure, its provenance and its numbers are read at click time.
      exportButtons($('model-gen-exports'), [{ id: 'generation', label: 'this head', title: 'The generation\'s heatmap', map,
        provenance: () => ({ ...provenance(), layer: chosen.layer + 1, head: chosen.head + 1, prompt: prompt.join(''),
          generated: steps.map((s) => s.token) }),
        matrix: () => map.matrix, json: () => ({ layer: chosen.layer, head: chosen.head, prompt, generated: steps.map((s) => s.token),
          rows: { axis: 'new token', labels: map.matrix.rowLabels }, cols: { axis: 'position', labels: map.matrix.colLabels },
          data: matrixRows(map.matrix) }) }]);
    }
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
    b.title = `${probabilityWords(step.probability)} (how likely the model found it when it wrote it)`;
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

  /** The strip's rows drawn for step `step` over `t` positions: viridis cells, the rows named in the gutter. */
  function drawStrip(step, t) {
    const mode = rowsPick.value;
    const { values, rows, labels } = stripRows(step.attention, t, shape.heads, mode, chosen.layer);
    const rowPx = mode === 'all' ? ALL_ROW_PX : ROW_PX;
    const width = Math.max(1, Math.min(MAX_COL_PX, Math.floor(((frame.clientWidth || 600) - GUTTER_PX) / t)));
    const ratio = window.devicePixelRatio || 1;
    const cssWidth = GUTTER_PX + t * width;
    const cssHeight = rows * rowPx;
    canvas.width = Math.round(cssWidth * ratio);
    canvas.height = Math.round(cssHeight * ratio);
    canvas.style.width = `${cssWidth}px`;
    canvas.style.height = `${cssHeight}px`;
    Object.assign(canvas.dataset, { rows: String(rows), cols: String(t) }); // its geometry, as a heatmap's canvas gives its own
    const ctx = canvas.getContext('2d');
    if (!ctx) return;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, cssWidth, cssHeight);
    for (let r = 0; r < rows; ++r) {
      for (let j = 0; j < t; ++j) {
        ctx.fillStyle = COLOURS[Math.max(0, Math.min(255, Math.round(values[r * t + j] * 255)))];
        ctx.fillRect(GUTTER_PX + j * width, r * rowPx, width > 2 ? width - 1 : width, rowPx - 1);
      }
    }
    // The rows' names: every row when they are tall enough, else each layer's first (or every 5th layer).
    ctx.fillStyle = getComputedStyle(strip).color;
    ctx.font = `9px ${getComputedStyle(strip).fontFamily}`;
    ctx.textBaseline = 'middle';
    const every = mode === 'all' ? shape.heads * Math.max(1, Math.ceil(10 / (shape.heads * rowPx))) : Math.max(1, Math.ceil(10 / rowPx));
    for (let r = 0; r < rows; r += every) ctx.fillText(mode === 'all' ? labels[r].split(' ')[0] : labels[r], 1, r * rowPx + rowPx / 2);
  }

  /** The chosen step's query rows: the strip (rows as picked; columns: the text so far), the chips' highlights. */
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
    drawStrip(step, t);
    const mode = rowsPick.value;
    const rowsSaid = mode === 'layers' ? `one row per layer (${layers}), each position the brightest of the layer's ${heads} heads, layer 1 at the top`
      : mode === 'layer' ? `one row per head of layer ${chosen.layer + 1} (${heads}), head 1 at the top`
        : `one row per layer × head (${layers} × ${heads}), layer 1 head 1 at the top`;
    canvas.setAttribute('aria-label', `Where new token ${k + 1} (${displayToken(step.token)}) looked: its attention over the ${t} tokens before it, ` +
      rowsSaid);
    caption.textContent = `New token ${k + 1}, “${displayToken(step.token)}” (${probabilityWords(step.probability)}: how likely the model ` +
      `found it, the softmax of its logits at temperature 1): where it looked over the ${t} tokens before it, ${rowsSaid}; ` +
      'brighter = more attention. Hover or focus a token to see its rows.';
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
      $('model-gen-exports').hidden = true;
      pick.replaceChildren(...Array.from({ length: layers * heads }, (_, i) => {
        const layer = Math.floor(i / heads);
        const head = i % heads;
        const option = el('option', '', `Layer ${layer + 1}, head ${head + 1}`);
        option.value = `${layer}:${head}`;
        return option;
      }));
    },
    /** Nothing drawn (a new model, or another text from a link: the tokens written belonged to the one before). */
    clear() {
      prompt = [];
      steps = [];
      focused = -1;
      text.replaceChildren();
      drawLooked();
      drawMap();
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
    /** The steps so far ({ id, token, probability, attention }), the prompt's tokens and the head shown (a snapshot's). */
    steps: () => [...steps],
    prompt: () => prompt,
    chosen: () => ({ ...chosen }),
    count: () => steps.length,
  };
}

/** The generation's line: what is running, how many tokens, tokens/s; or (`error`) why it could not. */
export function genInfo(message, error = false) {
  $('model-gen-info').className = error ? 'small error-inline' : 'muted small';
  $('model-gen-info').textContent = message;
}

/** Generate / Stop enabled while (not) running. */
export function genRunning(running) {
  $('model-gen-start').disabled = false;
  $('model-gen-stop').disabled = !running;
}
