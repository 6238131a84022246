// The run at a glance beside Start (the Train tab's first screen on a phone, where the plots and heads
// are a scroll away): the latest training loss and step, a small plot of the losses so far, and every
// head's attention on the probe as a thumbnail. It draws the worker's numbers as the big plots do.
import { $, el } from '../../shared/dom.js';
import { formatNumber } from '../../shared/format.js';
import { makeScale, matrixPixels } from '../../shared/colors.js';
import { LinePlot } from './plot.js';

/** The side of a head's thumbnail, CSS px. */
const THUMB = 30;

/**
 * The strip in #train-live: render(run, series, { log }) draws the store's `train` (its history's
 * last loss, `series`: the loss plot's, `latest` frame's heads), while the strip is shown (a phone).
 */
export function liveStrip() {
  const plot = new LinePlot($('train-live-plot'), { height: 64, legend: false, compact: true,
    label: 'Training and held-out loss so far (the plot below, small)' });
  const heads = $('train-live-heads');
  let shape = '';
  const scale = makeScale('probability');

  function drawHeads(frame) {
    if (!frame?.attention) return;
    const { n, attention } = frame;
    const count = attention.reduce((sum, layer) => sum + layer.length / (n * n), 0);
    if (shape !== `${attention.length}x${count}x${n}`) {
      shape = `${attention.length}x${count}x${n}`;
      heads.replaceChildren(...attention.flatMap((layer, l) => Array.from({ length: layer.length / (n * n) }, (_, h) => {
        const canvas = el('canvas', 'train-live-head');
        canvas.width = n;
        canvas.height = n;
        canvas.style.width = `${THUMB}px`;
        canvas.style.height = `${THUMB}px`;
        canvas.title = `L${l + 1} H${h + 1}`;
        if (h === 0 && l > 0) canvas.classList.add('train-live-layer'); // a gap before each layer's heads
        canvas.dataset.layer = String(l);
        canvas.dataset.head = String(h);
        return canvas;
      })));
    }
    const image = new ImageData(n, n);
    const pixels = new Uint32Array(image.data.buffer);
    for (const canvas of heads.children) {
      const l = Number(canvas.dataset.layer);
      const h = Number(canvas.dataset.head);
      matrixPixels({ data: attention[l].subarray(h * n * n, (h + 1) * n * n), rows: n, cols: n }, scale, 1, pixels);
      canvas.getContext('2d').putImageData(image, 0, 0);
    }
  }

  return {
    render(run, series, { log }) {
      const box = $('train-live');
      if (!box.getClientRects().length) return; // not shown (a wide screen: the plots are beside it)
      const last = run.history.at(-1);
      $('train-live-loss').textContent = last ? formatNumber(last.loss) : '—';
      $('train-live-step').textContent = `step ${run.latest?.step ?? 0}`;
      plot.render(series, { log, width: $('train-live-plot').clientWidth });
      drawHeads(run.pinned ?? run.latest);
    },
  };
}
