// Small helpers shared by the benchmarks: the median of timings and the max abs difference of outputs.

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
