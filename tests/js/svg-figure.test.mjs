// The SVG figure writer (web/shared/svg-figure.js) without a browser: its output parsed by a strict
// little XML reader here (well-formed, only the five entities and character references, one root),
// token labels read back equal to the tokens, hostile token text kept as text, every cell's colour
// equal to the canvas's (colors.js matrixPixels), and the size of a 64-token figure reported.
// tests/e2e/figures.test.mjs renders the same files in Chromium against the page's canvas.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { labelBoxes, labelPlan } from '../../web/shared/axis-labels.js';
import { makeScale, matrixPixels } from '../../web/shared/colors.js';
import { colorPositions, logFloor } from '../../web/shared/color-scale.js';
import { escapeXml, estimateWidth, gridSvg, heatmapSvg, SvgContext, plotSvg } from '../../web/shared/svg-figure.js';

// ---- a strict, minimal XML reader: elements, attributes, text; throws on anything malformed ----

const NAME = /^[A-Za-z_][\w.:-]*/;
const ENTITY = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decode(raw, where) {
  if (raw.includes('<')) throw new Error(`a raw < in ${where}`);
  return raw.replace(/&([^;]*);|&/g, (match, name) => {
    if (name === undefined) throw new Error(`a bare & in ${where}`);
    if (ENTITY[name]) return ENTITY[name];
    const hex = /^#x([0-9a-f]+)$/i.exec(name);
    const dec = /^#(\d+)$/.exec(name);
    if (hex || dec) return String.fromCodePoint(parseInt(hex ? hex[1] : dec[1], hex ? 16 : 10));
    throw new Error(`an unknown entity &${name}; in ${where}`);
  });
}

/** Parses one XML document into { name, attributes, children: (element | string)[] }. */
function parseXml(xml) {
  // XML 1.0 Char: no C0 controls but tab / line breaks, no U+FFFE/F, no unpaired surrogates.
  if (/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(xml)) {
    throw new Error('a character XML cannot hold');
  }
  let at = 0;
  const stack = [{ name: '#document', attributes: {}, children: [] }];
  while (at < xml.length) {
    const lt = xml.indexOf('<', at);
    const textEnd = lt < 0 ? xml.length : lt;
    if (textEnd > at) {
      const text = decode(xml.slice(at, textEnd), 'text');
      if (stack.length === 1) {
        if (text.trim()) throw new Error('text outside the root element');
      } else {
        stack.at(-1).children.push(text);
      }
    }
    if (lt < 0) break;
    if (xml.startsWith('</', lt)) {
      const end = xml.indexOf('>', lt);
      const name = xml.slice(lt + 2, end).trim();
      const open = stack.pop();
      if (open.name !== name) throw new Error(`</${name}> closes <${open.name}>`);
      at = end + 1;
      continue;
    }
    let i = lt + 1;
    const name = NAME.exec(xml.slice(i))?.[0];
    if (!name) throw new Error(`a tag without a name at ${lt}`);
    i += name.length;
    const attributes = {};
    for (;;) {
      const space = /^\s*/.exec(xml.slice(i))[0].length;
      i += space;
      if (xml.startsWith('/>', i) || xml[i] === '>') break;
      if (!space) throw new Error(`no space before an attribute of <${name}>`);
      const key = NAME.exec(xml.slice(i))?.[0];
      if (!key || xml[i + key.length] !== '=' || xml[i + key.length + 1] !== '"') throw new Error(`a malformed attribute of <${name}>`);
      const close = xml.indexOf('"', i + key.length + 2);
      if (key in attributes) throw new Error(`${key} twice on <${name}>`);
      attributes[key] = decode(xml.slice(i + key.length + 2, close), `${name}@${key}`);
      i = close + 1;
    }
    const element = { name, attributes, children: [] };
    if (stack.length === 1 && stack[0].children.some((c) => typeof c !== 'string')) throw new Error('a second root element');
    stack.at(-1).children.push(element);
    if (xml.startsWith('/>', i)) {
      at = i + 2;
    } else {
      stack.push(element);
      at = i + 1;
    }
  }
  if (stack.length !== 1) throw new Error(`<${stack.at(-1).name}> never closed`);
  const roots = stack[0].children.filter((c) => typeof c !== 'string');
  if (roots.length !== 1) throw new Error('no root element');
  return roots[0];
}

const textOf = (node) => node.children.map((c) => (typeof c === 'string' ? c : textOf(c))).join('');
function* elements(node) {
  yield node;
  for (const c of node.children) if (typeof c !== 'string') yield* elements(c);
}
const find = (root, predicate) => [...elements(root)].filter(predicate);
const groupOf = (root, cls) => find(root, (e) => e.attributes.class === cls)[0];

// ---- figures to write ----

const STYLE = { family: "system-ui, 'Segoe UI', sans-serif", '--surface': '#ffffff', '--ink': '#111111', '--muted': '#666666',
  '--masked': '#9a9a9a' };

/**
 * The layout a Heatmap computes for `cell` px cells with the labels of `matrix` (only what the writer
 * reads; widths estimated as the writer estimates them).
 */
function layoutOf(matrix, cell, extra = {}) {
  const { rows, cols } = matrix;
  const labelPx = Math.max(9, Math.min(12, cell - 3));
  const texts = { rowTexts: matrix.rowLabels, colTexts: matrix.colLabels, rowWidths: matrix.rowLabels.map((l) => estimateWidth(l, labelPx)),
    colWidths: matrix.colLabels.map((l) => estimateWidth(l, labelPx)) };
  const plan = labelPlan({ ...texts, cell, px: labelPx });
  const width = plan.left + cols * cell + 8;
  return { left: plan.left, top: plan.top, cell, width, height: plan.top + rows * cell + 4, labelPx,
    labels: labelBoxes({ ...texts, left: plan.left, top: plan.top, cell, width }, plan), axisNames: true, hatch: cell >= 6,
    marked: cell >= 6, values: cell >= 34, cellLabels: false, ...extra };
}

/** heatmapSvg of a matrix as a Heatmap would hand it over (its scale and colour positions computed as the Heatmap does). */
function figureOf(matrix, layout, { colorScale = 'linear', provenance = { view: 'test' } } = {}) {
  const scale = makeScale(matrix.scale, matrix.data);
  const floor = logFloor(matrix.cols);
  const positions = matrix.scale === 'probability' ? colorPositions(matrix, colorScale, floor) : matrix.data;
  return { svg: heatmapSvg({ matrix, positions, scale, colorScale, logFloor: floor, layout, style: STYLE, provenance }), scale, positions };
}

/** A seeded [rows, cols] attention matrix: softmax rows, causal (−∞ above the diagonal) when `mask` says so. */
function attention(n, { causal = false, seed = 7, raw = false } = {}) {
  let state = seed;
  const random = () => ((state = (state * 1103515245 + 12345) >>> 0) / 2 ** 32);
  const data = new Float32Array(n * n);
  for (let r = 0; r < n; ++r) {
    let sum = 0;
    for (let c = 0; c < n; ++c) {
      const visible = !causal || c <= r;
      const e = visible ? Math.exp(4 * random()) : 0;
      data[r * n + c] = raw && !visible ? -Infinity : e;
      sum += e;
    }
    if (!raw) for (let c = 0; c < n; ++c) data[r * n + c] /= sum;
  }
  return data;
}

/** The colour of every cell as the SVG paints it: the background rect, then each path's runs ("M c r", "m dc dr", "h len v1 h-len z"). */
function paintedCells(root, rows, cols, group = find(root, (e) => e.attributes['shape-rendering'] === 'crispEdges')[0]) {
  const [background, ...paths] = group.children;
  assert.equal(background.name, 'rect');
  assert.deepEqual([Number(background.attributes.width), Number(background.attributes.height)], [cols, rows]);
  const painted = new Array(rows * cols).fill(background.attributes.fill);
  for (const path of paths) {
    assert.equal(path.name, 'path');
    const runs = [...path.attributes.d.matchAll(/([Mm])(-?\d+) (-?\d+)h(\d+)v1h-(\d+)z/g)];
    assert.equal(runs.map((m) => m[0]).join(''), path.attributes.d, 'the path holds nothing but runs');
    let x = 0;
    let y = 0;
    for (const [, command, a, b, length, back] of runs) {
      [x, y] = command === 'M' ? [Number(a), Number(b)] : [x + Number(a), y + Number(b)];
      assert.equal(length, back);
      for (let c = x; c < x + Number(length); ++c) painted[y * cols + c] = path.attributes.fill;
    }
  }
  return painted;
}

/** The canvas's colour of every cell: colors.js matrixPixels (what Heatmap draws), masked cells the masked colour. */
function canvasCells(positions, rows, cols, scale, step = 1) {
  const pixels = matrixPixels({ data: positions, rows, cols }, scale, step, new Uint32Array(Math.ceil(rows / step) * Math.ceil(cols / step)));
  const hex = (p, shift) => ((p >>> shift) & 255).toString(16).padStart(2, '0');
  return Array.from(pixels, (p) => (p === 0 ? STYLE['--masked'] : `#${hex(p, 0)}${hex(p, 8)}${hex(p, 16)}`));
}

// ---- tests ----

test('escapeXml turns markup characters into entities and characters XML cannot hold into U+FFFD', () => {
  assert.equal(escapeXml('<script>alert("x") & \'y\'</script>'), '&lt;script&gt;alert(&quot;x&quot;) &amp; &apos;y&apos;&lt;/script&gt;');
  assert.equal(escapeXml('a\u0001b\u0008c\td\ne'), 'a\uFFFDb\uFFFDc\td\ne');
  assert.equal(escapeXml('\uD800x\uDC00'), '\uFFFDx\uFFFD'); // unpaired surrogates
  assert.equal(escapeXml('🦊 שלום'), '🦊 שלום'); // a pair and right-to-left text stay as they are
  assert.equal(escapeXml(12), '12');
});

test('the reader in this test refuses what is not well-formed (it can fail)', () => {
  assert.throws(() => parseXml('<svg><text>a < b</text></svg>'), /without a name/);
  assert.throws(() => parseXml('<svg><text>a & b</text></svg>'), /bare &/);
  assert.throws(() => parseXml('<svg><g></svg>'), /closes/);
  assert.throws(() => parseXml('<svg><text>\u0001</text></svg>'), /cannot hold/);
  assert.throws(() => parseXml('<svg a="1" a="2"/>'), /twice/);
  assert.equal(textOf(parseXml('<svg><text>a &amp; &#x3c;b&#62;</text></svg>')), 'a & <b>');
});

test('hostile token text stays text: labels read back equal to the tokens, no element comes from them', () => {
  const tokens = ['<script>alert(1)</script>', 'a & b', '"quoted"', "it's", 'שלום', '🦊', ']]><x/>', 'tab\tend'];
  const n = tokens.length;
  const matrix = { data: attention(n, { causal: true }), rows: n, cols: n, rowLabels: tokens, colLabels: tokens, rowAxis: 'query',
    colAxis: 'key', scale: 'probability', title: 'Head <1> & "friends"' };
  const provenance = { view: 'test', text: tokens.join(' '), model: { id: 'org/<model>', revision: 'step1000' } };
  const { svg } = figureOf(matrix, layoutOf(matrix, 44), { provenance });
  const root = parseXml(svg);
  assert.equal(root.name, 'svg');
  assert.equal(root.attributes.xmlns, 'http://www.w3.org/2000/svg');
  const names = new Set([...elements(root)].map((e) => e.name));
  for (const name of names) assert.ok(['svg', 'title', 'desc', 'metadata', 'rect', 'text', 'g', 'path', 'defs', 'linearGradient', 'stop'].includes(name), name);
  const labels = groupOf(root, 'labels').children.map(textOf);
  assert.deepEqual(labels.slice(0, n), tokens, 'row labels');
  assert.deepEqual(labels.slice(n), tokens, 'column labels');
  assert.equal(textOf(find(root, (e) => e.name === 'title')[0]), matrix.title);
  assert.deepEqual(groupOf(root, 'axis-names').children.map(textOf), ['key →', 'query →']);
  const metadata = JSON.parse(textOf(find(root, (e) => e.name === 'metadata')[0]));
  assert.deepEqual(metadata, provenance);
  // A label with characters XML cannot hold is written with U+FFFD in their place, and the file still parses.
  const odd = { ...matrix, rowLabels: ['a\u0001b', ...tokens.slice(1)] };
  assert.equal(groupOf(parseXml(figureOf(odd, layoutOf(odd, 44)).svg), 'labels').children.map(textOf)[0], 'a\uFFFDb');
});

test('every cell is painted with the canvas colour function\'s colour (linear, log, per-row; diverging with −∞ and NaN)', () => {
  const n = 24;
  const probabilities = { data: attention(n, { causal: true }), rows: n, cols: n, rowLabels: [], colLabels: [], rowAxis: 'query',
    colAxis: 'key', scale: 'probability', title: 'weights' };
  for (const colorScale of ['linear', 'log', 'row']) {
    const { svg, scale, positions } = figureOf(probabilities, layoutOf(probabilities, 10), { colorScale });
    assert.deepEqual(paintedCells(parseXml(svg), n, n), canvasCells(positions, n, n, scale), colorScale);
  }
  const scores = attention(n, { causal: true, raw: true }).map((v, i) => (i === 10 * n + 2 ? NaN : Number.isFinite(v) ? v - 30 : v));
  const signed = { ...probabilities, data: scores, scale: 'diverging', title: 'masked scores' };
  const { svg, scale, positions } = figureOf(signed, layoutOf(signed, 10));
  const painted = paintedCells(parseXml(svg), n, n);
  assert.deepEqual(painted, canvasCells(positions, n, n, scale));
  assert.equal(painted[1], STYLE['--masked'], 'a masked cell is the masked colour');
  assert.equal(painted[10 * n + 2], STYLE['--masked'], 'a NaN cell (no value) is drawn as masked');
  // Hatching: one line per anti-diagonal run of masked cells (the canvas strokes one per cell, along the same line).
  const hatch = find(parseXml(svg), (e) => e.name === 'path' && e.attributes.stroke === '#fff')[0];
  assert.ok(hatch, 'masked cells are hatched');
  // The causal mask's 2n − 3 anti-diagonals, and the NaN cell on its own.
  assert.equal(hatch.attributes.d.split('M').length - 1, 2 * n - 2, 'one stroke per anti-diagonal run of masked cells');
});

test('numbers and per-cell tokens are written where the canvas writes them, hostile ones as text', () => {
  const n = 4;
  const cellLabels = Array.from({ length: n * n }, (_, i) => (i === 0 ? '<b>' : i === 1 ? 'a&b' : `t${i}`));
  const lens = { data: attention(n), rows: n, cols: n, rowLabels: ['L1', 'L2', 'L3', 'L4'], colLabels: ['0', '1', '2', '3'],
    rowAxis: 'layer', colAxis: 'position', scale: 'probability', title: 'logit lens', cellLabels };
  const withLabels = parseXml(figureOf(lens, layoutOf(lens, 44, { cellLabels: true, values: false })).svg);
  const written = find(withLabels, (e) => e.attributes['text-anchor'] === 'middle' && e.name === 'g')[0].children.map(textOf);
  assert.deepEqual(written, cellLabels);
  const numbers = parseXml(figureOf({ ...lens, cellLabels: undefined }, layoutOf(lens, 44)).svg);
  const values = find(numbers, (e) => e.name === 'g' && e.attributes['font-size'] === '11' && e.attributes['text-anchor'] === 'middle')[0];
  assert.deepEqual(values.children.map((t) => Number(textOf(t))), Array.from(lens.data, (v) => Number(v.toFixed(2))));
  // Small cells: no numbers, as on the canvas.
  assert.equal(find(parseXml(figureOf(lens, layoutOf(lens, 20, { cellLabels: false })).svg), (e) => e.name === 'text').length,
    1 + 2 * n + 2 + 3 + 1, 'the title, row and column labels, axis names, three ticks and the legend words only');
});

test('a 64-token heatmap\'s SVG is a few tens of KB', (t) => {
  const n = 64;
  const tokens = Array.from({ length: n }, (_, i) => ` token${i}`);
  const sizes = {};
  for (const causal of [true, false]) {
    const matrix = { data: attention(n, { causal }), rows: n, cols: n, rowLabels: tokens, colLabels: tokens, rowAxis: 'query',
      colAxis: 'key', scale: 'probability', title: `64 tokens, ${causal ? 'causal' : 'full'} attention` };
    const { svg } = figureOf(matrix, layoutOf(matrix, 14), { provenance: { view: 'test', text: tokens.join('') } });
    parseXml(svg);
    sizes[causal ? 'causal' : 'full'] = Buffer.byteLength(svg);
  }
  t.diagnostic(`64×64 SVG: causal ${(sizes.causal / 1024).toFixed(1)} KB, full ${(sizes.full / 1024).toFixed(1)} KB`);
  console.log(`64×64 SVG: causal ${(sizes.causal / 1024).toFixed(1)} KB, full ${(sizes.full / 1024).toFixed(1)} KB`);
  assert.ok(sizes.causal < 80 * 1024 && sizes.full < 80 * 1024, JSON.stringify(sizes));
});

test('small multiples: each tile\'s cells painted with the canvas\'s colours, labelled, pooled when large', () => {
  const scale = makeScale('probability');
  const tiles = [0, 1, 2, 3].map((i) => ({ label: `H${i + 1} <&>`, row: Math.floor(i / 2), col: i % 2, rows: 12, cols: 12,
    positions: attention(12, { causal: true, seed: i + 1 }) }));
  const root = parseXml(gridSvg({ title: 'heads', tiles, rowNames: ['Layer 1', 'Layer 2'], scale, style: STYLE, provenance: { view: 'test' } }));
  const groups = find(root, (e) => e.attributes['shape-rendering'] === 'crispEdges');
  assert.equal(groups.length, 4);
  tiles.forEach((t, i) => assert.deepEqual(paintedCells(root, 12, 12, groups[i]), canvasCells(t.positions, 12, 12, scale), t.label));
  const texts = find(groupOf(root, 'tiles'), (e) => e.name === 'text').map(textOf);
  assert.deepEqual(texts, [...tiles.map((t) => t.label), 'Layer 1', 'Layer 2']);
  // 144 heads of 64 tokens: pooled so that the figure stays ~150 000 cells (32 a side here), and said so.
  const many = Array.from({ length: 144 }, (_, i) => ({ label: `H${i}`, row: Math.floor(i / 12), col: i % 12, rows: 64, cols: 64,
    positions: attention(64, { seed: i + 1 }) }));
  const big = gridSvg({ title: 'GPT-2-sized', tiles: many, scale, style: STYLE });
  const bigRoot = parseXml(big);
  assert.equal(find(bigRoot, (e) => e.attributes['shape-rendering'] === 'crispEdges')[0].children[0].attributes.width, '32');
  assert.match(textOf(find(bigRoot, (e) => e.name === 'desc')[0]), /max-pooled to at most 32 cells a side/);
  console.log(`144 heads × 64 tokens as one grid figure: ${(Buffer.byteLength(big) / 1024).toFixed(0)} KB`);
});

test('SvgContext records a canvas drawing as SVG: paths, dashes, transforms, a clip, escaped text', () => {
  const ctx = new SvgContext({ measure: (text, px) => text.length * px / 2 });
  ctx.strokeStyle = '#123456';
  ctx.lineWidth = 2;
  ctx.setLineDash([4, 2]);
  ctx.beginPath();
  ctx.moveTo(0, 10);
  ctx.lineTo(20, 30);
  ctx.stroke();
  ctx.save();
  ctx.beginPath();
  ctx.rect(5, 5, 50, 40);
  ctx.clip();
  ctx.setLineDash([]);
  ctx.fillStyle = '#ff0000';
  ctx.beginPath();
  ctx.arc(10, 10, 3, 0, 2 * Math.PI);
  ctx.fill();
  ctx.restore();
  ctx.save();
  ctx.translate(11, 50);
  ctx.rotate(-Math.PI / 2);
  ctx.font = 'italic 12px system-ui';
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  ctx.fillText('loss <log> & "more"', 0, 0);
  ctx.restore();
  ctx.fillText('after restore', 1, 2);
  assert.equal(ctx.measureText('abcd').width, 20);
  const root = parseXml(plotSvg({ title: 'a plot', width: 100, height: 60, drawing: ctx.toMarkup(), series: [{ label: 'train <loss>', color: '#0072b2' },
    { label: 'accuracy', color: '#009e73', dash: [5, 3] }], style: STYLE }));
  const plot = groupOf(root, 'plot');
  const paths = find(plot, (e) => e.name === 'path');
  const line = paths.find((p) => p.attributes.stroke === '#123456');
  assert.deepEqual([line.attributes.d, line.attributes['stroke-width'], line.attributes['stroke-dasharray']], ['M0 10L20 30', '2', '4 2']);
  const clip = find(plot, (e) => e.name === 'clipPath')[0];
  assert.equal(clip.children[0].attributes.d, 'M5 5h50v40h-50z');
  const dot = paths.find((p) => p.attributes.fill === '#ff0000');
  assert.ok(dot.attributes.d.startsWith('M13 10A3 3'), dot.attributes.d);
  const clipped = find(plot, (e) => e.name === 'g' && e.attributes['clip-path'] === `url(#${clip.attributes.id})`);
  assert.equal(clipped.length, 1, 'only what was drawn while the clip held is clipped');
  const [label, after] = find(plot, (e) => e.name === 'text');
  assert.equal(textOf(label), 'loss <log> & "more"');
  assert.equal(label.attributes.transform, 'matrix(0 -1 1 0 11 50)');
  assert.deepEqual([label.attributes['font-style'], label.attributes['font-size'], label.attributes['text-anchor'], label.attributes.y],
    ['italic', '12', 'middle', '4.2']);
  assert.equal(after.attributes.transform, undefined, 'restore undid the transform');
  assert.deepEqual(find(groupOf(root, 'key'), (e) => e.name === 'text').map(textOf), ['train <loss>', 'accuracy']);
  assert.equal(find(groupOf(root, 'key'), (e) => e.name === 'path')[1].attributes['stroke-dasharray'], '5 3');
});

test('a matrix larger than 256 a side is max-pooled as the canvas pools it (and says so)', () => {
  const n = 300;
  const matrix = { data: attention(n, { causal: true }), rows: n, cols: n, rowLabels: [], colLabels: [], rowAxis: 'query', colAxis: 'key',
    scale: 'probability', title: '300 tokens' };
  const { svg, scale, positions } = figureOf(matrix, layoutOf(matrix, 2));
  const root = parseXml(svg);
  assert.deepEqual(paintedCells(root, 150, 150), canvasCells(positions, n, n, scale, 2), 'each 2 × 2 block its largest weight\'s colour');
  assert.match(textOf(find(root, (e) => e.name === 'desc')[0]), /drawn max-pooled to 150 × 150/);
});
