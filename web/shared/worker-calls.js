// Request / reply over a Worker: each call posts {id, type, ...payload}; the worker answers
// {id, ok, value | error} (worker-loop.js). Shared by the engine's client and view-worker-client.js.

export class WorkerCalls {
  #worker;
  #nextId = 1;
  #calls = new Map();

  /** @param {Worker} worker */
  constructor(worker) {
    this.#worker = worker;
  }

  /** Sends request `type` with `payload`; resolves to its value, rejects with its message. */
  call(type, payload = {}, transfer = []) {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#calls.set(id, { resolve, reject });
      this.#worker.postMessage({ id, type, ...payload }, transfer);
    });
  }

  /** Settles the call a reply answers (replies to unknown ids are ignored). */
  reply({ id, ok, value, error }) {
    const call = this.#calls.get(id);
    if (!call) return;
    this.#calls.delete(id);
    if (ok) call.resolve(value);
    else call.reject(new Error(error));
  }

  /** Rejects every pending call (the worker failed). */
  failAll(message) {
    for (const call of this.#calls.values()) call.reject(new Error(message));
    this.#calls.clear();
  }
}
