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
import { TrainClient } from '../train/train-client.js';
import { fileRole, percent } from './model-data.js';
import { HeadFinder } from './head-finder.js';
import { ModelHeads } from './model-heads.js';

/**
 * @param {{store: object, moduleUrl: string}} context
 * @returns {{render: () => void, activate: () => void}}
 */
export function mountModel({ store, moduleUrl }) {
  let client = null;
  let starting = null;
  let model = null; // the loaded model's { config, fileName, fileBytes }
  let lastRun = null;
  let runTimer = 0;
  let runSeq = 0;
  let loads = 0;
  const chips = new TokenChips($('model-tokens'));
  const heads = new ModelHeads($('model-head-grid'), openInWalkthrough);
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

  let loading = false;

  async function load(files) {
    if (!files.length) return;
    await start();
    if (!client) return;
    if (loading) {
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
    loading = true;
    progress(0);
    $('model-progress').hidden = false;
    $('model-status').textContent = `Loading ${picked.weights.name} (${formatBytes(picked.weights.size)})…`;
    document.body.dataset.modelLoading = 'true';
    try {
      const value = await client.call('load', picked);
      model = value;
      const { config, memory } = value;
      $('model-status').textContent = `${value.fileName}: ${formatBytes(value.fileBytes)} · ${config.layers} layers × ` +
        `${config.heads} heads · d_model ${config.dModel} · ${config.vocab} tokens · context ${config.context} · ` +
        `wasm memory ${formatBytes(memory.heapBytes)} (${formatBytes(memory.allocatedBytes)} in use)`;
      Object.assign($('model-status').dataset, { fileBytes: value.fileBytes, heapBytes: memory.heapBytes });
      heads.build(config.layers, config.heads);
      lastRun = null;
      await Promise.all([runText(), findHeads()]);
      document.body.dataset.modelLoads = String(++loads);
    } catch (error) {
      showError(`Could not load the checkpoint: ${error.message}`);
      $('model-status').textContent = model ? `Kept ${model.fileName}.` : 'No model loaded.';
    } finally {
      loading = false;
      $('model-progress').hidden = true;
      document.body.dataset.modelLoading = 'false';
    }
  }

  /** The typed text through the model: chips, every head, the next tokens. */
  async function runText() {
    if (!client || !model) return;
    const mine = ++runSeq;
    try {
      const run = await client.call('run', { text: $('model-text').value });
      if (mine !== runSeq) return;
      lastRun = run;
      chips.render(run.tokens);
      textInfo(`${run.n} tokens${run.cut ? ` (the last ${run.cut} cut: the model's context is ${model.config.context})` : ''}`);
      heads.render(run);
      drawNext(run.top);
      document.body.dataset.modelRun = String(mine);
    } catch (error) {
      if (mine === runSeq) textInfo(error.message, true);
    }
  }

  function drawNext(top) {
    $('model-next-info').textContent = `After token ${lastRun.n} of your text (softmax of the model's logits):`;
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
    if (!client || !lastRun) return;
    try {
      const value = await client.call('layer', { layer });
      store.update(({ settings }) => ({ trainedLayer: { ...value, layer, head, modelConfig: model.config, source: 'checkpoint' },
        settings: { ...settings, tab: 'walkthrough' } }));
    } catch (error) {
      showError(error.message);
    }
  }

  function start() {
    starting ??= TrainClient.start(moduleUrl, { onUpdate: (update) => progress(update.progress) },
      new Worker(new URL('./model-worker.js', import.meta.url), { type: 'module' }))
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

  return {
    render() {
      if (lastRun) heads.render(lastRun);
    },
    activate() {
      start();
    },
  };
}
