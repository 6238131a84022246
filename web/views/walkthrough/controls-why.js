// Why the walkthrough's greyed-out controls are greyed out: a line beside them (the Controls panel's
// and the Input panel's), each disabled control pointing to it (aria-describedby), and one button
// back to where every knob works: random weights, or the reader's own text after a tutorial preset.
import { $ } from '../../shared/dom.js';

/**
 * What fixes the controls and the way out: { controls: { text, action: 'random' | 'own-text',
 * label }, input: text } (either null when nothing in that panel is fixed). Pure (tested in node).
 */
export function whyFixed(settings, openedLayer, trainedInfo = {}) {
  if (openedLayer) {
    const from = openedLayer.source === 'checkpoint' ? 'Your model' : 'the Train view';
    return {
      controls: { text: `The layer opened from ${from} fixes these: they are its model's own.`, action: 'random', label: 'Use random weights' },
      input: 'The opened layer reads its own text; tutorial presets and cross-attention need random weights.',
    };
  }
  if (settings.model) {
    const name = trainedInfo[settings.model] ? settings.model : 'shipped';
    return {
      controls: { text: `The trained ${name} model fixes these: it was trained with them. Random weights let you change every knob.`,
        action: 'random', label: 'Use random weights' },
      input: 'Tutorial presets and cross-attention need random weights.',
    };
  }
  if (settings.preset) {
    return {
      controls: { text: 'The tutorial preset fixes these: its code sets them.', action: 'own-text', label: 'Back to your text' },
      input: 'The tutorial preset sets the text (its code draws its own inputs) and self-attention: choose “— your text —” to type.',
    };
  }
  return { controls: null, input: null };
}

// A note's text (hidden when null) and the controls that point to it.
function showNote(note, text) {
  note.hidden = !text;
  note.textContent = text ?? '';
}

/**
 * The notes for the settings, and each disabled control of a panel described by its panel's note
 * (a control enabled again loses it). `disabledIds`: the ids syncControls greyed out.
 */
export function syncWhy(settings, openedLayer, trainedInfo, disabledIds) {
  const why = whyFixed(settings, openedLayer, trainedInfo);
  const box = $('controls-why');
  box.hidden = !why.controls;
  $('controls-why-text').textContent = why.controls?.text ?? '';
  $('controls-unfix').textContent = why.controls?.label ?? '';
  $('controls-unfix').dataset.action = why.controls?.action ?? '';
  showNote($('input-why'), why.input);
  const controlsPanel = box.closest('section');
  for (const id of ['text', 'model', 'preset', 'cross', 'source', 'tokenizer', 'dModel', 'heads', 'seed', 'positional', 'mask',
    'window', 'prefix', 'padTo', 'weights-file']) {
    const input = $(id);
    const note = controlsPanel.contains(input) ? 'controls-why-text' : 'input-why';
    if (disabledIds.has(id) && !$(note).hidden) input.setAttribute('aria-describedby', note);
    else if (input.getAttribute('aria-describedby') === note) input.removeAttribute('aria-describedby');
  }
}

/** The button beside the reason: random weights (the Weights menu's first choice), or no preset. */
export function wireWhy() {
  $('controls-unfix').addEventListener('click', () => {
    const menu = $($('controls-unfix').dataset.action === 'own-text' ? 'preset' : 'model');
    menu.value = '';
    menu.dispatchEvent(new Event('change'));
  });
}
