// What the page's walkthrough and the <attention-lens> element both show for a result, decided
// once: the steps to draw (the trace, or every head's weights when the input was too large to
// trace), the stages those steps fill, a stage's steps for one head, what a missing stage needs,
// the settings line and the words for one cell. Plain data in, plain data out: no DOM here.
import { conditionsOf, stepEquation, stepInfo, stepTitle } from './catalog.js';
import { STAGES } from './stages.js';

/**
 * Without a trace (too many tokens to keep every step), each head's attention weights still
 * make a walkthrough step: the forward's r.attention, one [n, kvN] slice per head, titled and
 * written as the catalog says.
 */
export function weightsOnlySteps(result, catalog) {
  const info = stepInfo(catalog, 'weights');
  const { n, kvN } = result;
  return Array.from({ length: result.config.heads }, (_, h) => ({
    id: 'weights', head: h, shape: [n, kvN], rows: info.rows, cols: info.cols,
    title: stepTitle(info, h), equation: stepEquation(info, h),
    data: result.attention.subarray(h * n * kvN, (h + 1) * n * kvN),
  }));
}

/** The steps a result offers the walkthrough: its trace, else weightsOnlySteps. */
export const walkthroughSteps = (result, catalog) =>
  (result.steps.length || !result.attention ? result.steps : weightsOnlySteps(result, catalog));

/** The stages the steps have data for, in walkthrough order. */
export function availableStages(steps) {
  const ids = new Set(steps.map((s) => s.id));
  return STAGES.filter((stage) => (stage.requires ? ids.has(stage.requires) : stage.steps.some((id) => ids.has(id))));
}

/** The stage with this id among `stages`, else the softmax weights, else the first. */
export const pickStage = (stages, id) =>
  stages.find((s) => s.id === id) ?? stages.find((s) => s.id === 'weights') ?? stages[0];

/** A stage's steps for one head, in the stage's order (steps that are not per head included). */
export const stepsOfStage = (stage, steps, head) =>
  stage.steps.flatMap((id) => steps.filter((s) => s.id === id && (s.head === -1 || s.head === head)));

/**
 * What a stage that is missing from a trace needs, from the catalog's `appearsWith` of its steps,
 * each condition phrased by `say(key, value)`; '' when it has no condition.
 */
export const stageNeeds = (catalog, stage, say) => conditionsOf(catalog, stage.steps, say).join(' or ');

// Words for the catalog's names (display only: which names exist comes from the catalog):
// [the choice's label in a menu, its words in a settings line].
const WORDS = {
  mask: { none: ['none (encoder)', ''], causal: ['causal (decoder)', 'causal mask'], padding: ['padding', 'padding mask'],
    'sliding-window': ['sliding window', 'sliding window'], 'prefix-lm': ['prefix-LM', 'prefix-LM mask'] },
  positional: { none: ['none', ''], sinusoidal: ['sinusoidal', 'sinusoidal positions'],
    learned: ['learned', 'learned positions'], rope: ['RoPE', 'RoPE'], alibi: ['ALiBi', 'ALiBi'] },
  tokenizer: { word: ['words'], char: ['characters'] },
};

/** A choice's label in a menu ('causal (decoder)'); unknown names are shown as they are. */
export const choiceLabel = (kind, id) => WORDS[kind]?.[id]?.[0] ?? id;
const summaryWords = (kind, id) => WORDS[kind]?.[id]?.[1] ?? id;

/** Lines break between the parts of a title line, not inside one ("6 tokens", "head 1 of 4"). */
export const keepTogether = (text) => text.replace(/ /g, '\u00a0');

/** "6 tokens · causal mask · sinusoidal positions" for a title line. */
export function settingsSummary(state, result) {
  const bits = [result.cross ? `${result.n} → ${result.kvN} tokens (cross-attention)` : `${result.n} tokens`];
  if (state.mask !== 'none') {
    let mask = summaryWords('mask', state.mask);
    if (state.mask === 'sliding-window') mask += ` of ${state.window}`;
    if (state.mask === 'prefix-lm') mask += ` (prefix ${state.prefix})`;
    bits.push(mask);
  }
  const positional = summaryWords('positional', result.config.positional);
  if (positional) bits.push(positional);
  if (!state.scale) bits.push('no √d_k scaling');
  return bits.map(keepTogether).join(' · ');
}

/** Words for one cell of a matrix: `query “bank” → key “money”`. */
export function cellWords(matrix, row, col) {
  const side = (axis, labels, index) => (axis === 'dimension' ? `dimension ${index}` : `${axis} “${labels[index]}”`);
  return `${side(matrix.rowAxis, matrix.rowLabels, row)} → ${side(matrix.colAxis, matrix.colLabels, col)}`;
}

/**
 * The token indices a pinned cell {stepId, head, row, col} is about, from its step's axes:
 * { query: [...], key: [...] } (a dimension axis names no token; a 'position' row is a query
 * token, or a key token in the source step).
 */
export function pinnedTokens(steps, pinned) {
  const out = { query: [], key: [] };
  const step = pinned && steps.find((s) => s.id === pinned.stepId && (s.head === pinned.head || s.head === -1));
  if (!step) return out;
  const sideOf = (axis) => (axis === 'position' ? (step.id === 'source' ? 'key' : 'query')
    : axis === 'query' || axis === 'key' ? axis : null);
  for (const [axis, index] of [[step.rows, pinned.row], [step.cols, pinned.col]]) {
    const side = sideOf(axis);
    if (side) out[side].push(index);
  }
  return out;
}
