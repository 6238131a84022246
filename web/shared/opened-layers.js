// A layer another view opened in the walkthrough (a checkpoint's layer from Your model, a layer of
// the Train view's run), as model.attentionLayer gave it: its arrays — the layer's input and
// weights — are kept here, out of the page store, which holds the rest (store.openedLayer: its key,
// config, mask, tokens and where it came from). The engine reads the arrays by key
// (engine-client.js hands them to each engine once).

let latest = null; // { key, arrays: { input, weights } }: the last layer opened (another replaces it)
let count = 0;

/**
 * The store's record of a layer opened from `value` ({ input, config, weights, mask, ids, tokens?,
 * probe?, step }) with `facts` (source, layer, head, …): everything but the arrays, which stay here.
 */
export function openLayer(value, facts) {
  const { input, weights, ...rest } = value;
  count += 1;
  latest = { key: `opened-${count}`, arrays: { input, weights } };
  return { key: latest.key, ...rest, ...facts };
}

/** The arrays kept under `key` ({ input, weights }), or null when another layer has been opened since. */
export function openedLayerArrays(key) {
  return latest?.key === key ? latest.arrays : null;
}
