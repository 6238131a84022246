// The Train view: pick a task and a model size, train it in a Web Worker (train-worker.js) and
// watch it learn: loss and accuracy, every head's attention on an editable probe, the heads'
// score curves, a timeline of snapshots, click-to-ablate, checkpoints, and "open in walkthrough".
// Mounted by main.js on the page's store; the worker starts the first time the view is shown.
// Everything drawn comes from the worker's API results: nothing here does attention math.
import { $ } from '../../shared/dom.js';
import { formatNumber } from '../../shared/format.js';
import { HEAD_COLORS } from '../../shared/colors.js';
import { checkpointName, probeOf, runChanged, runConfig } from './config.js';
import { buildTrainMenus, syncTrainControls, wireTrainControls } from './controls.js';
import { LinePlot } from './plot.js';
import { ProbeHeads } from './probe-heads.js';
import { ScoreCurves } from './score-curves.js';
import { Snapshots } from './snapshots.js';
import { TrainClient } from './train-client.js';

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
  let client = null;
  let starting = null;
  let status = 'idle'; // 'idle' | 'running' | 'paused' | 'diverged'
  let generation = 0; // the newest configure: older replies and updates are dropped
  let configuring = false;
  let modelConfig = null;
  let history = []; // [{ step, loss, heldOutLoss, accuracy }]
  let scoreHistory = []; // [{ step, scores }]
  const snapshots = new Snapshots(200);
  let latest = null; // the newest frame { step, n, probe, attention }
  let pinned = null; // the timeline's frame, or null = live
  let ablation = null; // { layer, head, step, loss, deltas: Map }
  let msPerStep = 0;
  let probeTypedAt = null; // the probe keystroke waiting for its redraw (measured)
  let probeBusy = false;
  let probeAgain = false;
  let drawQueued = false;

  const lossPlot = new LinePlot($('train-loss-plot'), { height: 240, yLabel: 'loss', label: 'Training and held-out loss and held-out accuracy against steps' });
  const heads = new ProbeHeads($('train-head-grid'), { onAblate: ablate, onOpen: openInWalkthrough });
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
    const slider = $('train-timeline');
    slider.max = String(Math.max(0, snapshots.length - 1));
    slider.value = String(pinned ? snapshots.indexOfStep(pinned.step) : snapshots.length - 1);
    slider.disabled = snapshots.length < 2;
    $('train-timeline-label').textContent = pinned ? `step ${pinned.step} (snapshot ${Number(slider.value) + 1} of ${snapshots.length})`
      : `live · step ${latest?.step ?? 0}`;
  }

  function drawStatus() {
    const last = history.at(-1);
    const rate = msPerStep > 0 && status === 'running' ? ` · ${(1000 / msPerStep).toFixed(0)} steps/s` : '';
    const numbers = last ? ` · loss ${formatNumber(last.loss)} · held-out ${formatNumber(last.heldOutLoss)} · accuracy ${formatNumber(last.accuracy, 2)}` : '';
    const state = { idle: 'Ready', running: 'Training', paused: 'Paused', diverged: 'Stopped' }[status];
    $('train-status').textContent = `${state} · step ${latest?.step ?? 0}${rate}${numbers}`;
    $('train-run').textContent = status === 'running' ? 'Pause' : 'Start';
    $('train-run').setAttribute('aria-pressed', String(status === 'running'));
    document.body.dataset.trainStatus = status;
    Object.assign($('train-status').dataset, last ? { loss: last.loss, heldOutLoss: last.heldOutLoss, accuracy: last.accuracy } : {});
  }

  /** A frame from the worker (a chunk of training, a new probe, a loaded checkpoint). */
  function receive(update) {
    if (update.report && history.at(-1)?.step !== update.step) {
      history = thin([...history, { step: update.step, ...update.report }]);
    }
    if (update.msPerStep) msPerStep = update.msPerStep;
    if (scoreHistory.at(-1)?.step === update.step) scoreHistory.pop();
    scoreHistory = thin([...scoreHistory, { step: update.step, scores: update.scores }]);
    if (update.attention) {
      latest = { step: update.step, n: update.n, probe: update.probe, attention: update.attention };
      snapshots.add(latest);
    }
    schedule();
  }

  async function configure() {
    const mine = ++generation;
    configuring = true;
    status = 'idle';
    showError(null);
    const settings = store.get().settings;
    try {
      const value = await client.call('configure', { config: runConfig(settings) });
      if (mine !== generation) return;
      configuring = false;
      modelConfig = value.modelConfig;
      history = [];
      scoreHistory = [];
      snapshots.clear();
      latest = null;
      pinned = null;
      ablation = null;
      msPerStep = 0;
      heads.build(modelConfig.layers, modelConfig.heads, modelConfig.context <= 32);
      curves.build(modelConfig.layers, modelConfig.heads);
      $('train-probe-info').className = value.probeError ? 'small error-inline' : 'muted small';
      $('train-probe-info').textContent = value.probeError ? `Probe: ${value.probeError}`
        : `The task's ${value.vocabulary.length} characters: ${value.vocabulary}`;
      $('train-ablation').textContent = 'Click a head (or its Ablate button) to see the held-out loss without it.';
      receive(value.update);
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
      if (type === 'run') {
        showError(null);
        status = 'running';
        pinned = null;
      } else {
        status = 'paused';
      }
      schedule();
      await client.call(type);
    } catch (error) {
      showError(error.message);
    }
  }

  async function ablate(layer, head) {
    if (!client || configuring) return;
    if (ablation?.layer === layer && ablation?.head === head) {
      ablation = null;
      $('train-ablation').textContent = 'No head ablated.';
      schedule();
      return;
    }
    try {
      const value = await client.call('ablate');
      const entry = value.heads.find((h) => h.layer === layer && h.head === head);
      ablation = { layer, head, step: value.step, loss: value.loss,
        deltas: new Map(value.heads.map((h) => [`${h.layer}.${h.head}`, h.delta])) };
      $('train-ablation').textContent = `Held-out loss at step ${value.step}: ${formatNumber(value.loss)} with every head, ` +
        `${formatNumber(entry.loss)} without layer ${layer + 1} head ${head + 1} (${entry.delta >= 0 ? '+' : ''}${formatNumber(entry.delta)}).`;
      $('train-ablation').dataset.delta = String(entry.delta);
      schedule();
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
      store.update(({ settings }) => ({ trainedLayer: { ...value, layer, head, modelConfig },
        settings: { ...settings, tab: 'walkthrough' } }));
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
      link.download = checkpointName(runConfig(store.get().settings), latest?.step ?? 0);
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
      $('train-file-status').textContent = `Loaded ${file.name}.`;
      ablation = null;
      receive(update);
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
      client = await TrainClient.start(moduleUrl, {
        onUpdate: (update) => {
          if (!configuring) receive(update);
        },
        onDiverged: (message) => {
          status = 'diverged';
          showError(message);
          schedule();
        },
      });
      await configure();
    })().catch((error) => {
      showError(`Could not start the trainer: ${error.message}`);
      document.body.dataset.trainReady = 'true';
    });
    return starting;
  }

  store.subscribe((now, before) => {
    if (now.settings === before.settings || !starting) return;
    syncTrainControls(now.settings, probeOf(now.settings));
    if (client && runChanged(now.settings, before.settings)) configure();
    else if (client && now.settings.probe !== before.settings.probe) sendProbe();
  });
  wireTrainControls(store, setSettings);
  $('train-run').addEventListener('click', () => command(status === 'running' ? 'pause' : 'run'));
  $('train-step').addEventListener('click', () => command('step'));
  $('train-reset').addEventListener('click', () => client && configure());
  $('train-save').addEventListener('click', save);
  $('train-load').addEventListener('change', (e) => load(e.target.files[0]));
  $('train-log').addEventListener('change', schedule);
  $('train-timeline').addEventListener('input', (e) => {
    const i = Number(e.target.value);
    pinned = i >= snapshots.length - 1 ? null : snapshots.at(i);
    schedule();
  });

  return {
    render: schedule,
    activate() {
      start();
      schedule();
    },
  };
}
