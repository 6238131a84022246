// The heatmap's label layout (web/shared/axis-labels.js) without a browser: at 43, 128 and 512
// tokens and cells of 1 to 40 px, no two drawn label boxes touch, each lies inside the drawing,
// the focused cell's row and column labels are drawn, and the "every Nth" note says what is left out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hiddenLabelsNote, labelBoxes, labelPlan, ordinal } from '../../web/shared/axis-labels.js';

const touch = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

/** The labels of `n` tokens of 1 to 12 characters, 6 px a character. */
function tokens(n) {
  const texts = Array.from({ length: n }, (_, i) => 'abcdefghijkl'.slice(0, 1 + ((i * 7) % 12)));
  return { rowTexts: texts, colTexts: texts, rowWidths: texts.map((t) => 6 * t.length), colWidths: texts.map((t) => 6 * t.length) };
}

test('labels never touch, stay inside the drawing and always include the focused cell\'s', () => {
  for (const n of [43, 128, 512]) {
    for (const cell of [1, 2, 5, 9, 14, 40]) {
      const texts = tokens(n);
      const px = Math.max(9, Math.min(12, cell - 3));
      const plan = labelPlan({ ...texts, cell, px });
      const width = plan.left + n * cell + Math.max(8, plan.right);
      const height = plan.top + n * cell + 8;
      for (const focus of [null, { row: 1, col: n - 2 }, { row: n - 1, col: 0 }]) {
        const boxes = labelBoxes({ ...texts, left: plan.left, top: plan.top, cell, width }, plan, focus);
        const where = `${n} tokens, ${cell} px, focus ${JSON.stringify(focus)}`;
        boxes.forEach((a, i) => {
          assert.ok(a.x >= 0 && a.y >= 0 && a.x + a.w <= width && a.y + a.h <= height, `${where}: ${JSON.stringify(a)} inside`);
          for (const b of boxes.slice(i + 1)) assert.ok(!touch(a, b), `${where}: ${a.text} and ${b.text} overlap`);
        });
        if (focus) {
          assert.ok(boxes.some((b) => b.axis === 'row' && b.index === focus.row && b.focus), `${where}: the focused row's label`);
          assert.ok(boxes.some((b) => b.axis === 'col' && b.index === focus.col && b.focus), `${where}: the focused column's label`);
        }
        const shown = boxes.filter((b) => b.axis === 'row' && !b.focus).length;
        assert.equal(Boolean(hiddenLabelsNote(plan, 'query', 'key')), plan.rowEvery > 1 || plan.colEvery > 1, where);
        if (!focus) assert.equal(shown, Math.ceil(n / plan.rowEvery), `${where}: every ${plan.rowEvery}th row`);
      }
    }
  }
});

test('the note names what is left out', () => {
  assert.equal(hiddenLabelsNote({ rowEvery: 3, colEvery: 1 }, 'query', 'key'),
    'Every 3rd query labelled (more would overlap): hover or focus a cell to see its query and key.');
  assert.equal(hiddenLabelsNote({ rowEvery: 2, colEvery: 11 }, 'token', 'dimension').slice(0, 46), 'Every 2nd token and every 11th dimension label');
  assert.equal(hiddenLabelsNote({ rowEvery: 1, colEvery: 1 }, 'query', 'key'), '');
  assert.deepEqual([1, 2, 3, 4, 11, 12, 13, 21, 22, 101].map(ordinal), ['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st', '22nd', '101st']);
});
