// The "Your model" view: drop or pick a GPT-2 checkpoint (model.safetensors + config.json, and
// tokenizer files when not GPT-2's), loaded in a Web Worker (model-worker.js) with a progress bar;
// then, for the typed text, every layer × head's attention, the top 10 next tokens, a head finder
// (previous-token and induction scores) and "open a head in the walkthrough". Mounted by main.js;
// the worker starts the first time the view is shown. Errors are shown as text; a refused file
// leaves the loaded model and everything drawn as it was.
import { $, el } from '../../shared/dom.js';
import { formatBytes } from '../../shared/format.js';
import { displayToken } from '../../shared/labels.js';
import { TokenChips } from '../../shared/token-chips.js';
import { ViewWorkerClient } from '../../shared/view-worker-client.js';
import { fileRole, percent } from './model-data.js';
import { HeadFinder } from './head-finder.js';
import { MAX_TABLE_HEADS, modelHeads } from './model-heads.js';

/**
 * @param {{store: object, moduleUrl: string}} context
 * @returns {{render: () => void, activate: () => void}}
 */
export function mountModel({ store, moduleUrl }) {
  // The view's state lives in the store's `yourModel`: { model (the loaded checkpoint's { config,
  // fileName, fileBytes, memory, tokenizer }, or null), lastRun (the typed text's { tokens, ids, n,
  // cut, attention, top }, drawn when it changes), loading }. Below: only the plumbing (the
  // worker, the typing timer, the runs in flight, the loads counted for the tests).
  const view = () => store.get().yourModel;
  const setView = (patch) => store.update(({ yourModel }) => ({ yourModel: { ...yourModel, ...patch } }));
  let client = null;
  let starting = null;
  let runTimer = 0;
  let runSeq = 0;
  let loads = 0;
  const chips = new TokenChips($('model-tokens'));
  const heads = modelHeads($('model-head-grid'), openInWalkthrough);
  const finder = new HeadFinder($('model-finder'), (layer, head) => heads.highlight(layer, head));

  const showError = (message) => {
    $('model-error').hidden = !message;
    $('model-error').textContent = message ?? '';
  };
  const textInfo = (message, error = false) => {
    $('model-text-info').className = error ? 'small error-inline' : 'muted small';
    $('model-text-info').textContent = message;
  };

  function progress(fraction) {
    $('model-progress').value = fraction;
    $('model-progress').textContent = `${Math.round(fraction * 100)}%`;
  }

  async function load(files) {
    if (!files.length) return;
    await start();
    if (!client) return;
    if (view().loading) {
      showError('A checkpoint is still loading: drop the next one when it is done');
      return;
    }
    const picked = {};
    for (const file of files) {
      const role = fileRole(file.name);
      if (!role) {
        showError(`${file.name} is not a checkpoint file: drop model.safetensors, config.json and optionally tokenizer.json or vocab.json + merges.txt`);
        return;
      }
      picked[role] = file;
    }
    if (!picked.weights || !picked.config) {
      showError(`Found ${files.map((f) => f.name).join(', ')}: a checkpoint needs both model.safetensors and config.json (dropped together)`);
      return;
    }
    showError(null);
    setView({ loading: true });
    progress(0);
    $('model-progress').hidden = false;
    $('model-status').textContent = `Loading ${picked.weights.name} (${formatBytes(picked.weights.size)})…`;
    document.body.dataset.modelLoading = 'true';
    try {
      const value = await client.call('load', picked);
      setView({ model: value, lastRun: null });
      const { config, memory } = value;
      $('model-status').textContent = `${value.fileName}: ${formatBytes(value.fileBytes)} · ${config.layers} layers × ` +
        `${config.heads} heads · d_model ${config.dModel} · ${config.vocab} tokens · context ${config.context} · ` +
        `wasm memory ${formatBytes(memory.heapBytes)} (${formatBytes(memory.allocatedBytes)} in use)`;
      Object.assign($('model-status').dataset, { fileBytes: value.fileBytes, heapBytes: memory.heapBytes });
      heads.build(config.layers, config.heads, config.layers * config.heads <= MAX_TABLE_HEADS);
      await Promise.all([runText(), findHeads()]);
      document.body.dataset.modelLoads = String(++loads);
    } catch (error) {
      showError(`Could not load the checkpoint: ${error.message}`);
      $('model-status').textContent = view().model ? `Kept ${view().model.fileName}.` : 'No model loaded.';
    } finally {
      setView({ loading: false });
      $('model-progress').hidden = true;
      document.body.dataset.modelLoading = 'false';
    }
  }

  /** The typed text through the model (drawn by drawRun when the store's lastRun changes). */
  async function runText() {
    if (!client || !view().model) return;
    const mine = ++runSeq;
    try {
      const run = await client.call('run', { text: $('model-text').value });
      if (mine !== runSeq) return;
      setView({ lastRun: run });
      document.body.dataset.modelRun = String(mine);
    } catch (error) {
      if (mine === runSeq) textInfo(error.message, true);
    }
  }

  /** A run on the typed text: chips, every head, the next tokens. */
  function drawRun(run, model) {
    chips.render(run.tokens);
    textInfo(`${run.n} tokens${run.cut ? ` (the last ${run.cut} cut: the model's context is ${model.config.context})` : ''}`);
    heads.render(run);
    drawNext(run);
  }

  function drawNext({ n, top }) {
    $('model-next-info').textContent = `After token ${n} of your text (softmax of the model's logits):`;
    $('model-next').replaceChildren(...top.map(({ id, token, probability }) => {
      const item = el('li', 'model-next-item');
      item.dataset.id = String(id);
      item.dataset.probability = String(probability);
      const bar = el('span', 'model-next-bar');
      bar.style.width = `${(probability * 100).toFixed(1)}%`;
      item.append(el('span', 'model-next-token', displayToken(token)), el('span', 'num', percent(probability)), bar);
      return item;
    }));
  }

  async function findHeads() {
    try {
      const { scores, probeLength } = await client.call('scores');
      $('model-finder-info').textContent = `Each head's mean attention to the previous token, and to the token after an ` +
        `earlier copy of the current one (induction), on ${probeLength / 2} seeded random tokens repeated once. ` +
        'Click a column to sort, a head to highlight it in the grid.';
      finder.render(scores);
    } catch (error) {
      $('model-finder-info').textContent = `Head finder: ${error.message}`;
    }
  }

  /** A head into the walkthrough: the layer's real input on the typed text, as the Train view does. */
  async function openInWalkthrough(layer, head) {
    if (!client || !view().lastRun) return;
    try {
      const value = await client.call('layer', { layer });
      store.update(({ settings, yourModel }) => ({ trainedLayer: { ...value, layer, head, modelConfig: yourModel.model.config, source: 'checkpoint' },
        settings: { ...settings, tab: 'walkthrough' } }));
    } catch (error) {
      showError(error.message);
    }
  }

  function start() {
    starting ??= ViewWorkerClient.start(new Worker(new URL('./model-worker.js', import.meta.url), { type: 'module' }), moduleUrl,
      { onUpdate: (update) => progress(update.progress), failed: 'the model worker failed to start' })
      .then((c) => {
        client = c;
      })
      .catch((error) => showError(`Could not start the model worker: ${error.message}`))
      .finally(() => {
        document.body.dataset.modelReady = 'true';
      });
    return starting;
  }

  $('model-files').addEventListener('change', (e) => {
    load([...e.target.files]).finally(() => {
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
    load([...(e.dataTransfer?.files ?? [])]);
  });
  $('model-text').addEventListener('input', () => {
    clearTimeout(runTimer);
    runTimer = setTimeout(runText, 150);
  });
  store.subscribe((now, before) => {
    const { lastRun, model } = now.yourModel;
    if (lastRun && lastRun !== before.yourModel.lastRun) drawRun(lastRun, model);
  });

  return {
    render() {
      const { lastRun } = view();
      if (lastRun) heads.render(lastRun);
    },
    activate() {
      start();
    },
  };
}
