// The "Your model" view: the page's model session (shared/model-session/: the loaded model in a Web Worker) — a shipped trained
// model (english, loaded the first time the view is shown, so it is never empty), a GPT-2 or
// Llama-family checkpoint by Hugging Face id (the picker's list or any id / repo URL, a GGUF repo's
// .gguf file named in the File row, from the API's endpoint or the link's hubEndpoint mirror;
// cancellable), or dropped / picked files (model.safetensors or its shards +
// model.safetensors.index.json, config.json, and tokenizer files when not GPT-2's; or one .gguf
// file, its config and tokenizer in its metadata) — its line, bar (download, then the weights prepared, then the first run)
// and errors beside the control that started it; then, for the typed
// text, every layer × head's attention, the top 10 next tokens, a head finder (previous-token and
// induction scores), a head's larger view and from it the walkthrough, heads knocked out (m.ablate in the worker;
// the next tokens before → after; Restore all), Generate (m.generate in chunks, each token streamed
// from the worker as it is produced; Stop; where each new token looked: generate-draw.js) and the
// text, sampling settings, knocked-out heads and a Hub model's id in the URL (settings modelText,
// gen*, knock, hub + hubRevision + hubFile: a link naming a Hub model loads it when the view opens). Mounted
// by main.js; the worker starts the first time the view is shown. Errors are shown as text; a
// refused or cancelled load leaves the loaded model and everything drawn as it was (a cancel is said
// as news, not as an error). The footer (the store's footer.model) says the drawn run. This file is
// the controller (the store's `yourModel`, the worker's calls); draw.js draws.
import { embedSource, openEmbed, weightsFileFacts } from '../../shared/embed-dialog.js';
import { PROJECT_VERSION, runProvenance } from '../../shared/exporting.js';
import { makeModelSnapshot, snapshotProvenance } from '../../api/snapshot.js';
import { listHubFiles } from '../../api/hub.js';
import { $ } from '../../shared/dom.js';
import { openLayer } from '../../shared/opened-layers.js';
import { formatBytes } from '../../shared/format.js';
import { filesNeededText, filesText, headsText, isHubId, linkHeads, sameFiles, setFooter } from '../../page-settings.js';
import { hubEntry, hubRequest } from '../../shared/hub-models.js';
import { fileRole, orderShards } from './model-data.js';
import { generationDrawing, genInfo, genRunning } from './generate-draw.js';
import { chosenHubFile, chosenHubRevision, drawCache, drawCancelling, drawFirstRun, drawHubChoice, drawKept, drawLoaded, drawLoadEnded, drawLoading, drawPickers,
  drawProgress, footerLine, loadNote, modelDrawing, modelLabel, placeLoadFeedback, setHubFile, setHubListing, showError, textInfo } from './draw.js';
import { setPageState, countPageState } from '../../shared/page-state.js';
import { TrainingStrip } from './training-strip.js';
import { wireFileDrop } from './file-drop.js';

/** ' · on 2 threads' when the model worker computes on more than one (a cross-origin isolated page). */
function threadsNote(client) {
  const threads = client?.info?.threads ?? 1;
  return threads > 1 ? ` · on ${threads} threads` : '';
}

/** The example sentence: the IOI sentence for a checkpoint, a sentence of its alphabet for a shipped character model. */
export const IOI = 'When Mary and John went to the store, John gave a drink to';
export const CHAR_EXAMPLE = 'the cat sat on the mat and the';

/** New tokens asked of the worker per call: Stop and a newer request take effect between calls. */
export const GEN_CHUNK = 8;

/** How long after the last keystroke in the id box its repo's files are asked of the Hub (ms). */
export const LIST_DELAY = 400;

/** Weights files larger than this are named in a link by name and size only (hashing reads the whole file into the page). */
export const LINK_HASHED_BYTES = 512e6;

/** A model from files' weights as a link names them: [{ name, bytes, sha256 }] (sha256 '' above LINK_HASHED_BYTES). */
async function linkFiles(files) {
  const hashed = await weightsFileFacts(files.filter((f) => f.size <= LINK_HASHED_BYTES));
  return files.map((f) => hashed.find((h) => h.name === f.name && h.bytes === f.size) ?? { name: f.name, bytes: f.size, sha256: '' });
}

/** A loaded model as a sentence names it: 'the english model', 'org/name', 'model.safetensors'. */
const modelNamed = (model) => (model.source === 'shipped' ? `the ${model.name} model` : modelLabel(model));

/** The shipped model loaded the first time the view is shown. */
export const FIRST_MODEL = 'english';

const FILES_HINT = 'drop model.safetensors (or its shards with model.safetensors.index.json), config.json and optionally ' +
  'tokenizer.json or vocab.json + merges.txt — or one .gguf file';

/**
 * A dropped .gguf file with the others dropped with it: { weights: the File, gguf: true, tokenizer?,
 * ignored?: the names of a config.json (the GGUF's metadata holds its config) and a repo's
 * companion files, not read }, or null after saying what is wrong (another .gguf or .safetensors
 * with it: one checkpoint at a time; split GGUF files are not read yet).
 */
function pickGguf(ggufs, others) {
  if (ggufs.length > 1) {
    showError(`Found ${ggufs.length} .gguf files (${ggufs.map((f) => f.name).join(', ')}): drop one .gguf file at a time ` +
      '(a model split into several .gguf files is not read yet)');
    return null;
  }
  const picked = { weights: ggufs[0], gguf: true };
  const ignored = [];
  for (const file of others) {
    const role = fileRole(file.name);
    if (role === 'weights' || role === 'index') {
      showError(`Found ${ggufs[0].name} and ${file.name}: drop one checkpoint at a time (a .gguf file alone, or model.safetensors with config.json)`);
      return null;
    }
    if (role === 'tokenizer') picked.tokenizer = file;
    else if (role === 'vocab' || role === 'merges') picked[role] = file;
    else ignored.push(file.name);
  }
  if ((picked.vocab || picked.merges) && !(picked.vocab && picked.merges)) {
    showError('A tokenizer given as files needs both vocab.json and merges.txt');
    return null;
  }
  if (ignored.length) picked.ignored = ignored;
  return picked;
}

/**
 * The dropped files by their role ({ weights: File | File[] (shards, in the order the index or
 * their names give), config, tokenizer?, vocab?, merges? }, or a .gguf file's: pickGguf), or null
 * after saying what is wrong. A repo's companion files (tokenizer_config.json, …) are skipped.
 */
async function pickFiles(files) {
  const unknown = files.find((file) => !fileRole(file.name));
  if (unknown) {
    showError(`${unknown.name} is not a checkpoint file: ${FILES_HINT}`);
    return null;
  }
  const ggufs = files.filter((file) => fileRole(file.name) === 'gguf');
  if (ggufs.length) return pickGguf(ggufs, files.filter((file) => !ggufs.includes(file)));
  const picked = {};
  const weights = [];
  for (const file of files) {
    const role = fileRole(file.name);
    if (role === 'weights') weights.push(file);
    else if (role !== 'companion') picked[role] = file;
  }
  if (!weights.length || !picked.config) {
    showError(`Found ${files.map((f) => f.name).join(', ')}: a checkpoint needs its weights (model.safetensors, or every shard) ` +
      'and config.json (dropped together), or is one .gguf file');
    return null;
  }
  let index;
  if (picked.index) {
    try {
      index = JSON.parse(await picked.index.text());
    } catch (error) {
      showError(`${picked.index.name} is not valid JSON: ${error.message}`);
      return null;
    }
  }
  const { order, error } = orderShards(weights.map((f) => f.name), index, picked.index?.name);
  if (error) {
    showError(error);
    return null;
  }
  delete picked.index;
  const ordered = order.map((name) => weights.find((f) => f.name === name));
  picked.weights = ordered.length === 1 ? ordered[0] : ordered;
  return picked;
}

/** What a load of picked files is called: 'model.safetensors (548 MB)', '2 shards, model-00001-of-00002.safetensors … (1.2 GB)'. */
function filesLabel(weights) {
  if (!Array.isArray(weights)) return `${weights.name} (${formatBytes(weights.size)})`;
  const bytes = weights.reduce((sum, f) => sum + f.size, 0);
  const first = weights.map((f) => f.name).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))[0];
  return `${weights.length} shards, ${first} … (${formatBytes(bytes)})`;
}

/**
 * The view's state lives in the store's `yourModel`: { model (the loaded model's { source:
 * 'shipped' | 'hub' | 'files', config, memory, tokenizer, and name + title, id + endpoint, or
 * fileName + fileBytes }, or null), lastRun (the typed text's { tokens, ids, n, cut, attention,
 * top, mapped, note }, drawn when it changes), loading }. The controller holds only the plumbing
 * (the worker, the typing timer, the runs in flight, the checkpoints loaded — files or Hub — counted
 * in the page state, web/shared/page-state.js).
 */
class ModelController {
  #store;
  #session; // the page's model session (shared/model-session/session-client.js)
  #client = null; // the session, once started
  #starting = null;
  #typingRun = null;  // the run a keystroke started, while in flight
  #typedAgain = false;  // keys came in while it ran
  #runSeq = 0;
  #ablated = []; // [{ layer, head }]: the heads knocked out in the worker's model
  #gen = 0; // the generation running (a newer one, or Stop, ends it)
  #genStarted = 0;
  #stopped = 0; // the generation Stop ended
  #genDrawn = null; // { model, run, sampling }: what the generation drawn was written with
  #loadsDone = 0; // models loaded: the link's knocked-out heads apply to the first
  // A link made with a model from files ({ files, knock }): its view waits until the reader loads
  // files with those hashes; nothing of it is applied to another model meanwhile.
  #awaited = null;
  #cancelled = false; // Cancel was pressed during the load in flight
  // The id box's repo's files (lens.hubFiles, for the File menu): asked LIST_DELAY ms after the
  // typing stops, the request in flight cancelled by the next keystroke, each list kept for the
  // tab's life by endpoint, id and revision.
  #listTimer = null;
  #listing = null; // the AbortController of the listing in flight
  #listed = new Map(); // 'endpoint id@revision' -> [{ file, bytes }]

  /** A patch of the page's settings (the URL hash follows them). */
  #setSettings(patch) {
    const { settings } = this.#store.get();
    if (Object.entries(patch).every(([k, v]) => JSON.stringify(settings[k]) === JSON.stringify(v))) return;
    this.#store.update(({ settings: now }) => ({ settings: { ...now, ...patch } }));
  }

  /** Says `text` in the page's link notice, after what it says already (`replace`: instead). */
  #linkNotice(text, { replace = false } = {}) {
    const now = this.#store.get().linkNotice;
    if (!replace && now.includes(text)) return;
    this.#store.set({ linkNotice: replace || !now ? text : `${now} ${text}` });
  }

  /**
   * The link's knocked-out heads for a model just loaded (`type`: the load's kind): a link waiting for
   * its files gets them only on files with its hashes (then its view is restored and said so; other
   * files: said why not); otherwise the first model loaded gets those it has, the rest said to be
   * ignored. Later loads start with none.
   */
  async #linkKnock(model, type) {
    const name = modelNamed(model);
    if (this.#awaited) {
      if (type !== 'load') return [];
      const loaded = await linkFiles(model.weightsFiles);
      const { files, knock } = this.#awaited;
      if (!sameFiles(files, loaded)) {
        this.#linkNotice(`${filesText(loaded)} ${loaded.length === 1 ? 'is' : 'are'} not what this link was made with (${filesText(files)}): ` +
          'its knock-outs are not applied.', { replace: true });
        return [];
      }
      this.#awaited = null;
      const { kept, notice } = linkHeads(knock, model.config, name);
      this.#linkNotice(`Restored the link's view on ${filesText(loaded)}${kept.length ? `: ${headsText(kept)} knocked out` : ''}.` +
        `${notice ? ` ${notice}` : ''}`, { replace: true });
      return kept;
    }
    if (this.#loadsDone > 1) return [];
    const { kept, notice } = linkHeads(this.#store.get().settings.knock, model.config, name);
    if (notice) this.#linkNotice(notice);
    return kept;
  }

  /** Whether the loaded model is from the files a link names (by name and size: their hashes are checked when they load). */
  #showsFiles(files) {
    const model = this.view().model;
    return model?.source === 'files' && sameFiles(files.map((f) => ({ ...f, sha256: '' })),
      (model.weightsFiles ?? []).map((f) => ({ name: f.name, bytes: f.size, sha256: '' })));
  }

  /** A model from files: its weights' names, sizes and hashes into the link (once hashed, if it is still the one loaded). */
  async #filesIntoLink(model) {
    const files = await linkFiles(model.weightsFiles);
    if (this.view().model?.weightsFiles === model.weightsFiles) this.#setSettings({ files });
  }

  /** The settings' text and sampling settings into the fields (a link opened, or the view's first show). */
  #fieldsFromSettings(settings) {
    if ($('model-text').value !== settings.modelText) $('model-text').value = settings.modelText;
    const fields = { 'model-gen-tokens': settings.genTokens, 'model-gen-temperature': settings.genTemperature, 'model-gen-topk': settings.genTopK,
      'model-gen-topp': settings.genTopP, 'model-gen-seed': settings.genSeed };
    for (const [id, v] of Object.entries(fields)) if (Number($(id).value) !== v) $(id).value = String(v);
  }

  /** The fields' sampling settings into the page's settings (the URL). */
  #samplingToSettings() {
    const { maxTokens, temperature, topK, topP, seed } = this.#sampling();
    this.#setSettings({ genTokens: Math.min(4096, maxTokens), genTemperature: Math.min(100, temperature), genTopK: Math.min(1000000, topK),
      genTopP: topP, genSeed: seed });
  }

  constructor({ store, session }) {
    this.#store = store;
    this.#session = session;
    const { files, knock } = store.get().settings;
    if (files?.length) this.#awaited = { files, knock: knock ?? [] };
    session.onUpdate((update) => {
      if (update.step) this.#onToken(update);
      else if (update.progress !== undefined) drawProgress(update);
    });
    this.drawing = modelDrawing((layer, head) => this.#openInWalkthrough(layer, head), (layer, head) => this.#knock(layer, head));
    // The generation's figure: the model, run and sampling settings it was written with (kept when it started).
    this.generation = generationDrawing(() => ({ ...runProvenance('your model: generation', this.#genDrawn?.model, this.#genDrawn?.run),
      sampling: this.#genDrawn?.sampling }));
    // The strip's runs keep Hub files too: the view's list of kept files follows.
    this.training = new TrainingStrip({ session, onRunEnded: () => this.#client && this.#drawCache() });
    this.#wire();
  }

  /**
   * The view as a snapshot (api/snapshot.js): the text's run — every layer × head, the next tokens
   * (before → after with heads knocked out) — and the generation written after that text, with the
   * model's provenance (a file's SHA-256 computed now, once); for the Embed dialog.
   */
  async snapshot() {
    const { model, lastRun: run } = this.view();
    if (!model || !run) throw new Error('load a model and type some text first.');
    const steps = this.generation.steps();
    const generated = steps.length && JSON.stringify(this.generation.prompt()) === JSON.stringify(run.tokens) ? steps : [];
    const files = model.source === 'files' ? await weightsFileFacts(model.weightsFiles) : undefined;
    const view = this.generation.chosen();
    const settings = { view: 'your model', layer: view.layer + 1, head: view.head + 1,
      ...(run.ablated?.length ? { knockedOut: run.ablated.map((h) => `L${h.layer + 1}H${h.head + 1}`).join(' ') } : {}),
      ...(generated.length ? Object.fromEntries(Object.entries(this.#sampling()).map(([k, v]) => [`generate.${k}`, v])) : {}) };
    const snapshot = makeModelSnapshot({ run, config: model.config, view, generation: generated.length ? { steps: generated } : undefined,
      provenance: snapshotProvenance(model, { files, text: run.text, settings, version: PROJECT_VERSION }) });
    const { layers, heads } = model.config;
    const name = (model.source === 'shipped' ? model.name : model.source === 'hub' ? model.id : model.fileName).split('/').pop();
    return { snapshot, fileName: `${name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/\.safetensors$|\.gguf$/, '')}-attention.json`,
      what: `all ${layers * heads} heads (${layers} layers × ${heads}) on ${run.n} tokens${generated.length ? ` and ${generated.length} generated` : ''}` };
  }

  /** A head's "knock out" toggle: ablated (or restored) in the worker's model, then the text runs again. */
  #knock(layer, head) {
    const has = this.#ablated.some((h) => h.layer === layer && h.head === head);
    this.#ablate(has ? this.#ablated.filter((h) => h.layer !== layer || h.head !== head) : [...this.#ablated, { layer, head }]);
  }

  /** The worker's model ablated to `heads` ([]: restored), and the text's run drawn again. */
  async #ablate(heads, { loading = false } = {}) {
    if (!this.#client || !this.view().model || (this.view().loading && !loading)) return;
    this.#ablated = heads;
    this.#setSettings({ knock: heads });
    const mine = ++this.#runSeq;
    try {
      const run = await this.#client.call('ablate', { heads, text: $('model-text').value });
      if (mine !== this.#runSeq) return;
      this.#setView({ lastRun: run });
      setPageState({ modelRun: mine });
    } catch (error) {
      if (mine === this.#runSeq) textInfo(error.message, true);
    }
  }

  /** The sampling settings from the form (numbers; an empty or bad field: its default). */
  #sampling() {
    const num = (id, fallback) => {
      const v = Number($(id).value);
      return $(id).value !== '' && Number.isFinite(v) ? v : fallback;
    };
    return { maxTokens: Math.max(1, Math.round(num('model-gen-tokens', 32))), temperature: Math.max(0, num('model-gen-temperature', 0)),
      topK: Math.max(0, Math.round(num('model-gen-topk', 0))), topP: Math.min(1, Math.max(0.01, num('model-gen-topp', 1))),
      seed: Math.max(0, Math.round(num('model-gen-seed', 1))) >>> 0 };
  }

  /**
   * Generates after the typed text, GEN_CHUNK tokens per worker call (each token drawn as the
   * worker posts it); the chunk after the first continues from the text + the tokens so far with
   * the same seed (the core draws the token at each position from (seed, position) alone, so the
   * chunks write what one m.generate call writes). A newer Generate, Stop or a new model ends it
   * between calls.
   */
  async #generate() {
    if (!this.#client || !this.view().model || this.view().loading) return;
    const gen = ++this.#gen;
    const { maxTokens, temperature, topK, topP, seed } = this.#sampling();
    const text = $('model-text').value;
    showError(null);
    genRunning(true);
    // The prompt's tokens drawn are the text's run: run it first when the text changed since.
    if (this.view().lastRun?.text !== text) {
      await this.#runText();
    }
    const run = this.view().lastRun;
    if (run?.text !== text) {
      if (gen === this.#gen) genRunning(false);
      return;
    }
    const { config } = this.view().model;
    this.#genDrawn = { model: this.view().model, run, sampling: { maxTokens, temperature, topK, topP, seed } };
    this.generation.build(config.layers, config.heads);
    this.generation.start(run?.tokens ?? []);
    const began = performance.now();
    this.#genStarted = began;
    let why = '';
    let failed = null;
    try {
      while (gen === this.#gen && this.generation.count() < maxTokens) {
        const prefix = this.generation.ids();
        const reply = await this.#client.call('generate', { text, prefix, maxTokens: Math.min(GEN_CHUNK, maxTokens - prefix.length),
          temperature, topK, topP, seed, gen });
        if (reply.full) why = ` · the model's context (${config.context}) is full`;
        else if (reply.done) why = ' · stopped at an end-of-text token';
        if (reply.done) break;
      }
    } catch (error) {
      failed = `Could not generate: ${error.message}`;
    }
    if (gen !== this.#gen && !(this.#stopped === gen && this.#gen === gen + 1)) return;
    const count = this.generation.count();
    const seconds = (performance.now() - began) / 1000;
    if (failed) genInfo(failed, true);
    else {
      genInfo(`${count} token${count === 1 ? '' : 's'} in ${seconds.toFixed(2)} s · ${(count / seconds).toFixed(1)} tokens/s` +
        `${threadsNote(this.#client)}${this.#stopped === gen ? ' · stopped' : why}`);
    }
    genRunning(false);
    setPageState({ modelGenerated: gen });
  }

  /** A token the worker posted while generating (drawn when it belongs to the generation running). */
  #onToken({ gen, step }) {
    if (gen !== this.#gen) return;
    this.generation.add(step);
    const count = this.generation.count();
    const seconds = (performance.now() - this.#genStarted) / 1000;
    genInfo(`Writing… ${count} token${count === 1 ? '' : 's'} · ${(count / Math.max(seconds, 1e-3)).toFixed(1)} tokens/s`);
  }

  #stop() {
    this.#stopped = this.#gen;
    this.#gen += 1;
  }

  view() {
    return this.#store.get().yourModel;
  }

  #setView(patch) {
    this.#store.update(({ yourModel }) => ({ yourModel: { ...yourModel, ...patch } }));
  }

  /**
   * Whether a load may start: the worker is up (started now if need be; already set when start()
   * itself loads the first model) and no load is running (else `busy` is shown).
   */
  async #canLoad(busy) {
    if (!this.#client) await this.start();
    if (!this.#client) return false;
    if (this.view().loading) {
      showError(busy);
      return false;
    }
    return true;
  }

  /**
   * Dropped or picked files: a checkpoint read by the worker; then the text's run and the head
   * finder. Its line and errors go after `near` (where the files came in: file-drop.js).
   */
  async #load(files, near = $('model-drop')) {
    if (!files.length) return;
    placeLoadFeedback(near);
    if (!(await this.#canLoad('A model is still loading: drop the next one when it is done'))) return;
    const picked = await pickFiles(files);
    if (!picked) return;
    const { ignored, ...payload } = picked;
    const loaded = await this.#loadWith(filesLabel(picked.weights), 'load', payload,
      'Could not load the checkpoint', { counted: true, near, name: picked.gguf ? picked.weights.name : 'the weights' });
    // A config.json (or a companion) dropped with a .gguf: not read, and said so.
    if (loaded && ignored) {
      loadNote(`${ignored.join(', ')} ${ignored.length === 1 ? 'was' : 'were'} not read: a GGUF file's metadata holds its config.`);
    }
  }

  /**
   * A checkpoint by Hub id or repo URL (the id box or the list; `revision` and `linked`: a link's
   * hub and hubRevision): cancellable. Resolves to whether it loaded.
   */
  async #loadHub(text, { revision = '', file = '', linked = false } = {}) {
    placeLoadFeedback($('model-hub-form'));
    if (!(await this.#canLoad('A model is still loading: wait for it or cancel it'))) return false;
    const request = hubRequest(text, this.#store.get().settings.hubEndpoint, file);
    if (request.error) {
      showError(request.error);
      return false;
    }
    if (revision && revision !== 'main') request.revision = revision;
    // A GGUF file the Hub listed: its size as listed, for the status line (the same bytes as the File menu and the kept files).
    const listedBytes = request.file ? this.#listed.get(`${request.endpoint ?? ''} ${request.hub}@${request.revision ?? 'main'}`)
      ?.find((f) => f.file === request.file)?.bytes : undefined;
    const where = request.endpoint ?? (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(request.hub) ? '' : 'https://huggingface.co');
    return this.#loadWith(`${request.hub}${request.revision ? ` @ ${request.revision}` : ''}${request.file ? `, file ${request.file}` : ''}` +
      `${where ? ` from ${where}` : ''}` +
      `${linked ? ' (named in the link)' : ''}`, 'hub', request, `Could not load ${request.hub}`,
    { counted: true, cancellable: true, near: $('model-hub-form'), name: request.file ?? request.hub,
      known: listedBytes ? { fileBytes: listedBytes } : {} });
  }

  /**
   * The id box's repo's files listed for the File menu (draw.js's setHubListing): for an id or a
   * repo's URL that is not a listed repo, or is a listed GGUF repo; from the kept list at once,
   * else LIST_DELAY ms after the last keystroke (the one before it cancelled: its timer, its request).
   */
  #listRepoFiles() {
    clearTimeout(this.#listTimer);
    this.#listing?.abort();
    this.#listing = null;
    const text = $('model-hub-id').value.trim();
    const listed = hubEntry(text);
    const request = hubRequest(text, this.#store.get().settings.hubEndpoint);
    const url = /^https?:\/\/[^/?#]+\/([^?#]*?)\/*$/.exec(text);
    if (request.error || (listed && !listed.gguf) || !isHubId(url ? url[1] : text)) {
      setHubListing(null);
      return;
    }
    const options = { hub: request.hub, ...(request.endpoint ? { endpoint: request.endpoint } : {}) };
    const revision = chosenHubRevision() || 'main';
    if (revision !== 'main') options.revision = revision;
    const key = `${request.endpoint ?? ''} ${request.hub}@${revision}`;
    const id = listed?.id ?? text;
    if (this.#listed.has(key)) {
      setHubListing({ id, state: 'listed', files: this.#listed.get(key) });
      return;
    }
    setHubListing(null);
    this.#listTimer = setTimeout(async () => {
      const controller = new AbortController();
      this.#listing = controller;
      setHubListing({ id, state: 'listing' });
      try {
        const files = await listHubFiles({ ...options, signal: controller.signal });
        this.#listed.set(key, files);
        if (!controller.signal.aborted) setHubListing({ id, state: 'listed', files });
      } catch (error) {
        if (!controller.signal.aborted) setHubListing({ id, state: 'failed', message: error.message });
      } finally {
        if (this.#listing === controller) this.#listing = null;
        countPageState('modelHubListed');
      }
    }, LIST_DELAY);
  }

  /** A shipped trained model by name (`keepError`: the message shown stays, as when a link's Hub model failed). */
  async #loadShipped(name, { keepError = false } = {}) {
    if (!keepError) placeLoadFeedback($('model-trained'));
    if (!(await this.#canLoad('A model is still loading: wait for it or cancel it'))) return false;
    return this.#loadWith(`the shipped model ${name}`, 'trained', { name }, `Could not load the shipped model ${name}`,
      { keepError, near: keepError ? null : $('model-trained') });
  }

  /**
   * The link's Hub model (settings.hub, hubRevision, from hubEndpoint), loaded as the id box
   * would; the id box shows it. Resolves to whether it loaded.
   */
  async #loadLinkedHub() {
    const { hub, hubRevision: revision, hubFile: file = '' } = this.#store.get().settings;
    $('model-hub-id').value = hub;
    setHubFile(file);
    const loaded = await this.#loadHub(hub, { revision, file, linked: true });
    // Refused: the URL names the model still shown (if any) again.
    if (!loaded && this.view().model) this.#setSettings(this.#linkSettings(this.view().model));
    return loaded;
  }

  /**
   * The URL's hub, hubRevision, hubFile (a GGUF repo's file) and hubEndpoint (for a repo loaded by
   * its URL) for a loaded model: a Hub repo's id 'org/name', else '' (a shipped model or files).
   */
  #linkSettings(model) {
    // A model from files: its weights named (hashed a moment later, #filesIntoLink: the link's names kept
    // once hashed); any other: none.
    const named = model.source === 'files' && model.weightsFiles ? model.weightsFiles.map((f) => ({ name: f.name, bytes: f.size, sha256: '' })) : [];
    const now = this.#store.get().settings.files ?? [];
    const files = named.length && sameFiles(named, now.map((f) => ({ ...f, sha256: '' }))) && !this.#awaited ? now : named;
    return { files, ...this.#hubSettings(model) };
  }

  /** The URL's Hub keys for a loaded model (see #linkSettings). */
  #hubSettings(model) {
    if (model.source !== 'hub') return { hub: '', hubRevision: '', hubFile: '' };
    const hubRevision = model.revision && model.revision !== 'main' ? model.revision : '';
    const hubFile = model.file ?? '';
    if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(model.id)) return { hub: model.id, hubRevision, hubFile };
    // A repo's URL: its origin is the endpoint (the API's default is left out of the link).
    const url = new URL(model.id);
    const id = url.pathname.replace(/^\/+|\/+$/g, '');
    if (!isHubId(id)) return { hub: '', hubRevision: '', hubFile: '' };
    return { hub: id, hubRevision, hubFile, hubEndpoint: url.origin === 'https://huggingface.co' ? '' : url.origin };
  }

  /** Whether the loaded model is the Hub repo `settings` name (hub, hubRevision, hubEndpoint). */
  #showsLinked(settings) {
    const { model } = this.view();
    if (model?.source !== 'hub') return false;
    const now = this.#linkSettings(model);
    return now.hub === settings.hub && now.hubRevision === (settings.hubRevision || '') && now.hubFile === (settings.hubFile || '') &&
      (now.hubEndpoint ?? model.endpoint ?? '') === (settings.hubEndpoint || '');
  }

  /**
   * One load through the worker (request `type` with `payload`), its feedback after `near`: the
   * bar, then the model, its first run on the typed text and its head finder (still "preparing"),
   * and the URL's hub (hub, hubRevision: a Hub repo's, else none); a refusal shows `failed: message`
   * and keeps the model; a cancel says so (not as an error) and gives the focus back to Load.
   * `known`: facts the view knows of the model before it loads (a listed GGUF file's fileBytes).
   * Resolves to whether it loaded.
   */
  async #loadWith(what, type, payload, failed, { counted = false, cancellable = false, keepError = false, near = null, name = what,
    known = {} } = {}) {
    if (!keepError) showError(null);
    let loaded = false;
    this.#cancelled = false;
    this.#setView({ loading: true });
    drawLoading(what, { cancellable, near, name });
    try {
      const value = await this.#client.call(type, payload);
      this.#ablated = [];
      if (this.#loadsDone++ > 0 || this.#awaited) this.#setSettings({ knock: [] });
      this.#gen += 1; // a generation running ends: its tokens were another model's
      this.generation.clear();
      genRunning(false);
      genInfo('');
      // A model from files keeps its weights' File objects: a snapshot's provenance and the link hash them.
      const model = type === 'load' ? { ...value, weightsFiles: [payload.weights].flat() } : { ...value, ...known };
      this.#setView({ model, lastRun: null });
      this.#setSettings(this.#linkSettings(model));
      loaded = true;
      $('model-example').textContent = value.source === 'shipped' ? 'Example: a sentence of its alphabet' : 'Example: the IOI sentence';
      drawLoaded(model);
      this.training.modelLoaded(value);
      drawFirstRun();
      this.drawing.build(value.config);
      const wanted = await this.#linkKnock(model, type);
      if (type === 'load') this.#filesIntoLink(model);
      await Promise.all([wanted.length ? this.#ablate(wanted, { loading: true }) : this.#runText(), this.#findHeads()]);
      if (counted) countPageState('modelLoads');
    } catch (error) {
      if (this.#cancelled) {
        drawKept(this.view().model, { cancelled: true });
      } else {
        showError(`${failed}: ${error.message}`);
        drawKept(this.view().model);
      }
      if (!this.view().model) setFooter(this.#store, 'model', 'No model loaded.');
    } finally {
      this.#setView({ loading: false });
      drawLoadEnded({ loaded });
      // Cancel hid itself: the focus it had goes back to Load.
      if (this.#cancelled && (document.activeElement === document.body || document.activeElement === $('model-cancel') ||
        !document.activeElement)) $('model-hub-load').focus();
      this.#cancelled = false;
      if (type === 'hub') await this.#drawCache();
    }
    return loaded;
  }

  /** The Hub files this browser keeps, listed again (counted in the page state). */
  async #drawCache() {
    try {
      drawCache(await this.#client.call('cached'), (repo) => this.#uncache(repo), Boolean(this.view().loading));
    } catch (error) {
      showError(`Could not list the kept files: ${error.message}`);
    }
    countPageState('modelCache');
  }

  /** Forgets `repo`'s kept files (every repo's without one), then lists them again. */
  async #uncache(repo) {
    if (!this.#client || this.view().loading) return;
    showError(null);
    try {
      await this.#client.call('uncache', repo === undefined ? {} : { repo });
    } catch (error) {
      showError(`Could not remove the kept files: ${error.message}`);
    }
    await this.#drawCache();
  }

  async #cancel() {
    if (!this.#client || !this.view().loading) return;
    this.#cancelled = true;
    drawCancelling();
    try {
      await this.#client.call('cancel');
    } catch (error) {
      showError(error.message);
    }
  }

  /**
   * A keystroke: the text runs at once when no typed run is in flight, else once it ends — the
   * newest text then, one run however many keys came in between (no fixed delay, no queue).
   */
  #typed() {
    if (this.#typingRun) {
      this.#typedAgain = true;
      return;
    }
    this.#typingRun = this.#runText().finally(() => {
      this.#typingRun = null;
      if (this.#typedAgain) {
        this.#typedAgain = false;
        this.#typed();
      }
    });
  }

  /** The typed text through the model (drawn by drawRun when the store's lastRun changes). */
  async #runText() {
    if (!this.#client || !this.view().model) return;
    const mine = ++this.#runSeq;
    try {
      const run = await this.#client.call('run', { text: $('model-text').value });
      if (mine !== this.#runSeq) return;
      this.#setView({ lastRun: run });
      setPageState({ modelRun: mine });
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

  /**
   * A head into the walkthrough: a shipped model's layer and head on the typed text as the
   * walkthrough's own settings (a link that reproduces it); a checkpoint's layer with its real
   * input on the typed text, as the Train view does.
   */
  async #openInWalkthrough(layer, head) {
    if (!this.#client || !this.view().lastRun) return;
    const { model } = this.view();
    if (model.source === 'shipped') {
      this.#store.update(({ settings }) => ({ openedLayer: null,
        settings: { ...settings, model: model.name, layer, head, text: $('model-text').value, tab: 'walkthrough' } }));
      return;
    }
    try {
      const { family, config } = model;
      const opened = openLayer(await this.#client.call('layer', { layer }), { source: 'checkpoint', layer, head, family,
        modelConfig: { layers: config.layers, positional: config.positional, norm: config.norm } });
      this.#store.update(({ settings }) => ({ openedLayer: opened,
        settings: { ...settings, tab: 'walkthrough', head }, pinned: null }));
    } catch (error) {
      showError(error.message);
    }
  }

  /**
   * The worker, once (the first time the view is shown); then the pickers and, when no model is
   * loaded yet, the first shipped model (so the view is never empty).
   */
  start() {
    this.#starting ??= this.#session.start()
      .then(() => {
        const c = this.#session;
        this.#client = c;
        setPageState({ modelThreads: c.info.threads ?? 1 });
        const shipped = [...(c.info.trained ?? [])].sort((a, b) => (b.name === FIRST_MODEL) - (a.name === FIRST_MODEL));
        const { families, parameterBytes, limits } = c.info;
        drawPickers(shipped, { onShipped: (name) => this.#loadShipped(name),
          tab: { families, parameterBytes, maxParameterBytes: limits?.maxCheckpointParameterBytes } });
        this.#drawCache();
        if (this.view().model || this.view().loading) return undefined;
        // A link naming a Hub model loads it; the shipped model when there is none, or it failed
        // (its message stays), so the view is never empty.
        const linked = this.#store.get().settings.hub ? this.#loadLinkedHub() : Promise.resolve(false);
        return linked.then((ok) => (ok || this.view().model || !shipped.some((m) => m.name === FIRST_MODEL) ? undefined
          : this.#loadShipped(FIRST_MODEL, { keepError: true })));
      })
      .catch((error) => showError(`Could not start the model worker: ${error.message}`))
      .finally(() => {
        setPageState({ modelReady: true });
      });
    return this.#starting;
  }

  /** The Hub's menu, id box and Cancel, the file picker, files dropped on the tab, the text field and the store's runs. */
  #wire() {
    $('model-hub-form').addEventListener('submit', (e) => {
      e.preventDefault();
      // Load pressed: the file is chosen; a listing not asked yet is not needed.
      clearTimeout(this.#listTimer);
      this.#loadHub($('model-hub-id').value, { revision: chosenHubRevision(), file: chosenHubFile() });
    });
    // A listed model chosen: its id in the id box (the first line: the box emptied of a listed id),
    // its facts line and checkpoints' menu under the menu; typing an id chooses what it names.
    $('model-hub-pick').addEventListener('change', () => {
      const id = $('model-hub-pick').value;
      if (id || hubEntry($('model-hub-id').value)) $('model-hub-id').value = id;
      // A listed repo chosen: a file name typed for another repo is not its.
      if (id) $('model-hub-file').value = '';
      drawHubChoice();
      this.#listRepoFiles();
    });
    $('model-hub-id').addEventListener('input', () => {
      drawHubChoice();
      this.#listRepoFiles();
    });
    $('model-hub-file-pick').addEventListener('change', () => {
      drawHubChoice();
      if ($('model-hub-file-pick').value === '') $('model-hub-file').focus();
    });
    $('model-hub-file').addEventListener('input', () => drawHubChoice());
    $('model-cancel').addEventListener('click', () => this.#cancel());
    $('model-cache-clear').addEventListener('click', () => this.#uncache());
    wireFileDrop($('model-view'), (files, near) => this.#load(files, near)); // picked, or dropped anywhere on the tab
    $('model-restore').addEventListener('click', () => this.#ablate([]));
    embedSource('model', () => this.snapshot());
    $('model-embed').addEventListener('click', () => openEmbed(() => this.snapshot()));
    $('model-example').addEventListener('click', () => {
      $('model-text').value = this.view().model?.source === 'shipped' ? CHAR_EXAMPLE : IOI;
      this.#setSettings({ modelText: $('model-text').value });
      this.#runText();
    });
    $('model-gen-form').addEventListener('submit', (e) => {
      e.preventDefault();
      this.#generate();
    });
    $('model-gen-stop').addEventListener('click', () => this.#stop());
    $('model-gen-form').addEventListener('change', () => this.#samplingToSettings());
    this.#fieldsFromSettings(this.#store.get().settings);
    $('model-text').addEventListener('input', () => {
      this.#setSettings({ modelText: $('model-text').value });
      this.#typed();
    });
    this.#store.subscribe((now, before) => {
      // A link opened later (hashchange): its text, sampling settings and knocked-out heads.
      if (now.settings !== before.settings) {
        const s = now.settings;
        const textChanged = s.modelText !== $('model-text').value;
        this.#fieldsFromSettings(s);
        // A link naming another Hub model (hashchange): that model, its knocked-out heads with it.
        const hubChanged = ['hub', 'hubRevision', 'hubFile', 'hubEndpoint'].some((key) => s[key] !== before.settings[key]);
        // The generation written after another text (the link's text differs) is not this text's.
        if (textChanged) {
          this.#gen += 1;
          this.generation.clear();
          genRunning(false);
          genInfo('');
        }
        const { model } = this.view();
        if (hubChanged && s.hub && this.#client && !this.view().loading && model && !this.#showsLinked(s)) {
          this.#loadsDone = 0;
          this.#loadLinkedHub();
        } else if (hubChanged && !s.hub && model?.source === 'hub' && !this.view().loading) {
          // A link without a Hub id while a Hub model stays loaded: the URL names that model again.
          this.#setSettings(this.#linkSettings(model));
          if (textChanged) this.#runText();
        } else if (s.files?.length && JSON.stringify(s.files) !== JSON.stringify(before.settings.files ?? []) && !this.#showsFiles(s.files)) {
          // A link made with other files (hashchange): its view waits for them (main.js's link notice names them).
          this.#awaited = { files: s.files, knock: s.knock ?? [] };
          if (textChanged) this.#runText();
        } else if (JSON.stringify(s.knock) !== JSON.stringify(this.#ablated) && model && !this.#awaited && !this.view().loading) {
          // Only a link changes the heads from outside: those the model lacks are said to be ignored.
          const { kept, notice } = linkHeads(s.knock, model.config, modelNamed(model));
          if (notice) this.#linkNotice(notice);
          this.#ablate(kept);
        } else if (textChanged) this.#runText();
      }
      const { lastRun, model } = now.yourModel;
      if (lastRun && lastRun !== before.yourModel.lastRun) {
        this.drawing.drawRun(lastRun, model);
        setFooter(this.#store, 'model', footerLine(lastRun, model, this.#client?.info));
      }
    });
  }
}

/**
 * @param {{store: object, session: import('../../shared/model-session/session-client.js').ModelSession}} context
 * @returns {{render: () => void, activate: () => void}}
 */
export function mountModel(context) {
  const controller = new ModelController(context);
  return {
    render() {
      const { lastRun } = controller.view();
      if (lastRun) controller.drawing.drawHeads(lastRun);
      controller.generation.redraw();
      controller.training.redraw();
    },
    activate() {
      controller.start();
    },
  };
}
