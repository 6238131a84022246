// The timeline's snapshots of the probe's attention taken during training: at most `limit`, the
// older half thinned (every other one dropped) when full, so memory stays bounded however long
// it trains and the recent steps stay dense.

export class Snapshots {
  #frames = [];

  constructor(limit = 200) {
    this.limit = limit;
  }

  get length() {
    return this.#frames.length;
  }

  /** Adds a frame { step, n, probe, attention } (one per step: a newer one of the same step replaces it). */
  add(frame) {
    if (this.#frames.at(-1)?.step === frame.step) this.#frames.pop();
    this.#frames.push(frame);
    if (this.#frames.length > this.limit) {
      const half = Math.floor(this.#frames.length / 2);
      this.#frames = [...this.#frames.slice(0, half).filter((_, i) => i % 2 === 0), ...this.#frames.slice(half)];
    }
  }

  at(i) {
    return this.#frames[i];
  }

  /** The index of the last frame at or before `step` (0 if none). */
  indexOfStep(step) {
    let found = 0;
    this.#frames.forEach((f, i) => {
      if (f.step <= step) found = i;
    });
    return found;
  }

  clear() {
    this.#frames = [];
  }
}
