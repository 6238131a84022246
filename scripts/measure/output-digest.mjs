// A digest of every number a fixed set of forwards returns (layer traces for every encoding and
// mask, model traces and gradients, the shipped trained models, GPT-2 checkpoints): run it on the
// module before and after a refactor, and equal totals mean bit-identical results.
// Usage: node scripts/measure/output-digest.mjs [path/to/attention-lens.mjs] > digest.json
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const modPath = process.argv[2] ?? `${root}build/wasm-release/attention-lens.mjs`;
const { loadAttentionLens } = await import(modPath);
const lens = await loadAttentionLens({ wasmBinary: readFileSync(modPath.replace(/\.mjs$/, '.wasm')) });
const h = createHash('sha256');
const parts = {};
const add = (label, arr) => { const b = Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength); h.update(b); const p = createHash('sha256'); p.update(b); parts[label] = p.digest('hex').slice(0, 12); };
for (const positional of ['none', 'sinusoidal', 'learned', 'rope', 'alibi']) {
  for (const mask of ['none', 'causal']) {
    const layer = lens.createLayer({ dModel: 32, heads: 4, positional, seed: 7 });
    const x = layer.embed([5, 9, 2, 2, 31, 7, 1000, 3]);
    const r = layer.forward(x, { n: 8, mask, trace: true });
    add(`layer ${positional} ${mask} out`, r.output); add(`layer ${positional} ${mask} att`, r.attention);
    r.steps.forEach((s, i) => add(`layer ${positional} ${mask} step ${i} ${s.id} ${s.head}`, s.data));
    const f = layer.forward(x, { n: 8, mask, weights: false });
    add(`layer ${positional} ${mask} flash`, f.output);
    layer.dispose();
  }
}
for (const positional of ['learned', 'rope', 'sinusoidal']) {
  const m = lens.createModel({ vocab: 40, context: 16, dModel: 32, heads: 4, layers: 2, positional, mlp: true, seed: 3 });
  const ids = Int32Array.from([1, 5, 9, 3, 3, 7, 22, 39, 0, 4]);
  const f = m.forward(ids, { n: 10, trace: true });
  add(`model ${positional} logits`, f.logits); f.attention.forEach((a, i) => add(`model ${positional} att ${i}`, a));
  f.steps.forEach((layer, l) => layer.forEach((s, i) => add(`model ${positional} L${l} step ${i} ${s.id} ${s.head}`, s.data)));
  const g = m.lossAndGradients(ids, Int32Array.from([5, 9, 3, 3, 7, 22, 39, 0, 4, -1]), { n: 10 });
  for (const [k, v] of Object.entries(g.gradients)) add(`model ${positional} grad ${k}`, v);
  add(`model ${positional} loss`, Float64Array.of(g.loss));
  m.dispose();
}
for (const name of ['induction', 'english']) {
  const t = await lens.trainedModel(name, { bytes: readFileSync(`${root}web/models/${name}.safetensors`) });
  const ids = Int32Array.from([1, 2, 3, 4, 5, 1, 2, 3, 4]);
  const f = t.forward(ids, { n: 9, trace: true });
  add(`${name} logits`, f.logits); f.attention.forEach((a, i) => add(`${name} att ${i}`, a));
  f.steps.forEach((layer, l) => layer.forEach((s, i) => add(`${name} L${l} step ${i} ${s.id} ${s.head}`, s.data)));
  t.dispose();
}
const dir = `${root}tests/data/gpt2/`;
for (const name of ['tiny-f32', 'tiny-f16', 'bare-bf16']) {
  try {
    const gpt = await lens.loadCheckpoint({ weights: new Uint8Array(readFileSync(`${dir}${name}.safetensors`)), config: JSON.parse(readFileSync(`${dir}${name}.config.json`, 'utf8')) });
    const ids = Int32Array.from([1, 5, 9, 3, 3, 7, 22, 39]);
    const f = gpt.forward(ids, { n: 8, trace: true });
    add(`${name} logits`, f.logits); f.attention.forEach((a, i) => add(`${name} att ${i}`, a));
    f.steps.forEach((layer, l) => layer.forEach((s, i) => add(`${name} L${l} step ${i} ${s.id} ${s.head}`, s.data)));
    gpt.dispose();
  } catch (e) { parts[name] = 'ERR ' + e.message; }
}
console.log(JSON.stringify({ total: h.digest('hex'), count: Object.keys(parts).length, parts }));
