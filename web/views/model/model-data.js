// The "Your model" view's DOM-free helpers: the head table's order, which checkpoint file a file
// is, and a probability as a percentage. (The next tokens, their texts and the head finder's probe
// come from the core: model.nextTokens, model.probe.)

/** Head scores sorted by `key` ('induction' or 'previousToken'), highest first; nulls last. */
export function sortHeads(scores, key) {
  const value = (s) => (s[key] === null || s[key] === undefined ? -Infinity : s[key]);
  return [...scores].sort((a, b) => value(b) - value(a) || a.layer - b.layer || a.head - b.head);
}

/** Which checkpoint file a dropped or picked file is, by its name (null: none of them). */
export function fileRole(name) {
  const lower = name.toLowerCase();
  if (lower.endsWith('.safetensors')) return 'weights';
  if (lower.endsWith('.txt')) return 'merges';
  if (!lower.endsWith('.json')) return null;
  if (lower.includes('tokenizer')) return 'tokenizer';
  if (lower.includes('vocab')) return 'vocab';
  return 'config';
}

/** A probability as a percentage: '12.3%', and 2 significant digits below 0.1% ('0.0021%'). */
export const percent = (p) => (p >= 1e-3 || p === 0 ? `${(p * 100).toFixed(1)}%` : `${Number((p * 100).toPrecision(2))}%`);
