// Trainer (lens.createTrainer): AdamW steps on a task, held-out evaluation.
// A module of the JS API (web/api/attention-lens-api.js is its entry; scripts/bundle-api.mjs
// bundles them into dist/attention-lens.mjs).
import { booleanOption, checkOptions, describe, fieldOptions, finalizer, freeHandle, integerIn, SIZE_MAX, tokenIds, unwrap } from './common.js';
import { modelInternals } from './model.js';

export class Trainer {
  #handle;
  #model;
  #modelDisposed = false;
  #modelRelease = () => this.#release(true);  // called by the model when it is disposed
  #task;

  // catalog: lens.catalog (createTrainer's fields and defaults).
  constructor(core, catalog, model, options) {
    const internals = modelInternals.get(model);
    if (!internals) throw new Error(`createTrainer expects a model from lens.createModel(), got ${describe(model)}`);
    const args = fieldOptions('createTrainer', options, catalog.fields.trainer, catalog.defaults.trainer);
    const modelHandle = internals.live();
    const handle = new core.TrainerHandle();
    try {
      unwrap(handle.configure(modelHandle, args));
    } catch (error) {
      handle.delete();
      throw error;
    }
    this.#handle = handle;
    this.#model = internals;
    this.#task = Object.freeze({ name: handle.taskName(), vocabulary: handle.vocabulary() });
    internals.trainers.add(this.#modelRelease);
    finalizer?.register(this, handle, this);
  }

  /** The task: { name, vocabulary } (token id i is the vocabulary's i-th character). */
  get task() {
    return this.#task;
  }

  /** Steps taken so far. */
  get steps() {
    return this.#live().steps();
  }

  /**
   * Runs k >= 1 AdamW steps, then (unless options.evaluate is false) evaluates the held-out set:
   * { step, loss, heldOutLoss, accuracy }, or { step, loss } without evaluation. The evaluation
   * is a forward of every held-out sequence (256 by default: about three steps' worth at
   * batch 32), so a caller stepping one at a time should evaluate when it reports. A NaN or
   * infinite loss throws "diverged at step N: …" and keeps the last good weights.
   */
  step(k = 1, options = {}) {
    const handle = this.#live();
    const count = integerIn('k', k, 0, SIZE_MAX);
    checkOptions('step', options, ['evaluate']);
    return unwrap(handle.step(count, booleanOption('evaluate', options.evaluate, true)));
  }

  /** The held-out set's loss and accuracy now, with no step: { step, heldOutLoss, accuracy }. */
  evaluate() {
    return unwrap(this.#live().evaluate());
  }

  /** The task's token ids of text (each character must be in the vocabulary): Int32Array. */
  encode(text) {
    const handle = this.#live();
    if (typeof text !== 'string') throw new Error(`text must be a string, got ${describe(text)}`);
    return unwrap(handle.encode(text)).slice();
  }

  /** The text of token ids. */
  decode(ids) {
    const handle = this.#live();
    return unwrap(handle.decode(tokenIds('ids', ids)));
  }

  /** The fixed held-out set: { batch, n, ids: Int32Array, targets: Int32Array } (copies). */
  heldOut() {
    const held = this.#live().heldOut();
    return { batch: held.batch, n: held.n, ids: held.ids.slice(), targets: held.targets.slice() };
  }

  /** Frees the trainer's wasm memory (the model stays). Using the trainer afterwards throws. */
  dispose() {
    this.#release(false);
  }

  #release(modelDisposed) {
    if (!this.#handle) return;
    this.#handle = freeHandle(this, this.#handle);
    this.#modelDisposed = modelDisposed;
    this.#model.trainers.delete(this.#modelRelease);
  }

  #live() {
    if (this.#handle) {
      this.#model.live();  // throws if the model is gone (it disposes its trainers first)
      return this.#handle;
    }
    if (this.#modelDisposed) {
      throw new Error("this trainer's model was disposed; create a new model and trainer");
    }
    throw new Error('this trainer was disposed; create a new one with lens.createTrainer()');
  }
}
