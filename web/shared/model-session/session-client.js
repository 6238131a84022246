// The page's one model session (session-worker.js in a Web Worker), shared by every view that asks
// a loaded model something: started once, the first time a view needs it; each view subscribes to
// the updates it cares about (a load's progress, generated tokens).
import { ViewWorkerClient } from '../view-worker-client.js';

export class ModelSession {
  #moduleUrl;
  #starting = null;
  #client = null;
  #listeners = new Set();

  /** @param {string} moduleUrl absolute URL of attention-lens.mjs */
  constructor(moduleUrl) {
    this.#moduleUrl = moduleUrl;
  }

  /** Starts the worker once; resolves to its info ({ simd, threads, limits, trained }). */
  start() {
    this.#starting ??= ViewWorkerClient.start(new Worker(new URL('./session-worker.js', import.meta.url), { type: 'module' }),
      this.#moduleUrl, { onUpdate: (update) => this.#listeners.forEach((listen) => listen(update)),
        failed: 'the model worker failed to start' })
      .then((client) => {
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

  /** Calls `listen(update)` for each update the worker posts; returns the unsubscribe. */
  onUpdate(listen) {
    this.#listeners.add(listen);
    return () => this.#listeners.delete(listen);
  }
}
