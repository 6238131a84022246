// The Your model view's "Across training" strip, its data (DOM-free): which training checkpoints
// (Hub revisions) a run reads by default, what its progress line says, the best head's scores
// over the checkpoints, and the scores as a table for the screen reader and the JSON / CSV
// export. Every score is model.headScores' (the head finder's), read in the strip's own model
// session; nothing here computes attention. Byte counts: shared/format.js's formatBytes (the page's one).
import { formatBytes } from '../../shared/format.js';

/**
 * The checkpoints a run reads unless the reader changes them: a spread over Pythia's training, about
 * doubling each time (the logarithmic view in which Olsson et al. (2022) see induction heads form
 * early), step0 and the final step143000 included. Only those an entry lists are offered.
 */
export const TRAINING_DEFAULT = Object.freeze(['step0', 'step1000', 'step2000', 'step4000', 'step8000', 'step16000', 'step33000',
  'step66000', 'step143000']);

/** The scores the strip can show: model.headScores' keys and their names. */
export const TRAINING_SCORES = Object.freeze([['induction', 'Induction'], ['previousToken', 'Previous token']]);

/** The training step a revision names ('step4000' → 4000), or null for another name. */
export function stepOf(revision) {
  const match = /^step(\d+)$/.exec(String(revision));
  return match ? Number(match[1]) : null;
}

/** `revisions` in training order (by step; names without a step last, in their given order), each once. */
export function trainingOrder(revisions) {
  const unique = [...new Set(revisions)];
  const rank = (r) => stepOf(r) ?? Infinity;
  return unique.map((r, i) => [r, i]).sort(([a, i], [b, j]) => rank(a) - rank(b) || i - j).map(([r]) => r);
}

/** The default checkpoints of an entry that lists `revisions` (TRAINING_DEFAULT's it has, in training order). */
export const defaultRevisions = (revisions) => TRAINING_DEFAULT.filter((r) => revisions.includes(r));

/**
 * The line while `revision` loads (the model session's progress update: { phase, fraction,
 * received?, total? }): 'step4000: 37 MB of 160 MB' while it downloads; 'step4000: reading the
 * weights (42%)' while the core reads them (from the download, or the browser's kept copy).
 */
export function progressLine(revision, { phase, fraction, received, total }) {
  if (phase === 'download' && total !== undefined) return `${revision}: ${formatBytes(received)} of ${formatBytes(total)}`;
  return `${revision}: reading the weights (${Math.round((fraction ?? 0) * 100)}%)`;
}

/**
 * The head whose `key` score is highest at the latest checkpoint read (ties: the lower layer, then
 * head), and that head's score at each checkpoint: { layer, head, values: [number | null] } (null:
 * the probe could not measure it), or null when nothing was read or nothing measured.
 * @param {{ revision: string, scores: { layer: number, head: number, induction: number|null, previousToken: number|null }[] }[]} results
 */
export function bestHead(results, key) {
  const last = results.at(-1);
  if (!last) return null;
  let best = null;
  for (const s of last.scores) {
    if (s[key] === null || s[key] === undefined) continue;
    if (!best || s[key] > best[key] || (s[key] === best[key] && (s.layer < best.layer || (s.layer === best.layer && s.head < best.head)))) best = s;
  }
  if (!best) return null;
  const values = results.map(({ scores }) => scores.find((s) => s.layer === best.layer && s.head === best.head)?.[key] ?? null);
  return { layer: best.layer, head: best.head, values };
}

/** A head's name as the page writes it: 'L3 H5' (1-based). */
export const headName = (layer, head) => `L${layer + 1} H${head + 1}`;

/**
 * One checkpoint's `key` scores as a layers × heads matrix for the heatmap: { data: Float32Array
 * (NaN where unmeasured), rows, cols }.
 */
export function scoreMatrix(scores, key, { layers, heads }) {
  const data = new Float32Array(layers * heads).fill(NaN);
  for (const s of scores) {
    if (s[key] !== null && s[key] !== undefined) data[s.layer * heads + s.head] = s[key];
  }
  return { data, rows: layers, cols: heads };
}

/**
 * The run as rows for the export: a header, then one row per checkpoint and head (revision, step,
 * layer and head 1-based, induction, previous token; an unmeasured score empty).
 */
export function trainingRows(results) {
  const rows = [['revision', 'step', 'layer', 'head', 'induction', 'previous_token']];
  for (const { revision, scores } of results) {
    for (const s of scores) {
      rows.push([revision, stepOf(revision) ?? '', s.layer + 1, s.head + 1, s.induction ?? '', s.previousToken ?? '']);
    }
  }
  return rows;
}

/** The run as JSON: the model, the probe, and each checkpoint's every head's scores (layer and head 0-based, as the API's). */
export function trainingJson({ id, probeLength, results }) {
  return JSON.stringify({
    model: id,
    probe: `${probeLength / 2} seeded random tokens repeated once (model.headScores' default probe)`,
    note: 'layer and head are 0-based; null: the probe cannot measure that score',
    checkpoints: results.map(({ revision, scores }) => ({
      revision,
      step: stepOf(revision),
      scores: scores.map(({ layer, head, induction, previousToken }) => ({ layer, head, induction, previousToken })),
    })),
  }, null, 2);
}
