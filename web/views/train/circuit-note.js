// The Train view's sentence for a run that solved the induction task without an induction head:
// high held-out accuracy while no head's induction score (the core's model.headScores) passes
// the mark. A reading of the reported numbers only: nothing here computes attention.

/** Held-out accuracy from which the task counts as solved. */
export const SOLVED_ACCURACY = 0.9;
/** An induction score above this is an induction head (a formed head scores 0.5 to 1). */
export const INDUCTION_HEAD_SCORE = 0.3;

/**
 * The sentence to show, or null: only for the induction task, once the last report's accuracy
 * is at least SOLVED_ACCURACY and every head's induction score is at most INDUCTION_HEAD_SCORE.
 * @param {string} task
 * @param {{accuracy?: number}|null|undefined} report the last evaluated report
 * @param {{layer: number, head: number, induction: number}[]|undefined} scores the same step's
 */
export function circuitNote(task, report, scores) {
  if (task !== 'induction' || !(report?.accuracy >= SOLVED_ACCURACY) || !scores?.length) return null;
  const best = scores.reduce((a, b) => (b.induction > a.induction ? b : a));
  if (!(best.induction <= INDUCTION_HEAD_SCORE)) return null;
  return `Held-out accuracy is ${report.accuracy.toFixed(2)}, but no head's induction score is above ` +
    `${INDUCTION_HEAD_SCORE} (the highest: layer ${best.layer + 1} head ${best.head + 1}, ` +
    `${best.induction.toFixed(2)}): this run solved the task another way, without an induction head. ` +
    'Try another seed to watch one form.';
}
