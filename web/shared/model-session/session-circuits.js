// The model session's share of the Circuits view (DOM-free; session-model.js calls it with the
// loaded model): the two prompts' tokens and top next tokens, an answer text as one token id, the
// induction preset's repeated random tokens, and the analyses of docs/API.md "Analysis: what a
// head does" (m.logitLens, m.rollout, m.attribute, m.patch) with the token texts the page draws.
// Every number comes from the API; this file only tokenizes, picks and names.

/** The logit lens's top-k the page reads (hover shows them all). */
export const LENS_TOP = 5;
/** Repeated random tokens of the induction preset: this many, then all but the last again. */
export const INDUCTION_LENGTH = 8;

/** A small seeded generator (LCG, numerical recipes' constants) for the preset's draws: not analysis. */
function lcg(seed) {
  let state = (seed >>> 0) || 1;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

export class CircuitAnalyses {
  #model;
  #trained;
  #tokenized; // (text) => { all, n, ids } as the session reads text
  #texts = null; // every id's text, once asked
  #byText = null; // text -> the first id with it

  /**
   * @param {object} model the loaded model (a checkpoint or a shipped trained model)
   * @param {boolean} trained whether it is a shipped character model
   * @param {(text: string) => {all: object, n: number, ids: Int32Array}} tokenized the session's tokenizer
   */
  constructor(model, trained, tokenized) {
    this.#model = model;
    this.#trained = trained;
    this.#tokenized = tokenized;
  }

  /** Every id's text (a checkpoint's tokenizer's, a shipped model's alphabet character), '' for none. */
  #vocabTexts() {
    if (this.#texts) return this.#texts;
    const { vocab } = this.#model.config;
    if (this.#trained) this.#texts = Array.from({ length: vocab }, (_, id) => this.#model.vocabulary[id] ?? '');
    else this.#texts = this.#model.tokenTexts(Int32Array.from({ length: vocab }, (_, id) => id)).map((t) => t ?? '');
    this.#byText = new Map();
    this.#texts.forEach((text, id) => {
      if (text && !this.#byText.has(text)) this.#byText.set(text, id);
    });
    return this.#texts;
  }

  /** The texts of `ids`. */
  textsOf(ids) {
    const texts = this.#vocabTexts();
    return Array.from(ids, (id) => texts[id] ?? `#${id}`);
  }

  /** A prompt read by the model: its tokens and ids, and its most likely next token. */
  prompt(text) {
    const { all, n, ids } = this.#tokenized(text);
    const { next } = this.#model.forward(ids, { n, logits: 'last', next: 1 });
    const [top] = next;
    return { text, tokens: all.tokens.slice(0, n), ids: Array.from(ids), n, cut: all.ids.length - n,
      mapped: (all.mapped ?? []).filter((m) => m.position < n), note: all.note ?? '',
      next: { id: top.id, text: this.textsOf([top.id])[0], probability: top.probability } };
  }

  /**
   * An answer typed as text: the id whose token text it is exactly, else the one token the
   * tokenizer reads it as (after the tokens it puts before any text, a BOS); else a readable Error.
   */
  answer(text) {
    if (typeof text !== 'string' || text === '') throw new Error('type an answer token');
    this.#vocabTexts();
    if (this.#byText.has(text)) return { id: this.#byText.get(text), text };
    const own = this.#ownTokens(text);
    if (own.ids.length === 1) return { id: own.ids[0], text: this.textsOf(own.ids)[0] };
    const pieces = own.tokens.map((t) => `“${t}”`).join(' ');
    throw new Error(`“${text}” is ${own.ids.length} tokens for this model (${pieces}): an answer must be one token`);
  }

  /** `text`'s ids and tokens as the tokenizer reads it, less the tokens it puts before any text (a BOS); else a readable Error. */
  #ownTokens(text) {
    let ids;
    let tokens;
    try {
      ({ ids, tokens } = this.#trained ? this.#model.tokenize(text, { unknown: 'map' }) : this.#model.tokenize(text));
    } catch (error) {
      throw new Error(`“${text}” cannot be read as a token: ${error.message}`);
    }
    let before = 0;
    if (!this.#trained) {
      try {
        before = this.#model.tokenize('').ids.length;
      } catch {
        before = 0;
      }
    }
    return { ids: Array.from(ids).slice(before), tokens: tokens.slice(before) };
  }

  /**
   * How the tokenizer reads a word preset, without running the model: each prompt's token count
   * ({ n } or { error }) and each answer as one token ({ id, text }), or why not ({ text, error:
   * answer()'s reason, tokens: what it reads as, when it reads }).
   */
  spell({ clean, corrupted, answers }) {
    const count = (text) => {
      try {
        return { n: this.#tokenized(text).n };
      } catch (error) {
        return { error: error.message };
      }
    };
    return { clean: count(clean), corrupted: count(corrupted), answers: answers.map((text) => {
      try {
        return this.answer(text);
      } catch (error) {
        try {
          return { text, error: error.message, tokens: this.#ownTokens(text).tokens };
        } catch {
          return { text, error: error.message };
        }
      }
    }) };
  }

  /**
   * The induction preset: INDUCTION_LENGTH seeded random tokens t, then t again but its last
   * (clean); the same first half, then as many other random tokens s (corrupted). Answers: the
   * true next token t[last] and the corrupted stream's s[last]. Tokens are drawn from the
   * vocabulary's words (' cat': GPT-2-like vocabularies) or letters, and a draw is kept only when
   * the tokenizer reads both texts back token for token.
   */
  induction(seed = 1) {
    const texts = this.#vocabTexts();
    const { context } = this.#model.config;
    const length = Math.max(2, Math.min(INDUCTION_LENGTH, Math.floor((context - 2) / 2)));
    const pools = [/^ [A-Za-z]{2,10}$/, /^[a-z]$/, /^[A-Za-z]$/, /^ ?[A-Za-z]+$/]
      .map((pattern) => texts.flatMap((t, id) => (pattern.test(t) ? [id] : [])));
    const pool = pools.find((p) => p.length >= 2 * length + 1) ?? pools.at(-1);
    if (pool.length < 2 * length + 1) throw new Error('this vocabulary has too few plain word or letter tokens for repeated random tokens');
    for (let attempt = 0; attempt < 40; ++attempt) {
      const random = lcg(seed * 7919 + attempt);
      const picked = [...pool];
      for (let i = 0; i < 2 * length; ++i) { // a partial Fisher–Yates shuffle
        const j = i + Math.floor(random() * (picked.length - i));
        [picked[i], picked[j]] = [picked[j], picked[i]];
      }
      const first = picked.slice(0, length);
      const other = picked.slice(length, 2 * length);
      const cleanIds = [...first, ...first.slice(0, -1)];
      const corruptIds = [...first, ...other.slice(0, -1)];
      const clean = cleanIds.map((id) => texts[id]).join('');
      const corrupted = corruptIds.map((id) => texts[id]).join('');
      const readBack = (text, want) => {
        const { ids } = this.#tokenized(text);
        return ids.length >= want.length && want.every((id, i) => ids[ids.length - want.length + i] === id) ? ids.length : -1;
      };
      const n = readBack(clean, cleanIds);
      if (n > 0 && readBack(corrupted, corruptIds) === n) {
        return { clean, corrupted, answers: [texts[first.at(-1)], texts[other.at(-1)]] };
      }
    }
    throw new Error('could not draw repeated random tokens that this tokenizer reads back token for token');
  }

  /** m.logitLens on `text` ({ topK, token }), with the top ids' texts and the answer's. */
  logitLens(text, { topK = LENS_TOP, token } = {}) {
    const { all, n, ids } = this.#tokenized(text);
    const lens = this.#model.logitLens(ids, token === undefined || token === null ? { topK } : { topK, token });
    return { ...lens, tokens: all.tokens.slice(0, n), texts: this.textsOf(lens.ids), tokenText: lens.token ? this.textsOf([lens.token.id])[0] : null };
  }

  /** m.rollout on `text`: Float32Array(layers·n·n). */
  rollout(text) {
    const { all, n, ids } = this.#tokenized(text);
    return { n, tokens: all.tokens.slice(0, n), layers: this.#model.config.layers, rollout: this.#model.rollout(ids) };
  }

  /** m.attribute on `text` with answers [a, b] (ids). */
  attribute(text, answers) {
    const { all, n, ids } = this.#tokenized(text);
    return { n, tokens: all.tokens.slice(0, n), ...this.#model.attribute(ids, { answers }) };
  }

  /** m.patch of `clean` into `corrupted` over 'heads' | 'residual' | 'layers', answers [a, b] (ids). */
  patch(clean, corrupted, answers, over) {
    if (typeof this.#model.patch !== 'function') throw new Error('activation patching (m.patch) is not in this build of the module yet');
    const a = this.#tokenized(clean);
    const b = this.#tokenized(corrupted);
    const result = this.#model.patch({ clean: a.ids, corrupted: b.ids, answers, over });
    return { n: a.n, tokens: a.all.tokens.slice(0, a.n), over, ...result };
  }

  /** One head's attention on `text`: { n, tokens, layer, head, weights: Float32Array(n·n) } (not `attention`: the worker moves that one's buffers). */
  headPattern(text, layer, head) {
    const { all, n, ids } = this.#tokenized(text);
    const { attention } = this.#model.forward(ids, { n });
    return { n, tokens: all.tokens.slice(0, n), layer, head, weights: attention[layer].slice(head * n * n, (head + 1) * n * n) };
  }
}
