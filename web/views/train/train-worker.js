// The Train view's Web Worker: owns the model and trainer (the JS API's createModel /
// createTrainer) and trains in chunks of a few steps, so the page never waits on a step. After
// every chunk it posts an update: { step, loss, heldOutLoss, accuracy, scores (model.headScores
// on the core's induction probe), probe attention (one [heads·n·n] per layer) }. Between chunks it
// answers the page's requests: {id, type} with type 'init' {moduleUrl, threads}, 'configure' {config},
// 'run', 'pause', 'step', 'probe' {text}, 'ablate', 'save', 'load' {bytes}. Replies:
// {id, ok, value | error}; updates: {type: 'update', update}; a diverged run: {type: 'diverged',
// error}. Nothing here computes attention: every number comes from the API.
import { serveRequests } from '../../shared/worker-loop.js';

const CHUNK_MS = 120; // aim for a chunk of steps this long, then report and read messages
const MAX_CHUNK_MS = 300; // … and at most this long (the page's requests wait for a chunk)
const OVERHEAD_SHARE = 0.25; // at most this share of a chunk spent on evaluation and reports
const HELD_OUT = 64; // held-out sequences (evaluated once after every chunk)

let lens = null;
let model = null;
let trainer = null;
let probe = { text: '', ids: new Int32Array(0) };
let running = false;
let chunk = 1; // steps per chunk, adapted to CHUNK_MS
let last = null; // the last report { step, loss, heldOutLoss, accuracy }

/** The task's vocabulary, read from a throw-away trainer (the model's vocab must hold it). */
function vocabularyOf(task, context) {
  const probeModel = lens.createModel({ vocab: lens.catalog.limits.maxModelVocab, context, dModel: 4, heads: 1, layers: 1 });
  try {
    return lens.createTrainer(probeModel, { task, heldOut: 1 }).task.vocabulary;
  } finally {
    probeModel.dispose();
  }
}

/**
 * A fresh model and trainer for config { task, layers, heads, dModel, context, lr, batch, seed,
 * probe }; a probe the task cannot encode leaves no probe and its message in probeError.
 */
function configure(config) {
  running = false;
  model?.dispose();
  model = null;
  trainer = null;
  last = null;
  chunk = 1;
  probe = { text: '', ids: new Int32Array(0) };
  const vocabulary = vocabularyOf(config.task, config.context);
  model = lens.createModel({ vocab: vocabulary.length, context: config.context, dModel: config.dModel,
    heads: config.heads, layers: config.layers, positional: 'learned', layerNorm: true, mlp: false,
    tied: false, bias: true, seed: config.seed });
  trainer = lens.createTrainer(model, { task: config.task, lr: config.lr, batch: config.batch, seed: config.seed,
    weightDecay: 0.01, clip: 1, heldOut: HELD_OUT });
  let probeError = null;
  try {
    setProbe(config.probe);
  } catch (error) {
    probeError = error.message;
  }
  return { vocabulary, modelConfig: { ...model.config }, probeError, update: snapshot() };
}

/** The probe's ids (throws the API's message for a character outside the task's vocabulary). */
function setProbe(text) {
  const ids = trainer.encode(text).slice(0, model.config.context);
  if (ids.length < 2) throw new Error('the probe needs at least 2 characters');
  probe = { text: trainer.decode(ids), ids };
  return snapshot();
}

/** What the page draws now: the last report, every head's scores, the probe's attention. */
function snapshot() {
  const update = { step: trainer.steps, report: last, scores: model.headScores(), chunk };
  if (probe.ids.length) {
    const { attention } = model.forward(probe.ids, { n: probe.ids.length, logits: 'last' });
    Object.assign(update, { probe: probe.text, n: probe.ids.length, attention });
  }
  return update;
}

function post(update) {
  self.postMessage({ type: 'update', update }, (update.attention ?? []).map((a) => a.buffer));
}

/**
 * Runs `steps` steps (one chunk), then evaluates the held-out set once; false when it diverged
 * (the error is posted). The next chunk's size: at least CHUNK_MS of steps, and at least
 * OVERHEAD_SHARE⁻¹ times the chunk's fixed cost (the held-out evaluation and the report), so on a
 * loaded machine the reports do not eat the training time.
 */
function train(steps) {
  const started = performance.now();
  let trained;
  try {
    trained = trainer.step(steps, { evaluate: false });
  } catch (error) {
    running = false;
    self.postMessage({ type: 'diverged', error: error?.message ?? String(error) });
    return false;
  }
  const stepped = performance.now();
  last = { ...trained, ...trainer.evaluate() };
  const update = snapshot();
  const fixedMs = performance.now() - stepped;
  const msPerStep = (stepped - started) / steps;
  const targetMs = Math.min(MAX_CHUNK_MS, Math.max(CHUNK_MS, fixedMs / OVERHEAD_SHARE));
  chunk = Math.max(1, Math.min(50, Math.round(targetMs / Math.max(msPerStep, 0.01))));
  post({ ...update, msPerStep: (performance.now() - started) / steps });
  return true;
}

// Chunks back to back while running; a macrotask between them lets the page's messages in.
async function loop() {
  while (running && train(chunk)) await new Promise((resolve) => setTimeout(resolve, 0));
}

function need() {
  if (!trainer) throw new Error('no model yet: choose a configuration');
}

const handlers = {
  async init(message) {
    const api = await import(/* @vite-ignore */ message.moduleUrl);
    // threads where the page is isolated ('auto'), or 1 when the page's retry of a stalled start asks
    lens = await api.loadAttentionLens({ threads: message.threads ?? 'auto' });
    return { tasks: lens.catalog.tasks, limits: lens.catalog.limits, simd: lens.simd, threads: lens.threads };
  },
  configure: (message) => configure(message.config),
  run() {
    need();
    if (!running) {
      running = true;
      setTimeout(loop, 0);
    }
    return true;
  },
  pause() {
    running = false;
    return true;
  },
  step() {
    need();
    running = false;
    return train(1);
  },
  probe(message) {
    need();
    return setProbe(message.text);
  },
  ablate() {
    need();
    const { ids, targets, n, batch } = trainer.heldOut();
    return { step: trainer.steps, ...model.headAblation({ ids, targets, n, batch }) };
  },
  layer(message) {
    // "Open in walkthrough": the layer's input and weights on the probe (model.attentionLayer;
    // the page puts the value in the store as one action).
    need();
    const layer = model.attentionLayer(message.layer, probe.ids, { n: probe.ids.length });
    return { ...layer, ids: Array.from(probe.ids), probe: probe.text, step: trainer.steps };
  },
  save() {
    need();
    return model.saveSafetensors();
  },
  load(message) {
    need();
    model.loadSafetensors(new Uint8Array(message.bytes));
    return snapshot();
  },
};

serveRequests({
  ready: () => Boolean(lens),
  notReady: 'the training module is still loading',
  handlers,
  transferables: (value) => [...(value?.attention ?? value?.update?.attention ?? []).map((a) => a.buffer),
    ...(value instanceof Uint8Array ? [value.buffer] : [])],
});
