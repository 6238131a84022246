// The page's handle on the Train view's worker (train-worker.js): request / reply calls, and the
// worker's unsolicited updates (a chunk of training done) and divergence reports.

export class TrainClient {
  #worker;
  #nextId = 1;
  #calls = new Map();

  /**
   * @param {string} moduleUrl absolute URL of attention-lens.mjs
   * @param {{onUpdate: (update: object) => void, onDiverged?: (message: string) => void}} handlers
   * @param {Worker} [worker] another worker speaking the same protocol (views/model/)
   */
  static async start(moduleUrl, handlers, worker = new Worker(new URL('./train-worker.js', import.meta.url), { type: 'module' })) {
    const client = new TrainClient();
    client.#worker = worker;
    client.#worker.addEventListener('message', ({ data }) => {
      if (data.type === 'update') handlers.onUpdate(data.update);
      else if (data.type === 'diverged') handlers.onDiverged?.(data.error);
      else client.#reply(data);
    });
    client.#worker.addEventListener('error', (e) => client.#failAll(e.message || 'the training worker failed to start'));
    client.info = await client.call('init', { moduleUrl });
    return client;
  }

  /** Sends request `type` with `payload`; resolves to its value, rejects with its message. */
  call(type, payload = {}, transfer = []) {
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
}
