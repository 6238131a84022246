// Each head's score curves against steps (previous-token, induction, same-token, first-token on
// the core's induction probe, model.headScores): one small plot per head, layers in rows, so the
// phase change where an induction head forms shows as it happens.
import { HEAD_COLORS } from '../../shared/colors.js';
import { el } from '../../shared/dom.js';
import { fillLayerGrid } from '../../shared/layer-grid.js';
import { plotSvg, SvgContext } from '../../shared/svg-figure.js';
import { legendItems, LinePlot } from './plot.js';

export const SCORES = [
  { key: 'previousToken', label: 'previous token', color: HEAD_COLORS[0] },
  { key: 'induction', label: 'induction', color: HEAD_COLORS[1] },
  { key: 'sameToken', label: 'same token', color: HEAD_COLORS[2], dash: [4, 3] },
  { key: 'firstToken', label: 'first token', color: HEAD_COLORS[3], dash: [1, 3] },
];

export class ScoreCurves {
  #host;
  #plots = []; // [{ layer, head, plot, figure }]
  #shape = '';

  constructor(host, legendHost) {
    this.#host = host;
    legendHost.replaceChildren(...legendItems(SCORES));
  }

  build(layers, heads) {
    const shape = `${layers}x${heads}`;
    if (shape === this.#shape) return;
    this.#shape = shape;
    this.#plots = [];
    fillLayerGrid(this.#host, { layers, heads, gridClass: 'train-curves' }, (layer, head) => {
      const figure = el('figure', 'train-curve');
      const box = el('div');
      figure.append(el('figcaption', 'muted small', `L${layer + 1} · head ${head + 1}`), box);
      const plot = new LinePlot(box, { height: 90, legend: false, compact: true, yRange: [0, 1],
        label: `Layer ${layer + 1} head ${head + 1}: score curves against steps` });
      this.#plots.push({ layer, head, plot, figure });
      return figure;
    });
  }

  /** history: [{ step, scores: [{ layer, head, previousToken, … }] }]; marker: the timeline's step. */
  render(history, marker) {
    if (!this.#plots.length) return;
    const width = this.#plots[0].figure.clientWidth;
    this.#plots.forEach(({ layer, head, plot, figure }) => {
      const index = history[0]?.scores.findIndex((s) => s.layer === layer && s.head === head) ?? -1;
      const series = SCORES.map((s) => ({ ...s, points: index < 0 ? [] : history.map((h) => [h.step, h.scores[index]?.[s.key] ?? NaN]) }));
      plot.render(series, { width, marker });
      const latest = history.at(-1)?.scores[index];
      figure.dataset.scores = JSON.stringify(SCORES.map((x) => latest?.[x.key] ?? null)); // tests read it
    });
  }

  /** Every head's plot in one SVG figure (each drawn by its LinePlot into svg-figure.js's SvgContext), layers in rows. */
  toSvg(provenance = {}) {
    const drawn = this.#plots.filter(({ plot }) => plot.last);
    if (!drawn.length) return '';
    const style = drawn[0].plot.figureStyle();
    const recorder = new SvgContext();
    const GAP = 12;
    const CAPTION = 16;
    const heads = Math.max(...drawn.map((p) => p.head)) + 1;
    let width = 0;
    let height = 0;
    for (const { layer, head, plot } of drawn) {
      const w = plot.last.cssWidth;
      const h = plot.options.height;
      const x = head * (w + GAP);
      const y = layer * (h + CAPTION + GAP);
      recorder.save();
      recorder.translate(x, y);
      recorder.font = `11px ${style.family}`;
      recorder.fillStyle = style['--muted'];
      recorder.textBaseline = 'top';
      recorder.textAlign = 'left';
      recorder.fillText(`L${layer + 1} · head ${head + 1}`, 0, 0);
      recorder.translate(0, CAPTION);
      plot.drawTo(recorder);
      recorder.restore();
      width = Math.max(width, x + w);
      height = Math.max(height, y + CAPTION + h);
    }
    const title = `Head scores against training steps (${drawn.length / heads} layers × ${heads} heads)`;
    return plotSvg({ title, width, height, drawing: recorder.toMarkup(), series: SCORES, style, provenance: { title, ...provenance } });
  }
}
