// The model session's work, over the JS API (no worker, no DOM: tests/js runs it in node): the one
// loaded model — a shipped trained model, or a checkpoint from files or by Hugging Face id — and
// what any view asks of it: the typed text's run (every layer's attention, the next tokens, and with
// heads knocked out the whole model's next tokens beside them), knocking heads out, generation in
// chunks, head scores, one layer as a standalone attention layer, and the Circuits view's prompts,
// answers and analyses (session-circuits.js). session-worker.js serves it in a
// Web Worker; session-client.js is the page's side. A refused or cancelled load keeps the previous
// model. Every number comes from the API.
import { CircuitAnalyses } from './session-circuits.js';

/** The top next tokens a run shows. */
export const TOP = 10;
/** How many next tokens are read for the before → after comparison (all of a small vocabulary). */
export const COMPARE = 2000;

/** The first of the shards' names in name order (they are read in the index's order). */
const firstByName = (files) => files.map((f) => f.name).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))[0];

export class SessionModel {
  #lens;
  #post;
  #current = null; // { model, trained: boolean, run: { ids, tokens }, circuits: CircuitAnalyses }
  #hubLoad = null; // the AbortController of the Hub load in flight

  /**
   * @param {object} lens the loaded API (loadAttentionLens)
   * @param {(update: object) => void} post sends an update to the page: a load's progress
   *   { progress, phase, fraction } or a generated token { gen, step }
   */
  constructor(lens, post) {
    this.#lens = lens;
    this.#post = post;
  }

  /** What the page learns once: the build, its threads and limits, the shipped models. */
  info() {
    const lens = this.#lens;
    const trained = lens.trainedModels.map((name) => {
      const info = lens.trainedModelInfo(name);
      return { name, title: info.title, bytes: info.bytes };
    });
    const { limits, families, parameterBytes } = lens.catalog;
    return { simd: lens.simd, threads: lens.threads, limits, families, parameterBytes, trained };
  }

  // The load's progress: the bytes so far (progress) and what it does now (phase 'download' or
  // 'prepare', and that phase's own fraction; a Hub download also its bytes: received of total).
  #onProgress = (progress, now) => this.#post({ progress, phase: now?.phase ?? 'prepare', fraction: now?.fraction ?? progress,
    ...(now?.total !== undefined ? { received: now.received, total: now.total } : {}) });

  /** The name people know a family by (lens.catalog.families' displayName). */
  #familyName(family) {
    return this.#lens.catalog.families.find((f) => f.name === family)?.displayName ?? family;
  }

  /** `model` becomes the loaded one (the previous one freed). */
  #keep(model, trained) {
    this.#current?.model.dispose();
    this.#current = { model, trained, run: null, circuits: new CircuitAnalyses(model, trained, (text) => this.#tokenized(model, text)) };
  }

  /**
   * What the loaded checkpoint's weights are, for the page: { weights: m.weights ({ formats, bytes }),
   * dequantized: the stored types the core dequantizes to float32 at load (those not in
   * lens.catalog.parameterBytes: GGUF's quantized ones today) }.
   */
  #weightsOf(model) {
    const formats = { ...(model.weights?.formats ?? {}) };
    const kept = this.#lens.catalog.parameterBytes;
    return { weights: { formats, bytes: model.weights?.bytes ?? 0 }, dequantized: Object.keys(formats).filter((t) => kept[t] === undefined) };
  }

  /**
   * Files dropped or picked: { weights (a File, or the shards' Files in order), config?, tokenizer?,
   * vocab?, merges?, gguf? } (Files), handed to the API as their text: the core parses and checks
   * them. A GGUF file (gguf: true; weights one .gguf File) needs no config: its metadata holds it and
   * its tokenizer (a tokenizer given is used instead); a config given with it is refused by the API.
   */
  async load({ weights, config, tokenizer, vocab, merges, gguf = false }) {
    if (!weights || (!config && !gguf)) throw new Error('choose model.safetensors and config.json, or one .gguf file');
    if ((vocab || merges) && !(vocab && merges)) throw new Error('a tokenizer given as files needs both vocab.json and merges.txt');
    const tokenizerText = tokenizer ? await tokenizer.text() : vocab ? { vocab: await vocab.text(), merges: await merges.text() } : undefined;
    const model = await this.#lens.loadCheckpoint({ weights, ...(config ? { config: await config.text() } : {}), tokenizer: tokenizerText,
      onProgress: this.#onProgress });
    this.#keep(model, false);
    const shards = Array.isArray(weights) ? weights : [weights];
    return { source: 'files', family: model.family, familyName: this.#familyName(model.family), config: { ...model.config }, fileBytes: shards.reduce((sum, f) => sum + f.size, 0),
      fileName: shards.length === 1 ? shards[0].name : `${firstByName(shards)} + ${shards.length - 1} more shard${shards.length > 2 ? 's' : ''}`,
      container: gguf ? 'GGUF' : null, ...this.#weightsOf(model), memory: this.#lens.memory(), tokenizer: model.hasTokenizer };
  }

  /** A shipped trained model by name (lens.trainedModels), its weights from models/ beside the module. */
  async trained({ name }) {
    const model = await this.#lens.trainedModel(String(name));
    this.#keep(model, true);
    const { info } = model;
    return { source: 'shipped', name: info.name, title: info.title, config: { ...model.config }, fileBytes: info.bytes,
      memory: this.#lens.memory(), tokenizer: true };
  }

  /**
   * A checkpoint by Hugging Face id or repo URL (endpoint: a mirror; revision: undefined is main;
   * file: a GGUF repo's .gguf file, fetched alone: its metadata is the config).
   */
  async hub({ hub: id, endpoint, revision, file }) {
    if (this.#hubLoad) throw new Error('a Hub load is already running');
    this.#hubLoad = new AbortController();
    try {
      const model = await this.#lens.loadCheckpoint({ hub: id, ...(endpoint ? { endpoint } : {}), ...(revision ? { revision } : {}),
        ...(file !== undefined ? { file } : {}), onProgress: this.#onProgress, signal: this.#hubLoad.signal });
      this.#keep(model, false);
      return { source: 'hub', id, endpoint: endpoint ?? null, revision: revision ?? 'main', file: file ?? null, family: model.family,
        familyName: this.#familyName(model.family), config: { ...model.config }, container: file !== undefined ? 'GGUF' : null,
        ...this.#weightsOf(model), memory: this.#lens.memory(), tokenizer: model.hasTokenizer };
    } finally {
      this.#hubLoad = null;
    }
  }

  /** Aborts the Hub load in flight; whether there was one. */
  cancel() {
    this.#hubLoad?.abort();
    return Boolean(this.#hubLoad);
  }

  /** The Hub files kept in Cache Storage, one entry per repo: [{ repo, revisions, bytes, files }], by repo id. */
  async cached() {
    const byRepo = new Map();
    for (const { repo, revision, bytes } of await this.#lens.hubCache().list()) {
      const entry = byRepo.get(repo) ?? { repo, revisions: [], bytes: 0, files: 0 };
      if (!entry.revisions.includes(revision)) entry.revisions.push(revision);
      entry.bytes += bytes;
      entry.files += 1;
      byRepo.set(repo, entry);
    }
    return [...byRepo.values()].sort((a, b) => a.repo.localeCompare(b.repo));
  }

  /** Forgets a repo's (or every) kept file. */
  uncache({ repo }) {
    return this.#lens.hubCache().remove(repo ?? undefined);
  }

  #need() {
    if (!this.#current) throw new Error('no model loaded yet');
    return this.#current.model;
  }

  /** A generated or predicted token's text: a trained model's vocabulary character, a checkpoint's text, else `#id`. */
  #tokenText(model, id, token) {
    if (token !== null && token !== undefined) return token;
    return (this.#current.trained ? model.vocabulary[id] : undefined) ?? `#${id}`;
  }

  /** The text's ids as the model reads it (a shipped model in its alphabet), cut to the context. */
  #tokenized(model, text) {
    // A shipped model reads text in its alphabet, a character outside it mapped (and said so).
    const all = this.#current.trained ? model.tokenize(text, { unknown: 'map' }) : model.tokenize(text);
    if (all.ids.length === 0) throw new Error('type some text');
    const n = Math.min(all.ids.length, model.config.context);
    return { all, n, ids: all.ids.slice(0, n) };
  }

  /**
   * The typed text through the model (with its knocked-out heads): tokens, every layer's
   * attention, the top next tokens, the forward's time in ms (computeMs), how many forwards it ran
   * (one; two with heads knocked out: the whole model's beside); with heads knocked out also each
   * listed token's probability both ways (`compare`: [{ id, token, before, after }], the biggest
   * movers first; a probability outside the COMPARE most likely is null).
   */
  run({ text }) {
    const model = this.#need();
    const { all, n, ids } = this.#tokenized(model, text);
    const ablated = model.ablated;
    const k = ablated.length ? Math.min(COMPARE, model.config.vocab) : TOP;
    const began = performance.now();
    const { attention, next } = model.forward(ids, { n, logits: 'last', next: k });
    const computeMs = performance.now() - began;
    const top = next.slice(0, TOP).map((t) => ({ ...t, token: this.#tokenText(model, t.id, t.token) }));
    let compare = null;
    let before = null;
    if (ablated.length) {
      before = model.forward(ids, { n, logits: 'last', ablate: [], next: k }).next;
      const byId = (list) => new Map(list.map((t) => [t.id, t.probability]));
      const b = byId(before);
      const a = byId(next);
      const listed = new Set([...before.slice(0, TOP), ...next.slice(0, TOP)].map((t) => t.id));
      const tokenOf = new Map([...before, ...next].map((t) => [t.id, t.token]));
      compare = [...listed].map((id) => ({ id, token: this.#tokenText(model, id, tokenOf.get(id)), before: b.get(id) ?? null, after: a.get(id) ?? null }))
        .sort((x, y) => Math.abs((y.after ?? 0) - (y.before ?? 0)) - Math.abs((x.after ?? 0) - (x.before ?? 0)) || x.id - y.id);
    }
    this.#current.run = { ids, tokens: all.tokens.slice(0, n) };
    const mapped = (all.mapped ?? []).filter((m) => m.position < n);
    return { text, tokens: all.tokens.slice(0, n), ids: Array.from(ids), n, cut: all.ids.length - n, attention, top, mapped,
      note: all.note ?? '', ablated, compare, compareFloor: before ? before[before.length - 1].probability : null, computeMs,
      forwards: ablated.length ? 2 : 1 };
  }

  /** Knocks out `heads` ([{ layer, head }]; [] restores every head), then runs the text again. */
  ablate({ heads, text }) {
    this.#need().ablate(heads.map(({ layer, head }) => ({ layer: Number(layer), head: Number(head) })));
    return this.run({ text });
  }

  /**
   * One chunk of a generation ({ text, prefix: ids generated so far, maxTokens, temperature, topK,
   * topP, seed, gen }): the text's ids + prefix through m.generate (with the knocked-out heads);
   * each step is posted as an update { gen, step } as it is produced, and the chunk's reply is
   * { steps: count, done: a stop id or the context reached, full }. The page asks for the next
   * chunk, so Stop and a newer request take effect between chunks and the worker never runs long.
   */
  generate({ text, prefix = [], maxTokens, temperature, topK, topP, seed, gen }) {
    const model = this.#need();
    const { ids: promptIds } = this.#tokenized(model, text);
    const ids = Int32Array.from([...promptIds, ...prefix]);
    const room = model.config.context - ids.length;
    if (room <= 0) return { steps: 0, done: true, full: true };
    const count = Math.max(1, Math.min(Number(maxTokens), room));
    let last = null;
    const g = model.generate(ids, { maxTokens: count, temperature, topK, topP, seed, onToken: (step) => {
      last = step;
      this.#post({ gen, step: { id: step.id, token: this.#tokenText(model, step.id, step.token), probability: step.probability,
        attention: step.attention } });
    } });
    const stopped = g.ids.length < count || (last && (model.eos ?? []).includes?.(last.id));
    return { steps: g.ids.length, done: Boolean(stopped) || count >= room, full: count >= room };
  }

  /** Every head's scores on the core's probe for the model (seeded random tokens, repeated once). */
  scores() {
    const model = this.#need();
    return { probeLength: model.probe().n, scores: model.headScores() };
  }

  /**
   * Layer `layer` on the last run's text (or on `text`, when given: the Circuits view's clean
   * prompt) as a standalone attention layer (for the walkthrough).
   */
  layer({ layer, text }) {
    const model = this.#need();
    if (typeof text === 'string') {
      const { all, n, ids } = this.#tokenized(model, text);
      return { ...model.attentionLayer(layer, ids, { n }), ids: Array.from(ids), tokens: all.tokens.slice(0, n), probe: text, step: 0 };
    }
    if (!this.#current.run) throw new Error('no text run yet');
    const { ids, tokens } = this.#current.run;
    const value = model.attentionLayer(layer, ids, { n: ids.length });
    return { ...value, ids: Array.from(ids), tokens, probe: tokens.join(''), step: 0 };
  }

  // ---- the Circuits view (session-circuits.js) ----

  #circuits() {
    this.#need();
    return this.#current.circuits;
  }

  /** The clean and corrupted prompts: each { tokens, ids, n, next } or { error } (one refused leaves the other). */
  circuitPrompts({ clean, corrupted }) {
    const read = (text) => {
      try {
        return this.#circuits().prompt(String(text));
      } catch (error) {
        if (error.message === 'no model loaded yet') throw error;
        return { text: String(text), error: error.message };
      }
    };
    return { clean: read(clean), corrupted: read(corrupted) };
  }

  /** Each answer text ([a, b]) as one token id: [{ id, text } | { error }]. */
  circuitAnswers({ answers }) {
    return answers.map((text) => {
      try {
        return this.#circuits().answer(text);
      } catch (error) {
        if (error.message === 'no model loaded yet') throw error;
        return { error: error.message };
      }
    });
  }

  /** How the model's tokenizer reads each word preset ({ name: { clean, corrupted, answers } }), by name (session-circuits.js spell). */
  circuitPresetFit({ presets }) {
    const c = this.#circuits();
    return Object.fromEntries(Object.entries(presets).map(([name, preset]) => [name, c.spell(preset)]));
  }

  /** The induction preset's prompts and answers (seeded repeated random tokens). */
  circuitInduction({ seed = 1 }) {
    return this.#circuits().induction(Number(seed));
  }

  /**
   * One analysis of the Circuits view: kind 'lens' {text, token}, 'rollout' {text}, 'attribution'
   * {text, answers}, 'heads' | 'residual' | 'layers' (patching) {clean, corrupted, answers},
   * 'head' {text, layer, head} (one head's attention). With the heads knocked out in the model.
   */
  circuit({ kind, text, clean, corrupted, answers, token, layer, head }) {
    const c = this.#circuits();
    const began = performance.now();
    let value;
    if (kind === 'lens') value = c.logitLens(text, { token });
    else if (kind === 'rollout') value = c.rollout(text);
    else if (kind === 'attribution') value = c.attribute(text, answers);
    else if (kind === 'heads' || kind === 'residual' || kind === 'layers') value = c.patch(clean, corrupted, answers, kind);
    else if (kind === 'head') value = c.headPattern(text, Number(layer), Number(head));
    else throw new Error(`unknown analysis '${String(kind).slice(0, 40)}'`);
    return { kind, ...value, ablated: this.#current.model.ablated, computeMs: performance.now() - began };
  }

  /** The loaded model (for the session's tests and its analyses). */
  get model() {
    return this.#current?.model ?? null;
  }
}
