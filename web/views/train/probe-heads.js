// Every layer's heads' attention on the probe: one small heatmap per head (rows = layers), with
// its scores, an Ablate toggle (also a click on the heatmap) and "Open in walkthrough". Tiles are
// kept while the model's shape stays, and only redrawn as it learns. Draws the worker's numbers.
import { button, el } from '../../shared/dom.js';
import { formatNumber } from '../../shared/format.js';
import { Heatmap } from '../../shared/heatmap.js';
import { displayToken } from '../../shared/labels.js';
import { fillLayerGrid } from './layer-grid.js';

const score = (v) => (v === null || v === undefined ? '—' : formatNumber(v, 2));

export class ProbeHeads {
  #host;
  #actions;
  #tiles = []; // [{ layer, head, tile, figure, map, info, ablate }]
  #shape = '';

  /** @param {{onAblate: (layer: number, head: number) => void, onOpen: (layer: number, head: number) => void}} actions */
  constructor(host, actions) {
    this.#host = host;
    this.#actions = actions;
  }

  /** Builds the tiles for a layers × heads model (screen-reader tables when `table`). */
  build(layers, heads, table) {
    const shape = `${layers}x${heads}|${table}`;
    if (shape === this.#shape) return;
    this.#shape = shape;
    this.#tiles = [];
    fillLayerGrid(this.#host, { layers, heads, gridClass: 'train-heads' }, (layer, head) => {
      const tile = el('div', 'train-tile');
      const info = el('p', 'train-tile-info muted small');
      const figure = el('div', 'train-tile-map');
      const ablate = button('small-button', 'Ablate', () => this.#actions.onAblate(layer, head));
      ablate.setAttribute('aria-pressed', 'false');
      ablate.setAttribute('aria-label', `Ablate layer ${layer + 1} head ${head + 1}`);
      const open = button('small-button', 'Walkthrough', () => this.#actions.onOpen(layer, head));
      open.setAttribute('aria-label', `Open layer ${layer + 1} head ${head + 1} in the walkthrough`);
      const actions = el('div', 'train-tile-actions');
      actions.append(ablate, open);
      tile.append(el('p', 'train-tile-title', `L${layer + 1} · head ${head + 1}`), figure, info, actions);
      this.#tiles.push({ layer, head, tile, figure, info, ablate, map: null });
      return tile;
    });
    for (const t of this.#tiles) {
      t.map = new Heatmap(t.figure, { maxCell: 10, minCell: 0, labels: false, legend: false, caption: false,
        table, onActivate: () => this.#actions.onAblate(t.layer, t.head) });
    }
  }

  /**
   * Draws a frame { n, probe, attention: [heads·n·n] per layer } with every head's latest scores
   * and the ablation { layer, head, deltas: Map('l.h' -> delta) } if any.
   */
  render(frame, { scores = [], ablation = null } = {}) {
    if (!this.#tiles.length || !frame?.attention) return;
    const width = this.#tiles[0].figure.clientWidth; // one layout read for every tile
    const { n } = frame;
    const labels = Array.from(frame.probe).slice(0, n).map(displayToken);
    for (const t of this.#tiles) {
      const data = frame.attention[t.layer].subarray(t.head * n * n, (t.head + 1) * n * n);
      t.map.render({ data, rows: n, cols: n, rowLabels: labels, colLabels: labels, rowAxis: 'query', colAxis: 'key',
        title: `Layer ${t.layer + 1}, head ${t.head + 1} at step ${frame.step}`, scale: 'probability' }, { width });
      const s = scores.find((x) => x.layer === t.layer && x.head === t.head);
      const delta = ablation?.deltas.get(`${t.layer}.${t.head}`);
      const ablated = ablation?.layer === t.layer && ablation?.head === t.head;
      t.info.textContent = [s ? `ind ${score(s.induction)} · prev ${score(s.previousToken)}` : '',
        delta !== undefined ? `ablated: loss ${delta >= 0 ? '+' : ''}${formatNumber(delta, 3)}` : ''].filter(Boolean).join(' · ');
      t.tile.classList.toggle('ablated', ablated);
      t.ablate.setAttribute('aria-pressed', String(ablated));
      t.ablate.textContent = ablated ? 'Un-ablate' : 'Ablate';
    }
  }

  /** The tile element of a head (tests and the timeline read it). */
  tile(layer, head) {
    return this.#tiles.find((t) => t.layer === layer && t.head === head)?.tile;
  }
}
