// A helper the API suites (api.test.mjs, api-weights.test.mjs) share.
import { loadLens } from './support.mjs';

/** Runs body(layer, lens) on a fresh lens.createLayer(config), disposed afterwards. */
export async function withLayer(config, body) {
  const lens = await loadLens();
  const layer = lens.createLayer(config);
  try {
    return await body(layer, lens);
  } finally {
    layer.dispose();
  }
}
