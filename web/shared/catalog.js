// The one place the page and the element learn what the core computes: its steps (generic
// title, equation, per-head or not, axes, when a step appears), the mask, positional and
// tokenizer names, defaults and limits. It is the core's `lens.catalog` (the C++ catalog in
// cpp/attention/layer/steps.hpp, exported once by the JS API), never a copy of it.

/** The catalog of a loaded API. */
export const catalogOf = (lens) => lens.catalog;

/** The catalog's entry for a step id, or undefined. */
export const stepInfo = (catalog, id) => catalog.steps.find((s) => s.id === id);

/** A step's generic equation for one head (`%` is the 1-based head number). */
export const stepEquation = (info, head) => info.equation.replaceAll('%', String(head + 1));

/** The step's generic title, for one head when it is per head ("Attention weights, head 2"). */
export const stepTitle = (info, head) => (info.perHead && head >= 0 ? `${info.title}, head ${head + 1}` : info.title);

/** Ids of the steps whose cells are (query, key) pairs: the ones where clicking can mask a cell. */
export const queryKeySteps = (catalog) =>
  new Set(catalog.steps.filter((s) => s.rows === 'query' && s.cols === 'key').map((s) => s.id));

/**
 * The mask choices the page offers: the core's masks, and the page's own "padding" (a
 * key-padding vector over [PAD] tokens the page appends) after "causal".
 */
export function pageMasks(catalog) {
  const masks = [...catalog.masks];
  masks.splice(masks.indexOf('causal') + 1, 0, 'padding');
  return masks;
}

/**
 * When steps appear (`appearsWith`) in words: `say` phrases one condition, given
 * ('positional', ['rope']) or ('cross', true); the conditions of several steps are deduplicated.
 * A step whose condition no setting names (q/k norms, a soft-cap: a checkpoint's layer) is said
 * in the core's words (its `needs`).
 */
export function conditionsOf(catalog, stepIds, say) {
  const words = new Set();
  for (const id of stepIds) {
    const info = stepInfo(catalog, id);
    const named = Object.entries(info?.appearsWith ?? {}).filter(([, value]) => !Array.isArray(value) || value.length > 0);
    for (const [key, value] of named) words.add(say(key, value));
    if (info?.appearsWith && named.length === 0) words.add(info.needs);
  }
  return [...words];
}
