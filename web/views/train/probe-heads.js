// The Train view's head grid (shared/head-grid.js): every layer's heads' attention on the probe,
// each tile with its scores, an Ablate toggle (also a click on the heatmap) and "Open in walkthrough".
import { button, el } from '../../shared/dom.js';
import { formatNumber } from '../../shared/format.js';
import { HeadGrid } from '../../shared/head-grid.js';

const score = (v) => (v === null || v === undefined ? '—' : formatNumber(v, 2));

/**
 * The probe heads. Then grid.build(layers, heads, table); grid.render(frame { step, n, probe,
 * attention }, { scores: every head's latest, ablation: { layer, head, deltas: Map('l.h' -> delta) } | null }).
 * @param {{onAblate: (layer: number, head: number) => void, onOpen: (layer: number, head: number) => void}} actions
 */
export function probeHeads(host, actions) {
  return new HeadGrid(host, {
    gridClass: 'train-heads',
    tileClass: 'train-tile', // the e2e tests select the tiles by it
    title: (layer, head) => `L${layer + 1} · head ${head + 1}`,
    maxCell: 10,
    onActivate: actions.onAblate,
    tokens: (frame) => Array.from(frame.probe).slice(0, frame.n),
    mapTitle: (layer, head, frame) => `Layer ${layer + 1}, head ${head + 1} at step ${frame.step}`,
    parts(layer, head) {
      const info = el('p', 'head-grid-info muted small');
      const ablate = button('small-button', 'Ablate', () => actions.onAblate(layer, head));
      ablate.setAttribute('aria-pressed', 'false');
      ablate.setAttribute('aria-label', `Ablate layer ${layer + 1} head ${head + 1}`);
      const open = button('small-button', 'Walkthrough', () => actions.onOpen(layer, head));
      open.setAttribute('aria-label', `Open layer ${layer + 1} head ${head + 1} in the walkthrough`);
      const row = el('div', 'head-grid-actions');
      row.append(ablate, open);
      return { nodes: [info, row], info, ablate };
    },
    paint({ layer, head, tile, parts }, frame, { scores = [], ablation = null }) {
      const s = scores.find((x) => x.layer === layer && x.head === head);
      const delta = ablation?.deltas.get(`${layer}.${head}`);
      const ablated = ablation?.layer === layer && ablation?.head === head;
      parts.info.textContent = [s ? `ind ${score(s.induction)} · prev ${score(s.previousToken)}` : '',
        delta !== undefined ? `ablated: loss ${delta >= 0 ? '+' : ''}${formatNumber(delta, 3)}` : ''].filter(Boolean).join(' · ');
      tile.classList.toggle('ablated', ablated);
      parts.ablate.setAttribute('aria-pressed', String(ablated));
      parts.ablate.textContent = ablated ? 'Un-ablate' : 'Ablate';
    },
  });
}
