// The Train view: pick a task and a model size, train it in a Web Worker (train-worker.js) and
// watch it learn: loss and accuracy, every head's attention on an editable probe, the heads'
// score curves, a timeline of snapshots, click-to-ablate, checkpoints, and "open in walkthrough".
// Mounted by main.js on the page's store; the worker starts the first time the view is shown.
// Everything drawn comes from the worker's API results: nothing here does attention math.
import { $ } from '../../shared/dom.js';
import { formatNumber } from '../../shared/format.js';
import { HEAD_COLORS } from '../../shared/colors.js';
import { ViewWorkerClient } from '../../shared/view-worker-client.js';
import { EMPTY_RUN } from '../../page-settings.js';
import { circuitNote } from './circuit-note.js';
import { checkpointName, probeOf, runChanged, runConfig } from './config.js';
import { buildTrainMenus, syncTrainControls, wireTrainControls } from './controls.js';
import { LinePlot } from './plot.js';
import { probeHeads } from './probe-heads.js';
import { ScoreCurves } from './score-curves.js';
import { addSnapshot, indexOfStep } from './snapshots.js';

const MAX_HISTORY = 4000; // plotted points kept (thinned like the snapshots beyond)

const thin = (list) => (list.length > MAX_HISTORY ? list.filter((_, i) => i % 2 === 0 || i >= list.length - MAX_HISTORY / 2) : list);

/**
 * @param {{store: object, catalog: object, moduleUrl: string}} context
 * @returns {{render: () => void, activate: () => void}} render redraws (theme, size); activate
 *   shows the view (starting the worker the first time)
 */
export function mountTrain({ store, catalog, moduleUrl }) {
  const setSettings = (patch, probeTime) => {
    if (probeTime !== undefined) probeTypedAt = probeTime;
    store.update(({ settings }) => ({ settings: { ...settings, ...patch } }));
  };
  // The run lives in the store's `train`: { status ('idle' | 'running' | 'paused' | 'diverged'),
  // modelConfig, history [{ step, loss, heldOutLoss, accuracy }], scoreHistory [{ step, scores }],
  // snapshots (frames { step, n, probe, attention }, bounded), latest (the newest frame), pinned
  // (the timeline's frame, null = live), ablation ({ layer, head, step, loss, deltas: Map }),
  // msPerStep }. Below: only the plumbing (the worker, requests in flight, the frame queued).
  const run = () => store.get().train;
  const setRun = (patch) => store.update(({ train }) => ({ train: { ...train, ...patch } }));
  let client = null;
  let starting = null;
  let generation = 0; // the newest configure: older replies and updates are dropped
  let configuring = false;
  let probeTypedAt = null; // the probe keystroke waiting for its redraw (measured)
  let probeBusy = false;
  let probeAgain = false;
  let drawQueued = false;

  const lossPlot = new LinePlot($('train-loss-plot'), { height: 240, yLabel: 'loss', label: 'Training and held-out loss and held-out accuracy against steps' });
  const heads = probeHeads($('train-head-grid'), { onAblate: ablate, onOpen: openInWalkthrough });
  const curves = new ScoreCurves($('train-scores'), $('train-scores-legend'));

  const visible = () => !$('train-view').hidden;
  const showError = (message) => {
    $('train-error').hidden = !message;
    $('train-error').textContent = message ?? '';
  };

  function schedule() {
    if (drawQueued || !visible()) return;
    drawQueued = true;
    requestAnimationFrame(() => {
      drawQueued = false;
      draw();
    });
  }

  function draw() {
    const { history, scoreHistory, latest, pinned, ablation } = run();
    const frame = pinned ?? latest;
    const marker = pinned ? pinned.step : undefined;
    const width = $('train-loss-plot').clientWidth;
    lossPlot.render([
      { label: 'training loss', color: HEAD_COLORS[0], points: history.map((h) => [h.step, h.loss]) },
      { label: 'held-out loss', color: HEAD_COLORS[1], points: history.map((h) => [h.step, h.heldOutLoss]) },
      { label: 'held-out accuracy (right axis)', color: HEAD_COLORS[2], dash: [5, 3], axis: 'right', points: history.map((h) => [h.step, h.accuracy]) },
    ], { log: $('train-log').checked, width, marker });
    const scores = frame ? (scoreHistory.find((s) => s.step === frame.step) ?? scoreHistory.at(-1))?.scores : [];
    heads.render(frame, { scores, ablation });
    curves.render(scoreHistory, marker);
    drawTimeline();
    drawStatus();
    if (probeTypedAt !== null && frame === latest && frame?.probe !== undefined) {
      performance.measure('attention-lens:train-probe', { start: probeTypedAt, end: performance.now() });
      probeTypedAt = null;
    }
    document.body.dataset.trainStep = String(latest?.step ?? 0);
  }

  function drawTimeline() {
    const { snapshots, pinned, latest } = run();
    const slider = $('train-timeline');
    slider.max = String(Math.max(0, snapshots.length - 1));
    slider.value = String(pinned ? indexOfStep(snapshots, pinned.step) : snapshots.length - 1);
    slider.disabled = snapshots.length < 2;
    $('train-timeline-label').textContent = pinned ? `step ${pinned.step} (snapshot ${Number(slider.value) + 1} of ${snapshots.length})`
      : `live · step ${latest?.step ?? 0}`;
  }

  function drawStatus() {
    const { history, scoreHistory, status, latest, msPerStep } = run();
    const last = history.at(-1);
    const rate = msPerStep > 0 && status === 'running' ? ` · ${(1000 / msPerStep).toFixed(0)} steps/s` : '';
    const numbers = last ? ` · loss ${formatNumber(last.loss)} · held-out ${formatNumber(last.heldOutLoss)} · accuracy ${formatNumber(last.accuracy, 2)}` : '';
    const state = { idle: 'Ready', running: 'Training', paused: 'Paused', diverged: 'Stopped' }[status];
    $('train-status').textContent = `${state} · step ${latest?.step ?? 0}${rate}${numbers}`;
    const note = last ? circuitNote(store.get().settings.task, last, scoreHistory.find((s) => s.step === last.step)?.scores) : null;
    $('train-circuit').hidden = !note;
    $('train-circuit').textContent = note ?? '';
    $('train-run').textContent = status === 'running' ? 'Pause' : 'Start';
    $('train-run').setAttribute('aria-pressed', String(status === 'running'));
    document.body.dataset.trainStatus = status;
    Object.assign($('train-status').dataset, last ? { loss: last.loss, heldOutLoss: last.heldOutLoss, accuracy: last.accuracy } : {});
  }

  /** A frame from the worker (a chunk of training, a new probe, a loaded checkpoint). */
  function receive(update, patch = {}) {
    const { history, scoreHistory, snapshots, msPerStep } = { ...run(), ...patch };
    const next = { ...patch, msPerStep: update.msPerStep || msPerStep,
      history: update.report && history.at(-1)?.step !== update.step ? thin([...history, { step: update.step, ...update.report }]) : history,
      scoreHistory: thin([...scoreHistory.filter((s) => s.step !== update.step), { step: update.step, scores: update.scores }]) };
    if (update.attention) {
      next.latest = { step: update.step, n: update.n, probe: update.probe, attention: update.attention };
      next.snapshots = addSnapshot(snapshots, next.latest);
    }
    setRun(next);
  }

  async function configure() {
    const mine = ++generation;
    configuring = true;
    setRun({ status: 'idle' });
    showError(null);
    const settings = store.get().settings;
    try {
      const value = await client.call('configure', { config: runConfig(settings) });
      if (mine !== generation) return;
      configuring = false;
      const { modelConfig } = value;
      heads.build(modelConfig.layers, modelConfig.heads, modelConfig.context <= 32);
      curves.build(modelConfig.layers, modelConfig.heads);
      $('train-probe-info').className = value.probeError ? 'small error-inline' : 'muted small';
      $('train-probe-info').textContent = value.probeError ? `Probe: ${value.probeError}`
        : `The task's ${value.vocabulary.length} characters: ${value.vocabulary}`;
      $('train-ablation').textContent = 'Click a head (or its Ablate button) to see the held-out loss without it.';
      receive(value.update, { ...EMPTY_RUN, modelConfig });
      document.body.dataset.trainReady = 'true';
    } catch (error) {
      if (mine !== generation) return;
      configuring = false;
      showError(error.message);
      document.body.dataset.trainReady = 'true';
    }
  }

  async function sendProbe() {
    if (!client || configuring) return;
    if (probeBusy) {
      probeAgain = true;
      return;
    }
    probeBusy = true;
    const mine = generation;
    try {
      const update = await client.call('probe', { text: probeOf(store.get().settings) });
      if (mine === generation && !configuring) {
        $('train-probe-info').className = 'muted small';
        $('train-probe-info').textContent = `${update.n} characters`;
        receive(update);
      }
    } catch (error) {
      $('train-probe-info').className = 'small error-inline';
      $('train-probe-info').textContent = `Probe: ${error.message}`;
      probeTypedAt = null;
    } finally {
      probeBusy = false;
      if (probeAgain) {
        probeAgain = false;
        sendProbe();
      }
    }
  }

  async function command(type) {
    if (!client || configuring) return;
    try {
      if (type === 'run') showError(null);
      setRun(type === 'run' ? { status: 'running', pinned: null } : { status: 'paused' });
      await client.call(type);
    } catch (error) {
      showError(error.message);
    }
  }

  async function ablate(layer, head) {
    if (!client || configuring) return;
    const { ablation } = run();
    if (ablation?.layer === layer && ablation?.head === head) {
      $('train-ablation').textContent = 'No head ablated.';
      setRun({ ablation: null });
      return;
    }
    try {
      const value = await client.call('ablate');
      const entry = value.heads.find((h) => h.layer === layer && h.head === head);
      $('train-ablation').textContent = `Held-out loss at step ${value.step}: ${formatNumber(value.loss)} with every head, ` +
        `${formatNumber(entry.loss)} without layer ${layer + 1} head ${head + 1} (${entry.delta >= 0 ? '+' : ''}${formatNumber(entry.delta)}).`;
      $('train-ablation').dataset.delta = String(entry.delta);
      setRun({ ablation: { layer, head, step: value.step, loss: value.loss,
        deltas: new Map(value.heads.map((h) => [`${h.layer}.${h.head}`, h.delta])) } });
    } catch (error) {
      showError(error.message);
    }
  }

  /**
   * "Open in walkthrough": the worker's layer data on the probe (model.attentionLayer) into the
   * store in one action; the walkthrough's trained-layer mode reads `trainedLayer`.
   */
  async function openInWalkthrough(layer, head) {
    if (!client || configuring) return;
    try {
      const value = await client.call('layer', { layer });
      store.update(({ settings, train }) => ({ trainedLayer: { ...value, layer, head, task: settings.task, modelConfig: train.modelConfig },
        settings: { ...settings, tab: 'walkthrough', head }, pinned: null }));
    } catch (error) {
      showError(error.message);
    }
  }

  async function save() {
    if (!client || configuring) return;
    try {
      const bytes = await client.call('save');
      const link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
      link.download = checkpointName(runConfig(store.get().settings), run().latest?.step ?? 0);
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 10000);
      $('train-file-status').textContent = `Saved ${link.download} (${bytes.length} bytes).`;
    } catch (error) {
      $('train-file-status').textContent = `Could not save: ${error.message}`;
    }
  }

  async function load(file) {
    if (!client || configuring || !file) return;
    try {
      const bytes = await file.arrayBuffer();
      const update = await client.call('load', { bytes }, [bytes]);
      receive(update, { ablation: null });
      $('train-file-status').textContent = `Loaded ${file.name}.`;
    } catch (error) {
      $('train-file-status').textContent = `Could not load ${file.name}: ${error.message}`;
    } finally {
      $('train-load').value = '';
    }
  }

  async function start() {
    starting ??= (async () => {
      buildTrainMenus(catalog.tasks);
      syncTrainControls(store.get().settings, probeOf(store.get().settings));
      const worker = new Worker(new URL('./train-worker.js', import.meta.url), { type: 'module' });
      client = await ViewWorkerClient.start(worker, moduleUrl, {
        onUpdate: (update) => {
          if (!configuring) receive(update);
        },
        onDiverged: (message) => {
          showError(message);
          setRun({ status: 'diverged' });
        },
        failed: 'the training worker failed to start',
      });
      await configure();
    })().catch((error) => {
      showError(`Could not start the trainer: ${error.message}`);
      document.body.dataset.trainReady = 'true';
    });
    return starting;
  }

  store.subscribe((now, before) => {
    if (now.train !== before.train) schedule();
    if (now.settings === before.settings || !starting) return;
    syncTrainControls(now.settings, probeOf(now.settings));
    if (client && runChanged(now.settings, before.settings)) configure();
    else if (client && now.settings.probe !== before.settings.probe) sendProbe();
  });
  wireTrainControls(store, setSettings);
  $('train-run').addEventListener('click', () => command(run().status === 'running' ? 'pause' : 'run'));
  $('train-step').addEventListener('click', () => command('step'));
  $('train-reset').addEventListener('click', () => client && configure());
  $('train-save').addEventListener('click', save);
  $('train-load').addEventListener('change', (e) => load(e.target.files[0]));
  $('train-log').addEventListener('change', schedule);
  $('train-timeline').addEventListener('input', (e) => {
    const i = Number(e.target.value);
    const { snapshots } = run();
    setRun({ pinned: i >= snapshots.length - 1 ? null : snapshots[i] });
  });

  return {
    render: schedule,
    activate() {
      start();
      schedule();
    },
  };
}
