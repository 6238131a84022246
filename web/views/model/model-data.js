// The "Your model" view's DOM-free helpers: the top next tokens from the core's logits (a softmax
// of the last row, for display), the seeded repeated-random-token probe of the head finder, the
// head table's order, which checkpoint file a file is, and GPT-2 byte-level vocabulary entries as readable text.

/**
 * The k most likely next tokens: softmax of one row of logits ([vocab]), highest first.
 * @param {Float32Array} row  [vocab] logits of the last position
 * @param {number} k
 * @param {(id: number) => string} [text]  a token's text (default: '#id')
 * @returns {{id: number, token: string, probability: number}[]}
 */
export function topTokens(row, k = 10, text = (id) => `#${id}`) {
  let max = -Infinity;
  for (const v of row) if (v > max) max = v;
  let sum = 0;
  for (const v of row) sum += Math.exp(v - max);
  const order = Array.from(row.keys()).sort((a, b) => row[b] - row[a] || a - b).slice(0, k);
  return order.map((id) => ({ id, token: text(id), probability: Math.exp(row[id] - max) / sum }));
}

/**
 * The head finder's probe: `half` seeded random token ids in [0, vocab) and the same ids again
 * (2 × 25 by default, shortened to fit `context`), so an induction head attends from each repeat
 * to the token after its first copy. Deterministic for a seed (mulberry32).
 * @returns {Int32Array} [2 · half]
 */
export function inductionProbe(vocab, context, { half = 25, seed = 1 } = {}) {
  const h = Math.max(1, Math.min(half, Math.floor(context / 2)));
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const first = Array.from({ length: h }, () => Math.floor(next() * vocab));
  return Int32Array.from([...first, ...first]);
}

/** Head scores sorted by `key` ('induction' or 'previousToken'), highest first; nulls last. */
export function sortHeads(scores, key) {
  const value = (s) => (s[key] === null || s[key] === undefined ? -Infinity : s[key]);
  return [...scores].sort((a, b) => value(b) - value(a) || a.layer - b.layer || a.head - b.head);
}

// GPT-2's byte-level alphabet: byte b is written as the character BYTE_CHAR[b] in vocab.json.
const BYTE_OF = (() => {
  const map = new Map();
  const printable = (b) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  let extra = 0;
  for (let b = 0; b < 256; ++b) map.set(String.fromCodePoint(printable(b) ? b : 256 + extra++), b);
  return map;
})();

/**
 * A vocab.json entry ('Ġthe') as the text it stands for (' the'); other characters kept. A token
 * that is part of a character (not valid UTF-8 alone) shows its bytes: '<0xE2>'.
 */
export function vocabEntryText(entry) {
  const bytes = [];
  for (const ch of entry) {
    const b = BYTE_OF.get(ch);
    if (b === undefined) bytes.push(...new TextEncoder().encode(ch));
    else bytes.push(b);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes));
  } catch {
    return bytes.map((b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`).join('');
  }
}

/** id -> text from a tokenizer's vocab object { token: id } (tokenizer.json's model.vocab). */
export function idTexts(vocab, added = []) {
  const texts = [];
  for (const [token, id] of Object.entries(vocab)) texts[id] = vocabEntryText(token);
  for (const { id, content } of added) texts[id] = content;
  return texts;
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
