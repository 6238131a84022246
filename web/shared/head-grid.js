// Every layer × head's attention as one small heatmap per head, layers in rows (layer-grid.js):
// the Train view's probe heads and the Your model view's heads. A view passes in what is its own
// (tile classes and heading, what a tile holds below its heatmap, what a click does, how a frame
// names its tokens). Tiles are kept while the shape stays, and only redrawn. Draws the worker's numbers.
// With grouped-query attention (fewer key/value heads than query heads), the query heads that read
// one K/V head sit together in a labelled group ("K/V head 2 · heads 5–8") in each layer's row.
import { el } from './dom.js';
import { Heatmap } from './heatmap.js';
import { displayToken } from './labels.js';
import { fillLayerGrid } from './layer-grid.js';
import { gridSvg } from './svg-figure.js';

/**
 * @typedef {object} HeadGridOptions
 * @property {string} gridClass the view's layout of a layer's tiles (the grid is also `head-grid-tiles`)
 * @property {string} tileClass a tile's classes
 * @property {(layer: number, head: number, kv: number|null) => string} title a tile's heading (kv: the
 *   K/V head the query head reads when heads are grouped, else null; as in every callback below)
 * @property {number} maxCell the heatmaps' largest cell, px
 * @property {boolean} [compact] each heatmap scaled to its tile's width, no axis names (heatmap.js's compact)
 * @property {(layer: number, head: number) => void} onActivate a click (or Enter) on a head's heatmap
 * @property {(frame: object) => string[]} tokens a frame's tokens: the heatmaps' row and column labels
 * @property {(layer: number, head: number, frame: object, kv: number|null) => string} [mapTitle] a heatmap's title
 * @property {(layer: number, head: number, kv: number|null) => string} [label] a heatmap's aria-label until it is drawn
 * @property {(layers: number, heads: number, kvHeads: number) => Record<string, string>} [properties] CSS custom
 *   properties set on the host for a new shape
 * @property {(layer: number, head: number) => {nodes: Node[]}} [parts] what a tile holds below its
 *   heatmap (kept on the tile as `parts`)
 * @property {(tile: {layer: number, head: number, tile: HTMLElement, parts: object}, frame: object,
 *   extra: object) => void} [paint] after a tile's heatmap is drawn: the view's own parts
 */

const headTitle = (layer, head, frame, kv) => `Layer ${layer + 1}, head ${head + 1}${kv === null ? '' : ` (reads K/V head ${kv + 1})`}`;

/** The K/V head that query head `head` reads (heads / kvHeads query heads share one), or null when none is shared. */
export const kvHeadOf = (head, heads, kvHeads) => (kvHeads > 0 && kvHeads < heads && heads % kvHeads === 0
  ? Math.floor(head / (heads / kvHeads)) : null);

/** A group's label: 'K/V head 2 · heads 5–8' (1-based, as the tiles). */
export const kvGroupLabel = (kv, size) => `K/V head ${kv + 1} · heads ${kv * size + 1}–${(kv + 1) * size}`;

let groupIds = 0;

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

  /**
   * The tiles of a layers × heads model, with screen-reader tables when `table` (kept while the
   * shape stays); with kvHeads < heads (grouped-query attention), each layer's tiles in one group
   * per K/V head. `notes`: per layer { label, kind } or null, a tag on the layer's heading
   * (layer-grid.js), e.g. which layers attend locally.
   */
  build(layers, heads, table, kvHeads = heads, notes = null) {
    const shape = `${layers}x${heads}/${kvHeads}|${table}|${notes?.map((n) => n?.label ?? '').join(',') ?? ''}`;
    if (shape === this.#shape) return;
    this.#shape = shape;
    this.#tiles = [];
    const { gridClass, tileClass, title, maxCell, compact = false, onActivate, label, properties, parts } = this.#options;
    for (const [name, value] of Object.entries(properties?.(layers, heads, kvHeads) ?? {})) this.#host.style.setProperty(name, value);
    const kvOf = (head) => kvHeadOf(head, heads, kvHeads);
    fillLayerGrid(this.#host, { layers, heads, gridClass: `head-grid-tiles ${gridClass}`, notes }, (layer, head) => {
      const tile = el('div', tileClass);
      const figure = el('div', 'head-grid-map');
      const own = parts?.(layer, head) ?? { nodes: [] };
      const kv = kvOf(head);
      tile.append(el('p', 'head-grid-title', title(layer, head, kv)), figure, ...own.nodes);
      if (kv !== null) tile.dataset.kvHead = String(kv);
      this.#tiles.push({ layer, head, kv, tile, figure, parts: own, map: null });
      return tile;
    });
    if (kvOf(0) !== null) this.#group(heads, kvHeads);
    for (const t of this.#tiles) {
      t.map = new Heatmap(t.figure, { maxCell, minCell: 0, labels: false, legend: false, caption: false, compact,
        table, onActivate: () => onActivate(t.layer, t.head) });
      if (label) t.map.canvas.setAttribute('aria-label', label(t.layer, t.head, t.kv));
    }
  }

  /**
   * Each layer's tiles into one labelled group per K/V head (role group, named by its label):
   * .head-grid-tiles.head-grid-grouped > .head-group > (.head-group-label, .head-group-tiles > tiles).
   */
  #group(heads, kvHeads) {
    const size = heads / kvHeads;
    const prefix = `${this.#host.id || 'head-grid'}-kv${++groupIds}`;
    for (const grid of this.#host.querySelectorAll(':scope > .head-layer > .head-grid-tiles')) {
      const tiles = [...grid.children];
      grid.classList.add('head-grid-grouped');
      grid.replaceChildren(...Array.from({ length: kvHeads }, (_, kv) => {
        const group = el('div', 'head-group');
        const label = el('p', 'head-group-label', kvGroupLabel(kv, size));
        label.id = `${prefix}-l${tiles[0].dataset.layer}-${kv}`;
        group.setAttribute('role', 'group');
        group.setAttribute('aria-labelledby', label.id);
        group.dataset.kvHead = String(kv);
        const inner = el('div', 'head-group-tiles');
        inner.append(...tiles.slice(kv * size, (kv + 1) * size));
        group.append(label, inner);
        return group;
      }));
    }
  }

  /** Draws a frame { n, attention: [heads·n·n] per layer, … }; `extra` goes to the view's paint. */
  render(frame, extra = {}) {
    if (!this.#tiles.length || !frame?.attention) return;
    // One layout read for every tile; whole pixels, never more than the tile has (no scrollbar).
    const width = Math.floor(this.#tiles[0].figure.getBoundingClientRect().width);
    const { n } = frame;
    const { tokens, mapTitle, paint } = this.#options;
    const labels = tokens(frame).map(displayToken);
    for (const t of this.#tiles) {
      const data = frame.attention[t.layer].subarray(t.head * n * n, (t.head + 1) * n * n);
      t.map.render({ data, rows: n, cols: n, rowLabels: labels, colLabels: labels, rowAxis: 'query', colAxis: 'key',
        title: mapTitle(t.layer, t.head, frame, t.kv), scale: 'probability' }, { width });
      paint?.(t, frame, extra);
    }
  }

  /**
   * Every drawn head as one SVG figure (svg-figure.js's gridSvg: each tile's cells coloured as its
   * canvas, layers in rows, one colour bar), with `title` and `provenance`; '' before a frame is drawn.
   */
  toSvg(title, provenance = {}) {
    const drawn = this.#tiles.filter((t) => t.map?.matrix);
    if (!drawn.length) return '';
    const { scale, colorScale, logFloor, style } = drawn[0].map;
    const layers = Math.max(...drawn.map((t) => t.layer)) + 1;
    return gridSvg({ title, scale, colorScale, logFloor, style, provenance: { title, ...provenance },
      rowNames: Array.from({ length: layers }, (_, l) => `Layer ${l + 1}`),
      tiles: drawn.map((t) => ({ label: this.#options.title(t.layer, t.head, t.kv), row: t.layer, col: t.head,
        positions: t.map.colorData, rows: t.map.matrix.rows, cols: t.map.matrix.cols })),
      description: `${drawn.length} heads' attention, a query × key heatmap each` });
  }

  /** The tile element of a head (tests and the timeline read it). */
  tile(layer, head) {
    return this.#tiles.find((t) => t.layer === layer && t.head === head)?.tile;
  }

  /**
   * Outlines one head (class `highlighted`), or none. With `reveal` (a reader's own pick on the page,
   * e.g. the head finder's) it is also scrolled into view; never otherwise: an embed's grid draws
   * without moving its host page.
   */
  highlight(layer, head, { reveal = false } = {}) {
    for (const t of this.#tiles) t.tile.classList.toggle('highlighted', t.layer === layer && t.head === head);
    if (reveal) this.tile(layer, head)?.scrollIntoView?.({ block: 'nearest' });
  }
}
