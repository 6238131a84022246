// Small helpers shared by the benchmarks: the median of timings, the max abs difference of outputs,
// deterministic token ids.

/** The median of an array of numbers. */
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** max |a[i] - b[i]| (Infinity when the lengths differ or a value is NaN). */
export function maxAbsDiff(a, b) {
  if (a.length !== b.length) return Infinity;
  let max = 0;
  for (let i = 0; i < a.length; ++i) {
    const diff = Math.abs(a[i] - b[i]);
    if (!(diff <= max)) max = Number.isNaN(diff) ? Infinity : diff;
  }
  return max;
}

/** Deterministic token ids in [0, vocab) (a 32-bit LCG). */
export function tokenIds(count, vocab, seed) {
  const ids = new Int32Array(count);
  let state = seed >>> 0;
  for (let i = 0; i < count; ++i) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    ids[i] = state % vocab;
  }
  return ids;
}
