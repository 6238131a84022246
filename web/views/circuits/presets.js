// The Circuits view's presets (pure): indirect object identification and factual recall as fixed
// prompts and answers for a checkpoint with a word-level vocabulary (GPT-2's), and induction on
// seeded repeated random tokens for any model (drawn by the model session from the vocabulary:
// session-circuits.js). Each preset says which analysis it opens on, and a word preset the loaded
// tokenizer cannot spell says why (presetRefused).
import { displayToken } from '../../shared/labels.js';

/** Wang et al. (2022)'s IOI sentence and its corruption: the repeated name swapped. */
export const IOI = Object.freeze({ clean: 'When Mary and John went to the store, John gave a drink to',
  corrupted: 'When Mary and John went to the store, Mary gave a drink to', answers: [' Mary', ' John'], show: 'heads' });

/** Meng et al. (2022)'s kind of fact, its subject swapped; patched over the residual stream (positions × layers). */
export const FACTUAL = Object.freeze({ clean: 'The Eiffel Tower is in the city of', corrupted: 'The Colosseum is in the city of',
  answers: [' Paris', ' Rome'], show: 'residual' });

/** The induction preset opens on the heads. */
export const INDUCTION_SHOW = 'heads';

/**
 * Whether the word presets (IOI, factual recall) fit the loaded model (`model`: the store's
 * yourModel.model): a checkpoint with a tokenizer; a shipped character model reads neither sentence.
 * Returns null when they fit, else why not.
 */
export function wordPresetsRefused(model) {
  if (!model) return 'Load a model first.';
  if (model.source === 'shipped') {
    return `The IOI and factual-recall presets need a checkpoint with a word-level vocabulary such as GPT-2's; ${model.name} ` +
      'reads characters. Load GPT-2 in Your model, or use Induction.';
  }
  if (!model.tokenizer) return 'This checkpoint came without a tokenizer: load it with one to type prompts.';
  return null;
}

/** The word presets by the names the view's buttons use (circuits-preset-NAME), with what they are called. */
export const WORD_PRESETS = Object.freeze({ ioi: { ...IOI, title: 'The IOI preset' }, factual: { ...FACTUAL, title: 'The factual-recall preset' } });

/**
 * Why a word preset cannot run on the loaded model, from how its tokenizer reads it (`spelled`: the
 * model session's circuitPresetFit entry): what would fail — a prompt it cannot read, prompts of
 * different lengths (patching copies activations position by position), an answer that is not one
 * token (attribution and patching compare two tokens' logits). Null when it runs.
 */
export function presetRefused(title, spelled) {
  const problems = [];
  for (const which of ['clean', 'corrupted']) {
    if (spelled[which].error) problems.push(`its ${which} prompt cannot be read (${spelled[which].error})`);
  }
  if (!problems.length && spelled.clean.n !== spelled.corrupted.n) {
    problems.push(`its prompts are ${spelled.clean.n} and ${spelled.corrupted.n} tokens here, and patching needs the same length`);
  }
  const split = spelled.answers.filter((a) => a.error);
  if (split.length) {
    const spelt = split.map((a, i) => (a.tokens ? `“${displayToken(a.text)}” as ${a.tokens.length}${i ? '' : ' tokens'} (${a.tokens.map((t) => displayToken(t)).join(' ')})`
      : `“${displayToken(a.text)}” not at all (${a.error})`));
    problems.push(`this tokenizer spells ${spelt.join(' and ')}, and an answer must be one token`);
  }
  return problems.length ? `${title} cannot run on this model: ${problems.join('; ')}. It needs a vocabulary like GPT-2's.` : null;
}
