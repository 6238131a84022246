// The page's handle on the Train view's worker (train-worker.js): request / reply calls, and the
// worker's unsolicited updates (a chunk of training done) and divergence reports.
import { WorkerCalls } from '../../shared/worker-calls.js';

export class TrainClient {
  #calls;

  /**
   * @param {string} moduleUrl absolute URL of attention-lens.mjs
   * @param {{onUpdate: (update: object) => void, onDiverged?: (message: string) => void}} handlers
   * @param {Worker} [worker] another worker speaking the same protocol (views/model/)
   */
  static async start(moduleUrl, handlers, worker = new Worker(new URL('./train-worker.js', import.meta.url), { type: 'module' })) {
    const client = new TrainClient();
    client.#calls = new WorkerCalls(worker);
    worker.addEventListener('message', ({ data }) => {
      if (data.type === 'update') handlers.onUpdate(data.update);
      else if (data.type === 'diverged') handlers.onDiverged?.(data.error);
      else client.#calls.reply(data);
    });
    worker.addEventListener('error', (e) => client.#calls.failAll(e.message || 'the training worker failed to start'));
    client.info = await client.call('init', { moduleUrl });
    return client;
  }

  /** Sends request `type` with `payload`; resolves to its value, rejects with its message. */
  call(type, payload = {}, transfer = []) {
    return this.#calls.call(type, payload, transfer);
  }
}
