// The Train view's layout of per-head things: one row per layer ("Layer 1"), a grid of one tile
// per head in it. Used by the probe heads and the score curves.
import { el } from '../../shared/dom.js';

/**
 * Fills `host` with `layers` rows of `heads` tiles; makeTile(layer, head) returns a tile element
 * (tagged here with data-layer and data-head).
 */
export function fillLayerGrid(host, { layers, heads, gridClass }, makeTile) {
  host.replaceChildren(...Array.from({ length: layers }, (_, layer) => {
    const row = el('div', 'train-layer');
    const grid = el('div', gridClass);
    for (let head = 0; head < heads; ++head) {
      const tile = makeTile(layer, head);
      tile.dataset.layer = String(layer);
      tile.dataset.head = String(head);
      grid.append(tile);
    }
    row.append(el('h3', 'train-layer-title', `Layer ${layer + 1}`), grid);
    return row;
  }));
}
