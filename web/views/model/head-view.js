// The Your model view's larger view of one head, a modal <dialog> opened from a tile of the head
// grid (click, Enter or Space): the head's whole heatmap with its tokens on the axes, its colour
// legend and screen-reader table; the previous and next head; its knock-out toggle; and "Open in
// the walkthrough". Escape or Close closes it and focus goes back to the head's tile. Draws the
// worker's numbers (the run's attention) as given; text only ever goes in as textContent.
import { $ } from '../../shared/dom.js';
import { exportButtons, matrixRows } from '../../shared/exporting.js';
import { Heatmap } from '../../shared/heatmap.js';
import { kvHeadOf } from '../../shared/head-grid.js';
import { displayToken } from '../../shared/labels.js';
import { layerKinds } from './model-data.js';

/** The dialog's chrome (heading, buttons, legend) in px: the heatmap's square gets the rest of the window's height. */
const CHROME_PX = 300;

/**
 * @param {{onWalkthrough: (layer: number, head: number) => void, onKnock: (layer: number, head: number) => void,
 *   tileCanvas: (layer: number, head: number) => HTMLElement | null, provenance?: () => object}} parts
 *   tileCanvas: the grid's heatmap of a head (focus goes back to it); provenance: the figure exports' facts (model, text)
 * @returns {{open: (layer: number, head: number, run: object, config: object) => void, update: (run: object) => void,
 *   close: () => void}}
 */
export function headView({ onWalkthrough, onKnock, tileCanvas, provenance = () => ({}) }) {
  const dialog = $('model-head-dialog');
  let map = null;
  let shown = null; // { layer, head, run, config } while open

  function draw() {
    const { layer, head, run, config } = shown;
    const kv = kvHeadOf(head, config.heads, config.kvHeads ?? config.heads);
    const { n } = run;
    $('model-head-title').textContent = `Layer ${layer + 1}, head ${head + 1}`;
    const kind = layerKinds(config)?.[layer];
    const reach = !kind ? '' : kind.local ? `Layer ${layer + 1} is local: each query sees only the last ${kind.window} tokens up to itself. `
      : `Layer ${layer + 1} is global: each query sees every earlier token. `;
    $('model-head-info').textContent = `${kv === null ? '' : `Reads K/V head ${kv + 1}. `}${reach}Its attention on your ${n} tokens: ` +
      'each row is a query (a position of the text), each column a key it may look at; brighter = more weight.';
    const knocked = (run.ablated ?? []).some((h) => h.layer === layer && h.head === head);
    $('model-head-knock').setAttribute('aria-pressed', String(knocked));
    $('model-head-knock').textContent = knocked ? 'Knocked out (restore)' : 'Knock out';
    $('model-head-prev').disabled = layer === 0 && head === 0;
    $('model-head-next').disabled = layer === config.layers - 1 && head === config.heads - 1;
    // The square fits the window's height as well as the dialog's width.
    const maxCell = Math.max(3, Math.min(28, Math.floor((innerHeight - CHROME_PX) / Math.max(n, 1))));
    if (map?.options.maxCell !== maxCell) map = new Heatmap($('model-head-map'), { maxCell, minCell: 2, zoomable: true, caption: false });
    const labels = run.tokens.map(displayToken);
    const matrix = { data: run.attention[layer].subarray(head * n * n, (head + 1) * n * n), rows: n, cols: n, rowLabels: labels,
      colLabels: labels, rowAxis: 'query', colAxis: 'key', scale: 'probability',
      title: `Layer ${layer + 1}, head ${head + 1}${kv === null ? '' : ` (reads K/V head ${kv + 1})`}` };
    map.render(matrix);
    exportButtons($('model-head-exports'), [{ id: `model-L${layer + 1}H${head + 1}`, key: 'model-head', label: 'this head', title: matrix.title, map,
      provenance: () => ({ ...provenance(), layer: layer + 1, head: head + 1, tokens: run.tokens }),
      matrix: () => matrix, json: () => ({ layer, head, title: matrix.title, tokens: run.tokens, rows: { axis: 'query', labels },
        cols: { axis: 'key', labels }, data: matrixRows(matrix) }) }]);
  }

  /** Another head of the same model (step −1: the previous, +1: the next, across layers). */
  function step(by) {
    const { config } = shown;
    const index = Math.max(0, Math.min(config.layers * config.heads - 1, shown.layer * config.heads + shown.head + by));
    shown = { ...shown, layer: Math.floor(index / config.heads), head: index % config.heads };
    draw();
  }

  $('model-head-prev').addEventListener('click', () => step(-1));
  $('model-head-next').addEventListener('click', () => step(1));
  $('model-head-knock').addEventListener('click', () => shown && onKnock(shown.layer, shown.head));
  $('model-head-walkthrough').addEventListener('click', () => {
    if (!shown) return;
    const { layer, head } = shown;
    dialog.close();
    onWalkthrough(layer, head);
  });
  $('model-head-close').addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    const was = shown;
    shown = null;
    // Back to the head's tile (the last one shown), unless the walkthrough took the page.
    if (was && !$('model-view').hidden) tileCanvas(was.layer, was.head)?.focus();
  });

  return {
    open(layer, head, run, config) {
      if (!run?.attention) return;
      shown = { layer, head, run, config };
      if (!dialog.open) dialog.showModal();
      draw();
      $('model-head-walkthrough').focus();
    },
    /** A new run (typed text, a head knocked out): the head shown drawn again. */
    update(run, config) {
      if (!shown || !run?.attention) return;
      if (config.layers !== shown.config.layers || config.heads !== shown.config.heads) {
        dialog.close();
        return;
      }
      shown = { ...shown, run, config };
      draw();
    },
    close() {
      if (dialog.open) dialog.close();
    },
  };
}
