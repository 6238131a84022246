// The Your model view's head grid (shared/head-grid.js): every layer × head of a loaded checkpoint
// on the typed text, one row of up to 16 tiles per layer; with grouped-query attention the query
// heads that share a K/V head sit in one labelled group, and each tile says which K/V head it reads.
// Each heatmap is the whole square scaled to its tile (no labels: one colour legend above the grid);
// a click (or Enter, Space) opens the head's larger view (head-view.js), and the head finder's
// chosen head is outlined (grid.highlight).
import { button } from '../../shared/dom.js';
import { HeadGrid } from '../../shared/head-grid.js';

/** Screen-reader tables for models up to this many heads (the view's grid.build). */
export const MAX_TABLE_HEADS = 48;

/** At most this many tiles side by side in a layer's row (a phone wraps them). */
const ROW_TILES = 16;

/**
 * The model's heads. Then grid.build(layers, heads, layers × heads <= MAX_TABLE_HEADS, kvHeads);
 * grid.render(run { n, tokens, attention }); grid.highlight(layer, head).
 * Each tile also has a "knock out" toggle (aria-pressed): onKnock(layer, head).
 * @param {(layer: number, head: number) => void} onOpen a head's heatmap clicked (or Enter, Space)
 * @param {(layer: number, head: number) => void} [onKnock]
 */
export function modelHeads(host, onOpen, onKnock = () => {}) {
  return new HeadGrid(host, {
    gridClass: 'model-heads',
    tileClass: 'train-tile model-tile',
    title: (layer, head, kv) => (kv === null ? `H${head + 1}` : `H${head + 1} · KV${kv + 1}`),
    maxCell: 12,
    compact: true,
    onActivate: onOpen,
    label: (layer, head, kv) => `Layer ${layer + 1}, head ${head + 1}${kv === null ? '' : ` (reads K/V head ${kv + 1})`}: ` +
      'open a larger view',
    tokens: (run) => run.tokens,
    parts: (layer, head) => {
      const knock = button('model-knock', 'knock out', () => onKnock(layer, head));
      knock.setAttribute('aria-pressed', 'false');
      knock.setAttribute('aria-label', `Knock out layer ${layer + 1}, head ${head + 1}`);
      Object.assign(knock.dataset, { layer: String(layer), head: String(head) });
      return { nodes: [knock], knock };
    },
    // One row of tiles per layer (up to 16 heads; a phone wraps them), larger when there are few.
    // Grouped: as many whole K/V groups side by side as fit in 16 tiles, each group's tiles in a row.
    properties: (layers, heads, kvHeads) => {
      const size = heads / kvHeads;
      return {
        '--model-cols': String(Math.min(heads, ROW_TILES)),
        '--model-tile-max': `${heads <= 4 ? 200 : 160}px`,
        '--model-group-cols': String(Math.min(size, ROW_TILES)),
        '--model-groups': String(Math.max(1, Math.min(kvHeads, Math.floor(ROW_TILES / size)))),
      };
    },
  });
}
