// The Web Worker that owns the wasm module for the page, so typing never waits on a forward.
// Messages: {id, type: 'init', moduleUrl} | {id, type: 'compute', state} |
// {id, type: 'explain', request} | {id, type: 'load-weights', name, bytes, state} |
// {id, type: 'clear-weights'} | {id, type: 'save-weights'}. Replies: {id, ok, value | error}.
import { createEngine, runRequest } from './engine.js';

let engine = null;

// V8 runs wasm in a baseline tier first and optimises a function only once it has been called
// several times (a 64-token forward takes ~38 ms cold, ~4 ms warm). A dozen throwaway forwards
// right after loading, one per task so the reader's requests go first, make typing fast at once.
function warmUp(lens, rounds = 12) {
  const layer = lens.createLayer({ dModel: 128, heads: 8, positional: 'sinusoidal' });
  const x = layer.embed(Uint32Array.from({ length: 32 }, (_, i) => i));
  let done = 0;
  const step = () => {
    layer.forward(x, { n: 32, trace: true, mask: done % 2 ? 'causal' : 'none' });
    layer.explain({ step: 'scores', head: 0, row: 1, col: 0 });
    if (++done < rounds) setTimeout(step, 0);
    else layer.dispose();
  };
  setTimeout(step, 0);
}

// Float32Array buffers of a result, moved (not copied) to the page.
function transferables(result) {
  const list = [];
  for (const step of result.steps ?? []) list.push(step.data.buffer);
  if (result.attention) list.push(result.attention.buffer);
  if (result.output) list.push(result.output.buffer);
  return list;
}

async function handle(message) {
  switch (message.type) {
    case 'init': {
      const api = await import(/* @vite-ignore */ message.moduleUrl);
      const lens = await api.loadAttentionLens();
      engine = createEngine(lens);
      warmUp(lens);
      return { simd: lens.simd };
    }
    default:
      return runRequest(engine, message);
  }
}

self.addEventListener('message', async (event) => {
  const { id } = event.data;
  try {
    if (!engine && event.data.type !== 'init') throw new Error('the attention module is still loading');
    const value = await handle(event.data);
    self.postMessage({ id, ok: true, value }, value && typeof value === 'object' ? transferables(value) : []);
  } catch (error) {
    self.postMessage({ id, ok: false, error: error?.message ?? String(error) });
  }
});
