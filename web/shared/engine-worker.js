// The Web Worker that owns a wasm module for the page's larger computes, so typing never waits
// on a forward. Messages: {id, type: 'init', moduleUrl} | {id, type: 'compute', state} |
// {id, type: 'explain', request} | {id, type: 'load-weights', name, bytes, state} |
// {id, type: 'use-weights', weights} | {id, type: 'save-weights'} | {id, type: 'use-trained-model', name} |
// {id, type: 'use-opened-layer', key, arrays}. Replies: {id, ok, value | error};
// init's value is { simd, catalog, trainedModels, trainedInfo } (the core's catalog and the shipped
// models' catalogue entries, for a page that may have no module itself).
import { catalogOf } from './catalog.js';
import { createEngine, trainedInfoOf, warmUp } from './engine.js';
import { serveRequests } from './worker-loop.js';

let engine = null;
let engineLens = null;
let trainedModel = null; // the one 'use-trained-model' loaded

// Float32Array buffers of a result, moved (not copied) to the page.
function transferables(result) {
  const list = [];
  for (const step of result.steps ?? []) list.push(step.data.buffer);
  if (result.attention) list.push(result.attention.buffer);
  if (result.headPreviews) list.push(result.headPreviews.data.buffer);
  if (result.output) list.push(result.output.buffer);
  return list;
}

const handlers = {
  async init(message) {
    const api = await import(/* @vite-ignore */ message.moduleUrl);
    const lens = await api.loadAttentionLens();
    engine = createEngine(lens);
    engineLens = lens;
    warmUp(lens, (step) => setTimeout(step, 0));
    return { simd: lens.simd, catalog: catalogOf(lens), trainedModels: [...lens.trainedModels], trainedInfo: trainedInfoOf(lens) };
  },
  compute: (message) => engine.compute(message.state),
  explain: (message) => engine.explain(message.request),
  'load-weights': (message) => engine.loadWeights(message.name, message.bytes, message.state),
  'use-weights': (message) => engine.useWeights(message.weights),
  'save-weights': () => engine.saveWeights(),
  'use-opened-layer': (message) => engine.useOpenedLayer(message.key, message.arrays),
  async 'use-trained-model'(message) {
    const model = message.name ? await engineLens.trainedModel(message.name) : null;
    engine.useTrainedModel(model);
    trainedModel?.dispose();
    trainedModel = model;
    return undefined;
  },
};

serveRequests({
  ready: () => Boolean(engine),
  notReady: 'the attention module is still loading',
  handlers,
  transferables: (value, message) => (['compute', 'load-weights'].includes(message.type) ? transferables(value) : []),
});
