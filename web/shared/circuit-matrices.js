// The Circuits view's results as the matrices it (and the <attention-lens> element's snapshots) draw (pure, tested in node): each analysis's
// numbers from the API placed in rows and columns with their labels, titles and what a cell means,
// and the JSON an export writes. No number is computed here: values are copied as returned
// (sorting and formatting only).
import { displayToken } from './labels.js';

const layerLabels = (layers) => Array.from({ length: layers }, (_, l) => `L${l + 1}`);
const headLabels = (heads) => Array.from({ length: heads }, (_, h) => `H${h + 1}`);

/** Position labels: the clean prompt's tokens, numbered when a token repeats ('the', 'the²'). */
export function positionLabels(tokens) {
  const seen = new Map();
  return tokens.map((t) => {
    const shown = displayToken(t);
    const count = (seen.get(shown) ?? 0) + 1;
    seen.set(shown, count);
    return count === 1 ? shown : `${shown}·${count}`;
  });
}

/** The logit lens's row names: the embeddings (entering block 1), then after each block. */
export const lensRowLabels = (layers) => ['embed', ...Array.from({ length: layers }, (_, l) => `after L${l + 1}`)];

/**
 * The drawn matrix of a result (`result`: the session's 'circuit' reply; `config`: the model's
 * { layers, heads }; `layer`: the rollout's layer, 0-based): { data, rows, cols, rowLabels,
 * colLabels, rowAxis, colAxis, title, scale, cellLabels? }.
 */
export function resultMatrix(result, config, layer = 0) {
  const { layers, heads } = config;
  switch (result.kind) {
    case 'heads':
      return { data: Float32Array.from(result.effect), rows: layers, cols: heads, rowLabels: layerLabels(layers), colLabels: headLabels(heads),
        rowAxis: 'layer', colAxis: 'head', scale: 'diverging',
        title: 'Patching each head (its output before o_proj, every position): share of the clean metric restored' };
    case 'residual':
      return { data: Float32Array.from(result.effect), rows: layers, cols: result.n, rowLabels: layerLabels(layers),
        colLabels: positionLabels(result.tokens), rowAxis: 'layer', colAxis: 'position', scale: 'diverging',
        title: 'Patching the residual stream entering each layer at each position: share of the clean metric restored' };
    case 'layers': {
      const data = new Float32Array(2 * layers);
      data.set(result.effect.attention, 0);
      data.set(result.effect.mlp, layers);
      return { data, rows: 2, cols: layers, rowLabels: ['attention', 'MLP'], colLabels: layerLabels(layers), rowAxis: 'sublayer',
        colAxis: 'layer', scale: 'diverging', title: 'Patching each attention and MLP output: share of the clean metric restored' };
    }
    case 'attribution': {
      // Each layer's heads, its attention's out_proj bias, its MLP: layers × (heads + 2).
      const cols = heads + 2;
      const data = new Float32Array(layers * cols);
      for (let l = 0; l < layers; ++l) {
        data.set(result.heads.subarray(l * heads, (l + 1) * heads), l * cols);
        data[l * cols + heads] = result.attentionBias[l];
        data[l * cols + heads + 1] = result.mlp[l];
      }
      return { data, rows: layers, cols, rowLabels: layerLabels(layers), colLabels: [...headLabels(heads), 'bias', 'MLP'], rowAxis: 'layer',
        colAxis: 'part', scale: 'diverging', title: 'Direct logit attribution: each part\u2019s share of logit[a] − logit[b] at the last position' };
    }
    case 'lens': {
      const { rows, n, topK } = result;
      const data = new Float32Array(rows * n);
      const cellLabels = new Array(rows * n);
      for (let i = 0; i < rows * n; ++i) {
        data[i] = result.probs[i * topK];
        cellLabels[i] = displayToken(result.texts[i * topK]);
      }
      return { data, rows, cols: n, rowLabels: lensRowLabels(rows - 1), colLabels: positionLabels(result.tokens), rowAxis: 'residual',
        colAxis: 'position', scale: 'probability', cellLabels,
        title: 'Logit lens: the top next token read from each layer\u2019s residual stream, coloured by its probability' };
    }
    case 'rollout': {
      const { n } = result;
      const l = Math.max(0, Math.min(result.layers - 1, layer));
      const labels = positionLabels(result.tokens);
      return { data: result.rollout.slice(l * n * n, (l + 1) * n * n), rows: n, cols: n, rowLabels: labels, colLabels: labels,
        rowAxis: 'position', colAxis: 'token', scale: 'probability',
        title: `Attention rollout after layer ${l + 1}: how much each position draws on each input token` };
    }
    default:
      throw new Error(`unknown analysis '${String(result.kind).slice(0, 40)}'`);
  }
}

/**
 * Every part of a direct attribution, largest magnitude first: [{ name, value }] (embeddings,
 * each head, each attention bias, each MLP, the constant). Sorting only.
 */
export function attributionParts(result, { layers, heads }) {
  const parts = [{ name: 'embeddings', value: result.embed }, { name: 'constant (biases)', value: result.constant }];
  for (let l = 0; l < layers; ++l) {
    for (let h = 0; h < heads; ++h) parts.push({ name: `L${l + 1} H${h + 1}`, value: result.heads[l * heads + h], layer: l, head: h });
    parts.push({ name: `L${l + 1} attention bias`, value: result.attentionBias[l] });
    parts.push({ name: `L${l + 1} MLP`, value: result.mlp[l] });
  }
  return parts.sort((x, y) => Math.abs(y.value) - Math.abs(x.value));
}

/** The logit lens's top-k at (row, position): [{ text, probability }], and the answer's rank and probability (or null). */
export function lensCell(result, row, position) {
  const i = row * result.n + position;
  const top = Array.from({ length: result.topK }, (_, j) => ({ id: result.ids[i * result.topK + j], text: result.texts[i * result.topK + j],
    probability: result.probs[i * result.topK + j] }));
  const token = result.token ? { text: result.tokenText, rank: result.token.ranks[i], probability: result.token.probs[i] } : null;
  return { top, token };
}

/** What an export's JSON holds: the inputs, the drawn matrix (rows of numbers) and the API's own scalars. */
export function resultJson(result, matrix, { model, clean, corrupted, answers, layer = 0 }) {
  const rows = Array.from({ length: matrix.rows }, (_, r) => Array.from(matrix.data.subarray(r * matrix.cols, (r + 1) * matrix.cols)));
  const out = { analysis: result.kind, title: matrix.title, model, prompts: { clean, corrupted }, answers,
    rows: { axis: matrix.rowAxis, labels: matrix.rowLabels }, cols: { axis: matrix.colAxis, labels: matrix.colLabels }, data: rows };
  if (['heads', 'residual', 'layers'].includes(result.kind)) Object.assign(out, { cleanMetric: result.clean, corruptedMetric: result.corrupted });
  if (result.kind === 'attribution') Object.assign(out, { total: result.total, embed: result.embed, constant: result.constant });
  if (result.kind === 'lens') Object.assign(out, { topTokens: matrix.cellLabels, topK: result.topK });
  if (result.kind === 'rollout') out.layer = Math.max(0, Math.min(result.layers - 1, layer));
  return out;
}
