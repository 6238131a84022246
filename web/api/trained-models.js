// The trained models that ship with the module (lens.trainedModel): their catalogue and weights.
// A module of the JS API (web/api/attention-lens-api.js is its entry; scripts/bundle-api.mjs
// bundles them into dist/attention-lens.mjs).
import { readInAlphabet } from './alphabet.js';
import { deepFreeze, describe, isNode, tokenIds } from './common.js';
import { TOKEN_TEXT, TransformerModel } from './model.js';

// ---- the shipped trained models ------------------------------------------------------------

const TRAINED_CATALOGUE = deepFreeze(
  typeof ATTN_TRAINED_MODELS === 'object' && ATTN_TRAINED_MODELS ? ATTN_TRAINED_MODELS : { models: [] });
export const TRAINED_NAMES = Object.freeze(TRAINED_CATALOGUE.models.map((m) => m.name));

export function trainedInfo(name) {
  const info = TRAINED_CATALOGUE.models.find((m) => m.name === name);
  if (!info) {
    throw new Error(`unknown trained model ${describe(name)}; the shipped models are: ${TRAINED_NAMES.join(', ')}`);
  }
  return info;
}

// models/FILE beside this module: read in Node, fetched in browsers. The URL is built at run
// time (not a `new URL(\`models/${file}\`, import.meta.url)` pattern, which bundlers such as Vite
// would turn into a glob import): a bundled page serves dist/models/ beside its module, or passes
// the bytes (trainedModel(name, { bytes })).
export async function readModelFile(file) {
  const folder = 'models/';
  const url = new URL(folder + file, import.meta.url);
  if (isNode && url.protocol === 'file:') {
    const fsModule = 'node:fs/promises';
    const { readFile } = await import(/* @vite-ignore */ fsModule);
    return new Uint8Array(await readFile(url));
  }
  let response;
  try {
    response = await fetch(url);
  } catch (error) {
    throw new Error(`could not fetch ${url.href} (${error.message}); on file:// pass the bytes: trainedModel(name, { bytes })`);
  }
  if (!response.ok) throw new Error(`could not fetch ${url.href}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** A shipped trained model: a TransformerModel with its catalogue entry and its task's alphabet. */
export class TrainedModel extends TransformerModel {
  #info;
  #alphabet;
  #core;
  #unknownNames;

  constructor(core, catalog, info, unknownNames) {
    super(core, catalog, info.config);
    this.#info = info;
    this.#alphabet = Array.from(info.vocabulary);
    this.#core = core;
    this.#unknownNames = unknownNames;
  }

  /** The catalogue entry (frozen): name, title, description, config, training, metrics … */
  get info() {
    return this.#info;
  }

  /** The characters of the model's task; token id i is the i-th. */
  get vocabulary() {
    return this.#info.vocabulary;
  }

  /**
   * Text as the model reads it, one token per character: { tokens, ids: Int32Array, mapped,
   * note }. With `unknown: 'error'` (the default) a character outside the alphabet throws naming
   * it; with 'map' it is read as another (the core's rule: lowercased, a look-alike, or a
   * substitute), listed in `mapped` ({ position, typed, read, how }) and summed up in `note`.
   */
  tokenize(text, options = {}) {
    return readInAlphabet(this.#core, text, this.#info.vocabulary, `the ${this.#info.name} model`, options,
      this.#unknownNames);
  }

  /** Token ids of text (Int32Array), read as tokenize(text, options) reads it. */
  encode(text, options = {}) {
    return this.tokenize(text, options).ids;
  }

  /** The text of token ids (each in [0, vocabulary size)). */
  decode(ids) {
    const tokens = tokenIds('ids', ids);
    return Array.from(tokens, (id, i) => {
      if (id < 0 || id >= this.#alphabet.length) {
        throw new Error(`ids[${i}] = ${id} is not a token of the ${this.#info.name} model (0 to ${this.#alphabet.length - 1})`);
      }
      return this.#alphabet[id];
    }).join('');
  }

  /** A generated token's text: its character in the task's alphabet. */
  [TOKEN_TEXT](id) {
    return this.#alphabet[id] ?? null;
  }
}
