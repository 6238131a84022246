// The Train view's drawing: loss plot, probe heads, score curves, timeline, status and the live strip beside
// Start (live.js), from the store's `train`.
import { $ } from '../../shared/dom.js';
import { setFooter } from '../../page-settings.js';
import { exportButtons } from '../../shared/exporting.js';
import { formatNumber } from '../../shared/format.js';
import { HEAD_COLORS } from '../../shared/colors.js';
import { circuitNote } from './circuit-note.js';
import { liveStrip } from './live.js';
import { LinePlot } from './plot.js';
import { probeHeads } from './probe-heads.js';
import { ScoreCurves } from './score-curves.js';
import { indexOfStep } from './snapshots.js';
import { setPageState } from '../../shared/page-state.js';

const STATUS_WORDS = { idle: 'Ready', running: 'Training', paused: 'Paused', diverged: 'Stopped' };

/** The loss plot's three series from the run's history [{ step, loss, heldOutLoss, accuracy }]. */
const lossSeries = (history) => [
  { label: 'training loss', color: HEAD_COLORS[0], points: history.map((h) => [h.step, h.loss]) },
  { label: 'held-out loss', color: HEAD_COLORS[1], points: history.map((h) => [h.step, h.heldOutLoss]) },
  { label: 'held-out accuracy (right axis)', color: HEAD_COLORS[2], dash: [5, 3], axis: 'right', points: history.map((h) => [h.step, h.accuracy]) },
];

/**
 * A Train view figure's provenance, from the run drawn (its runConfig, what the trainer was configured
 * with): the task, the model trained and its training settings, the step drawn and its probe.
 */
function trainProvenance({ train }) {
  const run = train.runConfig ?? {};
  return { view: 'train', task: run.task, model: { layers: run.layers, heads: run.heads, dModel: run.dModel, context: run.context },
    training: { learningRate: run.lr, batch: run.batch, seed: run.seed }, step: train.latest?.step ?? 0, probe: train.latest?.probe ?? run.probe };
}

/** The timeline slider and its label: the pinned snapshot, or live. */
function drawTimeline({ snapshots, pinned, latest }) {
  const slider = $('train-timeline');
  slider.max = String(Math.max(0, snapshots.length - 1));
  slider.value = String(pinned ? indexOfStep(snapshots, pinned.step) : snapshots.length - 1);
  slider.disabled = snapshots.length < 2;
  $('train-timeline-label').textContent = pinned ? `step ${pinned.step} (snapshot ${Number(slider.value) + 1} of ${snapshots.length})`
    : `live · step ${latest?.step ?? 0}`;
}

/** The status line, the "another circuit" note, the Start / Pause button, and what the tests read. */
function drawStatus({ history, scoreHistory, status, latest, msPerStep }, task) {
  const last = history.at(-1);
  const rate = msPerStep > 0 && status === 'running' ? ` · ${(1000 / msPerStep).toFixed(0)} steps/s` : '';
  const numbers = last ? ` · loss ${formatNumber(last.loss)} · held-out ${formatNumber(last.heldOutLoss)} · accuracy ${formatNumber(last.accuracy, 2)}` : '';
  $('train-status').textContent = `${STATUS_WORDS[status]} · step ${latest?.step ?? 0}${rate}${numbers}`;
  const note = last ? circuitNote(task, last, scoreHistory.find((s) => s.step === last.step)?.scores) : null;
  $('train-circuit').hidden = !note;
  $('train-circuit').textContent = note ?? '';
  $('train-run').textContent = status === 'running' ? 'Pause' : 'Start';
  $('train-run').setAttribute('aria-pressed', String(status === 'running'));
  setPageState({ trainStatus: status });
  Object.assign($('train-status').dataset, last ? { loss: last.loss, heldOutLoss: last.heldOutLoss, accuracy: last.accuracy } : {});
}

/** The footer while the Train tab is shown: the model trained, its step, loss and speed. */
function footerLine({ modelConfig, status, latest, history, msPerStep }, task) {
  if (!modelConfig) return 'Loading the trainer…';
  const last = history.at(-1);
  const rate = msPerStep > 0 && status === 'running' ? ` · ${(1000 / msPerStep).toFixed(0)} steps/s` : '';
  return `Training on ${task}: ${modelConfig.layers} layer${modelConfig.layers === 1 ? '' : 's'} × ${modelConfig.heads} head` +
    `${modelConfig.heads === 1 ? '' : 's'} · d_model ${modelConfig.dModel} · step ${latest?.step ?? 0}` +
    `${last ? ` · held-out loss ${formatNumber(last.heldOutLoss)}` : ''}${rate} · ${STATUS_WORDS[status].toLowerCase()}, in the training worker`;
}

/**
 * The view's drawing on `store`: schedule() redraws in the next animation frame while the view is
 * shown; build(modelConfig) lays out the head grid and the curves for a new model; probeTyped(time)
 * and probeFailed() time the probe keystroke until its redraw (performance.measure).
 * @param {{store: object, onAblate: (layer: number, head: number) => void, onOpen: (layer: number, head: number) => void}} context
 */
export function trainDrawing({ store, onAblate, onOpen }) {
  const lossPlot = new LinePlot($('train-loss-plot'), { height: 240, yLabel: 'loss', label: 'Training and held-out loss and held-out accuracy against steps' });
  const heads = probeHeads($('train-head-grid'), { onAblate, onOpen });
  const curves = new ScoreCurves($('train-scores'), $('train-scores-legend'));
  const live = liveStrip(); // beside Start, on a phone
  let drawQueued = false;
  let probeTypedAt = null; // the probe keystroke waiting for its redraw (measured)
  // Figure exports of the loss plot and the score curves (their numbers read at click time).
  const provenance = () => trainProvenance(store.get());
  exportButtons($('train-loss-exports'), [{ id: 'train-loss', label: 'loss plot', title: 'Loss and accuracy against steps', map: lossPlot,
    provenance, json: () => ({ task: store.get().train.runConfig?.task, history: store.get().train.history }) }]);
  exportButtons($('train-scores-exports'), [{ id: 'train-head-scores', label: 'head scores', title: 'Head scores against steps', map: curves,
    provenance, json: () => ({ task: store.get().train.runConfig?.task, scoreHistory: store.get().train.scoreHistory }) }]);

  function draw() {
    const run = store.get().train;
    const { history, scoreHistory, latest, pinned, ablation } = run;
    const frame = pinned ?? latest;
    const marker = pinned ? pinned.step : undefined;
    const series = lossSeries(history);
    lossPlot.render(series, { log: $('train-log').checked, width: $('train-loss-plot').clientWidth, marker });
    live.render(run, series.slice(0, 2), { log: $('train-log').checked }); // the two losses
    const scores = frame ? (scoreHistory.find((s) => s.step === frame.step) ?? scoreHistory.at(-1))?.scores : [];
    heads.render(frame, { scores, ablation });
    curves.render(scoreHistory, marker);
    drawTimeline(run);
    drawStatus(run, store.get().settings.task);
    setFooter(store, 'train', footerLine(run, store.get().settings.task));
    if (probeTypedAt !== null && frame === latest && frame?.probe !== undefined) {
      performance.measure('attention-lens:train-probe', { start: probeTypedAt, end: performance.now() });
      probeTypedAt = null;
    }
    setPageState({ trainStep: latest?.step ?? 0 });
  }

  function schedule() {
    if (drawQueued || $('train-view').hidden) return;
    drawQueued = true;
    requestAnimationFrame(() => {
      drawQueued = false;
      draw();
    });
  }

  return {
    schedule,
    build({ layers, heads: headCount, context }) {
      heads.build(layers, headCount, context <= 32);
      curves.build(layers, headCount);
    },
    probeTyped(time) {
      probeTypedAt = time;
    },
    probeFailed() {
      probeTypedAt = null;
    },
  };
}
