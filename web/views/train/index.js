// The Train view: pick a task and a model size, train it in a Web Worker (train-worker.js) and
// watch it learn: loss and accuracy, every head's attention on an editable probe, the heads'
// score curves, a timeline of snapshots, click-to-ablate, checkpoints, and "open in walkthrough".
// Mounted by main.js on the page's store; the worker starts the first time the view is shown.
// This file is the controller (the store's `train` slice, the worker's calls, the commands);
// draw.js draws. Everything drawn comes from the worker's API results: nothing here does attention math.
import { $ } from '../../shared/dom.js';
import { formatNumber } from '../../shared/format.js';
import { openLayer } from '../../shared/opened-layers.js';
import { ViewWorkerClient } from '../../shared/view-worker-client.js';
import { EMPTY_RUN } from '../../page-settings.js';
import { checkpointName, probeOf, runChanged, runConfig } from './config.js';
import { buildTrainMenus, syncTrainControls, wireTrainControls } from './controls.js';
import { trainDrawing } from './draw.js';
import { addSnapshot } from './snapshots.js';
import { setPageState } from '../../shared/page-state.js';

const MAX_HISTORY = 4000; // plotted points kept (thinned like the snapshots beyond)

const thin = (list) => (list.length > MAX_HISTORY ? list.filter((_, i) => i % 2 === 0 || i >= list.length - MAX_HISTORY / 2) : list);

const showError = (message) => {
  $('train-error').hidden = !message;
  $('train-error').textContent = message ?? '';
};

const probeInfo = (message, error = false) => {
  $('train-probe-info').className = error ? 'small error-inline' : 'muted small';
  $('train-probe-info').textContent = message;
};

/**
 * The run lives in the store's `train`: { status ('idle' | 'running' | 'paused' | 'diverged'),
 * modelConfig, history [{ step, loss, heldOutLoss, accuracy }], scoreHistory [{ step, scores }],
 * snapshots (frames { step, n, probe, attention }, bounded), latest (the newest frame), pinned
 * (the timeline's frame, null = live), ablation ({ layer, head, step, loss, deltas: Map }),
 * msPerStep }. The controller holds only the plumbing (the worker, the requests in flight) and
 * turns the worker's replies into patches of `train`; the drawing redraws when it changes.
 */
class TrainController {
  #store;
  #catalog;
  #moduleUrl;
  #client = null;
  #starting = null;
  #generation = 0; // the newest configure: older replies and updates are dropped
  #configuring = false;
  #probeBusy = false;
  #probeAgain = false;

  constructor({ store, catalog, moduleUrl }) {
    this.#store = store;
    this.#catalog = catalog;
    this.#moduleUrl = moduleUrl;
    this.drawing = trainDrawing({ store, onAblate: (layer, head) => this.#ablate(layer, head),
      onOpen: (layer, head) => this.#openInWalkthrough(layer, head) });
    this.#wire();
  }

  #run() {
    return this.#store.get().train;
  }

  #setRun(patch) {
    this.#store.update(({ train }) => ({ train: { ...train, ...patch } }));
  }

  #setSettings(patch, probeTime) {
    if (probeTime !== undefined) this.drawing.probeTyped(probeTime);
    this.#store.update(({ settings }) => ({ settings: { ...settings, ...patch } }));
  }

  /** Whether a command may go to the worker: it has started and no configure is in flight. */
  #ready() {
    return this.#client && !this.#configuring;
  }

  /** A frame from the worker (a chunk of training, a new probe, a loaded checkpoint). */
  #receive(update, patch = {}) {
    const { history, scoreHistory, snapshots, msPerStep } = { ...this.#run(), ...patch };
    const next = { ...patch, msPerStep: update.msPerStep || msPerStep,
      history: update.report && history.at(-1)?.step !== update.step ? thin([...history, { step: update.step, ...update.report }]) : history,
      scoreHistory: thin([...scoreHistory.filter((s) => s.step !== update.step), { step: update.step, scores: update.scores }]) };
    if (update.attention) {
      next.latest = { step: update.step, n: update.n, probe: update.probe, attention: update.attention };
      next.snapshots = addSnapshot(snapshots, next.latest);
    }
    this.#setRun(next);
  }

  /** A fresh model and trainer for the settings (the run starts over). */
  async #configure() {
    const mine = ++this.#generation;
    this.#configuring = true;
    this.#setRun({ status: 'idle' });
    showError(null);
    const settings = this.#store.get().settings;
    try {
      const config = runConfig(settings);
      const value = await this.#client.call('configure', { config });
      if (mine !== this.#generation) return;
      this.#configuring = false;
      const { modelConfig } = value;
      this.drawing.build(modelConfig);
      probeInfo(value.probeError ? `Probe: ${value.probeError}` : `The task's ${value.vocabulary.length} characters: ${value.vocabulary}`,
        Boolean(value.probeError));
      $('train-ablation').textContent = 'Click a head (or its Ablate button) to see the held-out loss without it.';
      this.#receive(value.update, { ...EMPTY_RUN, modelConfig, runConfig: config });
      setPageState({ trainReady: true });
    } catch (error) {
      if (mine !== this.#generation) return;
      this.#configuring = false;
      showError(error.message);
      setPageState({ trainReady: true });
    }
  }

  /** The probe text to the worker; keystrokes while one is in flight make one more request. */
  async #sendProbe() {
    if (!this.#ready()) return;
    if (this.#probeBusy) {
      this.#probeAgain = true;
      return;
    }
    this.#probeBusy = true;
    const mine = this.#generation;
    try {
      const update = await this.#client.call('probe', { text: probeOf(this.#store.get().settings) });
      if (mine === this.#generation && !this.#configuring) {
        probeInfo(`${update.n} characters`);
        this.#receive(update);
      }
    } catch (error) {
      probeInfo(`Probe: ${error.message}`, true);
      this.drawing.probeFailed();
    } finally {
      this.#probeBusy = false;
      if (this.#probeAgain) {
        this.#probeAgain = false;
        this.#sendProbe();
      }
    }
  }

  /** 'run', 'pause' or 'step'. */
  async #command(type) {
    if (!this.#ready()) return;
    try {
      if (type === 'run') showError(null);
      this.#setRun(type === 'run' ? { status: 'running', pinned: null } : { status: 'paused' });
      await this.#client.call(type);
    } catch (error) {
      showError(error.message);
    }
  }

  /** Every head's held-out loss without it; the clicked head's is shown (a second click clears it). */
  async #ablate(layer, head) {
    if (!this.#ready()) return;
    const { ablation } = this.#run();
    if (ablation?.layer === layer && ablation?.head === head) {
      $('train-ablation').textContent = 'No head ablated.';
      this.#setRun({ ablation: null });
      return;
    }
    try {
      const value = await this.#client.call('ablate');
      const entry = value.heads.find((h) => h.layer === layer && h.head === head);
      $('train-ablation').textContent = `Held-out loss at step ${value.step}: ${formatNumber(value.loss)} with every head, ` +
        `${formatNumber(entry.loss)} without layer ${layer + 1} head ${head + 1} (${entry.delta >= 0 ? '+' : ''}${formatNumber(entry.delta)}).`;
      $('train-ablation').dataset.delta = String(entry.delta);
      this.#setRun({ ablation: { layer, head, step: value.step, loss: value.loss,
        deltas: new Map(value.heads.map((h) => [`${h.layer}.${h.head}`, h.delta])) } });
    } catch (error) {
      showError(error.message);
    }
  }

  /**
   * "Open in walkthrough": the worker's layer data on the probe (model.attentionLayer), kept out of
   * the store (opened-layers.js); the store's openedLayer names it, and the walkthrough shows it.
   */
  async #openInWalkthrough(layer, head) {
    if (!this.#ready()) return;
    try {
      const value = await this.#client.call('layer', { layer });
      this.#store.update(({ settings, train }) => ({ openedLayer: openLayer(value, { source: 'train', layer, head, task: settings.task,
        modelConfig: { layers: train.modelConfig.layers, positional: train.modelConfig.positional,
          norm: train.modelConfig.layerNorm ? 'layer-norm' : null } }),
        settings: { ...settings, tab: 'walkthrough', head }, pinned: null }));
    } catch (error) {
      showError(error.message);
    }
  }

  /** The model as a .safetensors download. */
  async #save() {
    if (!this.#ready()) return;
    try {
      const bytes = await this.#client.call('save');
      const link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
      link.download = checkpointName(runConfig(this.#store.get().settings), this.#run().latest?.step ?? 0);
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 10000);
      $('train-file-status').textContent = `Saved ${link.download} (${bytes.length} bytes).`;
    } catch (error) {
      $('train-file-status').textContent = `Could not save: ${error.message}`;
    }
  }

  /** A checkpoint of this configuration into the model. */
  async #load(file) {
    if (!this.#ready() || !file) return;
    try {
      const bytes = await file.arrayBuffer();
      const update = await this.#client.call('load', { bytes }, [bytes]);
      this.#receive(update, { ablation: null });
      $('train-file-status').textContent = `Loaded ${file.name}.`;
    } catch (error) {
      $('train-file-status').textContent = `Could not load ${file.name}: ${error.message}`;
    } finally {
      $('train-load').value = '';
    }
  }

  /** The menus, the worker and the first configure, once (the first time the view is shown). */
  start() {
    this.#starting ??= this.#boot().catch((error) => {
      showError(`Could not start the trainer: ${error.message}`);
      setPageState({ trainReady: true });
    });
    return this.#starting;
  }

  async #boot() {
    buildTrainMenus(this.#catalog.tasks);
    const settings = this.#store.get().settings;
    syncTrainControls(settings, probeOf(settings));
    const worker = () => new Worker(new URL('./train-worker.js', import.meta.url), { type: 'module' });
    this.#client = await ViewWorkerClient.start(worker, this.#moduleUrl, {
      onUpdate: (update) => {
        if (!this.#configuring) this.#receive(update);
      },
      onDiverged: (message) => {
        showError(message);
        this.#setRun({ status: 'diverged' });
      },
      failed: 'the training worker failed to start',
    });
    await this.#configure();
  }

  /** The store's changes and the view's controls to the drawing and the commands. */
  #wire() {
    const schedule = this.drawing.schedule;
    this.#store.subscribe((now, before) => {
      if (now.train !== before.train) schedule();
      if (now.settings === before.settings || !this.#starting) return;
      syncTrainControls(now.settings, probeOf(now.settings));
      if (this.#client && runChanged(now.settings, before.settings)) this.#configure();
      else if (this.#client && now.settings.probe !== before.settings.probe) this.#sendProbe();
    });
    wireTrainControls(this.#store, (patch, probeTime) => this.#setSettings(patch, probeTime));
    $('train-run').addEventListener('click', () => this.#command(this.#run().status === 'running' ? 'pause' : 'run'));
    $('train-step').addEventListener('click', () => this.#command('step'));
    $('train-reset').addEventListener('click', () => this.#client && this.#configure());
    $('train-save').addEventListener('click', () => this.#save());
    $('train-load').addEventListener('change', (e) => this.#load(e.target.files[0]));
    $('train-log').addEventListener('change', schedule);
    $('train-timeline').addEventListener('input', (e) => {
      const i = Number(e.target.value);
      const { snapshots } = this.#run();
      this.#setRun({ pinned: i >= snapshots.length - 1 ? null : snapshots[i] });
    });
  }
}

/**
 * @param {{store: object, catalog: object, moduleUrl: string}} context
 * @returns {{render: () => void, activate: () => void}} render redraws (theme, size); activate
 *   shows the view (starting the worker the first time)
 */
export function mountTrain(context) {
  const controller = new TrainController(context);
  const { schedule } = controller.drawing;
  return {
    render: schedule,
    activate() {
      controller.start();
      schedule();
    },
  };
}
