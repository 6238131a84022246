// The "Your model" view's Web Worker: owns the loaded model (a shipped trained model,
// lens.trainedModel; or a GPT-2 or Llama-family checkpoint, lens.loadCheckpoint, from files or by
// Hub id) so a 500 MB file is read and run off the page's thread. Requests {id, type}: 'init'
// {moduleUrl}, 'trained' {name}, 'load' {weights (a File, or the shards' Files in order), config,
// tokenizer?, vocab?, merges?} (Files), 'hub' {hub,
// endpoint?, revision?}, 'cancel' (aborts the Hub load in flight), 'cached' (the Hub files this browser keeps,
// lens.hubCache, by repo), 'uncache' {repo?} (forgets a repo's, or every, kept file), 'run' {text},
// 'scores', 'layer' {layer}, 'ablate' {heads, text} (then the run, with the unablated model's next
// tokens beside), 'generate' {text, prefix, maxTokens, temperature, topK, topP, seed, gen} (one
// chunk; each token posted as an update {gen, step} while it is produced).
// Replies {id, ok, value | error}; while loading, updates {type: 'update', update: {progress, phase, fraction}}.
// A refused or cancelled load keeps the previous model. Every number comes from the API.
import { serveRequests } from '../../shared/worker-loop.js';

const TOP = 10;

let lens = null;
let current = null; // { model, trained: boolean, run: { ids, tokens } }
let hubLoad = null; // the AbortController of the Hub load in flight

// The load's progress: the bytes so far (progress) and what it does now (phase 'download' or
// 'prepare', and that phase's own fraction).
const onProgress = (progress, now) => self.postMessage({ type: 'update',
  update: { progress, phase: now?.phase ?? 'prepare', fraction: now?.fraction ?? progress } });

async function json(file, what) {
  try {
    return JSON.parse(await file.text());
  } catch (error) {
    throw new Error(`${what} (${file.name}) is not valid JSON: ${error.message}`);
  }
}

/** The tokenizer loadCheckpoint takes, from tokenizer.json or vocab.json + merges.txt. */
async function tokenizerOf({ tokenizer, vocab, merges }) {
  if (tokenizer) return json(tokenizer, 'tokenizer.json');
  if (vocab && merges) return { vocab: await json(vocab, 'vocab.json'), merges: await merges.text() };
  if (vocab || merges) throw new Error('a tokenizer given as files needs both vocab.json and merges.txt');
  return undefined;
}

/** The first of the shards' names in name order (they are read in the index's order). */
const firstByName = (files) => files.map((f) => f.name).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))[0];

async function load(message) {
  if (!message.weights || !message.config) throw new Error('choose model.safetensors and config.json');
  const config = await json(message.config, 'config.json');
  const tokenizer = await tokenizerOf(message);
  const model = await lens.loadCheckpoint({ weights: message.weights, config, tokenizer, onProgress });
  keep(model, false);
  const shards = Array.isArray(message.weights) ? message.weights : [message.weights];
  return { source: 'files', family: model.family, config: { ...model.config }, fileBytes: shards.reduce((sum, f) => sum + f.size, 0),
    fileName: shards.length === 1 ? shards[0].name : `${firstByName(shards)} + ${shards.length - 1} more shard${shards.length > 2 ? 's' : ''}`,
    memory: lens.memory(), tokenizer: model.hasTokenizer };
}

/** `model` becomes the loaded one (the previous one freed). */
function keep(model, trained) {
  current?.model.dispose();
  current = { model, trained, run: null };
}

/** A shipped trained model by name (lens.trainedModels), its weights from models/ beside the module. */
async function trained(name) {
  const model = await lens.trainedModel(String(name));
  keep(model, true);
  const { info } = model;
  return { source: 'shipped', name: info.name, title: info.title, config: { ...model.config }, fileBytes: info.bytes,
    memory: lens.memory(), tokenizer: true };
}

/** A checkpoint by Hugging Face id or repo URL (endpoint: a mirror; undefined: the API's default; revision: undefined is main). */
async function hub({ hub: id, endpoint, revision }) {
  if (hubLoad) throw new Error('a Hub load is already running');
  hubLoad = new AbortController();
  try {
    const model = await lens.loadCheckpoint({ hub: id, ...(endpoint ? { endpoint } : {}), ...(revision ? { revision } : {}), onProgress,
      signal: hubLoad.signal });
    keep(model, false);
    return { source: 'hub', id, endpoint: endpoint ?? null, revision: revision ?? 'main', family: model.family, config: { ...model.config },
      memory: lens.memory(), tokenizer: model.hasTokenizer };
  } finally {
    hubLoad = null;
  }
}

/** The Hub files kept in Cache Storage, one entry per repo: [{ repo, revisions, bytes, files }], by repo id. */
async function cached() {
  const byRepo = new Map();
  for (const { repo, revision, bytes } of await lens.hubCache().list()) {
    const entry = byRepo.get(repo) ?? { repo, revisions: [], bytes: 0, files: 0 };
    if (!entry.revisions.includes(revision)) entry.revisions.push(revision);
    entry.bytes += bytes;
    entry.files += 1;
    byRepo.set(repo, entry);
  }
  return [...byRepo.values()].sort((a, b) => a.repo.localeCompare(b.repo));
}

function need() {
  if (!current) throw new Error('no model loaded yet');
  return current.model;
}

/** A generated or predicted token's text: a trained model's vocabulary character, a checkpoint's text, else `#id`. */
function tokenText(model, id, token) {
  if (token !== null && token !== undefined) return token;
  return (current.trained ? model.vocabulary[id] : undefined) ?? `#${id}`;
}

/** The text's ids as the model reads it (a shipped model in its alphabet), cut to the context. */
function tokenized(model, text) {
  // A shipped model reads text in its alphabet, a character outside it mapped (and said so).
  const all = current.trained ? model.tokenize(text, { unknown: 'map' }) : model.tokenize(text);
  if (all.ids.length === 0) throw new Error('type some text');
  const n = Math.min(all.ids.length, model.config.context);
  return { all, n, ids: all.ids.slice(0, n) };
}

/** How many next tokens are read for the before → after comparison (all of a small vocabulary). */
const COMPARE = 2000;

/**
 * The typed text through the model (with its ablated heads): tokens, every layer's attention, the
 * top next tokens, the forward's time in ms (computeMs); with heads ablated, also `before`: the unablated model's top next tokens, and
 * each listed token's probability both ways (`compare`: [{ id, token, before, after }], the
 * biggest movers first; a probability outside the COMPARE most likely is null).
 */
function run(text) {
  const model = need();
  const { all, n, ids } = tokenized(model, text);
  const ablated = model.ablated;
  let compare = null;
  let before = null;
  if (ablated.length) {
    const k = Math.min(COMPARE, model.config.vocab);
    model.ablate([]);
    model.forward(ids, { n, logits: 'last' });
    before = model.nextTokens(k);
    model.ablate(ablated);
    model.forward(ids, { n, logits: 'last' });
    const after = model.nextTokens(k);
    const byId = (list) => new Map(list.map((t) => [t.id, t.probability]));
    const b = byId(before);
    const a = byId(after);
    const listed = new Set([...before.slice(0, TOP), ...after.slice(0, TOP)].map((t) => t.id));
    const tokenOf = new Map([...before, ...after].map((t) => [t.id, t.token]));
    compare = [...listed].map((id) => ({ id, token: tokenText(model, id, tokenOf.get(id)), before: b.get(id) ?? null, after: a.get(id) ?? null }))
      .sort((x, y) => Math.abs((y.after ?? 0) - (y.before ?? 0)) - Math.abs((x.after ?? 0) - (x.before ?? 0)) || x.id - y.id);
  }
  const began = performance.now();
  const { attention } = model.forward(ids, { n, logits: 'last' });
  const computeMs = performance.now() - began;
  const top = model.nextTokens(TOP).map((t) => ({ ...t, token: tokenText(model, t.id, t.token) }));
  current.run = { ids, tokens: all.tokens.slice(0, n) };
  const mapped = (all.mapped ?? []).filter((m) => m.position < n);
  return { text, tokens: all.tokens.slice(0, n), ids: Array.from(ids), n, cut: all.ids.length - n, attention, top, mapped,
    note: all.note ?? '', ablated, compare, compareFloor: before ? before[before.length - 1].probability : null, computeMs };
}

/** Ablates `heads` ([{ layer, head }]; [] restores every head), then runs the text again. */
function ablate({ heads, text }) {
  const model = need();
  model.ablate(heads.map(({ layer, head }) => ({ layer: Number(layer), head: Number(head) })));
  return run(text);
}

/**
 * One chunk of a generation ({ text, prefix: ids generated so far, maxTokens, temperature, topK,
 * topP, seed, gen }): the text's ids + prefix through m.generate (the ablated model); each step is
 * posted as an update {gen, step} from onToken as it is produced, and the chunk's reply is
 * { steps: count, done: a stop id or the context reached }. The page asks for the next chunk, so
 * Stop and a newer request take effect between chunks and the worker never runs long.
 */
function generate({ text, prefix = [], maxTokens, temperature, topK, topP, seed, gen }) {
  const model = need();
  const { ids: promptIds } = tokenized(model, text);
  const ids = Int32Array.from([...promptIds, ...prefix]);
  const room = model.config.context - ids.length;
  if (room <= 0) return { steps: 0, done: true, full: true };
  const count = Math.max(1, Math.min(Number(maxTokens), room));
  let last = null;
  const g = model.generate(ids, { maxTokens: count, temperature, topK, topP, seed, onToken(step) {
    last = step;
    self.postMessage({ type: 'update', update: { gen, step: { id: step.id, token: tokenText(model, step.id, step.token), probability: step.probability,
      attention: step.attention } } });
  } });
  const stopped = g.ids.length < count || (last && (model.eos ?? []).includes?.(last.id));
  return { steps: g.ids.length, done: Boolean(stopped) || count >= room, full: count >= room };
}

/** Every head's scores on the core's probe for the model (seeded random tokens, repeated once). */
function scores() {
  const model = need();
  return { probeLength: model.probe().n, scores: model.headScores() };
}

/** Layer `layer` on the typed text as a standalone attention layer (for the walkthrough). */
function layer(index) {
  const model = need();
  if (!current.run) throw new Error('no text run yet');
  const { ids, tokens } = current.run;
  const value = model.attentionLayer(index, ids, { n: ids.length });
  return { ...value, ids: Array.from(ids), tokens, probe: tokens.join(''), step: 0 };
}

serveRequests({
  ready: () => Boolean(lens),
  notReady: 'the module is still loading',
  handlers: {
    async init(message) {
      const api = await import(/* @vite-ignore */ message.moduleUrl);
      // Threads where the page is cross-origin isolated (a real model's forward splits over them).
      lens = await api.loadAttentionLens({ threads: 'auto' });
      const shipped = lens.trainedModels.map((name) => {
        const info = lens.trainedModelInfo(name);
        return { name, title: info.title, bytes: info.bytes };
      });
      return { simd: lens.simd, threads: lens.threads, limits: lens.catalog.limits, trained: shipped };
    },
    load,
    trained: (message) => trained(message.name),
    hub,
    cancel() {
      hubLoad?.abort();
      return Boolean(hubLoad);
    },
    cached,
    uncache: (message) => lens.hubCache().remove(message.repo ?? undefined),
    run: (message) => run(message.text),
    ablate,
    generate,
    scores,
    layer: (message) => layer(message.layer),
  },
  transferables: (value) => (value?.attention ?? []).map((a) => a.buffer),
});
