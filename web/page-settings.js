// The page's own defaults and schema for its URL (main.js): the shared ones (shared/state.js)
// with the page opening on a shipped trained model.
import { DEFAULTS, makeSchema } from './shared/state.js';

// The page opens on the shipped `english` trained model with a text of its alphabet; random
// weights are `model=random` in the URL (and then the shared default text). Page only: the
// <attention-lens> element keeps DEFAULTS (random weights unless its `model` says otherwise).
export const PAGE_MODEL = 'english';
export const PAGE_TEXT = 'the bank will not loan money';
export const pageDefaults = (state) => ({ ...DEFAULTS, model: PAGE_MODEL, ...(state.model === '' ? {} : { text: PAGE_TEXT }) });

/** The settings' schema with the page's `model`: 'random' in the URL is '' (random weights). */
export function pageSchema(catalog) {
  const schema = makeSchema(catalog);
  const model = { parse: (s) => (s === 'random' ? '' : schema.model.parse(s)), print: (v) => v || 'random' };
  return Object.freeze({ ...schema, model });
}
