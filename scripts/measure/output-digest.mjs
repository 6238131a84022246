// A digest of every number a fixed set of forwards returns (layer traces for every encoding and
// mask, model traces and gradients, the shipped trained models, GPT-2 and Llama-family checkpoints
// with heads knocked out and without, their greedy and sampled generations): run it on the module
// before and after a refactor, and equal totals mean bit-identical results.
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
// The Llama family (GQA, RMSNorm, SwiGLU, RoPE, biases, sliding window, F16/BF16 kept 2-byte):
// forward, traced layers, heads knocked out, next tokens, greedy and sampled generation.
const llama = `${root}tests/data/llama/`;
for (const name of ['llama-f32', 'llama-bf16', 'llama3-f32', 'qwen2-f32', 'qwen2-bf16', 'mistral-f32', 'smollm2-f16']) {
  try {
    const m = await lens.loadCheckpoint({ weights: new Uint8Array(readFileSync(`${llama}${name}.safetensors`)), config: JSON.parse(readFileSync(`${llama}${name}.config.json`, 'utf8')) });
    const v = m.config.vocab;
    const ids = Int32Array.from([1, 5, 9, 3, 3, 7, 22, 39, 11, 4].map((i) => i % v));
    const f = m.forward(ids, { n: 10, trace: true });
    add(`${name} logits`, f.logits); f.attention.forEach((a, i) => add(`${name} att ${i}`, a));
    f.steps.forEach((layer, l) => layer.forEach((s, i) => add(`${name} L${l} step ${i} ${s.id} ${s.head}`, s.data)));
    add(`${name} next`, Float64Array.from(m.nextTokens(5).flatMap((t) => [t.id, t.probability])));
    for (const [label, opts] of [['greedy', { maxTokens: 12 }], ['sampled', { maxTokens: 12, temperature: 1.3, topK: 20, topP: 0.9, seed: 5 }]]) {
      const g = m.generate(ids, opts);
      add(`${name} gen ${label} ids`, g.ids);
      g.steps.forEach((s, k) => { add(`${name} gen ${label} p ${k}`, Float64Array.of(s.probability)); s.attention.forEach((a, l) => add(`${name} gen ${label} ${k} att ${l}`, a)); });
    }
    m.ablate([{ layer: 0, head: 1 }, { layer: 1, head: 0 }]);
    const fa = m.forward(ids, { n: 10 });
    add(`${name} ablated logits`, fa.logits);
    const ga = m.generate(ids, { maxTokens: 6 });
    add(`${name} ablated gen`, ga.ids); ga.steps.forEach((s, k) => s.attention.forEach((a, l) => add(`${name} ablated gen ${k} att ${l}`, a)));
    m.dispose();
  } catch (e) { parts[name] = 'ERR ' + e.message; }
}
console.log(JSON.stringify({ total: h.digest('hex'), count: Object.keys(parts).length, parts }));
