// TEMPORARY (delete when merging): a hand-written copy of the core's `lens.catalog` (the JS API
// contract of issue 10 item 6), for builds of the API that do not have it yet. catalog.js uses
// it only when `lens.catalog` is missing. Field names and values follow the contract exactly.

const step = (id, title, perHead, rows, cols, equation, appearsWith = null, needs = null) =>
  ({ id, title, perHead, rows, cols, equation, appearsWith, needs });
const ADDITIVE = { positional: ['sinusoidal', 'learned'] };
const ADDITIVE_NEEDS = "positional: 'sinusoidal' or 'learned'";

export const CATALOG_FALLBACK = Object.freeze({
  steps: [
    step('embedding', 'Token embeddings', false, 'position', 'dimension', String.raw`X \in \mathbb{R}^{n \times d_{model}}`),
    step('positional', 'Positional encoding', false, 'position', 'dimension', String.raw`PE \in \mathbb{R}^{n \times d_{model}}`,
      ADDITIVE, ADDITIVE_NEEDS),
    step('input', 'Input to attention', false, 'position', 'dimension', String.raw`X_{in} = X + PE`),
    step('source', 'Source sequence (keys and values)', false, 'position', 'dimension', String.raw`X_{src,in} = X_{src} + PE`,
      { cross: true }, 'cross-attention (a kv source)'),
    step('q', 'Queries', true, 'query', 'dimension', String.raw`Q_{%} = X_{in} W_{Q,%}^\top + b_{Q,%}`),
    step('k', 'Keys', true, 'key', 'dimension', String.raw`K_{%} = X_{in} W_{K,%}^\top + b_{K,%}`),
    step('v', 'Values', true, 'key', 'dimension', String.raw`V_{%} = X_{in} W_{V,%}^\top + b_{V,%}`),
    step('q_rotated', 'Queries rotated by position (RoPE)', true, 'query', 'dimension',
      String.raw`\hat{q}_{pos} = R_{\Theta, pos}\, q_{pos}`, { positional: ['rope'] }, "positional: 'rope'"),
    step('k_rotated', 'Keys rotated by position (RoPE)', true, 'key', 'dimension',
      String.raw`\hat{k}_{pos} = R_{\Theta, pos}\, k_{pos}`, { positional: ['rope'] }, "positional: 'rope'"),
    step('scores', 'Scores QKᵀ', true, 'query', 'key', String.raw`S_{%} = Q_{%} K_{%}^\top`),
    step('scaled', 'Scaled scores', true, 'query', 'key', String.raw`\tilde{S}_{%} = \frac{S_{%}}{\sqrt{d_k}}`),
    step('alibi', 'ALiBi distance bias', true, 'query', 'key', String.raw`B_{%,ij} = -m_{%} |i - j|`,
      { positional: ['alibi'] }, "positional: 'alibi'"),
    step('masked', 'Masked scores', true, 'query', 'key', String.raw`\tilde{S}_{%} + M`),
    step('weights', 'Attention weights', true, 'query', 'key',
      String.raw`A_{%} = \operatorname{softmax}_{\text{row}}\left(\tilde{S}_{%} + M\right)`),
    step('context', 'Weighted sum of values', true, 'query', 'dimension', String.raw`Z_{%} = A_{%} V_{%}`),
    step('concat', 'Heads concatenated', false, 'query', 'dimension', String.raw`Z = \operatorname{Concat}(Z_1, \ldots, Z_h)`),
    step('output', 'Output projection', false, 'query', 'dimension', String.raw`Y = Z W_O^\top + b_O`),
  ],
  positional: ['none', 'sinusoidal', 'learned', 'rope', 'alibi'],
  masks: ['none', 'causal', 'sliding-window', 'prefix-lm'],
  tokenizers: ['word', 'char'],
  defaults: {
    layer: { dModel: 64, heads: 4, headDim: 0, bias: true, outProj: true, positional: 'none', seed: 42 },
    forward: { mask: 'none', window: 0, prefix: 0, scale: true, weights: true, trace: false, traceHead: -1, preview: 0 },
  },
  limits: { maxModelDim: 4096, maxHeads: 256, maxSequence: 65536, maxScoreValues: 67108864, maxTraceValues: 4194304 },
});
