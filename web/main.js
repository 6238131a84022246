// The minimal page: tokens from the text box, one attention head as a heatmap. Everything is
// computed by the core through the public API (dist/attention-lens.mjs); nothing here does
// attention math. User text is only ever placed with textContent, never parsed as HTML.

const $ = (id) => document.getElementById(id);
const controls = ['text', 'mode', 'dModel', 'heads', 'mask', 'positional', 'seed', 'head'];

// Magma, from light to dark: probabilities 0 → 1 (sequential, colour-blind safe).
const MAGMA = [[252, 253, 191], [252, 137, 97], [183, 55, 121], [81, 18, 124], [0, 0, 4]];
function magma(t) {
  const x = Math.min(1, Math.max(0, t)) * (MAGMA.length - 1);
  const i = Math.min(MAGMA.length - 2, Math.floor(x));
  const f = x - i;
  const rgb = MAGMA[i].map((c, k) => Math.round(c + (MAGMA[i + 1][k] - c) * f));
  return { css: `rgb(${rgb.join(',')})`, dark: rgb[0] * 0.299 + rgb[1] * 0.587 + rgb[2] * 0.114 < 140 };
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function showError(message) {
  $('error').hidden = !message;
  $('error').textContent = message ?? '';
}

function drawTokens(tokens) {
  $('tokens').replaceChildren(...tokens.map((t) => element('span', 'chip', t)));
}

function drawHeatmap(tokens, weights, head, n) {
  const grid = $('heatmap');
  grid.style.gridTemplateColumns = `auto repeat(${n}, minmax(2rem, 1fr))`;
  const showNumbers = n <= 12;
  const cells = [element('div', 'label')];
  for (const token of tokens) cells.push(element('div', 'label col-label', token));
  for (let i = 0; i < n; ++i) {
    cells.push(element('div', 'label row-label', tokens[i]));
    for (let j = 0; j < n; ++j) {
      const value = weights[(head * n + i) * n + j];
      const cell = element('div', 'cell', showNumbers ? value.toFixed(2) : '');
      const color = magma(value);
      cell.style.background = color.css;
      cell.style.color = color.dark ? '#fff' : '#000';
      cell.title = `query "${tokens[i]}" → key "${tokens[j]}": ${value.toFixed(4)}`;
      cell.setAttribute('role', 'cell');
      cells.push(cell);
    }
  }
  grid.replaceChildren(...cells);
}

async function main() {
  const api = await import(/* @vite-ignore */ new URL('attention-lens.mjs', document.baseURI).href);
  const lens = await api.loadAttentionLens();
  let layer = null;
  let layerKey = '';

  function update() {
    const config = {
      dModel: Number($('dModel').value),
      heads: Number($('heads').value),
      positional: $('positional').value,
      seed: Number($('seed').value),
    };
    const key = JSON.stringify(config);
    try {
      if (key !== layerKey) {
        const next = lens.createLayer(config);
        layer?.dispose();
        layer = next;
        layerKey = key;
        const headSelect = $('head');
        const current = Math.min(Number(headSelect.value || 0), config.heads - 1);
        headSelect.replaceChildren(
          ...Array.from({ length: config.heads }, (_, h) => element('option', '', String(h + 1))));
        [...headSelect.options].forEach((o, h) => { o.value = String(h); });
        headSelect.value = String(current);
        $('dk').textContent = `(d_k = ${layer.config.headDim})`;
      }
      const { tokens, ids } = lens.tokenize($('text').value, { mode: $('mode').value });
      drawTokens(tokens);
      if (tokens.length === 0) {
        $('heatmap').replaceChildren();
        showError('Type some text to see its attention.');
        return;
      }
      const started = performance.now();
      const x = layer.embed(ids);
      const result = layer.forward(x, { n: tokens.length, mask: $('mask').value });
      const elapsed = performance.now() - started;
      showError(null);
      drawHeatmap(tokens, result.attention, Number($('head').value), tokens.length);
      $('status').textContent = `${tokens.length} tokens · ${config.heads} heads · computed in ${elapsed.toFixed(2)} ms (${lens.simd} SIMD)`;
    } catch (error) {
      showError(error.message);
    }
  }

  for (const id of controls) $(id).addEventListener('input', update);
  update();
  document.body.dataset.ready = 'true';
}

main().catch((error) => showError(`Could not start: ${error.message}`));
