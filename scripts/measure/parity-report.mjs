// Prints how far the wasm module is from PyTorch on every golden case (largest absolute and
// relative error of output and attention). Run after `npm run build`: node scripts/measure/parity-report.mjs
import { goldenCases, goldenForwardOptions, goldenLayer, loadGoldenCase, loadLens } from '../lib/golden.mjs';

function deviation(got, want) {
  let abs = 0;
  let rel = 0;
  for (let i = 0; i < want.length; ++i) {
    const err = Math.abs(got[i] - want[i]);
    abs = Math.max(abs, err);
    if (Math.abs(want[i]) > 1e-3) rel = Math.max(rel, err / Math.abs(want[i]));
  }
  return { abs, rel };
}

const lens = await loadLens();
const rows = [];
let worst = { abs: 0, rel: 0 };
for (const name of goldenCases()) {
  const c = loadGoldenCase(name);
  const layer = goldenLayer(lens, c);
  const r = layer.forward(c.x, goldenForwardOptions(c));
  layer.dispose();
  const out = deviation(r.output, c.expectedOutput);
  const att = deviation(r.attention, c.expectedAttention);
  worst = { abs: Math.max(worst.abs, out.abs, att.abs), rel: Math.max(worst.rel, out.rel, att.rel) };
  rows.push(`| ${name} | ${c.n}×${c.kvN} | ${c.dModel} | ${c.heads} | ${out.abs.toExponential(1)} | ` +
    `${out.rel.toExponential(1)} | ${att.abs.toExponential(1)} | ${att.rel.toExponential(1)} |`);
}
console.log('| case | n×kvN | dModel | heads | output abs | output rel | attention abs | attention rel |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
console.log(rows.join('\n'));
console.log(`\nlargest: ${worst.abs.toExponential(2)} absolute, ${worst.rel.toExponential(2)} relative ` +
  '(relative errors over values with |x| > 1e-3)');
