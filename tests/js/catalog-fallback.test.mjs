// TEMPORARY (delete with web/shared/catalog-fallback.js when merging): the page's hand-written
// copy of the core's catalog agrees with `lens.catalog` wherever the API already has it.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { CATALOG_FALLBACK } from '../../web/shared/catalog-fallback.js';
import { loadLens } from './support.mjs';

const lens = await loadLens();

test('the temporary fallback catalog agrees with the core\'s', { skip: !lens.catalog && 'this API has no lens.catalog yet' }, () => {
  const shape = (c) => c.steps.map((s) => [s.id, s.perHead, s.rows, s.cols, JSON.stringify(s.appearsWith)]);
  assert.deepEqual(shape(CATALOG_FALLBACK), shape(lens.catalog));
  for (const key of ['positional', 'masks', 'tokenizers', 'defaults', 'limits']) assert.deepEqual(CATALOG_FALLBACK[key], lens.catalog[key], key);
});
