// Every layer × head's attention as one small heatmap per head, layers in rows (layer-grid.js):
// the Train view's probe heads and the Your model view's heads. A view passes in what is its own
// (tile classes and heading, what a tile holds below its heatmap, what a click does, how a frame
// names its tokens). Tiles are kept while the shape stays, and only redrawn. Draws the worker's numbers.
import { el } from './dom.js';
import { Heatmap } from './heatmap.js';
import { displayToken } from './labels.js';
import { fillLayerGrid } from './layer-grid.js';

/**
 * @typedef {object} HeadGridOptions
 * @property {string} gridClass the view's layout of a layer's tiles (the grid is also `head-grid-tiles`)
 * @property {string} tileClass a tile's classes
 * @property {(layer: number, head: number) => string} title a tile's heading
 * @property {number} maxCell the heatmaps' largest cell, px
 * @property {(layer: number, head: number) => void} onActivate a click (or Enter) on a head's heatmap
 * @property {(frame: object) => string[]} tokens a frame's tokens: the heatmaps' row and column labels
 * @property {(layer: number, head: number, frame: object) => string} [mapTitle] a heatmap's title
 * @property {(layer: number, head: number) => string} [label] a heatmap's aria-label until it is drawn
 * @property {(layers: number, heads: number) => Record<string, string>} [properties] CSS custom
 *   properties set on the host for a new shape
 * @property {(layer: number, head: number) => {nodes: Node[]}} [parts] what a tile holds below its
 *   heatmap (kept on the tile as `parts`)
 * @property {(tile: {layer: number, head: number, tile: HTMLElement, parts: object}, frame: object,
 *   extra: object) => void} [paint] after a tile's heatmap is drawn: the view's own parts
 */

const headTitle = (layer, head) => `Layer ${layer + 1}, head ${head + 1}`;

export class HeadGrid {
  #host;
  #options;
  #tiles = []; // [{ layer, head, tile, figure, map, parts }]
  #shape = '';

  /** @param {HTMLElement} host @param {HeadGridOptions} options */
  constructor(host, options) {
    this.#host = host;
    this.#options = { mapTitle: headTitle, ...options };
  }

  /** The tiles of a layers × heads model, with screen-reader tables when `table` (kept while the shape stays). */
  build(layers, heads, table) {
    const shape = `${layers}x${heads}|${table}`;
    if (shape === this.#shape) return;
    this.#shape = shape;
    this.#tiles = [];
    const { gridClass, tileClass, title, maxCell, onActivate, label, properties, parts } = this.#options;
    for (const [name, value] of Object.entries(properties?.(layers, heads) ?? {})) this.#host.style.setProperty(name, value);
    fillLayerGrid(this.#host, { layers, heads, gridClass: `head-grid-tiles ${gridClass}` }, (layer, head) => {
      const tile = el('div', tileClass);
      const figure = el('div', 'head-grid-map');
      const own = parts?.(layer, head) ?? { nodes: [] };
      tile.append(el('p', 'head-grid-title', title(layer, head)), figure, ...own.nodes);
      this.#tiles.push({ layer, head, tile, figure, parts: own, map: null });
      return tile;
    });
    for (const t of this.#tiles) {
      t.map = new Heatmap(t.figure, { maxCell, minCell: 0, labels: false, legend: false, caption: false,
        table, onActivate: () => onActivate(t.layer, t.head) });
      if (label) t.map.canvas.setAttribute('aria-label', label(t.layer, t.head));
    }
  }

  /** Draws a frame { n, attention: [heads·n·n] per layer, … }; `extra` goes to the view's paint. */
  render(frame, extra = {}) {
    if (!this.#tiles.length || !frame?.attention) return;
    const width = this.#tiles[0].figure.clientWidth; // one layout read for every tile
    const { n } = frame;
    const { tokens, mapTitle, paint } = this.#options;
    const labels = tokens(frame).map(displayToken);
    for (const t of this.#tiles) {
      const data = frame.attention[t.layer].subarray(t.head * n * n, (t.head + 1) * n * n);
      t.map.render({ data, rows: n, cols: n, rowLabels: labels, colLabels: labels, rowAxis: 'query', colAxis: 'key',
        title: mapTitle(t.layer, t.head, frame), scale: 'probability' }, { width });
      paint?.(t, frame, extra);
    }
  }

  /** The tile element of a head (tests and the timeline read it). */
  tile(layer, head) {
    return this.#tiles.find((t) => t.layer === layer && t.head === head)?.tile;
  }

  /** Outlines one head (class `highlighted`) and scrolls it into view, or none. */
  highlight(layer, head) {
    for (const t of this.#tiles) t.tile.classList.toggle('highlighted', t.layer === layer && t.head === head);
    this.tile(layer, head)?.scrollIntoView?.({ block: 'nearest' });
  }
}
