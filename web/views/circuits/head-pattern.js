// The Circuits view's head panel: a head clicked in the patching or attribution map drawn as its
// attention pattern on the clean prompt (the shared Heatmap, query × key, with its legend and
// screen-reader table and PNG / JSON / CSV exports), and "Open in the walkthrough" as the Your model view opens a head.
import { $ } from '../../shared/dom.js';
import { exportButtons, matrixRows } from '../../shared/exporting.js';
import { Heatmap } from '../../shared/heatmap.js';
import { positionLabels } from '../../shared/circuit-matrices.js';
import { setPageState } from '../../shared/page-state.js';

/**
 * @param {{onWalkthrough: (layer: number, head: number) => void, provenance?: () => object}} actions
 *   provenance: the figure exports' facts (model, prompt)
 * @returns {{show: (pattern: object) => void, error: (message: string) => void, hide: () => void, redraw: () => void}}
 */
export function headPattern({ onWalkthrough, provenance = () => ({}) }) {
  const map = new Heatmap($('circuits-head-map'), { maxCell: 28, minCell: 3, zoomable: true });
  let shown = null; // the session's 'head' reply
  const draw = () => {
    const { layer, head, n, tokens, weights } = shown;
    const labels = positionLabels(tokens);
    const matrix = { data: weights, rows: n, cols: n, rowLabels: labels, colLabels: labels, rowAxis: 'query', colAxis: 'key',
      scale: 'probability', title: `Layer ${layer + 1}, head ${head + 1} on the clean prompt` };
    map.render(matrix);
    exportButtons($('circuits-head-exports'), [{ id: `circuits-head-L${layer + 1}H${head + 1}`, label: 'pattern', title: matrix.title, map,
      provenance: () => ({ ...provenance(), layer: layer + 1, head: head + 1 }),
      matrix: () => matrix, json: () => ({ layer, head, title: matrix.title, tokens, rows: { axis: 'query', labels }, cols: { axis: 'key', labels },
        data: matrixRows(matrix) }) }]);
  };
  $('circuits-head-walkthrough').addEventListener('click', () => shown && onWalkthrough(shown.layer, shown.head));
  $('circuits-head-close').addEventListener('click', () => {
    $('circuits-head').hidden = true;
    shown = null;
  });
  return {
    show(pattern) {
      shown = pattern;
      $('circuits-head').hidden = false;
      $('circuits-head-title').textContent = `Layer ${pattern.layer + 1}, head ${pattern.head + 1}`;
      $('circuits-head-info').textContent = `Where this head looks on the clean prompt's ${pattern.n} tokens: each row is a query ` +
        '(a position), each column a key it may attend to; brighter = more weight.';
      $('circuits-head-walkthrough').disabled = false;
      draw();
      $('circuits-head').scrollIntoView?.({ block: 'nearest' });
      setPageState({ circuitsHead: `${pattern.layer}.${pattern.head}` });
    },
    error(message) {
      $('circuits-head').hidden = false;
      $('circuits-head-info').textContent = message;
      $('circuits-head-walkthrough').disabled = true;
    },
    hide() {
      $('circuits-head').hidden = true;
      shown = null;
    },
    redraw() {
      if (shown && !$('circuits-head').hidden) draw();
    },
  };
}
