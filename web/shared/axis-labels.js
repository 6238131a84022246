// Which token labels a heatmap draws, and where: each axis labelled every k-th (k the smallest step
// at which neighbours never touch; columns upright, or turned a quarter where that fits more), the
// focused cell's row and column always (neighbours that would touch them left out), as boxes.
// Pure: the canvas (heatmap.js) and the SVG writer (svg-figure.js) draw the same boxes.

const GAP = 2; // px kept between two labels
export const LABEL_MARGIN = 6; // px between a label and the cells
export const AXIS_ROOM = 22; // px above the column labels for the column axis's name, left of the row labels for the row axis's

/** The height of a line of labels at `px`. */
export const lineHeight = (px) => px + 1;

/** "3rd" of 3. */
export function ordinal(k) {
  const tens = k % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' }[k % 10] ?? 'th');
  return `${k}${suffix}`;
}

/**
 * How the axes are labelled at `cell` px per cell with labels of `px`: rows every rowEvery-th,
 * columns every colEvery-th (turned: read upwards), and the room they take: above the cells (top),
 * left of them (left) and past the last column (right).
 * @param {{rowWidths: number[], colWidths: number[], cell: number, px: number}} sizes the labels' drawn widths at px
 */
export function labelPlan({ rowWidths, colWidths, cell, px }) {
  const line = lineHeight(px);
  const widest = (widths) => widths.reduce((most, w) => Math.max(most, w), 0);
  const rowWidest = widest(rowWidths);
  const colWidest = widest(colWidths);
  const rowEvery = Math.max(1, Math.ceil((line + GAP) / cell));
  const upright = Math.max(1, Math.ceil((colWidest + GAP) / cell));
  const turnedEvery = Math.max(1, Math.ceil((line + GAP) / cell));
  const turned = turnedEvery < upright;
  // An upright label wider than its column reaches past the last column by half the difference.
  const reach = turned ? 0 : Math.max(0, ...colWidths.map((w) => (w - cell) / 2));
  return {
    px, line, rowEvery, colEvery: turned ? turnedEvery : upright, turned,
    left: Math.ceil(rowWidest + LABEL_MARGIN + AXIS_ROOM - 2),
    top: Math.ceil((turned ? colWidest : line) + LABEL_MARGIN + AXIS_ROOM),
    right: Math.ceil(reach) + GAP,
  };
}

const overlaps = (a, b) => a.x < b.x + b.w + GAP && b.x < a.x + a.w + GAP && a.y < b.y + b.h + GAP && b.y < a.y + a.h + GAP;

/**
 * The label boxes drawn at a layout: [{ text, x, y, w, h, axis: 'row'|'col', index, turned, focus }]
 * (px in the drawing; a turned label reads upwards from its box's bottom). The focused cell's row
 * and column labels are always among them (focus: true); the others that would touch them are not.
 * @param {{rowTexts: string[], colTexts: string[], rowWidths: number[], colWidths: number[],
 *   left: number, top: number, cell: number, width: number}} layout
 * @param {ReturnType<typeof labelPlan>} plan
 * @param {{row: number, col: number}|null} focus
 */
export function labelBoxes(layout, plan, focus = null) {
  const { rowTexts, colTexts, rowWidths, colWidths, left, top, cell, width } = layout;
  const rowBox = (r) => ({ text: rowTexts[r], x: left - LABEL_MARGIN - rowWidths[r], y: top + (r + 0.5) * cell - plan.line / 2,
    w: rowWidths[r], h: plan.line, axis: 'row', index: r, turned: false, focus: false });
  const colBox = (c) => {
    const centre = left + (c + 0.5) * cell;
    if (plan.turned) {
      return { text: colTexts[c], x: centre - plan.line / 2, y: top - LABEL_MARGIN - colWidths[c], w: plan.line, h: colWidths[c],
        axis: 'col', index: c, turned: true, focus: false };
    }
    const x = Math.max(0, Math.min(width - colWidths[c], centre - colWidths[c] / 2));
    return { text: colTexts[c], x, y: top - LABEL_MARGIN - plan.line, w: colWidths[c], h: plan.line, axis: 'col', index: c,
      turned: false, focus: false };
  };
  const focused = [];
  if (focus && focus.row < rowTexts.length) focused.push({ ...rowBox(focus.row), focus: true });
  if (focus && focus.col < colTexts.length) focused.push({ ...colBox(focus.col), focus: true });
  const boxes = [];
  const add = (box) => {
    if (focused.some((f) => f.axis === box.axis && (f.index === box.index || overlaps(f, box)))) return;
    boxes.push(box);
  };
  for (let r = 0; r < rowTexts.length; r += plan.rowEvery) add(rowBox(r));
  for (let c = 0; c < colTexts.length; c += plan.colEvery) add(colBox(c));
  return [...boxes, ...focused];
}

/**
 * What a reader is told when some labels are left out ("Every 3rd query and every 2nd key
 * labelled …"), or '' when every label is drawn.
 */
export function hiddenLabelsNote(plan, rowAxis, colAxis) {
  const parts = [];
  if (plan.rowEvery > 1) parts.push(`every ${ordinal(plan.rowEvery)} ${rowAxis}`);
  if (plan.colEvery > 1) parts.push(`every ${ordinal(plan.colEvery)} ${colAxis}`);
  if (!parts.length) return '';
  const said = parts.join(' and ');
  return `${said[0].toUpperCase()}${said.slice(1)} labelled (more would overlap): hover or focus a cell to see its ${rowAxis} and ${colAxis}.`;
}
