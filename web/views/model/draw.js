// The Your model view's drawing: the model pickers (shipped buttons, the Hub's menu and id box), load progress and status, the
// typed text's chips, every head (with its knock-out toggle), next tokens (before → after a knock-out), head finder. Text only ever goes in as textContent.
import { $, button, el } from '../../shared/dom.js';
import { exportButtons, runProvenance } from '../../shared/exporting.js';
import { formatBytes } from '../../shared/format.js';
import { displayToken } from '../../shared/labels.js';
import { TokenChips } from '../../shared/token-chips.js';
import { dequantizedNote, ggufFileLabel, ggufRepoFromFiles, hubEntry, hubGroups, hubModelLine, hubOptionLabel, NO_GGUF_FILE, whyNotLoadable,
  withFile } from '../../shared/hub-models.js';
import { formatsLine, layerKinds, layerKindsLegend, modelFacts, percent } from './model-data.js';
import { HeadFinder } from './head-finder.js';
import { headView } from './head-view.js';
import { MAX_TABLE_HEADS, modelHeads } from './model-heads.js';
import { probabilityLegend } from '../../shared/heatmap.js';
import { setPageState } from '../../shared/page-state.js';

export const showError = (message) => {
  $('model-error').hidden = !message;
  $('model-error').textContent = message ?? '';
};

export const textInfo = (message, error = false) => {
  $('model-text-info').className = error ? 'small error-inline' : 'muted small';
  $('model-text-info').textContent = message;
};

/** The load's line beside the control that started it ('' hides it). */
const loadStatus = (text) => {
  $('model-load-status').textContent = text;
};

/** A line said about a load that ended (e.g. the files dropped with a .gguf that were not read). */
export const loadNote = (text) => loadStatus(text);

/**
 * The load's feedback (its line, the bar and Cancel, an error) placed right after `near`: the
 * control that started it (the shipped buttons, the Hub's id box, the drop area), so it is seen
 * where the reader looks.
 */
export function placeLoadFeedback(near) {
  const block = $('model-load');
  if (near && near.nextElementSibling !== block) near.after(block);
  if (!busy) loadStatus(''); // a new attempt: the last load's "Kept …" or "Cancelled." is not about it
}

let loading = ''; // what the load in progress reads, for its phases' lines
let busy = false; // a load is in progress

/** The bar at `fraction` (null: a step of unknown length), its percentage beside it. */
function drawBar(fraction) {
  const bar = $('model-progress');
  if (fraction === null) bar.removeAttribute('value');
  else bar.value = fraction;
  $('model-progress-text').textContent = fraction === null ? '' : `${Math.round(fraction * 100)}%`;
}

/**
 * The worker's progress of a checkpoint's load ({ phase, fraction }: the API's onProgress): the
 * download from the Hub, then the weights prepared (read into the core), each with its own bar.
 */
export function drawProgress({ phase, fraction }) {
  if (phase === 'download' && fraction < 1) {
    loadStatus(`Downloading ${loading}…`);
    drawBar(fraction);
  } else {
    // Downloaded (the browser may still be keeping the file): the weights read into the core next.
    loadStatus(`Preparing weights: reading ${loading} into the WebAssembly core…`);
    drawBar(phase === 'download' ? 0 : fraction);
  }
}

/** The model is loaded: its first run (the weights packed for the core's kernels) and head finder, a step of unknown length. */
export function drawFirstRun() {
  loadStatus(`Preparing weights: packing ${loading} for its first run…`);
  drawBar(null);
  $('model-cancel').hidden = true; // loaded: nothing left to cancel
}

/**
 * A load begins after `near` (placeLoadFeedback): the bar at 0 and shown (with Cancel for a Hub
 * load), what is loading named, the pickers disabled until it ends.
 * @param {string} what e.g. 'model.safetensors (548 MB)', "'openai-community/gpt2' from https://huggingface.co"
 * @param {{cancellable?: boolean, near?: HTMLElement|null, name?: string}} [how] name: what the phases' lines call it
 *   ('openai-community/gpt2', 'model.safetensors'; default `what`)
 */
export function drawLoading(what, { cancellable = false, near = null, name = what } = {}) {
  placeLoadFeedback(near);
  busy = true;
  loading = name;
  drawBar(0);
  $('model-progress-row').hidden = false;
  $('model-cancel').hidden = !cancellable;
  $('model-cancel').disabled = false;
  loadStatus(`Loading ${what}…`);
  setPageState({ modelLoading: true });
  setPickersDisabled(true);
}

/** A Hub model's repo and revision (and its GGUF file): 'org/name @ step1000', 'org/name-GGUF, file name.gguf'. */
function hubName(model) {
  return `${model.id}${model.revision && model.revision !== 'main' ? ` @ ${model.revision}` : ''}${model.file ? `, file ${model.file}` : ''}`;
}

/** Where a loaded model came from, for the status line. */
function origin(model) {
  if (model.source === 'shipped') return `${model.name} (${model.title}), shipped with the page`;
  if (model.source === 'hub') {
    return /^[A-Za-z][A-Za-z0-9+.-]*:/.test(model.id) ? hubName(model) : `${hubName(model)} from ${model.endpoint ?? 'https://huggingface.co'}`;
  }
  return model.fileName;
}

/** A loaded model's short name (the kept model's in a refusal, the pickers' pressed button). */
export const modelLabel = (model) => (model.source === 'shipped' ? model.name
  : model.source === 'hub' ? `${model.id}${model.file ? ` (${model.file})` : ''}` : model.fileName);

/**
 * The loaded model's origin, format (a GGUF file's: 'GGUF, Q8_0 × 168, F32 × 61 tensors', from
 * m.weights.formats), size, shape and memory in the status line (its numbers for the tests), and its
 * family and conventions in the facts line under it (model-data.js's modelFacts), with what the core
 * does to quantized weights at load (hub-models.js's dequantizedNote).
 */
export function drawLoaded(model) {
  const { fileBytes, config, memory } = model;
  const format = model.container ? `${model.container}, ${formatsLine(model.weights?.formats)} · ` : '';
  // The file's size when the page has the file; else the weights' bytes the core read (not the file's size: said so).
  const size = fileBytes ? `file ${formatBytes(fileBytes)} · ` : model.container && model.weights?.bytes ? `weights ${formatBytes(model.weights.bytes)} · ` : '';
  $('model-status').textContent = `${origin(model)}: ${format}${size}${config.layers} layers × ` +
    `${config.heads} heads · d_model ${config.dModel} · ${config.vocab} tokens · context ${config.context} · ` +
    `wasm memory ${formatBytes(memory.allocatedBytes)} in use (heap ${formatBytes(memory.heapBytes)}: memory freed is kept for reuse)`;
  Object.assign($('model-status').dataset, { fileBytes: fileBytes ?? '', heapBytes: memory.heapBytes, container: model.container ?? '' });
  const note = dequantizedNote(model.dequantized ?? []);
  $('model-facts').textContent = `${modelFacts(model.familyName ?? model.family, config)}${note ? ` · ${note}` : ''}`;
  $('model-facts').hidden = false;
  $('model-facts').dataset.family = model.family ?? '';
  setPageState({ modelSource: model.source, modelName: modelLabel(model) });
  markPressed(model);
}

/**
 * The page's footer while the tab is shown: the drawn model's run — its tokens, shape and the
 * forward's time in the model worker (on `threads` threads, `simd` the core's SIMD).
 */
export function footerLine(run, model, { threads = 1, simd = 'wasm' } = {}) {
  const { layers, heads, kvHeads = heads, dModel } = model.config;
  return `${modelLabel(model)}: ${run.n} token${run.n === 1 ? '' : 's'} · ${layers} layer${layers === 1 ? '' : 's'} × ${heads} head` +
    `${heads === 1 ? '' : 's'}${kvHeads < heads ? ` (${kvHeads} K/V)` : ''} · d_model ${dModel} · forward ${run.computeMs.toFixed(2)} ms ` +
    `in the model worker${threads > 1 ? ` on ${threads} threads` : ''} (${simd === 'wasm' ? 'wasm SIMD' : simd})`;
}

/**
 * A refused or cancelled load: the model still loaded (or none) named in the load's line; a
 * cancelled one says so, as news rather than an error.
 */
export function drawKept(model, { cancelled = false } = {}) {
  loadStatus(`${cancelled ? 'Cancelled. ' : ''}${model ? `Kept ${modelLabel(model)}.` : 'No model loaded.'}`);
}

/** A load ended (loaded: its line cleared; refused: kept): the bar and Cancel hidden, the pickers enabled again. */
export function drawLoadEnded({ loaded = false } = {}) {
  busy = false;
  if (loaded) loadStatus('');
  $('model-progress-row').hidden = true;
  $('model-cancel').hidden = true;
  setPageState({ modelLoading: false });
  setPickersDisabled(false);
}

/** Cancel pressed: disabled until the load's end is reported. */
export function drawCancelling() {
  $('model-cancel').disabled = true;
  loadStatus('Cancelling…');
}

// ---- the pickers --------------------------------------------------------------------------

const pickers = () => [...document.querySelectorAll('#model-trained button, #model-hub-pick, #model-hub-revision, #model-hub-file-pick, ' +
  '#model-hub-load, #model-cache button')];

function setPickersDisabled(disabled) {
  for (const b of pickers()) b.disabled = disabled;
  if (!disabled) drawHubChoice(); // Load stays disabled for a listed model the tab cannot load
}

let hubTab = null; // what the core says fits the tab (drawPickers' `tab`), for the facts line
// The id box's repo's files as the Hub lists them (setHubListing): { id, state: 'listing' |
// 'listed' | 'failed', files?, message? }, or null (no listing for what the box holds).
let hubListing = null;
let fileMenuKey = ''; // what the File menu was built from (its repo and files)

/** The id box's repo's listing (index.js's lister) shown: the File row and its status line follow. */
export function setHubListing(listing) {
  hubListing = listing;
  drawHubChoice();
}

/**
 * The GGUF entry the File row offers for the id box's repo: a listed GGUF repo's known files with
 * those the Hub lists beside them, an unlisted repo's .gguf files as the Hub lists them
 * (ggufRepoFromFiles), or the listed entry as is (undefined: none).
 */
function fileRowEntry(listed) {
  if (!hubListing || hubListing.state !== 'listed' || (listed && !listed.gguf)) return listed;
  const id = listed?.id ?? $('model-hub-id').value.trim();
  if (hubListing.id !== id) return listed;
  return ggufRepoFromFiles(id, hubListing.files, listed) ?? listed;
}

/** The File row's status line: "Listing the repo's files…" while it is asked, the reason when it could not be. */
function drawListingStatus() {
  const line = $('model-hub-files-status');
  const id = $('model-hub-id').value.trim();
  const mine = hubListing && (hubListing.id === id || hubEntry(id)?.id === hubListing.id);
  const text = !mine ? '' : hubListing.state === 'listing' ? 'Listing the repo\'s files…'
    : hubListing.state === 'failed' ? `Could not list the repo's files: ${hubListing.message}` : '';
  // Always in the page (a live region announces what changes in it): empty when there is nothing to say.
  if (line.textContent !== text) line.textContent = text;
  line.classList.toggle('failed', mine && hubListing.state === 'failed');
}

/**
 * The File row under the id box (a GGUF repo's .gguf), shown for a GGUF repo (a listed one's known
 * files and those the Hub lists, or an unlisted repo's .gguf files as the Hub lists them: a menu,
 * each 'Q8_0 · 145 MB' and in a word why not; a model split into several files one line that
 * cannot be chosen; "None" when the repo also has weights read without a file; "Another file" for
 * a name typed in the box), for an id that says GGUF, or while the box holds a name (the box
 * alone). Returns the entry with its chosen file (withFile), or the entry as is.
 */
function drawFileRow(listed) {
  const entry = fileRowEntry(listed);
  const pick = $('model-hub-file-pick');
  const box = $('model-hub-file');
  const menu = Boolean(entry?.gguf && hubTab);
  const key = menu ? JSON.stringify([entry.id, entry.weights ?? '', entry.files.map((f) => f.file)]) : '';
  if (menu && (pick.dataset.id !== entry.id || fileMenuKey !== key)) {
    const before = pick.dataset.id === entry.id ? pick.value : null;
    pick.replaceChildren(...(entry.weights ? [new Option(`None: its ${entry.weights}`, NO_GGUF_FILE)] : []),
      ...entry.files.map((f) => Object.assign(new Option(ggufFileLabel(entry, f, hubTab), f.file), { disabled: Boolean(f.split) })),
      new Option('Another file (type its name)', ''));
    pick.dataset.id = entry.id;
    fileMenuKey = key;
    const typed = box.value.trim();
    const choosable = (file) => entry.files.some((f) => f.file === file && !f.split);
    const first = entry.weights ? NO_GGUF_FILE : entry.files.find((f) => !f.split)?.file ?? '';
    pick.value = typed ? (choosable(typed) ? typed : '') : before !== null && (before === '' || before === NO_GGUF_FILE || choosable(before)) ? before : first;
  }
  if (!menu) {
    pick.dataset.id = '';
    fileMenuKey = '';
  }
  pick.hidden = !menu;
  box.hidden = menu && pick.value !== '';
  $('model-hub-file-label').htmlFor = pick.hidden ? 'model-hub-file' : 'model-hub-file-pick';
  $('model-hub-file-row').hidden = !menu && !/gguf/i.test($('model-hub-id').value) && box.value.trim() === '';
  drawListingStatus();
  const file = chosenHubFile();
  return entry?.gguf ? withFile(entry, pick.hidden || pick.value !== NO_GGUF_FILE ? file || undefined : NO_GGUF_FILE) : entry;
}

/**
 * The Hub's menu follows the id box: the listed model it names chosen (else the menu's first
 * line), its facts line under the menu (hubModelLine: id · size · family · parameters, gated or why
 * it cannot load; a GGUF repo's with its chosen file, an unlisted GGUF repo's its id, file and
 * size), its training checkpoints' menu shown when it has them (Pythia), its File row
 * (drawFileRow), and Load disabled for a model the tab cannot load, a GGUF repo's menu with no file
 * named (or while a load runs).
 */
export function drawHubChoice() {
  const listed = hubEntry($('model-hub-id').value);
  const pick = $('model-hub-pick');
  if (pick.options.length) pick.value = listed?.id ?? '';
  const entry = drawFileRow(listed);
  const menu = !$('model-hub-file-pick').hidden;
  const noFile = Boolean(entry?.gguf && menu && !entry.noFile && !chosenHubFile());
  const why = entry && hubTab ? whyNotLoadable(entry, hubTab) : null;
  $('model-hub-line').textContent = entry && hubTab ? hubModelLine(entry, hubTab) : '';
  $('model-hub-line').hidden = !entry || !hubTab;
  $('model-hub-line').classList.toggle('unloadable', why !== null);
  const menuOfRevisions = $('model-hub-revision');
  if (entry?.revisions && menuOfRevisions.dataset.id !== entry.id) {
    const final = entry.revisions.at(-1);
    menuOfRevisions.replaceChildren(new Option(`main (the final model, ${final})`, ''),
      ...[...entry.revisions].reverse().filter((r) => r !== final).map((r) => new Option(r, r)));
    $('model-hub-revision-hint').textContent = `(${entry.revisions.length} published)`;
  }
  menuOfRevisions.dataset.id = entry?.revisions ? entry.id : '';
  $('model-hub-revision-row').hidden = !entry?.revisions;
  $('model-hub-load').disabled = busy || why !== null || noFile;
}

/** The training checkpoint chosen for the id box's listed model ('': main, or it has none). */
export const chosenHubRevision = () => ($('model-hub-revision-row').hidden ? '' : $('model-hub-revision').value);

/** The GGUF file named in the File row ('': none: the row hidden, or nothing typed). */
export function chosenHubFile() {
  if ($('model-hub-file-row').hidden) return '';
  const pick = $('model-hub-file-pick');
  if (!pick.hidden && pick.value === NO_GGUF_FILE) return '';
  return !pick.hidden && pick.value ? pick.value : $('model-hub-file').value.trim();
}

/** The File row set to `file` (a link's hubFile, or a loaded model's): its menu's option when listed, else the box. */
export function setHubFile(file) {
  $('model-hub-file').value = file ?? '';
  $('model-hub-file-pick').dataset.id = ''; // rebuilt, choosing `file` (drawFileRow)
  drawHubChoice();
}

/** The shipped model's button pressed, the others not; a listed Hub model's menu (and its revision and file menus) shows the one loaded. */
function markPressed(model) {
  const key = model.source === 'shipped' ? `shipped:${model.name}` : '';
  for (const b of document.querySelectorAll('#model-trained button')) b.setAttribute('aria-pressed', String(b.dataset.key === key));
  if (model.source !== 'hub' || hubEntry($('model-hub-id').value)?.id !== model.id) return;
  if (model.file && chosenHubFile() !== model.file) setHubFile(model.file);
  else drawHubChoice();
  const revision = model.revision && model.revision !== 'main' ? model.revision : '';
  if ([...$('model-hub-revision').options].some((o) => o.value === revision)) $('model-hub-revision').value = revision;
}

/**
 * The Hub files this browser keeps (the worker's 'cached': [{ repo, revisions, bytes, files }]):
 * a line per repo with its Remove (onRemove(repo)) and Remove all (onRemove()); one muted line when
 * none. Disabled while a load runs, as the pickers are.
 */
export function drawCache(entries, onRemove, loading = false) {
  $('model-cache-list').replaceChildren(...entries.map(({ repo, revisions, bytes, files }) => {
    const item = el('li', 'model-cache-item');
    Object.assign(item.dataset, { repo, bytes });
    const remove = button('model-cache-remove', 'Remove', () => onRemove(repo));
    remove.setAttribute('aria-label', `Remove ${repo}`);
    remove.disabled = loading;
    item.append(el('span', 'model-cache-line', `${repo} @ ${revisions.join(', ')} · ${formatBytes(bytes)} kept · ${files} file${files === 1 ? '' : 's'}`), remove);
    return item;
  }));
  const none = entries.length === 0;
  $('model-cache-title').hidden = none;
  $('model-cache-list').hidden = none;
  $('model-cache-none').hidden = !none;
  $('model-cache-clear').hidden = none;
  $('model-cache-clear').disabled = loading;
}

/**
 * The shipped models (`shipped`: the worker's init reply, [{ name, title, bytes }]) as buttons
 * (onShipped(name)), and the Hub list (hub-models.js) as one menu grouped by family, each option
 * 'name · size' (and in a word why it needs more than a click). A model the tab cannot load (a
 * family the core does not read, or more parameters than the core's limit: `tab`, hub-models.js's
 * TabLimits) stays listed: chosen, its facts line says why and Load is disabled. Choosing an entry
 * puts its id in the id box (drawHubChoice); Load loads what the id box holds.
 */
export function drawPickers(shipped, { onShipped, tab }) {
  hubTab = tab;
  // The families the core reads, by the names it gives them (lens.catalog.families).
  const names = tab.families.map((f) => f.displayName);
  const read = names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : names.join('');
  $('model-own-note').textContent = `A Hugging Face checkpoint (${read}) or a GGUF file, read from your disk into the WebAssembly core ` +
    '(nothing is uploaded). docs/javascript-api.md ("Your own model") says where to download one.';
  $('model-trained').replaceChildren(...shipped.map(({ name, title, bytes }) => {
    const b = button('model-pick', undefined, () => onShipped(name));
    b.dataset.key = `shipped:${name}`;
    b.dataset.name = name;
    b.setAttribute('aria-pressed', 'false');
    b.append(el('span', 'model-pick-name', name), el('span', 'model-pick-line', `${title} · ${formatBytes(bytes)}`));
    return b;
  }));
  $('model-hub-pick').replaceChildren(new Option('Choose a model', ''), ...hubGroups(tab).map(({ label, entries }) => {
    const group = document.createElement('optgroup');
    group.label = label;
    group.append(...entries.map((entry) => {
      const option = new Option(hubOptionLabel(entry, tab), entry.id);
      option.dataset.loadable = String(whyNotLoadable(entry, tab) === null);
      return option;
    }));
    return group;
  }));
  drawHubChoice();
}

/** A probability, or "< p" when it was outside the most likely ones read. */
const probabilityText = (p, floor) => (p !== null ? percent(p) : percent(floor ?? 0).startsWith('<') ? percent(floor ?? 0) : `< ${percent(floor ?? 0)}`);

function drawNext({ n, top, compare, compareFloor }) {
  if (compare) {
    $('model-next-info').textContent = `After token ${n} of your text: each token's probability before → after knocking out ` +
      'the heads, the biggest movers first (the 10 most likely of each):';
    $('model-next').replaceChildren(...compare.map(({ id, token, before, after }) => {
      const item = el('li', 'model-next-item model-next-compare');
      Object.assign(item.dataset, { id: String(id), before: String(before ?? ''), after: String(after ?? '') });
      item.dataset.probability = String(after ?? '');
      // The bar (after) and the tick (before) in a track of their own under the text, so the
      // tick never crosses the token or the numbers.
      const track = el('span', 'model-next-track');
      track.setAttribute('aria-hidden', 'true');
      const bar = el('span', 'model-next-bar');
      bar.style.width = `${((after ?? 0) * 100).toFixed(1)}%`;
      const ghost = el('span', 'model-next-bar-before');
      ghost.style.left = `${((before ?? 0) * 100).toFixed(1)}%`;
      ghost.title = 'before';
      track.append(bar, ghost);
      const up = (after ?? 0) > (before ?? 0);
      const change = el('span', `num model-next-change ${up ? 'up' : 'down'}`,
        `${probabilityText(before, compareFloor)} → ${probabilityText(after, compareFloor)}`);
      item.append(el('span', 'model-next-token', displayToken(token)), change, track);
      return item;
    }));
    return;
  }
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

/** The heads knocked out ([{ layer, head }]): the tiles' toggles pressed, the line under the next tokens, Restore all. */
function drawAblated(heads, ablated) {
  const on = new Set(ablated.map(({ layer, head }) => `${layer}:${head}`));
  for (const b of document.querySelectorAll('#model-head-grid .model-knock')) {
    const pressed = on.has(`${b.dataset.layer}:${b.dataset.head}`);
    b.setAttribute('aria-pressed', String(pressed));
    b.closest('.model-tile')?.classList.toggle('knocked', pressed);
  }
  $('model-ablated').textContent = ablated.length
    ? `Knocked out (output zeroed): ${ablated.map(({ layer, head }) => `L${layer + 1} H${head + 1}`).join(', ')}`
    : 'No head knocked out: press a head\'s “knock out” below to zero its output.';
  $('model-restore').disabled = !ablated.length;
  setPageState({ modelAblated: ablated.length });
}

/**
 * The view's parts that keep state (chips, the head grid, a head's larger view, the finder):
 * build(config) lays out the grid for a loaded model; drawRun(run, model) draws a run on the typed
 * text; drawHeads(run) redraws the grid (theme, size); drawFinder / finderError: the head finder's
 * scores or why there are none.
 * @param {(layer: number, head: number) => void} onWalkthrough a head's "Open in the walkthrough"
 * @param {(layer: number, head: number) => void} onKnock a head's "knock out" toggle pressed
 */
export function modelDrawing(onWalkthrough, onKnock) {
  const chips = new TokenChips($('model-tokens'));
  let shown = null; // { run, config }: what the grid draws, for a head's larger view
  const tileCanvas = (layer, head) => heads.tile(layer, head)?.querySelector('canvas') ?? null;
  const heads = modelHeads($('model-head-grid'), (layer, head) => shown && view.open(layer, head, shown.run, shown.config), onKnock);
  const finder = new HeadFinder($('model-finder'), (layer, head) => heads.highlight(layer, head, { reveal: true }));
  probabilityLegend($('model-heads-legend'));
  const provenance = () => runProvenance('your model', shown?.model, shown?.run);
  const gridFigure = { toSvg: (facts) => heads.toSvg(`Every layer × head on your ${shown?.run.n ?? 0} tokens`, { ...facts, tokens: shown?.run.tokens }) };
  const view = headView({ onWalkthrough, onKnock, tileCanvas, provenance });
  return {
    build(config) {
      view.close();
      $('model-heads-legend').hidden = false;
      // Local (sliding-window) and global layers, when the core says they differ: a tag on each
      // layer's heading and one sentence saying what the tags mean.
      const kinds = layerKinds(config);
      $('model-heads-layers').textContent = layerKindsLegend(config) ?? '';
      $('model-heads-layers').hidden = !kinds;
      heads.build(config.layers, config.heads, config.layers * config.heads <= MAX_TABLE_HEADS, config.kvHeads ?? config.heads,
        kinds?.map(({ local, label }) => ({ label, kind: local ? 'local' : 'global' })) ?? null);
      exportButtons($('model-grid-exports'), [{ id: 'model-heads', label: 'every head', title: 'Every layer × head', map: gridFigure,
        provenance, json: () => ({ tokens: shown?.run.tokens, layers: config.layers, heads: config.heads,
          layout: 'attention[layer][(head × n + query) × n + key]', attention: shown?.run.attention.map((layer) => Array.from(layer)) }) }]);
    },
    /** A run on the typed text: chips, every head, the next tokens. */
    drawRun(run, model) {
      chips.render(run.tokens, 0, [], run.mapped ?? []);
      textInfo(`${run.n} tokens${run.cut ? ` (the last ${run.cut} cut: the model's context is ${model.config.context})` : ''}` +
        `${run.note ? ` · ${run.note}` : ''}`);
      heads.render(run);
      shown = { run, config: model.config, model };
      view.update(run, model.config);
      drawNext(run);
      drawAblated(heads, run.ablated ?? []);
    },
    drawHeads(run) {
      heads.render(run);
    },
    drawFinder({ scores, probeLength }) {
      $('model-finder-info').textContent = `Each head's mean attention to the previous token, and to the token after an ` +
        `earlier copy of the current one (induction), on ${probeLength / 2} seeded random tokens repeated once. ` +
        'Click a column to sort, a head to highlight it in the grid.';
      finder.render(scores);
    },
    finderError(message) {
      $('model-finder-info').textContent = `Head finder: ${message}`;
    },
  };
}
