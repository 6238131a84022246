// The timeline's snapshots of the probe's attention taken during training, as plain arrays (the
// store's state is replaced, never mutated): at most `limit`, the older half thinned (every
// other one dropped) when full, so memory stays bounded however long it trains and the recent
// steps stay dense.

export const SNAPSHOT_LIMIT = 200;

/** `frames` with `frame` { step, n, probe, attention } added (a frame of the same step is replaced). */
export function addSnapshot(frames, frame, limit = SNAPSHOT_LIMIT) {
  const next = frames.at(-1)?.step === frame.step ? [...frames.slice(0, -1), frame] : [...frames, frame];
  if (next.length <= limit) return next;
  const half = Math.floor(next.length / 2);
  return [...next.slice(0, half).filter((_, i) => i % 2 === 0), ...next.slice(half)];
}

/** The index of the last frame at or before `step` (0 if none). */
export function indexOfStep(frames, step) {
  let found = 0;
  frames.forEach((f, i) => {
    if (f.step <= step) found = i;
  });
  return found;
}
