// The walkthrough view: type a sentence, step through every traced step of attention, every
// head, the arithmetic of a cell and the cost. Mounted by main.js on the page's store; asks the
// engine for results and draws them. Nothing here does attention math.
import { $ } from '../../shared/dom.js';
import { setFooter } from '../../page-settings.js';
import { TRAIN_KEYS } from '../../shared/state.js';
import { TokenChips } from '../../shared/token-chips.js';
import { pinnedTokens, walkthroughSteps } from '../../shared/view-model.js';
import { buildMenus, syncColorScaleHint, syncControls, wireControls } from './controls.js';
import { placeOf, renderCost } from './cost.js';
import { wireShareAndEmbed, wireWeightsFile } from './files.js';
import { HeadsView } from './heads.js';
import { wireNavigation } from './navigation.js';
import { StageView } from './stage.js';
import { setPageState } from '../../shared/page-state.js';

// Settings that only change what is shown of the same result (the rest recompute).
// The Train view's settings (TRAIN_KEYS) are neither.
const VIEW_ONLY = new Set(['stage', 'view', 'colorScale']);
const TRAIN_ONLY = new Set(TRAIN_KEYS);

/**
 * @param {{store: object, engine: import('../../shared/engine-client.js').EngineClient,
 *   catalog: object, pageUrl: () => string}} context
 * @returns {{render: () => void}} render redraws (theme or size changed)
 */
export function mountWalkthrough({ store, engine, catalog, pageUrl }) {
  /** Changes settings (and unpins the pinned cell when they make it another cell). */
  const setSettings = (patch, { unpin = false } = {}) => store.update(({ settings, pinned }) => ({
    settings: { ...settings, ...patch, heads: Math.max(1, patch.heads ?? settings.heads) },
    pinned: unpin ? null : pinned,
  }));
  const stage = new StageView(store, engine, catalog, setSettings);
  const heads = new HeadsView($('heads-view'), store, (h) => setSettings({ head: h }) /* the trace holds the head on screen */);
  const chips = { tokens: new TokenChips($('tokens')), source: new TokenChips($('source-tokens')) };

  /** The chips, with the pinned cell's tokens shown even when the chips are collapsed. */
  function renderChips() {
    const { result, steps, pinned } = store.get();
    const pads = result.keyTokens.filter((t) => t === '[PAD]').length;
    const { query, key } = pinnedTokens(steps, pinned);
    chips.tokens.render(result.queryTokens, result.cross ? 0 : pads, result.cross ? query : [...query, ...key], result.mapped);
    if (result.cross) chips.source.render(result.keyTokens, pads, key);
  }

  /** Puts a result on screen (the head on screen stays within its heads). */
  function show(result) {
    const { settings } = store.get();
    store.set({ result, steps: walkthroughSteps(result, catalog), error: null,
      settings: settings.head >= result.config.heads ? { ...settings, head: 0 } : settings });
  }

  // Each update is measured from the request to the end of drawing (performance entries named
  // 'attention-lens:update', read by scripts/measure/measure-page.mjs).
  // A layer opened from another view (store.openedLayer) replaces the settings' weights and
  // text until another choice of weights (controls.js): the engine's trained path, fed by data.
  const computeState = () => {
    const { settings, openedLayer } = store.get();
    return openedLayer ? { ...settings, model: '', preset: '', cross: false, cells: [], openedLayer } : settings;
  };

  function compute() {
    const started = performance.now();
    engine.compute(computeState(), (result) => {
      const receivedMs = performance.now() - started; // the worker's answer is here
      show(result);
      performance.measure('attention-lens:update', { start: started, end: performance.now(),
        detail: { n: result.n, heads: result.config.heads, computeMs: result.computeMs, receivedMs, computedIn: result.computedIn } });
      setPageState({ ready: true });
    }, (error) => {
      store.set({ error: error.message });
      setPageState({ ready: true });
    });
  }

  function render() {
    const { result, settings } = store.get();
    if (!result) return;
    // Read every width before changing anything: each read after a change is a full layout.
    const widths = { matrices: $('matrices').clientWidth, tile: heads.tileWidth() };
    renderChips();
    $('dk').textContent = `(d_k = ${result.config.headDim})`;
    syncColorScaleHint(settings, result.kvN);
    // A trained model's own configuration is in its (disabled) controls (syncControls).
    if (settings.preset && !result.model) { // the preset's own configuration in the (disabled) controls
      $('dModel').value = String(result.config.dModel);
      $('heads').value = String(result.config.heads);
      $('positional').value = result.config.positional;
    }
    $('printout').textContent = result.printout ?? '';
    $('text-read').textContent = result.readNote; // what a shipped model read in place of what was typed
    $('text-read').hidden = !result.readNote;
    const model = result.model;
    $('weights-status').textContent = model?.opened ? `${model.title}: a snapshot of the run, not kept in the link.`
      : model ? `The trained model ${model.title}.` : result.weightsFile
      ? `Loaded from ${result.weightsFile}.` : settings.preset ? 'The tutorial\'s weights.' : 'Seeded random weights.';
    // Which weights are on screen, in the stage header.
    $('model-badge').textContent = model?.opened
      ? `${model.title} of ${model.layers} · ${model.maskText ?? 'causal'}, ${model.checkpoint ? 'BPE tokens' : 'characters'} · not in the link`
      : model ? `Trained model: ${model.title} · layer ${model.layer + 1} of ${model.layers} · causal, characters`
      : result.weightsFile ? `Weights from ${result.weightsFile}` : settings.preset ? 'The tutorial\'s weights'
        : `Random weights (seed ${settings.seed})`;
    $('walkthrough').dataset.model = model?.name ?? '';
    if (model && !model.opened && $('layer').options.length !== model.layers) {
      $('layer').replaceChildren(...Array.from({ length: model.layers }, (_, l) => {
        const option = document.createElement('option');
        option.value = String(l);
        option.textContent = String(l + 1);
        return option;
      }));
      $('layer').value = String(model.layer);
    }
    $('weights-clear').hidden = !result.weightsFile;
    store.set({ notice: result.notes.join(' ') });
    stage.render(widths.matrices);
    heads.render(widths.tile);
    renderCost($('cost'), result);
    setFooter(store, 'walkthrough', `${result.n} tokens · ${result.config.heads} heads · d_model ${result.config.dModel} · ` +
      `forward ${result.computeMs.toFixed(2)} ms ${placeOf(result)} (${engine.info.simd === 'wasm' ? 'wasm SIMD' : engine.info.simd})`);
  }

  store.subscribe((now, before) => {
    if (now.settings !== before.settings || now.openedLayer !== before.openedLayer) {
      syncControls(now.settings, setSettings, now.openedLayer, engine.info.trainedInfo);
    }
    if (now.openedLayer !== before.openedLayer) {
      if (now.openedLayer || before.openedLayer) compute();
      if (now.result === before.result) return;
    }
    if (now.result !== before.result) render();
    else if (now.settings !== before.settings) {
      const changed = Object.keys(now.settings).filter((key) => now.settings[key] !== before.settings[key]);
      if (changed.length && changed.every((key) => TRAIN_ONLY.has(key))) return; // the Train view's only
      const recompute = Object.keys(now.settings).some((key) => !VIEW_ONLY.has(key) && now.settings[key] !== before.settings[key]);
      if (recompute) compute();
      else render();
    } else if (now.allHeads !== before.allHeads) heads.render();
    if (now.pinned !== before.pinned && now.result === before.result && now.result) renderChips();
  });

  buildMenus(catalog, engine.info.trainedModels ?? []);
  wireControls(store, setSettings);
  wireNavigation(store, setSettings);
  wireWeightsFile(store, engine, { compute, show });
  wireShareAndEmbed(store, pageUrl);
  syncControls(store.get().settings, setSettings, store.get().openedLayer, engine.info.trainedInfo);
  compute();
  return { render };
}
