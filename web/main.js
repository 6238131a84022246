// The page: wires the controls and the URL hash to the engine (a Web Worker around the JS API)
// and draws what the core returns — tokens, every traced step, every head, the arithmetic of a
// cell, the cost. Nothing here does attention math. User text (tokens, the hash, files) is only
// ever placed with textContent or attributes, never parsed as HTML.
import katex from 'katex';
import 'katex/dist/katex.min.css';

import { placeOf, renderCost } from './app/cost.js';
import { elementSnippet, iframeSnippet } from './app/embed-snippet.js';
import { EngineClient } from './app/engine-client.js';
import { PREVIEW_SIDE } from './app/engine.js';
import { download, fileStem, stepCsv, stepJson } from './app/exporting.js';
import { drawHeadGrid, drawHeadLines } from './app/heads-view.js';
import { Heatmap } from './app/heatmap.js';
import { renderExplanation } from './app/inspector.js';
import { displayToken, matrixOf } from './app/labels.js';
import { PRESET_INFO } from './app/presets.js';
import { availableStages, QUERY_KEY_STEPS, scaleFor } from './app/stages.js';
import { DEFAULTS, EXAMPLES, hashToState, stateToHash } from './app/state.js';

const $ = (id) => document.getElementById(id);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function typeset(latex, target, display = true) {
  katex.render(latex, target, { displayMode: display, throwOnError: false, trust: false, strict: 'ignore', output: 'htmlAndMathml' });
}

// ---- messages ---------------------------------------------------------------------------------

function showError(message) {
  $('error').hidden = !message;
  $('error').textContent = message ? `${message} (The last good result stays on screen.)` : '';
  document.body.dataset.error = message ? 'true' : 'false';
}

let linkNotice = ''; // what a shared link held that could not be used; stays until the next link

function showNotice(message) {
  const text = [linkNotice, message].filter(Boolean).join(' ');
  $('notice').hidden = !text;
  $('notice').textContent = text;
}

// ---- state ------------------------------------------------------------------------------------

let state = { ...DEFAULTS };
let result = null; // the last good compute
let engine = null;
let pinned = null; // {stepId, head, row, col}
let playing = null;

const fields = {
  text: { id: 'text', kind: 'text' },
  source: { id: 'source', kind: 'text' },
  tokenizer: { id: 'tokenizer', kind: 'select' },
  dModel: { id: 'dModel', kind: 'select' },
  heads: { id: 'heads', kind: 'int' },
  seed: { id: 'seed', kind: 'int' },
  positional: { id: 'positional', kind: 'select' },
  mask: { id: 'mask', kind: 'select' },
  window: { id: 'window', kind: 'int' },
  prefix: { id: 'prefix', kind: 'int' },
  padTo: { id: 'padTo', kind: 'int' },
  preset: { id: 'preset', kind: 'select' },
  scale: { id: 'scale', kind: 'check' },
  cross: { id: 'cross', kind: 'check' },
};

function syncControls() {
  for (const [key, field] of Object.entries(fields)) {
    const input = $(field.id);
    if (field.kind === 'check') input.checked = state[key];
    else if (document.activeElement !== input) input.value = String(state[key]);
  }
  $('window-box').hidden = state.mask !== 'sliding-window';
  $('prefix-box').hidden = state.mask !== 'prefix-lm';
  $('pad-box').hidden = state.mask !== 'padding';
  $('source-box').hidden = !state.cross || Boolean(state.preset);
  const presetMode = Boolean(state.preset);
  for (const id of ['text', 'tokenizer', 'dModel', 'heads', 'seed', 'positional', 'cross', 'source', 'weights-file']) {
    $(id).disabled = presetMode;
  }
  $('preset-info').hidden = !presetMode;
  if (presetMode) {
    $('preset-title').textContent = PRESET_INFO[state.preset].title;
    $('preset-code').textContent = PRESET_INFO[state.preset].code;
  }
  $('cells-info').textContent = state.cells.length
    ? `${state.cells.length} cell${state.cells.length > 1 ? 's' : ''} masked by hand. `
    : '';
  if (state.cells.length) {
    const clear = el('button', 'link', 'Clear');
    clear.type = 'button';
    clear.addEventListener('click', () => update({ cells: [] }));
    $('cells-info').append(clear);
  }
  $('view-grid').setAttribute('aria-pressed', String(state.view === 'grid'));
  $('view-lines').setAttribute('aria-pressed', String(state.view === 'lines'));
}

// The URL follows the state a moment after the last change (replaceState is slow enough to
// notice on every keystroke).
let hashTimer = 0;

function writeHash() {
  clearTimeout(hashTimer);
  hashTimer = setTimeout(() => {
    const hash = stateToHash(state);
    if (hash !== location.hash && !(hash === '' && location.hash === '')) {
      history.replaceState(null, '', hash || location.pathname + location.search);
    }
  }, 150);
}

/** Changes the state; recomputes unless only the view (stage, head, …) changed. */
function update(patch, { recompute = true } = {}) {
  state = { ...state, ...patch };
  if (state.heads < 1) state.heads = 1;
  syncControls();
  writeHash();
  if (recompute) compute();
  else render();
}

// ---- compute ----------------------------------------------------------------------------------

// Each update is measured from the request to the end of drawing (performance entries named
// 'attention-lens:update', read by scripts/measure-page.mjs).
let requestedAt = 0;

function compute() {
  requestedAt = performance.now();
  engine.compute(state, (next) => {
    const started = requestedAt;
    const receivedMs = performance.now() - started; // the worker's answer is here
    result = next;
    if (!result.steps.length && result.attention) result.steps = weightsOnlySteps(result);
    showError(null);
    if (state.head >= result.config.heads) state.head = 0;
    render();
    performance.measure('attention-lens:update', { start: started, end: performance.now(),
      detail: { n: result.n, heads: result.config.heads, computeMs: result.computeMs, receivedMs, computedIn: result.computedIn } });
    document.body.dataset.ready = 'true';
  }, (error) => {
    showError(error.message);
    document.body.dataset.ready = 'true';
  });
}

// ---- rendering --------------------------------------------------------------------------------

const MAX_CHIPS = 256; // beyond this the chips say how many more there are

// Chips are patched in place (typing changes one token; rebuilding 64 chips is a relayout).
function drawChips(host, tokens, padTokens = 0) {
  if (unchanged(host, `${padTokens}|${tokens.join('\u0001')}`)) return;
  const shown = Math.min(tokens.length, MAX_CHIPS);
  const more = tokens.length > MAX_CHIPS ? `… and ${tokens.length - MAX_CHIPS} more tokens` : '';
  const chips = host.querySelectorAll(':scope > .chip');
  for (let i = chips.length; i < shown; ++i) host.append(el('span', 'chip'));
  for (let i = shown; i < chips.length; ++i) chips[i].remove();
  host.querySelector(':scope > .more')?.remove();
  host.querySelectorAll(':scope > .chip').forEach((chip, i) => {
    const text = displayToken(tokens[i]);
    const className = i >= tokens.length - padTokens ? 'chip pad' : 'chip';
    if (chip.textContent !== text) chip.textContent = text;
    if (chip.className !== className) chip.className = className;
    chip.title = `token ${i + 1}`;
  });
  if (more) host.append(el('span', 'muted small more', more));
}

function stepsFor(stage) {
  return stage.steps.flatMap((id) => result.steps.filter((s) => s.id === id && (s.head === -1 || s.head === state.head)));
}

/**
 * Without a trace (too many tokens to keep every step), the walkthrough still shows each head's
 * attention weights: the forward's r.attention, one [n, kvN] slice per head.
 */
function weightsOnlySteps(r) {
  const size = r.n * r.kvN;
  return Array.from({ length: r.config.heads }, (_, h) => ({
    id: 'weights', head: h, shape: [r.n, r.kvN], rows: 'query', cols: 'key',
    title: `Attention weights, head ${h + 1}`,
    equation: String.raw`A_{${h + 1}} = \operatorname{softmax}_{\text{row}}\left(\tilde{S}_{${h + 1}} + M\right)`,
    data: r.attention.subarray(h * size, (h + 1) * size),
  }));
}

function currentStage() {
  const stages = availableStages(result.steps);
  return stages.find((s) => s.id === state.stage) ?? stages.find((s) => s.id === 'weights') ?? stages[0];
}

function render() {
  if (!result) return;
  // Read every width before changing anything: each read after a change is a full layout.
  const widths = { matrices: $('matrices').clientWidth, tile: $('heads-view').headTiles?.[0]?.figure.clientWidth };
  const pads = result.keyTokens.filter((t) => t === '[PAD]').length;
  drawChips($('tokens'), result.queryTokens, result.cross ? 0 : pads);
  if (result.cross) drawChips($('source-tokens'), result.keyTokens, pads);
  $('dk').textContent = `(d_k = ${result.config.headDim})`;
  if (state.preset) {
    // Show the preset's own configuration in the (disabled) controls.
    $('dModel').value = String(result.config.dModel);
    $('heads').value = String(result.config.heads);
    $('positional').value = result.config.positional;
  }
  $('printout').textContent = result.printout ?? '';
  $('weights-status').textContent = result.weightsFile
    ? `Loaded from ${result.weightsFile}.` : state.preset ? 'The tutorial\'s weights.' : 'Seeded random weights.';
  $('weights-clear').hidden = !result.weightsFile;
  showNotice(result.notes.join(' '));
  renderStageList();
  renderStage(widths.matrices);
  renderHeads(widths.tile);
  renderCost($('cost'), result);
  $('status').textContent = `${result.n} tokens · ${result.config.heads} heads · d_model ${result.config.dModel} · ` +
    `forward ${result.computeMs.toFixed(2)} ms ${placeOf(result)} (${engine.info.simd === 'wasm' ? 'wasm SIMD' : engine.info.simd})`;
}

// Parts of the page are rebuilt only when what they show changed (typing changes the numbers,
// rarely the stages, heads or tokens): `unchanged(host, key)` remembers the last key per host.
function unchanged(host, key) {
  if (host.renderedKey === key) return true;
  host.renderedKey = key;
  return false;
}

function renderStageList() {
  const stages = availableStages(result.steps);
  const current = currentStage();
  if (unchanged($('stage-list'), `${stages.map((s) => s.id)}|${current?.id}`)) return;
  $('stage-list').replaceChildren(...stages.map((stage, i) => {
    const li = el('li');
    const button = el('button', 'stage-button', `${i + 1}. ${stage.label}`);
    button.type = 'button';
    button.dataset.stage = stage.id;
    if (stage === current) button.setAttribute('aria-current', 'step');
    button.addEventListener('click', () => update({ stage: stage.id }, { recompute: false }));
    li.append(button);
    return li;
  }));
}

let stageMaps = [];
let stageZoom = 1;

function renderStage(available = $('matrices').clientWidth) {
  const stage = currentStage();
  if (!stage) {
    $('matrices').replaceChildren(el('p', 'muted', 'No steps to show.'));
    return;
  }
  const steps = stepsFor(stage);
  $('stage-title').textContent = stage.title;
  $('stage-text').textContent = stage.text;
  const eq = $('equation');
  const equations = [...new Set(steps.map((s) => s.equation))];
  if (eq.dataset.latex !== JSON.stringify(equations)) { // typeset only when they change
    eq.dataset.latex = JSON.stringify(equations);
    eq.replaceChildren(...equations.map((latex) => {
      const line = el('div');
      typeset(latex, line);
      return line;
    }));
  }
  const perHead = steps.some((s) => s.head >= 0);
  const picker = $('head-picker');
  if (!unchanged(picker, `${perHead}|${result.config.heads}|${state.head}`)) picker.replaceChildren();
  if (perHead && result.config.heads > 1 && !picker.childElementCount) {
    picker.append(el('span', 'muted small', 'Head: '));
    for (let h = 0; h < result.config.heads; ++h) {
      const b = el('button', 'head-chip', String(h + 1));
      b.type = 'button';
      b.setAttribute('aria-pressed', String(h === state.head));
      b.setAttribute('aria-label', `head ${h + 1}`);
      b.addEventListener('click', () => update({ head: h }) /* the trace holds the head on screen */);
      picker.append(b);
    }
  }
  const host = $('matrices');
  const columns = steps.length > 1 ? Math.max(1, Math.floor((available + 13) / (260 + 13))) : 1;
  const fitWidth = Math.floor((available - 13 * (Math.min(columns, steps.length) - 1)) / Math.min(columns, steps.length));
  const kvN = result.kvN;
  const marked = new Set(state.cells.filter(([i, j]) => i < result.n && j < kvN).map(([i, j]) => i * kvN + j));
  // The same steps as last time (typing): redraw the heatmaps in place; else build them anew.
  if (!unchanged(host, steps.map((step) => `${step.id}/${step.head}`).join(',')) || !stageMaps.length) {
    host.replaceChildren();
    host.classList.toggle('multi', steps.length > 1);
    const slots = steps.map((step) => {
      const slot = el('div', 'matrix-slot');
      slot.dataset.step = step.id;
      slot.dataset.head = String(step.head);
      host.append(slot);
      return slot;
    });
    stageMaps = slots.map((slot) => {
      const entry = { slot };
      entry.map = new Heatmap(slot, {
        zoomable: true,
        minCell: 1,
        onZoom: (zoom) => { stageZoom = zoom; },
        onHover: (cell) => inspect(entry.step, entry.matrix, cell, false),
        onActivate: (cell) => activate(entry.step, entry.matrix, cell),
      });
      return entry;
    });
    stageMaps.rebuilt = true;
  }
  steps.forEach((step, index) => {
    const entry = stageMaps[index];
    entry.step = step;
    entry.matrix = matrixOf(step, result, scaleFor(step.id), QUERY_KEY_STEPS.has(step.id) ? marked : undefined);
    entry.map.zoom = stageZoom; // the reader's zoom survives recomputes
    entry.map.pinned = pinned && pinned.stepId === step.id && pinned.head === step.head
      ? { row: pinned.row, col: pinned.col } : null;
    entry.map.render(entry.matrix, { width: fitWidth || undefined });
  });
  if (stageMaps.rebuilt) renderExports();
  stageMaps.rebuilt = false;
  if (pinned) {
    const entry = stageMaps.find((m) => m.step.id === pinned.stepId && m.step.head === pinned.head);
    if (entry && pinned.row < entry.matrix.rows && pinned.col < entry.matrix.cols) inspect(entry.step, entry.matrix, pinned, true);
  }
}

function renderExports() {
  const host = $('exports');
  host.replaceChildren();
  for (const entry of stageMaps) {
    const { step, map } = entry; // id and head stay; the numbers are read at click time
    const group = el('div', 'export-group');
    group.append(el('span', 'muted small', `${step.id}${step.head >= 0 ? ` (head ${step.head + 1})` : ''}:`));
    const stem = fileStem(step);
    const actions = [
      ['PNG', async () => download(await map.toPngBlob(), `${stem}.png`)],
      ['JSON', () => download(new Blob([stepJson(entry.step, entry.matrix)], { type: 'application/json' }), `${stem}.json`)],
      ['CSV', () => download(new Blob([stepCsv(entry.matrix)], { type: 'text/csv' }), `${stem}.csv`)],
    ];
    for (const [label, action] of actions) {
      const b = el('button', 'small-button', label);
      b.type = 'button';
      b.dataset.export = `${step.id}-${label.toLowerCase()}`;
      b.setAttribute('aria-label', `Download ${step.title} as ${label}`);
      b.addEventListener('click', action);
      group.append(b);
    }
    host.append(group);
  }
}

let inspectToken = 0;

async function inspect(step, matrix, cell, isPinned) {
  if (!cell) return; // leaving a heatmap keeps the last explanation (and a pinned one)
  const token = ++inspectToken;
  try {
    const explanation = await engine.explain({ step: step.id, head: step.head, row: cell.row, col: cell.col });
    if (token !== inspectToken) return;
    renderExplanation($('inspector'), explanation, {
      rowLabel: matrix.rowLabels[cell.row], colLabel: matrix.colLabels[cell.col],
      rowAxis: matrix.rowAxis, colAxis: matrix.colAxis, pinned: isPinned,
    }, typeset);
  } catch (error) {
    if (token === inspectToken) $('inspector').replaceChildren(el('p', 'error-inline', error.message));
  }
}

function activate(step, matrix, cell) {
  if ($('cellmask').checked && QUERY_KEY_STEPS.has(step.id)) {
    const exists = state.cells.some(([i, j]) => i === cell.row && j === cell.col);
    const cells = exists ? state.cells.filter(([i, j]) => !(i === cell.row && j === cell.col))
      : [...state.cells, [cell.row, cell.col]];
    update({ cells });
    return;
  }
  const same = pinned && pinned.stepId === step.id && pinned.head === step.head && pinned.row === cell.row && pinned.col === cell.col;
  pinned = same ? null : { stepId: step.id, head: step.head, row: cell.row, col: cell.col };
  for (const m of stageMaps) {
    m.map.pinned = pinned && m.step === step ? cell : null;
    m.map.draw();
  }
  inspect(step, matrix, cell, !same);
}

function renderHeads(tileWidth) {
  const host = $('heads-view');
  if (!result.attention && !result.headPreviews) {
    host.replaceChildren(el('p', 'muted', 'No attention weights.'));
    return;
  }
  if (state.view === 'lines' && !result.attention) { // long inputs: the core kept the weights
    host.className = 'heads';
    host.replaceChildren(el('p', 'muted', `The line view draws inputs of up to ${PREVIEW_SIDE} tokens ` +
      `(these are ${result.n}); the heatmaps show every head.`));
    return;
  }
  if (state.view === 'lines') {
    const toggle = el('label', 'inline small');
    const box = el('input');
    box.type = 'checkbox';
    box.checked = renderHeads.allHeads ?? false;
    box.addEventListener('change', () => { renderHeads.allHeads = box.checked; renderHeads(); });
    toggle.append(box, ' overlay all heads');
    const lines = el('div');
    host.replaceChildren(toggle, lines);
    host.className = 'heads';
    drawHeadLines(lines, result, state.head, box.checked);
  } else {
    drawHeadGrid(host, result, state.head, (h) => update({ head: h }) /* the trace holds the head on screen */, tileWidth);
  }
}

// ---- walkthrough navigation ---------------------------------------------------------------------

function go(delta) {
  if (!result) return false;
  const stages = availableStages(result.steps);
  const index = stages.indexOf(currentStage());
  const next = stages[index + delta];
  if (!next) return false;
  update({ stage: next.id }, { recompute: false });
  return true;
}

function setPlaying(on) {
  clearInterval(playing);
  playing = null;
  $('play').setAttribute('aria-pressed', String(on));
  $('play').textContent = on ? 'Pause' : 'Play';
  if (!on) return;
  const stages = availableStages(result.steps);
  if (currentStage() === stages[stages.length - 1]) update({ stage: stages[0].id }, { recompute: false });
  playing = setInterval(() => { if (!go(1)) setPlaying(false); }, 2200);
}

// ---- wiring -----------------------------------------------------------------------------------

function wireControls() {
  for (const [key, field] of Object.entries(fields)) {
    const input = $(field.id);
    const event = field.kind === 'text' || field.kind === 'int' ? 'input' : 'change';
    input.addEventListener(event, () => {
      let value = field.kind === 'check' ? input.checked : input.value;
      if (field.kind === 'int') {
        if (input.value.trim() === '') return; // still typing
        value = Number(input.value);
        if (!Number.isInteger(value) || value < Number(input.min || 0) || value > Number(input.max || 4294967295)) {
          showError(`${key} must be a whole number from ${input.min} to ${input.max}`);
          return;
        }
      }
      const patch = { [key]: value };
      if (key === 'preset') {
        pinned = null;
        patch.mask = value === 'seed001-causal' ? 'causal' : 'none';
        patch.head = 0;
        patch.cells = [];
      }
      if (['text', 'source', 'tokenizer', 'dModel', 'heads', 'cross', 'mask', 'padTo'].includes(key)) pinned = null;
      update(patch);
    });
  }
  $('examples').replaceChildren(...EXAMPLES.map((example) => {
    const b = el('button', 'example', example.label);
    b.type = 'button';
    b.addEventListener('click', () => { pinned = null; update({ text: example.text, preset: '' }); });
    return b;
  }));
  $('prev').addEventListener('click', () => go(-1));
  $('next').addEventListener('click', () => go(1));
  $('play').addEventListener('click', () => setPlaying(!playing));
  $('view-grid').addEventListener('click', () => update({ view: 'grid' }, { recompute: false }));
  $('view-lines').addEventListener('click', () => update({ view: 'lines' }, { recompute: false }));
  document.addEventListener('keydown', (event) => {
    const tag = event.target?.tagName;
    if (['INPUT', 'TEXTAREA', 'SELECT', 'CANVAS'].includes(tag) || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === 'ArrowRight' || event.key === 'ArrowLeft') {
      if (go(event.key === 'ArrowRight' ? 1 : -1)) event.preventDefault();
    } else if (event.key === 'p' || event.key === 'P') {
      setPlaying(!playing);
    }
  });
  window.addEventListener('hashchange', () => {
    const { state: next, ignored } = hashToState(location.hash);
    if (stateToHash(next) === stateToHash(state)) return;
    linkNotice = ignored.length ? `Ignored in the link: ${ignored.join(', ')}.` : '';
    showNotice('');
    pinned = null;
    state = next;
    syncControls();
    compute();
  });
  let resizeTimer = 0;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(render, 150);
  });
  wireWeightsFile();
  wireShareAndEmbed();
  wireTheme();
}

function wireWeightsFile() {
  $('weights-file').addEventListener('change', async () => {
    const file = $('weights-file').files?.[0];
    if (!file) return;
    if (file.size > 64 * 1024 * 1024) {
      showError(`${file.name} is ${Math.round(file.size / 1048576)} MiB; weight files up to 64 MiB are accepted`);
      return;
    }
    try {
      const bytes = new Uint8Array(await file.arrayBuffer());
      result = await engine.loadWeights(file.name, bytes, state);
      showError(null);
      render();
    } catch (error) {
      showError(`Could not load ${file.name}: ${error.message}`);
    } finally {
      $('weights-file').value = '';
    }
  });
  $('weights-clear').addEventListener('click', async () => {
    await engine.clearWeights();
    compute();
  });
  $('weights-save').addEventListener('click', async () => {
    try {
      const bytes = await engine.saveWeights();
      download(new Blob([bytes], { type: 'application/octet-stream' }), 'attention-weights.safetensors');
    } catch (error) {
      showError(error.message);
    }
  });
}

function pageUrl() {
  return location.href.split('#')[0] + stateToHash(state);
}

function wireShareAndEmbed() {
  $('share').addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(pageUrl());
      showNotice('Link copied: it restores this exact view.');
    } catch {
      showNotice(`Copy this link: ${pageUrl()}`);
    }
  });
  const dialog = $('embed-dialog');
  $('embed').addEventListener('click', () => {
    $('embed-element').value = elementSnippet(state);
    $('embed-iframe').value = iframeSnippet(pageUrl());
    dialog.showModal();
  });
  $('embed-close').addEventListener('click', () => dialog.close());
  $('embed-copy').addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText($('embed-element').value);
      $('embed-copy').textContent = 'Copied';
    } catch {
      $('embed-element').select();
    }
  });
}

const THEMES = ['auto', 'light', 'dark'];

function applyTheme(theme) {
  if (theme === 'auto') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
  $('theme').textContent = `Theme: ${theme}`;
  try { localStorage.setItem('attention-lens-theme', theme); } catch { /* storage may be off */ }
}

function wireTheme() {
  let theme = 'auto';
  try { theme = localStorage.getItem('attention-lens-theme') ?? 'auto'; } catch { /* storage may be off */ }
  if (!THEMES.includes(theme)) theme = 'auto';
  applyTheme(theme);
  $('theme').addEventListener('click', () => {
    theme = THEMES[(THEMES.indexOf(theme) + 1) % THEMES.length];
    applyTheme(theme);
    render();
  });
  matchMedia('(prefers-color-scheme: dark)').addEventListener?.('change', () => render());
}

async function main() {
  const parsed = hashToState(location.hash);
  state = parsed.state;
  if (parsed.ignored.length) linkNotice = `Ignored in the link: ${parsed.ignored.join(', ')}.`;
  showNotice('');
  wireControls();
  syncControls();
  engine = await EngineClient.start(new URL('attention-lens.mjs', document.baseURI).href);
  compute();
}

main().catch((error) => {
  showError(`Could not start: ${error.message}`);
  document.body.dataset.ready = 'true';
});
