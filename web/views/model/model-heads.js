// The Your model view's head grid (shared/head-grid.js): every layer × head of a loaded checkpoint
// on the typed text, one row of up to 16 tiles per layer; a click (or Enter) opens a head in the
// walkthrough, and the head finder's chosen head is outlined (grid.highlight).
import { HeadGrid } from '../../shared/head-grid.js';

/** Screen-reader tables for models up to this many heads (the view's grid.build). */
export const MAX_TABLE_HEADS = 48;

/**
 * The model's heads. Then grid.build(layers, heads, layers × heads <= MAX_TABLE_HEADS); grid.render(run { n,
 * tokens, attention }); grid.highlight(layer, head).
 * @param {(layer: number, head: number) => void} onOpen
 */
export function modelHeads(host, onOpen) {
  return new HeadGrid(host, {
    gridClass: 'model-heads',
    tileClass: 'train-tile model-tile', // the e2e test reads this class list
    title: (layer, head) => `H${head + 1}`,
    maxCell: 12,
    onActivate: onOpen,
    label: (layer, head) => `Layer ${layer + 1}, head ${head + 1}: open in the walkthrough`,
    tokens: (run) => run.tokens,
    // One row of tiles per layer (up to 16 heads; a phone wraps them), larger when there are few.
    properties: (layers, heads) => ({ '--model-cols': String(Math.min(heads, 16)), '--model-tile-max': `${heads <= 4 ? 200 : 160}px` }),
  });
}
