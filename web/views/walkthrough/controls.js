// The walkthrough's controls: the inputs of the sidebar follow the store's settings (syncControls)
// and write to it (wireControls). The mask, positional and tokenizer menus are built from the
// core's catalog. Values typed by a reader are checked here before they reach the store.
import { pageMasks } from '../../shared/catalog.js';
import { COLOR_SCALE_LABELS, COLOR_SCALES } from '../../shared/color-scale.js';
import { $, button, el } from '../../shared/dom.js';
import { syncWhy, wireWhy } from './controls-why.js';
import { PRESET_INFO } from '../../shared/presets.js';
import { EXAMPLES } from '../../shared/state.js';
import { choiceLabel } from '../../shared/view-model.js';

const FIELDS = {
  text: 'text', source: 'text', tokenizer: 'select', dModel: 'select', heads: 'int', seed: 'int',
  positional: 'select', mask: 'select', window: 'int', prefix: 'int', padTo: 'int', preset: 'select',
  scale: 'check', cross: 'check', model: 'select', layer: 'index', colorScale: 'select',
};
// Past this many keys a linear colour scale shows most weights as the darkest colour: the
// control suggests the others.
export const LONG_INPUT = 64;
// Settings after which a pinned cell no longer means the same cell.
const UNPIN = ['text', 'source', 'tokenizer', 'dModel', 'heads', 'cross', 'mask', 'padTo', 'model', 'layer'];
const PRESET_CONTROLS = ['text', 'tokenizer', 'dModel', 'heads', 'seed', 'positional', 'cross', 'source', 'weights-file'];
// A text each shipped model can read (its alphabet), put in the text box when it is chosen.
const MODEL_TEXT = { induction: 'qwertyuiopqwertyuiop', english: 'the bank will not loan money, said the devil.' };
// What a trained model fixes (its own config, a causal mask, characters of its alphabet): greyed out.
const MODEL_CONTROLS = ['tokenizer', 'dModel', 'heads', 'seed', 'positional', 'mask', 'window', 'cross', 'preset', 'weights-file'];

/** Fills the menus whose choices the catalog names (options are created as text, never HTML). */
export function buildMenus(catalog, trainedModels = []) {
  $('model').append(...trainedModels.map((name) => {
    const option = el('option', '', `Trained: ${name}`);
    option.value = name;
    return option;
  }));
  const fill = (id, kind, names) => $(id).replaceChildren(...names.map((name) => {
    const option = el('option', '', choiceLabel(kind, name));
    option.value = name;
    return option;
  }));
  fill('tokenizer', 'tokenizer', catalog.tokenizers);
  fill('positional', 'positional', catalog.positional);
  fill('mask', 'mask', pageMasks(catalog));
  $('colorScale').replaceChildren(...COLOR_SCALES.map((name) => {
    const option = el('option', '', COLOR_SCALE_LABELS[name]);
    option.value = name;
    return option;
  }));
}

/** The hint under the colour-scale menu: shown for long inputs drawn on the linear scale. */
export function syncColorScaleHint(settings, keys) {
  $('colorScale-hint').hidden = !(settings.colorScale === 'linear' && keys > LONG_INPUT);
}

// The Weights select's choice while a layer opened from another view is on screen (store.openedLayer).
export const OPENED = 'opened-layer';

// The tokenizer menu's choice while a checkpoint's layer is on screen (its own BPE, not a page choice).
const BPE = 'bpe';
const FIXED_LABELS = { tokenizer: { [BPE]: "the model's own (BPE)" } };

/**
 * What the weights on screen fix, for the greyed-out controls: a shipped trained model's config
 * (settings.model, from its catalogue entry in `trainedInfo`) or a layer opened from the Train or
 * Your model view (`openedLayer`): { tokenizer, positional, mask, window?, dModel, heads }, or null when
 * the controls are the reader's. It never depends on the last result, so a refused input cannot
 * leave the reader's settings showing under a trained model. Pure (tested in node).
 */
export function fixedControls(settings, openedLayer, trainedInfo = {}) {
  if (openedLayer) {
    const { config, modelConfig, mask } = openedLayer;
    return { tokenizer: openedLayer.source === 'checkpoint' ? BPE : 'char',
      positional: modelConfig?.positional ?? config.positional, mask: mask?.mask ?? 'causal',
      ...(mask?.window ? { window: mask.window } : {}), dModel: config.dModel, heads: config.heads };
  }
  const info = settings.model ? trainedInfo[settings.model] : null;
  if (!info) return null;
  return { tokenizer: 'char', positional: info.config.positional, mask: 'causal', dModel: info.config.dModel,
    heads: info.config.heads };
}

// Shows `value` in a select, adding a marked option for a value its menu lacks (GPT-2's d_model
// 768, 12 heads, its BPE); `value` null removes such options.
function showFixed(select, value, label) {
  for (const option of select.querySelectorAll('option[data-fixed]')) {
    if (option.value !== String(value)) option.remove();
  }
  if (value === null) return;
  if (![...select.options].some((option) => option.value === String(value))) {
    const option = el('option', '', label ?? String(value));
    option.value = String(value);
    option.dataset.fixed = '';
    select.append(option);
  }
  select.value = String(value);
}

/**
 * The sidebar as the settings say (the focused input keeps what the reader is typing); with a
 * trained model or a layer opened from the Train or Your model view (`openedLayer`), the
 * controls it fixes are greyed out and show its own values (fixedControls).
 */
export function syncControls(settings, setSettings, openedLayer = null, trainedInfo = {}) {
  const fixedValues = fixedControls(settings, openedLayer, trainedInfo);
  for (const [key, kind] of Object.entries(FIELDS)) {
    const input = $(key);
    if (kind === 'check') input.checked = settings[key];
    else if (fixedValues && key in fixedValues) {
      if (input.tagName === 'SELECT') showFixed(input, fixedValues[key], FIXED_LABELS[key]?.[fixedValues[key]]);
      else input.value = String(fixedValues[key]); // a number the model fixes (its sliding window)
    }
    else {
      if (input.tagName === 'SELECT') showFixed(input, null);
      if (document.activeElement !== input) input.value = String(settings[key]);
    }
  }
  const mask = fixedValues?.mask ?? settings.mask;
  $('window-box').hidden = mask !== 'sliding-window';
  $('prefix-box').hidden = mask !== 'prefix-lm';
  $('pad-box').hidden = mask !== 'padding';
  $('source-box').hidden = !settings.cross || Boolean(settings.preset);
  const presetMode = Boolean(settings.preset) && !settings.model;
  const fixed = Boolean(settings.model || openedLayer); // a trained model's own config
  const disabled = new Set();
  for (const id of new Set([...PRESET_CONTROLS, ...MODEL_CONTROLS])) {
    $(id).disabled = (presetMode && PRESET_CONTROLS.includes(id)) || (fixed && MODEL_CONTROLS.includes(id));
    if ($(id).disabled) disabled.add(id);
  }
  // A checkpoint's tokenizer ("the model's own (BPE)") is longer than half the panel: its row is whole.
  $('tokenizer').closest('label').classList.toggle('controls-wide', $('tokenizer').value === BPE);
  $('text').disabled = presetMode || Boolean(openedLayer);
  if ($('text').disabled) disabled.add('text');
  syncWhy(settings, openedLayer, trainedInfo, disabled); // why, beside them
  if (openedLayer) $('text').value = openedLayer.probe; // the Train view's probe (the text stays in the settings)
  $('examples').hidden = Boolean(openedLayer);
  $('layer-box').hidden = !settings.model || Boolean(openedLayer);
  const opened = $('model').querySelector(`option[value="${OPENED}"]`);
  const fromLabel = openedLayer?.source === 'checkpoint' ? 'Your model (not in the link)' : 'Trained in the Train view (not in the link)';
  if (opened && opened.textContent !== fromLabel) opened.textContent = fromLabel;
  if (openedLayer && !opened) {
    const option = el('option', '', fromLabel);
    option.value = OPENED;
    $('model').prepend(option);
  } else if (!openedLayer) opened?.remove();
  if (openedLayer) $('model').value = OPENED;
  $('preset-info').hidden = !presetMode;
  if (presetMode) {
    $('preset-title').textContent = PRESET_INFO[settings.preset].title;
    $('preset-code').textContent = PRESET_INFO[settings.preset].code;
  }
  const count = settings.cells.length;
  $('cells-info').textContent = count ? `${count} cell${count > 1 ? 's' : ''} masked by hand. ` : '';
  if (count) $('cells-info').append(button('link', 'Clear', () => setSettings({ cells: [] })));
  $('view-grid').setAttribute('aria-pressed', String(settings.view === 'grid'));
  $('view-lines').setAttribute('aria-pressed', String(settings.view === 'lines'));
}

// An input's value as a setting, or undefined (with the error shown) while it is not one.
function valueOf(key, kind, input, store) {
  if (kind === 'check') return input.checked;
  if (kind === 'index') return Number(input.value);
  if (kind !== 'int') return input.value;
  if (input.value.trim() === '') return undefined; // still typing
  const value = Number(input.value);
  if (!Number.isInteger(value) || value < Number(input.min || 0) || value > Number(input.max || 4294967295)) {
    store.set({ error: `${key} must be a whole number from ${input.min} to ${input.max}` });
    return undefined;
  }
  return value;
}

/** Every input writes its setting to the store (through setSettings). */
export function wireControls(store, setSettings) {
  for (const [key, kind] of Object.entries(FIELDS)) {
    const input = $(key);
    input.addEventListener(kind === 'text' || kind === 'int' ? 'input' : 'change', () => {
      const value = valueOf(key, kind, input, store);
      if (value === undefined || value === OPENED) return;
      // Another choice of weights leaves the layer opened from the Train view.
      if (key === 'model') store.set({ openedLayer: null });
      const patch = { [key]: value };
      if (key === 'preset') Object.assign(patch, { mask: value === 'seed001-causal' ? 'causal' : 'none', head: 0, cells: [] });
      if (key === 'model') Object.assign(patch, { preset: '', layer: 0, head: 0, cells: [], cross: false, ...(value ? { mask: 'causal' } : {}),
        ...(MODEL_TEXT[value] ? { text: MODEL_TEXT[value] } : {}) });
      setSettings(patch, { unpin: key === 'preset' || UNPIN.includes(key) });
    });
  }
  // As typed: a trained model reads it in its alphabet (the core's rule: engine.js, trainedInput).
  $('examples').replaceChildren(...EXAMPLES.map((example) =>
    button('example', example.label, () => setSettings({ text: example.text, preset: '' }, { unpin: true }))));
  const cellmask = $('cellmask');
  cellmask.addEventListener('change', () => store.set({ maskByClick: cellmask.checked }));
  store.set({ maskByClick: cellmask.checked }); // a reload may have kept it checked
  $('view-grid').addEventListener('click', () => setSettings({ view: 'grid' }));
  $('view-lines').addEventListener('click', () => setSettings({ view: 'lines' }));
  wireWhy();
}
