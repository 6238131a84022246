// The page's one byte formatter and one percentage formatter (web/shared/format.js): decimal units
// as the Hub writes them, and no probability written as "5.5e-13%".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatBytes, formatPercent } from '../../web/shared/format.js';
import { percent as modelPercent } from '../../web/views/model/model-data.js';
import { percent as circuitPercent } from '../../web/shared/circuit-format.js';

test('formatBytes: decimal kB / MB / GB to 3 significant digits, as the Hub lists sizes', () => {
  const cases = [[0, '0 B'], [512, '512 B'], [999, '999 B'], [1000, '1 kB'], [1536, '1.54 kB'], [762_573, '763 kB'],
    [755_098, '755 kB'], [999_600, '1 MB'], [9_600_000, '9.6 MB'], [145e6, '145 MB'], [1.32e9, '1.32 GB'], [5.94e9, '5.94 GB'],
    [2e12, '2 TB']];
  for (const [bytes, text] of cases) assert.equal(formatBytes(bytes), text, String(bytes));
  // One GGUF file's 762 573 bytes: the same text wherever it is written (the Hub's listing said 763 kB).
  assert.equal(formatBytes(762_573), '763 kB');
});

test('formatPercent: no exponent, "< 0.01%" for tiny positive probabilities, never 100% short of it', () => {
  const cases = [[0, '0%'], [1, '100%'], [5.5e-15, '< 0.01%'], [1e-9, '< 0.01%'], [0.0000999, '< 0.01%'], [0.0001, '0.01%'],
    [0.00021, '0.021%'], [0.001, '0.1%'], [0.123, '12.3%'], [0.5, '50.0%'], [0.9994, '99.9%'], [0.99951, '99.95%'],
    [0.999999, '> 99.99%']];
  for (const [p, text] of cases) assert.equal(formatPercent(p), text, String(p));
  for (const p of [5.5e-15, 1e-30, Number.MIN_VALUE]) assert.doesNotMatch(formatPercent(p), /e/, String(p));
});

test('the Your model view and the Circuits view write probabilities with the same formatter', () => {
  for (const p of [0, 5.5e-15, 0.00021, 0.4523, 0.9999, 1]) {
    assert.equal(modelPercent(p), formatPercent(p));
    assert.equal(circuitPercent(p), formatPercent(p));
  }
});
