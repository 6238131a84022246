// The "Your model" view: drop or pick a GPT-2 checkpoint (model.safetensors + config.json, and
// tokenizer files when not GPT-2's), loaded in a Web Worker (model-worker.js) with a progress bar;
// then, for the typed text, every layer × head's attention, the top 10 next tokens, a head finder
// (previous-token and induction scores) and "open a head in the walkthrough". Mounted by main.js;
// the worker starts the first time the view is shown. Errors are shown as text; a refused file
// leaves the loaded model and everything drawn as it was. This file is the controller (the store's
// `yourModel`, the worker's calls); draw.js draws.
import { $ } from '../../shared/dom.js';
import { ViewWorkerClient } from '../../shared/view-worker-client.js';
import { fileRole } from './model-data.js';
import { drawKept, drawLoaded, drawLoadEnded, drawLoading, drawProgress, modelDrawing, showError, textInfo } from './draw.js';

/** The dropped files by their role ({ weights, config, tokenizer?, vocab?, merges? }), or null after saying what is wrong. */
function pickFiles(files) {
  const picked = {};
  for (const file of files) {
    const role = fileRole(file.name);
    if (!role) {
      showError(`${file.name} is not a checkpoint file: drop model.safetensors, config.json and optionally tokenizer.json or vocab.json + merges.txt`);
      return null;
    }
    picked[role] = file;
  }
  if (!picked.weights || !picked.config) {
    showError(`Found ${files.map((f) => f.name).join(', ')}: a checkpoint needs both model.safetensors and config.json (dropped together)`);
    return null;
  }
  return picked;
}

/**
 * The view's state lives in the store's `yourModel`: { model (the loaded checkpoint's { config,
 * fileName, fileBytes, memory, tokenizer }, or null), lastRun (the typed text's { tokens, ids, n,
 * cut, attention, top }, drawn when it changes), loading }. The controller holds only the plumbing
 * (the worker, the typing timer, the runs in flight, the loads counted for the tests).
 */
class ModelController {
  #store;
  #moduleUrl;
  #client = null;
  #starting = null;
  #runTimer = 0;
  #runSeq = 0;
  #loads = 0;

  constructor({ store, moduleUrl }) {
    this.#store = store;
    this.#moduleUrl = moduleUrl;
    this.drawing = modelDrawing((layer, head) => this.#openInWalkthrough(layer, head));
    this.#wire();
  }

  view() {
    return this.#store.get().yourModel;
  }

  #setView(patch) {
    this.#store.update(({ yourModel }) => ({ yourModel: { ...yourModel, ...patch } }));
  }

  /** Dropped or picked files: a checkpoint read by the worker; then the text's run and the head finder. */
  async #load(files) {
    if (!files.length) return;
    await this.start();
    if (!this.#client) return;
    if (this.view().loading) {
      showError('A checkpoint is still loading: drop the next one when it is done');
      return;
    }
    const picked = pickFiles(files);
    if (!picked) return;
    showError(null);
    this.#setView({ loading: true });
    drawLoading(picked.weights);
    try {
      const value = await this.#client.call('load', picked);
      this.#setView({ model: value, lastRun: null });
      drawLoaded(value);
      this.drawing.build(value.config);
      await Promise.all([this.#runText(), this.#findHeads()]);
      document.body.dataset.modelLoads = String(++this.#loads);
    } catch (error) {
      showError(`Could not load the checkpoint: ${error.message}`);
      drawKept(this.view().model);
    } finally {
      this.#setView({ loading: false });
      drawLoadEnded();
    }
  }

  /** The typed text through the model (drawn by drawRun when the store's lastRun changes). */
  async #runText() {
    if (!this.#client || !this.view().model) return;
    const mine = ++this.#runSeq;
    try {
      const run = await this.#client.call('run', { text: $('model-text').value });
      if (mine !== this.#runSeq) return;
      this.#setView({ lastRun: run });
      document.body.dataset.modelRun = String(mine);
    } catch (error) {
      if (mine === this.#runSeq) textInfo(error.message, true);
    }
  }

  async #findHeads() {
    try {
      this.drawing.drawFinder(await this.#client.call('scores'));
    } catch (error) {
      this.drawing.finderError(error.message);
    }
  }

  /** A head into the walkthrough: the layer's real input on the typed text, as the Train view does. */
  async #openInWalkthrough(layer, head) {
    if (!this.#client || !this.view().lastRun) return;
    try {
      const value = await this.#client.call('layer', { layer });
      this.#store.update(({ settings, yourModel }) => ({ trainedLayer: { ...value, layer, head, modelConfig: yourModel.model.config, source: 'checkpoint' },
        settings: { ...settings, tab: 'walkthrough' } }));
    } catch (error) {
      showError(error.message);
    }
  }

  /** The worker, once (the first time the view is shown). */
  start() {
    this.#starting ??= ViewWorkerClient.start(new Worker(new URL('./model-worker.js', import.meta.url), { type: 'module' }), this.#moduleUrl,
      { onUpdate: (update) => drawProgress(update.progress), failed: 'the model worker failed to start' })
      .then((c) => {
        this.#client = c;
      })
      .catch((error) => showError(`Could not start the model worker: ${error.message}`))
      .finally(() => {
        document.body.dataset.modelReady = 'true';
      });
    return this.#starting;
  }

  /** The file picker, the drop zone, the text field and the store's runs. */
  #wire() {
    $('model-files').addEventListener('change', (e) => {
      this.#load([...e.target.files]).finally(() => {
        e.target.value = '';
      });
    });
    const drop = $('model-drop');
    drop.addEventListener('dragover', (e) => {
      e.preventDefault();
      drop.classList.add('dragging');
    });
    drop.addEventListener('dragleave', () => drop.classList.remove('dragging'));
    drop.addEventListener('drop', (e) => {
      e.preventDefault();
      drop.classList.remove('dragging');
      this.#load([...(e.dataTransfer?.files ?? [])]);
    });
    $('model-text').addEventListener('input', () => {
      clearTimeout(this.#runTimer);
      this.#runTimer = setTimeout(() => this.#runText(), 150);
    });
    this.#store.subscribe((now, before) => {
      const { lastRun, model } = now.yourModel;
      if (lastRun && lastRun !== before.yourModel.lastRun) this.drawing.drawRun(lastRun, model);
    });
  }
}

/**
 * @param {{store: object, moduleUrl: string}} context
 * @returns {{render: () => void, activate: () => void}}
 */
export function mountModel(context) {
  const controller = new ModelController(context);
  return {
    render() {
      const { lastRun } = controller.view();
      if (lastRun) controller.drawing.drawHeads(lastRun);
    },
    activate() {
      controller.start();
    },
  };
}
