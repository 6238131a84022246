// A runnable Node example of the JS API (docs/javascript-api.md shows this file): `node web/api/example.mjs`
// after `npm run build`. Two heads of causal self-attention over a 4-token sentence.
import { loadAttentionLens } from '../../dist/attention-lens.mjs';

const lens = await loadAttentionLens();
const layer = lens.createLayer({ dModel: 8, heads: 2, bias: true, positional: 'sinusoidal', seed: 42 });

const { tokens, ids } = lens.tokenize('The cat sat down');
const x = layer.embed(ids); // Float32Array [n * dModel]: rows of the seeded embedding table
const result = layer.forward(x, { n: tokens.length, mask: 'causal', trace: true });

console.log('tokens:', tokens.join(' | '));
console.log('output:', result.output.length, 'values'); // n * dModel = 32
for (let h = 0; h < layer.config.heads; ++h) {
  console.log(`head ${h + 1} attention (row = query, column = key):`);
  for (let i = 0; i < tokens.length; ++i) {
    const row = result.attention.subarray((h * tokens.length + i) * tokens.length,
      (h * tokens.length + i + 1) * tokens.length);
    console.log(`  ${tokens[i].padEnd(5)} ${Array.from(row, (a) => a.toFixed(3)).join(' ')}`);
  }
}
console.log('steps:', [...new Set(result.steps.map((s) => s.id))].join(' → '));
layer.dispose();
