// A view's handle on its own Web Worker (the Train view's trainer, the Your model view's loaded
// checkpoint): request / reply calls (worker-calls.js), and the worker's unsolicited messages
// {type: 'update', update} (a chunk of training, a load's progress) and {type: 'diverged', error}; a
// threaded start that stalls is tried again in a new worker.
import { WorkerCalls } from './worker-calls.js';

// The threads each start asks for ('auto': the machine's cores where the page is cross-origin
// isolated), and how long a start that is not the last may take (a start takes 0.2–0.7 s alone, a few
// seconds on a busy machine).
const START_THREADS = ['auto', 'auto', 1];
const START_WAIT_MS = 12000;
const STALLED = Symbol('stalled');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class ViewWorkerClient {
  #calls;
  #worker;

  /**
   * Starts the view's worker: sends 'init' {moduleUrl, threads}; `client.info` then holds its reply.
   * A threaded start that has not answered after START_WAIT_MS is stopped and tried again in a new
   * worker, and the last try asks for one thread: Firefox now and then blocks a worker for good while
   * it starts the threaded module's own workers (about 1 start in 40 on a 2-core machine; a second
   * start goes through), and a view must not wait for ever.
   * @param {() => Worker} makeWorker a new worker of the view (it answers with worker-loop.js)
   * @param {string} moduleUrl absolute URL of attention-lens.mjs
   * @param {{onUpdate: (update: object) => void, onDiverged?: (message: string) => void, failed: string}} handlers
   *   failed: the message of every pending call when the worker fails to start
   * @param {{waitMs?: number}} [options] how long a try that is not the last may take (tests shorten it)
   */
  static async start(makeWorker, moduleUrl, handlers, { waitMs = START_WAIT_MS } = {}) {
    for (const [index, threads] of START_THREADS.entries()) {
      const last = index === START_THREADS.length - 1;
      const client = new ViewWorkerClient(makeWorker(), handlers);
      const started = client.call('init', { moduleUrl, threads });
      const answer = last ? await started : await Promise.race([started, sleep(waitMs).then(() => STALLED)]);
      if (answer !== STALLED) {
        client.info = answer;
        return client;
      }
      started.catch(() => {});  // rejected by terminate(): the next try answers
      client.terminate('the worker did not start in time');
    }
    throw new Error(handlers.failed);  // not reached: the last try is awaited
  }

  constructor(worker, handlers) {
    this.#worker = worker;
    this.#calls = new WorkerCalls(worker);
    worker.addEventListener('message', ({ data }) => {
      if (data.type === 'update') handlers.onUpdate(data.update);
      else if (data.type === 'diverged') handlers.onDiverged?.(data.error);
      else this.#calls.reply(data);
    });
    worker.addEventListener('error', (e) => this.#calls.failAll(e.message || handlers.failed));
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
