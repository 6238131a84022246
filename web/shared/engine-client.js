// The page's handle on the engine, in two places: on the page's own thread for work that fits
// in the keystroke's frame (engine.fitsInFrame: the new numbers appear with the typed
// character, with no round trip), and in a Web Worker for larger work, so typing never waits
// on it. Without a worker (blocked by the browser), everything runs on the page's thread.
// Worker computes coalesce: while one runs, only the newest requested state waits. A result
// reaches the page only if no newer compute was asked for meanwhile.
import { catalogOf } from './catalog.js';
import { whenIdle } from './dom.js';
import { createEngine, trainedInfoOf, warmUp } from './engine.js';
import { openedLayerArrays } from './opened-layers.js';
import { WorkerCalls } from './worker-calls.js';

const PAGE_THREAD = 'main thread';
const WORKER = 'worker';

export class EngineClient {
  #worker = null;
  #local = null;
  #calls = null; // request / reply with the worker (worker-calls.js)
  #busy = false;
  #pending = null;
  #latest = 0; // the newest compute asked for; older results are dropped
  #shown = null; // where the result on screen was computed (explain and save ask there)
  // The reader's .safetensors file ({name, bytes}) or null, and which of them each engine holds
  // (an engine that was not used since a change catches up before its next compute).
  #weights = null;
  #lens = null; // the page thread's API, when it loaded
  #trained = { name: '', model: null }; // the trained model the engines use (state.model)
  #held = { [PAGE_THREAD]: null, [WORKER]: null };
  #heldOpened = { [PAGE_THREAD]: null, [WORKER]: null }; // the opened layer's key each engine holds

  /**
   * Starts the engine wherever the module loads. `client.info` then holds { simd, catalog,
   * trainedModels, trainedInfo (name -> the shipped model's catalogue entry) }: the
   * core's catalog (catalog.js) comes from whichever engine loaded first, the worker's by its
   * ready reply, since the page may have no module of its own.
   * @param {string} moduleUrl absolute URL of attention-lens.mjs
   */
  static async start(moduleUrl) {
    const client = new EngineClient();
    const local = import(/* @vite-ignore */ moduleUrl).then((api) => api.loadAttentionLens());
    try {
      client.#worker = new Worker(new URL('./engine-worker.js', import.meta.url), { type: 'module' });
      client.#calls = new WorkerCalls(client.#worker);
      client.#worker.addEventListener('message', (e) => client.#calls.reply(e.data));
      client.#worker.addEventListener('error', (e) => client.#calls.failAll(e.message || 'the worker failed to start'));
      client.info = await client.#call('init', { moduleUrl });
    } catch (error) {
      client.#worker?.terminate();
      client.#worker = null;
      client.info = { workerError: error.message };
    }
    try {
      const lens = await local;
      client.#local = createEngine(lens);
      client.#lens = lens;
      client.info.simd ??= lens.simd;
      client.info.trainedModels ??= [...lens.trainedModels];
      client.info.trainedInfo ??= trainedInfoOf(lens);
      client.info.catalog ??= catalogOf(lens);
      warmUp(lens, whenIdle);
    } catch (error) {
      if (!client.#worker) throw error; // neither place can run the module
      client.info.localError = error.message; // everything runs in the worker
    }
    return client;
  }

  async #call(type, payload = {}) {
    return this.#calls.call(type, payload);
  }

  #where(state) {
    if (!this.#local) return WORKER;
    return !this.#worker || this.#local.fitsInFrame(state) ? PAGE_THREAD : WORKER;
  }

  // Brings an engine's weights and opened layer up to date (the worker's by messages that go
  // before the request that needs them).
  #catchUp(where, state) {
    const key = state?.openedLayer?.key ?? null;
    if (key && this.#heldOpened[where] !== key) {
      this.#heldOpened[where] = key;
      const arrays = openedLayerArrays(key);
      if (where === PAGE_THREAD) this.#local.useOpenedLayer(key, arrays);
      else this.#call('use-opened-layer', { key, arrays }).catch(() => {}); // the compute reports
    }
    if (this.#held[where] === this.#weights) return;
    this.#held[where] = this.#weights;
    if (where === PAGE_THREAD) this.#local.useWeights(this.#weights);
    else this.#call('use-weights', { weights: this.#weights }).catch(() => {}); // the compute reports
  }

  /**
   * Requests a compute of `state`; onResult(result) or onError(error) is called for the newest
   * request only. result.computedIn says where it ran ('main thread' | 'worker').
   */
  compute(state, onResult, onError) {
    if ((state.model || '') !== this.#trained.name) {
      const ticket = ++this.#latest;
      this.#useTrained(state.model || '').then(() => {
        if (ticket === this.#latest) this.compute(state, onResult, onError);
      }, (error) => { if (ticket === this.#latest) onError(error); });
      return;
    }
    const ticket = ++this.#latest;
    if (this.#where(state) === WORKER) {
      this.#pending = { state: structuredClone(state), ticket, onResult, onError };
      this.#pump();
      return;
    }
    this.#pending = null; // a worker request still waiting is older than this one
    let result;
    try {
      this.#catchUp(PAGE_THREAD, state);
      result = { ...this.#local.compute(state), computedIn: PAGE_THREAD };
    } catch (error) {
      onError(error);
      return;
    }
    this.#shown = PAGE_THREAD;
    onResult(result);
  }

  #pump() {
    if (this.#busy || !this.#pending) return;
    const { state, ticket, onResult, onError } = this.#pending;
    this.#pending = null;
    this.#busy = true;
    this.#catchUp(WORKER, state);
    this.#call('compute', { state })
      .then((result) => {
        if (ticket !== this.#latest) return;
        this.#shown = WORKER;
        onResult({ ...result, computedIn: WORKER });
      }, (error) => { if (ticket === this.#latest) onError(error); })
      .finally(() => {
        this.#busy = false;
        this.#pump();
      });
  }

  // Loads the shipped trained model `name` ('' = none) where trained states compute: on the page
  // thread (they always fit in a frame), or in the worker when the page has no module.
  async #useTrained(name) {
    if (this.#local) {
      const model = name ? await this.#lens.trainedModel(name) : null;
      this.#local.useTrainedModel(model);
      this.#trained.model?.dispose();
      this.#trained = { name, model };
    } else {
      await this.#call('use-trained-model', { name });
      this.#trained = { name, model: null };
    }
  }

  /** The arithmetic behind one cell of the result on screen (layer.explain()). */
  explain(request) {
    if (this.#shown === WORKER || !this.#local) return this.#call('explain', { request });
    try {
      return Promise.resolve(this.#local.explain(request));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Loads a .safetensors file and computes `state` with it; rejects (keeping the last weights) if it does not fit. */
  async loadWeights(name, bytes, state) {
    const ticket = ++this.#latest;
    const where = this.#where(state);
    const weights = { name, bytes };
    let result;
    if (where === PAGE_THREAD) {
      this.#catchUp(PAGE_THREAD);
      result = this.#local.loadWeights(name, bytes, state);
    } else {
      this.#catchUp(WORKER);
      result = await this.#call('load-weights', { name, bytes, state });
    }
    this.#weights = weights;
    this.#held[where] = weights;
    if (ticket === this.#latest) this.#shown = where;
    return { ...result, computedIn: where };
  }

  /** Back to the seeded weights (from the next compute on). */
  clearWeights() {
    this.#weights = null;
    return Promise.resolve();
  }

  /** The weights of the result on screen, as .safetensors bytes. */
  saveWeights() {
    if (this.#shown === WORKER || !this.#local) return this.#call('save-weights');
    try {
      return Promise.resolve(this.#local.saveWeights());
    } catch (error) {
      return Promise.reject(error);
    }
  }
}
