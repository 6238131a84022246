// The page's one Embed dialog ("Embed this view"), for every view: the walkthrough's live
// <attention-lens> snippet and iframe (as before), or a view's snapshot (web/api/snapshot.js)
// as (a) an inline snippet that carries the numbers in a <script type="application/json">, and
// (b) a .json file to download with the snippet that names it; its size and the weights' bound
// said above them. Each says the one script file it needs beside the post, with a button that
// downloads it: attention-lens-snapshot.js for a snapshot, attention-lens-element.js for a live
// snippet (with the shipped model it names inside, so that one file is all the post needs). The
// header's Embed button asks the shown tab's source (embedSource), the views' own "Embed this
// view" buttons call openEmbed. Snippets go into read-only text areas as text.
import { $, button, el } from './dom.js';
import { formatBytes } from './format.js';
import { snapshotSnippets } from './embed-snippet.js';
import { download } from './exporting.js';
import { sha256Hex } from '../api/snapshot.js';

// The element scripts, served beside this page (scripts/build.sh puts them in dist/).
const ELEMENT_SCRIPT = 'attention-lens-element.js';
const SNAPSHOT_SCRIPT = 'attention-lens-snapshot.js';

/**
 * The file a live snippet needs beside the post: { name, what, parts }, `parts` the served files it
 * is made of. With a shipped model (model="english"), the model's script (models/NAME.js: its
 * weights in base64, which the element reads when it is already on the page) goes in front of the
 * element, so the one file is all the snippet needs.
 */
export function liveFile(model) {
  return { name: ELEMENT_SCRIPT, parts: [...(model ? [`models/${model}.js`] : []), ELEMENT_SCRIPT],
    what: model ? `the element, its WebAssembly and the ${model} model, in one file` : 'the element, with its WebAssembly inside' };
}

/** The file a snapshot snippet needs beside the post. */
export const SNAPSHOT_FILE = { name: SNAPSHOT_SCRIPT, parts: [SNAPSHOT_SCRIPT], what: 'the element for snapshots: no WebAssembly, no worker' };

/** The served `parts` (beside this page) as one script file. */
async function joinedScript(parts) {
  const texts = await Promise.all(parts.map(async (path) => {
    const response = await fetch(new URL(path, document.baseURI));
    if (!response.ok) throw new Error(`${path}: the server answered ${response.status}`);
    return response.text();
  }));
  return new Blob([texts.join('\n')], { type: 'text/javascript' });
}

/** Shows `file` in `host` as the one file the snippet needs, with its download button and a status line. */
function showFile(host, file) {
  const status = el('p', 'small muted');
  status.setAttribute('role', 'status');
  const entry = el('div', 'embed-file');
  entry.dataset.file = file.name;
  const what = el('p', 'small');
  what.append(el('code', '', file.name), `: ${file.what}.`);
  const row = el('div', 'row');
  row.append(button('', `Download ${file.name}`, async () => {
    status.textContent = `Preparing ${file.name}…`;
    try {
      const blob = await joinedScript(file.parts);
      download(blob, file.name);
      status.textContent = `${file.name}: ${formatBytes(blob.size)}.`;
    } catch (error) {
      status.textContent = `Could not prepare ${file.name}: ${error.message}`;
    }
  }));
  entry.append(what, row);
  host.replaceChildren(el('p', 'small', 'Put this one file next to your post; the snippet needs nothing else (no server headers, no CDN):'), entry, status);
}

const sources = new Map();
const hashes = new WeakMap(); // File -> Promise of its SHA-256 (hex)

/** Weights files this large are not hashed (their bytes would be read into the page at once): sha256 ''. */
export const MAX_HASHED_BYTES = 2 ** 31;

/**
 * A model's weights files as a snapshot's provenance records them: [{ name, bytes, sha256 }], each
 * file hashed once (crypto.subtle over its bytes) and remembered.
 */
export async function weightsFileFacts(files) {
  return Promise.all((files ?? []).map(async (file) => {
    if (!hashes.has(file)) hashes.set(file, file.size > MAX_HASHED_BYTES ? Promise.resolve('') : file.arrayBuffer().then(sha256Hex));
    return { name: file.name, bytes: file.size, sha256: await hashes.get(file) };
  }));
}
 // tab -> async () => embed content (openEmbed's)
let snapshotFile = null; // { json, fileName } of the snapshot shown

/**
 * What the header's Embed button embeds while `tab` is shown: make() resolves to openEmbed's
 * content, or throws a readable Error (nothing drawn yet). The walkthrough's is the default.
 */
export function embedSource(tab, make) {
  sources.set(tab, make);
}

/** A copy button: the text area's text on the clipboard (else selected for the reader to copy). */
function copier(buttonId, areaId, label) {
  $(buttonId).addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText($(areaId).value);
      $(buttonId).textContent = 'Copied';
    } catch {
      $(areaId).select();
    }
    setTimeout(() => {
      $(buttonId).textContent = label;
    }, 1500);
  });
}

/** Wires the dialog once: the header's Embed button (the shown tab's source), Close, the copy and download buttons. */
export function wireEmbedDialog(store) {
  const dialog = $('embed-dialog');
  $('embed').addEventListener('click', async () => {
    const tab = store.get().settings.tab;
    await openEmbed(() => (sources.get(tab) ?? sources.get('walkthrough'))());
  });
  $('embed-close').addEventListener('click', () => dialog.close());
  copier('embed-copy', 'embed-element', 'Copy element snippet');
  copier('embed-inline-copy', 'embed-inline', 'Copy inline snippet');
  copier('embed-file-copy', 'embed-file', 'Copy file snippet');
  $('embed-download').addEventListener('click', () => {
    if (snapshotFile) download(new Blob([snapshotFile.json], { type: 'application/json' }), snapshotFile.fileName);
  });
}

/**
 * Opens the dialog with what `make()` resolves to: { live: { element, iframe, model } } (the walkthrough's
 * snippets, and the shipped model the element names or '') or { snapshot, fileName, what } (a view's snapshot: fileName the .json's name, what a
 * few words on what it holds); a refusal (make throws) is said in the dialog.
 */
export async function openEmbed(make) {
  const dialog = $('embed-dialog');
  $('embed-live').hidden = true;
  $('embed-snapshot').hidden = true;
  $('embed-problem').hidden = true;
  $('embed-title').textContent = 'Embed this view';
  if (!dialog.open) dialog.showModal();
  $('embed-status').textContent = 'Preparing the snippet…';
  let content;
  try {
    content = await make();
  } catch (error) {
    $('embed-status').textContent = '';
    $('embed-problem').textContent = `Nothing to embed yet: ${error.message}`;
    $('embed-problem').hidden = false;
    return;
  }
  $('embed-status').textContent = '';
  if (content.live) {
    $('embed-element').value = content.live.element;
    showFile($('embed-live-files'), liveFile(content.live.model));
    $('embed-iframe').value = content.live.iframe;
    $('embed-live').hidden = false;
    snapshotFile = null;
    return;
  }
  const { inline, file, json, bytes, bound } = snapshotSnippets(content.snapshot, { fileName: content.fileName, scriptSrc: SNAPSHOT_FILE.name });
  snapshotFile = { json, fileName: content.fileName };
  $('embed-title').textContent = 'Embed this view as a snapshot';
  $('embed-snapshot-size').textContent = `snapshot: ${formatBytes(bytes)} · ${content.what}${bound ? ` · weights to ${bound} (8 bits per weight)` : ''}. ` +
    'It draws at once, with no model, WebAssembly or worker loaded.';
  $('embed-snapshot-size').dataset.bytes = String(bytes);
  $('embed-inline').value = inline;
  $('embed-file').value = file;
  $('embed-download').textContent = `Download ${content.fileName}`;
  showFile($('embed-snapshot-files'), SNAPSHOT_FILE);
  $('embed-snapshot').hidden = false;
}
