// Long inputs you can read: the colour scales of attention weights (linear, log, per-row max), the
// collapsing token chips, and the settings that carry them (URL hash, element attribute, snippet).
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { catalogOf } from '../../web/shared/catalog.js';
import { colorPositions, COLOR_SCALES, logFloor, logPosition, rowMaxPositions, scaleDescription,
  scaleTicks } from '../../web/shared/color-scale.js';
import { makeScale, matrixPixels } from '../../web/shared/colors.js';
import { elementSnippet, stateFromAttributes } from '../../web/shared/embed-snippet.js';
import { DEFAULTS, hashToState, makeSchema, stateToHash } from '../../web/shared/state.js';
import { chipItems, chipRuns, COLLAPSE_AT, HEAD_CHIPS, TAIL_CHIPS } from '../../web/shared/token-chips.js';
import { pinnedTokens } from '../../web/shared/view-model.js';
import { loadLens } from './support.mjs';

const close = (a, b, what) => assert.ok(Math.abs(a - b) < 1e-6, `${what}: ${a} vs ${b}`);

/** Causal weights spread evenly over the visible keys: row i is 1/(i+1) on keys 0..i. [n, n] */
function uniformCausal(n) {
  const data = new Float32Array(n * n);
  for (let i = 0; i < n; ++i) for (let j = 0; j <= i; ++j) data[i * n + j] = 1 / (i + 1);
  return { data, rows: n, cols: n };
}

test('logFloor: a power of ten, at most 1e-3 and at most a tenth of a uniform row\'s weight', () => {
  assert.equal(logFloor(6), 1e-3);
  assert.equal(logFloor(100), 1e-3); // 1/(10·100) = 1e-3 exactly
  assert.equal(logFloor(101), 1e-4);
  assert.equal(logFloor(300), 1e-4);
  assert.equal(logFloor(2048), 1e-5);
  assert.equal(logFloor(0), 1e-3);
  assert.equal(logFloor(NaN), 1e-3);
  for (const n of [1, 7, 50, 333, 1000, 4096]) assert.ok(logFloor(n) <= 1 / (10 * n) + 1e-15, `n = ${n}`);
});

test('logPosition: hand-computed decades, the ends, clamping, monotonic, and −∞ / NaN kept', () => {
  const floor = 1e-3;
  close(logPosition(1e-3, floor), 0, '0.001');
  close(logPosition(0.01, floor), 1 / 3, '0.01');
  close(logPosition(0.1, floor), 2 / 3, '0.1');
  close(logPosition(Math.sqrt(0.1), floor), 5 / 6, '√0.1');
  assert.equal(logPosition(1, floor), 1);
  assert.equal(logPosition(0, floor), 0);
  assert.equal(logPosition(1e-9, floor), 0);
  assert.equal(logPosition(-0.5, floor), 0);
  assert.equal(logPosition(3, floor), 1);
  assert.ok(Number.isNaN(logPosition(NaN, floor)));
  assert.equal(logPosition(-Infinity, floor), -Infinity);
  close(logPosition(1e-4, 1e-4), 0, 'floor 1e-4');
  close(logPosition(0.01, 1e-4), 0.5, '0.01 on a 1e-4 scale');
  let previous = -1;
  for (let k = 0; k <= 1000; ++k) {
    const w = 10 ** (-5 + (5 * k) / 1000);
    const p = logPosition(w, 1e-4);
    assert.ok(p >= previous && p >= 0 && p <= 1, `monotonic at ${w}`);
    previous = p;
  }
});

test('rowMaxPositions: every row over its own largest weight; empty rows stay 0; −∞ and NaN kept', () => {
  const data = Float32Array.from([0.5, 0.25, 0.25, 0.1, 0, 0.9, 0, 0, 0, -Infinity, 0.2, NaN]);
  const out = rowMaxPositions(data, 4, 3);
  const want = [1, 0.5, 0.5, 0.1 / 0.9, 0, 1, 0, 0, 0, -Infinity, 1, NaN];
  want.forEach((w, i) => (Number.isNaN(w) ? assert.ok(Number.isNaN(out[i]), `[${i}]`)
    : w === -Infinity ? assert.equal(out[i], w) : close(out[i], w, `[${i}]`)));
  // On a causal matrix the peak of every row gets the top colour, and the order within a row stays.
  const causal = uniformCausal(40);
  const rows = rowMaxPositions(causal.data, 40, 40);
  for (let i = 0; i < 40; ++i) {
    const row = rows.subarray(i * 40, (i + 1) * 40);
    assert.equal(Math.max(...row), 1, `row ${i}`);
    for (let j = 0; j <= i; ++j) assert.equal(row[j], 1);
    for (let j = i + 1; j < 40; ++j) assert.equal(row[j], 0);
  }
});

test('colorPositions: linear is the weights themselves; log and per-row are new arrays in [0, 1]', () => {
  const m = { data: Float32Array.from([1, 0, 0.5, 0.5]), rows: 2, cols: 2 };
  assert.equal(colorPositions(m, 'linear', 1e-3), m.data);
  assert.equal(colorPositions(m, 'unknown', 1e-3), m.data);
  assert.deepEqual([...colorPositions(m, 'log', 1e-3)].map((v) => Number(v.toFixed(4))), [1, 0, 0.8997, 0.8997]);
  assert.deepEqual([...colorPositions(m, 'row', 1e-3)], [1, 0, 1, 1]);
  assert.deepEqual([...m.data], [1, 0, 0.5, 0.5], 'the weights are not modified');
  assert.deepEqual(COLOR_SCALES, ['linear', 'log', 'row']);
});

test('a 300-token causal matrix is far brighter on the log and per-row scales than on the linear one', () => {
  const n = 300;
  const m = uniformCausal(n);
  const scale = makeScale('probability', m.data);
  // Mean luminance of the pixels drawn through the probability table (masked = transparent = 0).
  const luminance = (positions) => {
    const pixels = matrixPixels({ ...m, data: positions }, scale, 1, new Uint32Array(n * n));
    let sum = 0;
    for (const p of pixels) sum += 0.299 * (p & 255) + 0.587 * ((p >>> 8) & 255) + 0.114 * ((p >>> 16) & 255);
    return sum / pixels.length;
  };
  const floor = logFloor(n);
  const linear = luminance(colorPositions(m, 'linear', floor));
  const log = luminance(colorPositions(m, 'log', floor));
  const row = luminance(colorPositions(m, 'row', floor));
  assert.ok(log > 2 * linear, `log ${log} vs linear ${linear}`);
  assert.ok(row > 2 * linear, `row ${row} vs linear ${linear}`);
  // The largest weight of each row gets the scale's top colour under per-row max.
  const pixels = matrixPixels({ ...m, data: colorPositions(m, 'row', floor) }, scale, 1, new Uint32Array(n * n));
  for (const i of [0, 1, 150, 299]) assert.equal(pixels[i * n], scale.table[255], `row ${i}`);
  // 0 and 1 are the ends of the bar on every scale.
  for (const name of COLOR_SCALES) {
    const ends = colorPositions({ data: Float32Array.from([0, 1]), rows: 1, cols: 2 }, name, floor);
    assert.deepEqual([ends[0], ends[1]], [0, 1], name);
  }
});

test('the legend says the scale: decade ticks on the log scale, the floor in words', () => {
  assert.deepEqual(scaleTicks('log', 1e-3), [{ at: 0, label: '0.001' }, { at: 1 / 3, label: '0.01' },
    { at: 2 / 3, label: '0.1' }, { at: 1, label: '1' }]);
  assert.deepEqual(scaleTicks('log', 1e-4).map((t) => t.label), ['0.0001', '0.001', '0.01', '0.1', '1']);
  assert.deepEqual(scaleTicks('row', 1e-3).map((t) => t.label), ['0', '½ max', 'row max']);
  assert.deepEqual(scaleTicks('linear', 1e-3).map((t) => t.at), [0, 0.5, 1]);
  assert.match(scaleDescription('log', 1e-4), /log scale \(0\.0001 and below/);
  assert.match(scaleDescription('row', 1e-4), /largest weight of its row/);
});

test('chipRuns: all chips up to the threshold, else the first and last few and every selected token', () => {
  assert.deepEqual(chipRuns(0), []);
  assert.deepEqual(chipRuns(10), [{ from: 0, to: 10 }]);
  assert.deepEqual(chipRuns(COLLAPSE_AT), [{ from: 0, to: COLLAPSE_AT }]);
  assert.deepEqual(chipRuns(300), [{ from: 0, to: HEAD_CHIPS }, { from: 300 - TAIL_CHIPS, to: 300 }]);
  assert.deepEqual(chipRuns(300, { expanded: true }), [{ from: 0, to: 300 }]);
  assert.deepEqual(chipRuns(300, { selected: [150] }), [{ from: 0, to: 16 }, { from: 150, to: 151 }, { from: 292, to: 300 }]);
  assert.deepEqual(chipRuns(300, { selected: [16, 3, 291, 150, 150] }),
    [{ from: 0, to: 17 }, { from: 150, to: 151 }, { from: 291, to: 300 }], 'touching runs merge');
  assert.deepEqual(chipRuns(300, { selected: [-1, 300, 1.5, NaN, '7'] }), chipRuns(300), 'bad indices are ignored');
  assert.deepEqual(chipRuns(49, { head: 40, tail: 20 }), [{ from: 0, to: 49 }], 'overlapping head and tail');
});

test('chipItems: a "more" button for every gap, hidden + shown = all, and "fewer" when expanded', () => {
  const items = chipItems(300, { selected: [100] });
  const kinds = items.map((i) => i.kind);
  assert.deepEqual(kinds.filter((k) => k !== 'chip'), ['more', 'more']);
  const chips = items.filter((i) => i.kind === 'chip').map((i) => i.index);
  const hidden = items.filter((i) => i.kind === 'more').map((i) => i.hidden);
  assert.deepEqual(hidden, [100 - HEAD_CHIPS, 300 - TAIL_CHIPS - 101]);
  assert.equal(chips.length + hidden.reduce((a, b) => a + b), 300);
  assert.ok(chips.includes(100));
  assert.equal(kinds.indexOf('more'), HEAD_CHIPS);
  const open = chipItems(300, { expanded: true });
  assert.equal(open.length, 301);
  assert.deepEqual(open.at(-1), { kind: 'fewer' });
  assert.deepEqual(chipItems(5, { expanded: true }).map((i) => i.kind), Array(5).fill('chip'), 'short: no toggle');
});

test('pinnedTokens: the query and key tokens of a pinned cell, from its step\'s axes', () => {
  const steps = [{ id: 'weights', head: 1, rows: 'query', cols: 'key' }, { id: 'q', head: 1, rows: 'position', cols: 'dimension' },
    { id: 'source', head: -1, rows: 'position', cols: 'dimension' }];
  assert.deepEqual(pinnedTokens(steps, null), { query: [], key: [] });
  assert.deepEqual(pinnedTokens(steps, { stepId: 'weights', head: 1, row: 4, col: 2 }), { query: [4], key: [2] });
  assert.deepEqual(pinnedTokens(steps, { stepId: 'q', head: 1, row: 7, col: 3 }), { query: [7], key: [] });
  assert.deepEqual(pinnedTokens(steps, { stepId: 'source', head: -1, row: 5, col: 0 }), { query: [], key: [5] });
  assert.deepEqual(pinnedTokens(steps, { stepId: 'weights', head: 0, row: 1, col: 1 }), { query: [], key: [] }, 'another head');
});

test('the colour scale is a setting: URL hash, element attribute and embed snippet', async () => {
  const schema = makeSchema(catalogOf(await loadLens()));
  assert.equal(DEFAULTS.colorScale, 'linear');
  for (const name of ['log', 'row']) {
    const hash = stateToHash({ ...DEFAULTS, colorScale: name }, schema);
    assert.equal(hash, `#colorScale=${name}`);
    assert.deepEqual(hashToState(hash, schema), { state: { ...DEFAULTS, cells: [], colorScale: name }, ignored: [] });
  }
  assert.deepEqual(hashToState('#colorScale=sqrt', schema).ignored, ['colorScale']);
  const attributes = { text: 'a b', 'color-scale': 'log' };
  const { state, problems } = stateFromAttributes((name) => attributes[name] ?? null, schema);
  assert.equal(state.colorScale, 'log');
  assert.deepEqual(problems, []);
  assert.match(elementSnippet(state), /color-scale="log"/);
  assert.doesNotMatch(elementSnippet({ ...state, colorScale: 'linear' }), /color-scale/);
  const bad = stateFromAttributes((name) => ({ 'color-scale': '<b>' })[name] ?? null, schema);
  assert.equal(bad.state.colorScale, 'linear');
  assert.match(bad.problems[0], /^color-scale="<b>" is not valid; using linear/);
});
