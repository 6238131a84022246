// The layout of per-head things (the head grids, the Train view's score curves): one row per
// layer ("Layer 1"), a grid of one tile per head in it. Styled by the head-layer rules in style.css.
import { el } from './dom.js';

/**
 * Fills `host` with `layers` rows of `heads` tiles in a `gridClass` grid; makeTile(layer, head)
 * returns a tile element (tagged here with data-layer and data-head). `notes` (optional, one per
 * layer: { label, kind } or null) adds a tag to a layer's heading, e.g. "Layer 1 local · window 512";
 * kind ('local' or 'global') picks its style.
 */
export function fillLayerGrid(host, { layers, heads, gridClass, notes = null }, makeTile) {
  host.replaceChildren(...Array.from({ length: layers }, (_, layer) => {
    const row = el('div', 'head-layer');
    const grid = el('div', gridClass);
    for (let head = 0; head < heads; ++head) {
      const tile = makeTile(layer, head);
      tile.dataset.layer = String(layer);
      tile.dataset.head = String(head);
      grid.append(tile);
    }
    const title = el('h3', 'head-layer-title', `Layer ${layer + 1}`);
    const note = notes?.[layer];
    if (note) title.append(' ', el('span', `head-layer-note head-layer-${note.kind}`, note.label));
    row.append(title, grid);
    return row;
  }));
}
