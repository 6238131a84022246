// The page's one store: the whole state of the page in one object, replaced (never mutated) on
// every change, and the listeners that follow it. Views read with get(), write with set(patch) or
// update(fn), and react in subscribe(listener), which receives (now, before).

export function createStore(initial) {
  let current = Object.freeze({ ...initial });
  const listeners = new Set();
  const store = {
    get: () => current,
    /** Merges `patch` into the state; listeners run only if some value changed. */
    set(patch) {
      if (Object.keys(patch).every((key) => Object.is(current[key], patch[key]))) return;
      const before = current;
      current = Object.freeze({ ...current, ...patch });
      for (const listener of [...listeners]) listener(current, before);
    },
    /** set(fn(state)): a patch computed from the current state. */
    update: (fn) => store.set(fn(current)),
    /** Calls listener(now, before) after every change; returns the unsubscribe function. */
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return store;
}
