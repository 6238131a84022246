// The page's one model session (session-worker.js in a Web Worker), shared by every view that asks
// a loaded model something: started once, the first time a view needs it; each view subscribes to
// the updates it cares about (a load's progress, generated tokens).
import { ViewWorkerClient } from '../view-worker-client.js';

export class ModelSession {
  #moduleUrl;
  #starting = null;
  #client = null;
  #listeners = new Set();
  #closed = false;

  /** @param {string} moduleUrl absolute URL of attention-lens.mjs */
  constructor(moduleUrl) {
    this.#moduleUrl = moduleUrl;
  }

  /** Starts the worker once; resolves to its info ({ simd, threads, limits, trained }). */
  start() {
    if (this.#closed) return Promise.reject(new Error('the model session was closed'));
    this.#starting ??= ViewWorkerClient.start(() => new Worker(new URL('./session-worker.js', import.meta.url), { type: 'module' }),
      this.#moduleUrl, { onUpdate: (update) => this.#listeners.forEach((listen) => listen(update)),
        failed: 'the model worker failed to start' })
      .then((client) => {
        if (this.#closed) {
          client.terminate('the model session was closed');
          throw new Error('the model session was closed');
        }
        this.#client = client;
        return client.info;
      });
    return this.#starting;
  }

  /** The worker's info once started, else null. */
  get info() {
    return this.#client?.info ?? null;
  }

  /** Whether the worker has started. */
  get started() {
    return Boolean(this.#client);
  }

  /** Request `type` with `payload` (session-worker.js lists them); starts the worker if need be. */
  async call(type, payload = {}) {
    await this.start();
    return this.#client.call(type, payload);
  }

  /**
   * Another session on the same module, in a worker of its own (its own wasm memory): a view that
   * loads models beside the page's one (the Your model view's "Across training" strip) without
   * disturbing it. close() it when done.
   */
  another() {
    return new ModelSession(this.#moduleUrl);
  }

  /** Stops this session's worker (a load in flight with it), freeing its memory; a closed session cannot start again. */
  close() {
    this.#closed = true;
    this.#client?.terminate('the model session was closed');
    this.#client = null;
  }

  /** Calls `listen(update)` for each update the worker posts; returns the unsubscribe. */
  onUpdate(listen) {
    this.#listeners.add(listen);
    return () => this.#listeners.delete(listen);
  }
}
