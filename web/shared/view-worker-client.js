// A view's handle on its own Web Worker (the Train view's trainer, the Your model view's loaded
// checkpoint): request / reply calls (worker-calls.js), and the worker's unsolicited messages
// {type: 'update', update} (a chunk of training, a load's progress) and {type: 'diverged', error}.
import { WorkerCalls } from './worker-calls.js';

export class ViewWorkerClient {
  #calls;
  #worker;

  /**
   * Starts the view's worker: sends 'init' {moduleUrl}; `client.info` then holds its reply.
   * @param {Worker} worker the view's worker (it answers with worker-loop.js)
   * @param {string} moduleUrl absolute URL of attention-lens.mjs
   * @param {{onUpdate: (update: object) => void, onDiverged?: (message: string) => void, failed: string}} handlers
   *   failed: the message of every pending call when the worker fails to start
   */
  static async start(worker, moduleUrl, handlers) {
    const client = new ViewWorkerClient();
    client.#worker = worker;
    client.#calls = new WorkerCalls(worker);
    worker.addEventListener('message', ({ data }) => {
      if (data.type === 'update') handlers.onUpdate(data.update);
      else if (data.type === 'diverged') handlers.onDiverged?.(data.error);
      else client.#calls.reply(data);
    });
    worker.addEventListener('error', (e) => client.#calls.failAll(e.message || handlers.failed));
    client.info = await client.call('init', { moduleUrl });
    return client;
  }

  /** Sends request `type` with `payload`; resolves to its value, rejects with its message. */
  call(type, payload = {}, transfer = []) {
    return this.#calls.call(type, payload, transfer);
  }

  /** Stops the worker (its memory freed); every pending call rejects with `message`. */
  terminate(message = 'the worker was stopped') {
    this.#worker.terminate();
    this.#calls.failAll(message);
  }
}
