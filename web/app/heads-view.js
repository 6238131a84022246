// "Every head": small multiples of each head's attention weights, and a line view (token-to-
// token links weighted by attention, as BertViz draws them). Draws the core's weights as given.
import { HEAD_COLORS } from './colors.js';
import { formatNumber } from './format.js';
import { Heatmap } from './heatmap.js';
import { displayToken } from './labels.js';

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, attributes = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, String(v));
  return node;
}

/** The [n, kvN] weights of one head from the forward's attention [heads, n, kvN]. */
export const headWeights = (result, h) => result.attention.subarray(h * result.n * result.kvN, (h + 1) * result.n * result.kvN);

/**
 * Small multiples: one compact heatmap per head; click (or Enter) focuses that head. The tiles
 * are kept between calls with the same number of heads (only redrawn), so typing does not
 * rebuild them. tileWidth: a tile's width if the caller measured it already.
 */
export function drawHeadGrid(host, result, focusedHead, onFocus, tileWidth) {
  const heads = result.config.heads;
  host.className = 'heads heads-grid';
  if (host.headTiles?.length !== heads || !host.contains(host.headTiles[0]?.tile)) {
    host.replaceChildren();
    host.headTiles = Array.from({ length: heads }, (_, h) => {
      const tile = document.createElement('div');
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'head-button';
      button.textContent = `Head ${h + 1}`;
      button.addEventListener('click', () => host.onFocusHead(h));
      const figure = document.createElement('div');
      tile.append(button, figure);
      host.append(tile);
      return { tile, button, figure, map: null };
    });
    // Every tile is in the document before the first is measured: one layout, not one per tile.
    host.headTiles.forEach((entry, h) => {
      entry.map = new Heatmap(entry.figure, { maxCell: 16, minCell: 0, labels: false, legend: false,
        caption: false, table: false, onActivate: () => host.onFocusHead(h) });
    });
  }
  host.onFocusHead = onFocus;
  // All tiles are as wide: one layout read (none when the caller measured before drawing).
  const width = tileWidth || host.headTiles[0].figure.clientWidth;
  // Long inputs: the engine's max-pooled previews of every head (the same image, far fewer cells).
  const preview = result.headPreviews;
  const step = preview?.step ?? 1;
  const everyStep = (labels) => labels.filter((_, i) => i % step === 0);
  host.headTiles.forEach(({ tile, button, map }, h) => {
    tile.className = `head-tile${h === focusedHead ? ' focused' : ''}`;
    button.setAttribute('aria-pressed', String(h === focusedHead));
    map.render({
      ...(preview
        ? { data: preview.data.subarray(h * preview.rows * preview.cols, (h + 1) * preview.rows * preview.cols),
          rows: preview.rows, cols: preview.cols, shape: [result.n, result.kvN] }
        : { data: headWeights(result, h), rows: result.n, cols: result.kvN }),
      rowLabels: everyStep(result.queryTokens),
      colLabels: everyStep(result.keyTokens),
      rowAxis: 'query',
      colAxis: 'key',
      title: `Head ${h + 1}`,
      scale: 'probability',
    }, { width });
  });
}

/**
 * Line view: queries on the left, keys on the right, one line per (query, key) pair with
 * opacity and width from the weight. Hovering or focusing a query shows only its lines.
 */
export function drawHeadLines(host, result, focusedHead, allHeads) {
  host.replaceChildren();
  host.className = 'heads heads-lines';
  const { n, kvN } = result;
  const rowHeight = 22;
  const width = Math.min(520, Math.max(280, (host.clientWidth || 520) - 8));
  const height = Math.max(n, kvN) * rowHeight + 30;
  const root = svg('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img',
    'aria-label': `Attention lines for ${allHeads ? 'all heads' : `head ${focusedHead + 1}`}: queries on the left, keys on the right` });
  const leftX = 110;
  const rightX = width - 110;
  const y = (i) => 24 + i * rowHeight + rowHeight / 2;
  const heads = allHeads ? [...Array(result.config.heads).keys()] : [focusedHead];
  const lines = svg('g', { class: 'lines' });
  for (const h of heads) {
    const weights = headWeights(result, h);
    const colour = HEAD_COLORS[h % HEAD_COLORS.length];
    for (let i = 0; i < n; ++i) {
      for (let j = 0; j < kvN; ++j) {
        const w = weights[i * kvN + j];
        if (!(w > 0.01)) continue;
        const line = svg('line', { x1: leftX + 4, y1: y(i), x2: rightX - 4, y2: y(j), stroke: colour,
          'stroke-opacity': Math.min(1, w * (allHeads ? 0.9 : 1.1)).toFixed(3), 'stroke-width': (0.5 + 4 * w).toFixed(2),
          'data-query': i });
        const tip = svg('title');
        tip.textContent = `head ${h + 1}: ${result.queryTokens[i]} → ${result.keyTokens[j]} ${formatNumber(w, 3)}`;
        line.append(tip);
        lines.append(line);
      }
    }
  }
  const queryTitle = svg('text', { x: leftX, y: 12, 'text-anchor': 'end', class: 'axis-name' });
  queryTitle.textContent = 'query';
  const keyTitle = svg('text', { x: rightX, y: 12, class: 'axis-name' });
  keyTitle.textContent = 'key';
  root.append(queryTitle, keyTitle, lines);
  const highlight = (i) => {
    for (const line of lines.children) line.classList.toggle('dim', i !== null && Number(line.dataset.query) !== i);
  };
  result.queryTokens.forEach((token, i) => {
    const label = svg('text', { x: leftX - 6, y: y(i), 'text-anchor': 'end', 'dominant-baseline': 'middle',
      class: 'token-label', tabindex: 0 });
    const shown = displayToken(token);
    label.textContent = shown.length > 14 ? `${shown.slice(0, 13)}…` : shown;
    for (const [event, value] of [['mouseenter', i], ['focus', i], ['mouseleave', null], ['blur', null]]) {
      label.addEventListener(event, () => highlight(value));
    }
    root.append(label);
  });
  result.keyTokens.forEach((token, j) => {
    const label = svg('text', { x: rightX + 6, y: y(j), 'dominant-baseline': 'middle', class: 'token-label' });
    const shown = displayToken(token);
    label.textContent = shown.length > 14 ? `${shown.slice(0, 13)}…` : shown;
    root.append(label);
  });
  host.append(root);
  if (allHeads) {
    const key = document.createElement('p');
    key.className = 'small';
    for (const h of heads) {
      const swatch = document.createElement('span');
      swatch.className = 'swatch';
      swatch.style.background = HEAD_COLORS[h % HEAD_COLORS.length];
      key.append(swatch, ` head ${h + 1}  `);
    }
    host.append(key);
  }
}
