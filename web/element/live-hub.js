// <attention-lens hub="org/name" text="…" layer="…" head="…"> without a snapshot: a model loaded from
// the Hugging Face Hub only when the reader asks. Before the press nothing is requested: a button
// says what will be downloaded (the size from the page's list of known models, shared/hub-models.js;
// "size unknown until asked" for any other repo). Pressed, it imports the full module
// (attention-lens.mjs + .wasm beside the element's script: the element's own bundled module has no
// checkpoint import), loads the checkpoint through the page's model session code
// (shared/model-session/session-model.js, here on the page's thread) — lens.loadCheckpoint({ hub }),
// whose Cache Storage of Hub files the page shares on the same origin — and turns each run into a
// snapshot (api/snapshot.js) that the element draws as any other. A blocked fetch (a blog's
// Content-Security-Policy without the Hub's origins in connect-src) is said in words.
import { button, el } from '../shared/dom.js';
import { PROJECT_VERSION } from '../shared/exporting.js';
import { formatBytes } from '../shared/format.js';
import { hubEntry, withFile } from '../shared/hub-models.js';
import { SessionModel } from '../shared/model-session/session-model.js';
import { makeModelSnapshot, readSnapshot, snapshotProvenance } from '../api/snapshot.js';
import { DEFAULTS } from '../shared/state.js';

/** The Hub's own origin (the API's default endpoint). */
export const HUB = 'https://huggingface.co';
const HUB_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}\/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$/;
const REVISION = /^[A-Za-z0-9_.\-/]{1,200}$/;
const GGUF_FILE = /^[A-Za-z0-9_.\-/]{1,300}\.gguf$/i;

/**
 * The live attributes: { request: { hub, revision?, file?, endpoint? } | null, text, error } — an
 * attribute that cannot be used makes `error` (nothing is loaded then).
 */
export function liveRequest(getAttribute, defaultText) {
  const hub = (getAttribute('hub') ?? '').trim();
  const text = getAttribute('text') ?? defaultText;
  const fail = (error) => ({ request: null, text, error });
  if (!HUB_ID.test(hub)) return fail(`hub="${hub.slice(0, 80)}" is not a Hugging Face id (org/name)`);
  const request = { hub };
  const revision = getAttribute('revision')?.trim();
  if (revision) {
    if (!REVISION.test(revision)) return fail(`revision="${revision.slice(0, 80)}" is not a revision name`);
    if (revision !== 'main') request.revision = revision;
  }
  const file = getAttribute('file')?.trim();
  if (file) {
    if (!GGUF_FILE.test(file)) return fail(`file="${file.slice(0, 80)}" is not a .gguf file of the repo`);
    request.file = file;
  } else if (hubEntry(hub)?.gguf) request.file = withFile(hubEntry(hub)).file; // a listed GGUF repo: its first known file
  const endpoint = getAttribute('endpoint')?.trim();
  if (endpoint) {
    let url = null;
    try {
      url = new URL(endpoint);
    } catch { /* said below */ }
    if (!url || !['http:', 'https:'].includes(url.protocol)) return fail(`endpoint="${endpoint.slice(0, 80)}" is not an http(s) address of a Hub mirror`);
    if (url.origin !== HUB) request.endpoint = url.origin;
  }
  return { request, text, error: null };
}

// The full module, loaded once per page, the first time a reader presses a live element's button.
let fullLens = null;
function sharedFullLens(moduleUrl) {
  fullLens ??= import(/* @vite-ignore */ moduleUrl).then((api) => api.loadAttentionLens());
  fullLens.catch(() => {
    fullLens = null; // a later press may try again
  });
  return fullLens;
}

/** What a failed load says: the API's message, and the policy's part when a fetch was blocked. */
function loadMessage(error, blocked, where) {
  const message = String(error?.message ?? error).replace(/\.+$/, '');
  if (blocked.length) {
    const origins = [...new Set(blocked.map((u) => {
      try {
        return new URL(u).origin;
      } catch {
        return u;
      }
    }))];
    return `this page's Content-Security-Policy blocked ${origins.join(', ')} (connect-src): a live model needs connect-src to allow ` +
      `${where} and the Hub's file storage (docs/embedding.md). The load said: ${message}.`;
  }
  if (/failed to fetch|networkerror|load failed|could not fetch/i.test(message)) {
    return `${message}. If this page sets a Content-Security-Policy, its connect-src must allow ${where} and the Hub's file storage.`;
  }
  return `${message}.`;
}

export class LiveHub {
  #host;
  #parts;
  #moduleUrl;
  #onChange;
  #key = ''; // the request shown
  #phase = 'idle'; // 'idle' | 'loading' | 'ready' | 'error'
  #message = '';
  #session = null;
  #model = null; // the session's description of the loaded model
  #run = { text: null, snapshot: null, error: null };
  #request = null;
  #text = '';

  /** @param {HTMLElement} host @param {{moduleUrl: string, onChange: () => void}} options onChange: the element draws again */
  constructor(host, { moduleUrl, onChange }) {
    this.#host = host;
    this.#moduleUrl = moduleUrl;
    this.#onChange = onChange;
    const parts = {
      what: el('p', 'live-what'),
      load: button('live-load', 'Load', () => this.#load()),
      progressRow: el('div', 'live-progress'),
      progress: el('progress'),
      progressText: el('span', 'live-progress-text'),
      cancel: button('live-cancel', 'Cancel', () => this.#session?.cancel()),
      note: el('p', 'live-note muted'),
    };
    parts.progress.max = 1;
    parts.progress.setAttribute('aria-label', 'Download');
    parts.progressRow.append(parts.progress, parts.progressText, parts.cancel);
    parts.progressRow.hidden = true;
    host.replaceChildren(parts.what, parts.load, parts.progressRow, parts.note);
    this.#parts = parts;
  }

  /** The phase: 'idle' (the button), 'loading', 'ready' (drawn), 'error'. */
  get phase() {
    return this.#phase;
  }

  /**
   * The attributes' request and text: { snapshot } once the model is loaded (this text's run as a
   * snapshot), else { message } (what the box says), with the box drawn.
   */
  update(request, text) {
    const key = JSON.stringify(request);
    if (key !== this.#key) {
      this.#key = key;
      this.#session?.cancel();
      this.#session?.model?.dispose?.();
      this.#session = null;
      this.#model = null;
      this.#phase = 'idle';
      this.#message = '';
      this.#run = { text: null, snapshot: null, error: null };
    }
    this.#request = request;
    this.#text = text;
    if (this.#phase === 'ready') {
      if (this.#run.text !== text) this.#run = this.#snapshotOf(text);
      if (this.#run.snapshot) return { snapshot: this.#run.snapshot };
      return { message: this.#run.error, error: true };
    }
    this.#drawBox();
    return { message: this.#message, error: this.#phase === 'error' };
  }

  /** This text's run through the loaded model as a snapshot (readSnapshot's value), or why not. */
  #snapshotOf(text) {
    try {
      const run = this.#session.run({ text });
      const snapshot = makeModelSnapshot({ run, config: this.#model.config,
        provenance: snapshotProvenance(this.#model, { text, version: PROJECT_VERSION, settings: { view: 'live embed' } }) });
      return { text, snapshot: readSnapshot(snapshot), error: null };
    } catch (error) {
      return { text, snapshot: null, error: `${this.#model.id} could not read text="${text.slice(0, 60)}": ${error.message.replace(/\.+$/, '')}.` };
    }
  }

  #where() {
    return this.#request?.endpoint ?? HUB;
  }

  #drawBox() {
    const p = this.#parts;
    const request = this.#request;
    // A listed model's download (a GGUF repo's: the chosen file's, when the list knows it).
    const entry = withFile(hubEntry(request.hub), request.file);
    const known = entry && !entry.unknownFile && entry.size && (!request.file || entry.gguf) ? entry.size : '';
    const size = known || 'size unknown until asked';
    const from = this.#where().replace(/^https?:\/\//, '');
    p.what.textContent = `${request.hub}${request.file ? ` · ${request.file}` : ''}${request.revision ? ` @ ${request.revision}` : ''} · ` +
      `${known ? `${known} download` : 'download size unknown until asked'} from ${from}`;
    p.load.textContent = `Load ${entry?.name ?? request.hub} (${size}) and run it in this page`;
    const local = typeof location !== 'undefined' && location.protocol === 'file:';
    p.load.disabled = this.#phase === 'loading' || local;
    p.load.hidden = this.#phase === 'loading';
    p.progressRow.hidden = this.#phase !== 'loading';
    p.note.textContent = local
      ? 'This page was opened from file://: a live model needs the page served over http(s) (a snapshot works anywhere).'
      : this.#phase === 'error' ? '' : this.#message || 'Nothing is downloaded until you press the button. Files this browser already keeps for ' +
        'Attention Lens on this site are reused.';
  }

  #progress({ fraction, received, total, phase }) {
    const p = this.#parts;
    p.progress.value = Math.max(0, Math.min(1, fraction ?? 0));
    p.progressText.textContent = phase === 'download' && total ? `${formatBytes(received ?? 0)} of ${formatBytes(total)}`
      : phase === 'download' ? 'Downloading…' : 'Preparing the weights…';
  }

  async #load() {
    if (this.#phase === 'loading' || !this.#request) return;
    const request = this.#request;
    const key = this.#key;
    this.#phase = 'loading';
    this.#message = '';
    this.#progress({ fraction: 0, phase: 'download' });
    this.#drawBox();
    this.#onChange();
    const blocked = [];
    const onViolation = (e) => {
      if (/connect-src|default-src/.test(e.violatedDirective ?? e.effectiveDirective ?? '')) blocked.push(e.blockedURI);
    };
    document.addEventListener('securitypolicyviolation', onViolation);
    let cancelled = false;
    try {
      const lens = await sharedFullLens(this.#moduleUrl);
      if (key !== this.#key) return;
      const session = new SessionModel(lens, (update) => {
        if (update.progress !== undefined && this.#session === session) this.#progress(update);
      });
      this.#session = session;
      const cancel = this.#parts.cancel;
      cancel.onclick = () => {
        cancelled = true;
        session.cancel();
      };
      this.#model = await session.hub(request);
      if (key !== this.#key) return;
      this.#phase = 'ready';
      this.#run = this.#snapshotOf(this.#text);
    } catch (error) {
      if (key !== this.#key) return;
      this.#session = null;
      if (cancelled) {
        this.#phase = 'idle';
        this.#message = 'Cancelled: nothing was kept but the files already downloaded.';
      } else {
        await new Promise((resolve) => setTimeout(resolve, 0)); // a CSP violation is reported after the fetch fails
        this.#phase = 'error';
        this.#message = `Could not load ${request.hub}: ${loadMessage(error, blocked, this.#where())}`;
      }
    } finally {
      document.removeEventListener('securitypolicyviolation', onViolation);
    }
    this.#onChange();
  }
}

/**
 * The element's live mode (lens-element.js plugs it in): the box (a button until the reader asks),
 * then each run drawn as a snapshot. `moduleUrl`: the full module beside the element's script.
 */
export class LiveView {
  #host; // the element's LensHost
  #moduleUrl;
  #hub = null; // the LiveHub, made on first use

  /** @param {import('./lens-element.js').LensHost} host @param {{moduleUrl: string}} options */
  constructor(host, { moduleUrl }) {
    this.#host = host;
    this.#moduleUrl = moduleUrl;
  }

  update() {
    const { element, parts: p, schedule, drawSnapshot } = this.#host;
    const { request, text, error } = liveRequest((name) => element.getAttribute(name), DEFAULTS.text);
    if (error) {
      p.live.hidden = true;
      this.#fail(`Attention Lens cannot load a model: ${error}.`);
      return;
    }
    this.#hub ??= new LiveHub(p.live, { moduleUrl: this.#moduleUrl, onChange: schedule });
    const state = this.#hub.update(request, text);
    p.lens.dataset.live = this.#hub.phase;
    if (state.snapshot) {
      p.live.hidden = true;
      drawSnapshot(state.snapshot, { label: 'live' });
      return;
    }
    for (const part of [p.problems, p.tokens, p.sourceTokens, p.heads, p.explain, p.matrices, p.readout, p.snapshot]) part.hidden = true;
    p.live.hidden = false;
    if (state.error) {
      this.#fail(state.message, { keepBox: true });
      return;
    }
    p.lens.dataset.status = this.#hub.phase === 'loading' ? 'loading' : 'idle';
    p.title.replaceChildren(el('strong', '', request.hub), el('span', 'settings', ` · live, loaded when you ask${state.message ? ` · ${state.message}` : ''}`));
  }

  #fail(message, { keepBox = false } = {}) {
    const p = this.#host.parts;
    p.lens.dataset.status = 'error';
    p.title.replaceChildren(el('span', 'status error', message));
    for (const part of [p.problems, p.tokens, p.sourceTokens, p.explain, p.snapshot, p.matrices, p.readout]) part.hidden = true;
    p.live.hidden = !keepBox;
  }
}
