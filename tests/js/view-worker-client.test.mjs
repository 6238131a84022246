// web/shared/view-worker-client.js in node, over a stand-in worker: a start that does not answer is
// stopped and tried again in a new worker, the last try asking for one thread; a start that answers
// is kept; a worker's error rejects the start with its message.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { ViewWorkerClient } from '../../web/shared/view-worker-client.js';

/** A stand-in for a view's worker: answers 'init' with `answer(message)` unless it stalls. */
class StandInWorker extends EventTarget {
  constructor(behaviour) {
    super();
    this.behaviour = behaviour;
    this.received = [];
    this.terminated = false;
  }

  postMessage(message) {
    this.received.push(message);
    const reply = (data) => setTimeout(() => !this.terminated && this.dispatchEvent(Object.assign(new Event('message'), { data })), 1);
    if (this.behaviour === 'stall') return;
    if (this.behaviour === 'error') {
      setTimeout(() => this.dispatchEvent(Object.assign(new Event('error'), { message: 'the script did not load' })), 1);
      return;
    }
    reply({ id: message.id, ok: true, value: { threads: message.threads === 1 ? 1 : 2 } });
  }

  terminate() {
    this.terminated = true;
  }
}

function workers(behaviours) {
  const made = [];
  const make = () => {
    const worker = new StandInWorker(behaviours[made.length]);
    made.push(worker);
    return worker;
  };
  return { made, make };
}

const handlers = { onUpdate: () => {}, failed: 'the worker failed to start' };

test('a start that answers is kept: one worker, asked for the machine\'s threads', async () => {
  const { made, make } = workers(['answer']);
  const client = await ViewWorkerClient.start(make, 'http://x/attention-lens.mjs', handlers, { waitMs: 50 });
  assert.deepEqual(client.info, { threads: 2 });
  assert.equal(made.length, 1);
  assert.deepEqual(made[0].received.map(({ type, moduleUrl, threads }) => ({ type, moduleUrl, threads })),
    [{ type: 'init', moduleUrl: 'http://x/attention-lens.mjs', threads: 'auto' }]);
  assert.equal(made[0].terminated, false);
});

test('a stalled start is stopped and tried again in a new worker', async () => {
  const { made, make } = workers(['stall', 'answer']);
  const client = await ViewWorkerClient.start(make, 'http://x/m.mjs', handlers, { waitMs: 50 });
  assert.deepEqual(client.info, { threads: 2 });
  assert.deepEqual(made.map((w) => w.terminated), [true, false]);
  assert.deepEqual(made.map((w) => w.received[0].threads), ['auto', 'auto']);
  // the kept worker answers later calls
  made[1].behaviour = 'answer';
  assert.deepEqual(await client.call('init', { threads: 'auto' }), { threads: 2 });
});

test('after two stalled starts the last try asks for one thread and is waited for', async () => {
  const { made, make } = workers(['stall', 'stall', 'answer']);
  const client = await ViewWorkerClient.start(make, 'http://x/m.mjs', handlers, { waitMs: 30 });
  assert.deepEqual(client.info, { threads: 1 });
  assert.deepEqual(made.map((w) => w.received[0].threads), ['auto', 'auto', 1]);
  assert.deepEqual(made.map((w) => w.terminated), [true, true, false]);
});

test('a worker that fails to load rejects the start with its message, no retry', async () => {
  const { made, make } = workers(['error']);
  await assert.rejects(ViewWorkerClient.start(make, 'http://x/m.mjs', handlers, { waitMs: 1000 }), /the script did not load/);
  assert.equal(made.length, 1);
});
