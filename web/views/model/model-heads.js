// Every layer × head of a loaded checkpoint as a small heatmap of its attention on the typed text
// (rows = layers, as the Train view's grid); a click (or Enter) on one opens it in the walkthrough,
// and the head finder's chosen head is outlined. Draws the worker's numbers only.
import { el } from '../../shared/dom.js';
import { Heatmap } from '../../shared/heatmap.js';
import { displayToken } from '../../shared/labels.js';
import { fillLayerGrid } from '../train/layer-grid.js';

const MAX_TABLE_HEADS = 48; // screen-reader tables for models up to this many heads

export class ModelHeads {
  #host;
  #onOpen;
  #tiles = []; // [{ layer, head, tile, map }]
  #shape = '';

  /** @param {(layer: number, head: number) => void} onOpen */
  constructor(host, onOpen) {
    this.#host = host;
    this.#onOpen = onOpen;
  }

  /** The tiles of a layers × heads model (kept while the shape stays). */
  build(layers, heads) {
    const shape = `${layers}x${heads}`;
    if (shape === this.#shape) return;
    this.#shape = shape;
    this.#tiles = [];
    // One row of tiles per layer (up to 16 heads; a phone wraps them), larger when there are few.
    this.#host.style.setProperty('--model-cols', String(Math.min(heads, 16)));
    this.#host.style.setProperty('--model-tile-max', `${heads <= 4 ? 200 : 160}px`);
    fillLayerGrid(this.#host, { layers, heads, gridClass: 'model-heads' }, (layer, head) => {
      const tile = el('div', 'train-tile model-tile');
      const figure = el('div', 'train-tile-map');
      tile.append(el('p', 'train-tile-title', `H${head + 1}`), figure);
      this.#tiles.push({ layer, head, tile, figure, map: null });
      return tile;
    });
    for (const t of this.#tiles) {
      t.map = new Heatmap(t.figure, { maxCell: 12, minCell: 0, labels: false, legend: false, caption: false,
        table: layers * heads <= MAX_TABLE_HEADS, onActivate: () => this.#onOpen(t.layer, t.head) });
      t.map.canvas.setAttribute('aria-label', `Layer ${t.layer + 1}, head ${t.head + 1}: open in the walkthrough`);
    }
  }

  /** Draws a run { n, tokens, attention: [heads·n·n] per layer }. */
  render(run) {
    if (!this.#tiles.length || !run?.attention) return;
    const width = this.#tiles[0].figure.clientWidth;
    const { n } = run;
    const labels = run.tokens.map(displayToken);
    for (const t of this.#tiles) {
      const data = run.attention[t.layer].subarray(t.head * n * n, (t.head + 1) * n * n);
      t.map.render({ data, rows: n, cols: n, rowLabels: labels, colLabels: labels, rowAxis: 'query', colAxis: 'key',
        title: `Layer ${t.layer + 1}, head ${t.head + 1}`, scale: 'probability' }, { width });
    }
  }

  /** Outlines one head (the head finder's row), or none. */
  highlight(layer, head) {
    for (const t of this.#tiles) t.tile.classList.toggle('highlighted', t.layer === layer && t.head === head);
    const tile = this.#tiles.find((t) => t.layer === layer && t.head === head)?.tile;
    tile?.scrollIntoView?.({ block: 'nearest' });
  }
}
