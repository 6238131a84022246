// A character model's text read in its alphabet (tokenize(text, { unknown })), by the core.
// A module of the JS API (web/api/attention-lens-api.js is its entry; scripts/bundle-api.mjs
// bundles them into dist/attention-lens.mjs).
import { checkOptions, describe, stringOption, unwrap } from './common.js';

// ---- character alphabets (the shipped models' and the tasks') ------------------------------

// A lone UTF-16 surrogate has no UTF-8: it becomes U+FFFD before the text crosses into the core,
// as TextEncoder does, so the core reads one character for it as JavaScript counts one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The core's read_in_alphabet: { tokens, ids: Int32Array, mapped, note }. */
export function readInAlphabet(core, text, alphabet, owner, options, unknownNames) {
  if (typeof text !== 'string') throw new Error(`text must be a string, got ${describe(text)}`);
  checkOptions('tokenize', options, ['unknown']);
  const unknown = stringOption('unknown', options.unknown, unknownNames[0]);
  const read = unwrap(core.readInAlphabet(text.replace(LONE_SURROGATE, '\uFFFD'), alphabet, owner, unknown));
  return { tokens: read.tokens, ids: read.ids, mapped: read.mapped, note: read.note };
}
