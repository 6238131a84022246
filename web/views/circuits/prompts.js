// The Circuits view's inputs drawn: the model it works on, the two prompts' tokens aligned position
// by position (token chips; a position whose tokens differ marked), the note when their lengths
// differ, and what each answer box reads as. Text only ever goes in as textContent.
import { $, el } from '../../shared/dom.js';
import { displayToken } from '../../shared/labels.js';
import { percent } from '../../shared/circuit-format.js';

/** The model line: which model the session has loaded (the store's yourModel.model), or why none. */
export function drawModel(model, loading, ablated = []) {
  let line;
  if (loading) line = 'A model is loading in Your model…';
  else if (!model) line = 'No model loaded yet: loading the shipped english model (Your model loads other ones).';
  else {
    const { config } = model;
    const name = model.source === 'shipped' ? `${model.name} (${model.title}), shipped with the page`
      : model.source === 'hub' ? model.id : model.fileName;
    line = `${name}: ${config.layers} layers × ${config.heads} heads · ${config.vocab} tokens · context ${config.context}`;
  }
  $('circuits-model').textContent = line;
  $('circuits-knocked').hidden = !ablated.length;
  $('circuits-knocked').textContent = ablated.length
    ? `Knocked out in Your model (applies here too): ${ablated.map(({ layer, head }) => `L${layer + 1} H${head + 1}`).join(', ')}` : '';
}

/** A chip of one prompt's token (the shared chip style), or an empty slot past its end. */
function chip(token, differs, which) {
  if (token === undefined) return el('span', 'chip circuits-none', '·');
  const c = el('span', `chip${differs ? ' circuits-differs' : ''}`, displayToken(token));
  c.title = `${which}${differs ? ' (differs)' : ''}`;
  return c;
}

/**
 * The prompts' tokens, one column per position (clean above corrupted), a differing position
 * marked; `prompts`: the session's { clean, corrupted }, each { tokens, ids } or { error }.
 * Returns whether patching can run (both read, the same length), with the reason when not.
 */
export function drawPrompts(prompts) {
  const { clean, corrupted } = prompts;
  const host = $('circuits-align');
  const lengths = $('circuits-lengths');
  lengths.className = 'small';
  if (clean.error || corrupted.error) {
    host.replaceChildren();
    const message = clean.error ? `Clean prompt: ${clean.error}` : `Corrupted prompt: ${corrupted.error}`;
    lengths.className = 'small error-inline';
    lengths.textContent = message;
    return { patchable: false, why: message, clean: !clean.error };
  }
  const n = Math.max(clean.n, corrupted.n);
  const columns = [];
  let differing = 0;
  for (let p = 0; p < n; ++p) {
    const differs = clean.ids[p] !== corrupted.ids[p];
    if (differs) differing += 1;
    const column = el('div', `circuits-pos${differs ? ' differs' : ''}`);
    column.setAttribute('role', 'group');
    const a = clean.tokens[p];
    const b = corrupted.tokens[p];
    column.setAttribute('aria-label', `position ${p + 1}: clean ${a === undefined ? 'none' : `“${displayToken(a)}”`}, ` +
      `corrupted ${b === undefined ? 'none' : `“${displayToken(b)}”`}${differs ? ', differs' : ''}`);
    column.append(el('span', 'circuits-pos-index', String(p + 1)), chip(a, differs, 'clean'), chip(b, differs, 'corrupted'));
    columns.push(column);
  }
  host.replaceChildren(...columns);
  host.dataset.differing = String(differing);
  if (clean.n !== corrupted.n) {
    lengths.className = 'small error-inline';
    lengths.textContent = `The prompts differ in length: the clean one is ${clean.n} tokens, the corrupted one ${corrupted.n}. ` +
      'Patching copies activations position by position, so it needs the same length: it is off until they match. ' +
      'The logit lens, rollout and attribution read the clean prompt and still work.';
    return { patchable: false, why: `Patching needs prompts of the same length (clean ${clean.n} tokens, corrupted ${corrupted.n}).`, clean: true };
  }
  lengths.textContent = `${clean.n} tokens each · ${differing === 0 ? 'no position differs: patching will find nothing' :
    `${differing} position${differing === 1 ? '' : 's'} differ${differing === 1 ? 's' : ''} (marked)`}` +
    `${clean.cut ? ` · the last ${clean.cut} cut to the model's context` : ''}`;
  return { patchable: true, why: '', clean: true };
}

/**
 * An answer box's line: what it reads as ({ id, text } or { error }), whether it is the prompt's
 * suggested top next token (`suggested`: { text, probability } or null) or typed.
 */
export function drawAnswer(which, resolved, { typed, suggested, prompt }) {
  const info = $(`circuits-answer-${which}-info`);
  const box = $(`circuits-answer-${which}`);
  box.placeholder = suggested ? `${displayToken(suggested.text)} (suggested)` : '';
  if (!resolved) {
    info.className = 'muted small';
    info.textContent = '';
    box.removeAttribute('aria-invalid');
    return;
  }
  if (resolved.error) {
    info.className = 'small error-inline';
    info.textContent = resolved.error;
    box.setAttribute('aria-invalid', 'true');
    return;
  }
  box.removeAttribute('aria-invalid');
  info.className = 'muted small';
  info.textContent = `“${displayToken(resolved.text)}” · token id ${resolved.id}` +
    (typed ? ' · typed' : ` · the ${prompt} prompt's most likely next token (${percent(suggested.probability)})`);
}

/**
 * The presets greyed out with why (`refusals`: { name: why it cannot run, or null }, the buttons
 * being circuits-preset-NAME): one line per reason under them, each greyed-out button described by its own.
 */
export function drawPresetRefusals(refusals) {
  const lines = new Map(); // reason -> its line
  for (const [name, why] of Object.entries(refusals)) {
    const preset = $(`circuits-preset-${name}`);
    preset.disabled = Boolean(why);
    if (!why) {
      preset.removeAttribute('aria-describedby');
      continue;
    }
    if (!lines.has(why)) {
      const line = el('p', 'muted small', why);
      line.id = `circuits-preset-${name}-why`;
      lines.set(why, line);
    }
    preset.setAttribute('aria-describedby', lines.get(why).id);
  }
  $('circuits-preset-why').replaceChildren(...lines.values());
  $('circuits-preset-why').hidden = lines.size === 0;
}
