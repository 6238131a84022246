// The page's handle on the engine: a Web Worker when the browser allows one (always on http),
// otherwise the same engine on the main thread. Computes coalesce: while one runs, only the
// newest requested state waits, so fast typing never queues stale work.
import { createEngine, runRequest } from './engine.js';

export class EngineClient {
  #worker = null;
  #local = null;
  #nextId = 1;
  #calls = new Map();
  #busy = false;
  #pending = null;

  /** @param {string} moduleUrl absolute URL of attention-lens.mjs */
  static async start(moduleUrl) {
    const client = new EngineClient();
    try {
      client.#worker = new Worker(new URL('./engine-worker.js', import.meta.url), { type: 'module' });
      client.#worker.addEventListener('message', (e) => client.#reply(e.data));
      client.#worker.addEventListener('error', (e) => client.#failAll(e.message || 'the worker failed to start'));
      client.info = await client.#call('init', { moduleUrl });
      client.mode = 'worker';
    } catch (error) {
      client.#worker?.terminate();
      client.#worker = null;
      const api = await import(/* @vite-ignore */ moduleUrl);
      const lens = await api.loadAttentionLens();
      client.#local = createEngine(lens);
      client.info = { simd: lens.simd, workerError: error.message };
      client.mode = 'main thread';
    }
    return client;
  }

  #call(type, payload = {}, transfer = []) {
    if (this.#local) {
      try {
        return Promise.resolve(runRequest(this.#local, { type, ...payload }));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#calls.set(id, { resolve, reject });
      this.#worker.postMessage({ id, type, ...payload }, transfer);
    });
  }

  #reply({ id, ok, value, error }) {
    const call = this.#calls.get(id);
    if (!call) return;
    this.#calls.delete(id);
    if (ok) call.resolve(value);
    else call.reject(new Error(error));
  }

  #failAll(message) {
    for (const call of this.#calls.values()) call.reject(new Error(message));
    this.#calls.clear();
  }

  /**
   * Requests a compute of `state`; onResult(result) or onError(error) is called for the newest
   * state only (older requests still waiting are dropped).
   */
  compute(state, onResult, onError) {
    this.#pending = { state: structuredClone(state), onResult, onError };
    this.#pump();
  }

  #pump() {
    if (this.#busy || !this.#pending) return;
    const { state, onResult, onError } = this.#pending;
    this.#pending = null;
    this.#busy = true;
    this.#call('compute', { state })
      .then((result) => { if (!this.#pending) onResult(result); }, (error) => { if (!this.#pending) onError(error); })
      .finally(() => {
        this.#busy = false;
        this.#pump();
      });
  }

  explain(request) {
    return this.#call('explain', { request });
  }

  loadWeights(name, bytes, state) {
    return this.#call('load-weights', { name, bytes, state: structuredClone(state) });
  }

  clearWeights() {
    return this.#call('clear-weights');
  }

  saveWeights() {
    return this.#call('save-weights');
  }
}
