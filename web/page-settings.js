// The page's own defaults and schema for its URL (main.js): the shared ones (shared/state.js)
// with the page opening on a shipped trained model; and the page's store's initial state.
import { DEFAULTS, makeSchema } from './shared/state.js';

// The page opens on the shipped `english` trained model with a text of its alphabet; random
// weights are `model=random` in the URL (and then the shared default text). Page only: the
// <attention-lens> element keeps DEFAULTS (random weights unless its `model` says otherwise).
export const PAGE_MODEL = 'english';
export const PAGE_TEXT = 'the bank will not loan money';
export const pageDefaults = (state) => ({ ...DEFAULTS, model: PAGE_MODEL, ...(state.model === '' ? {} : { text: PAGE_TEXT }) });

/**
 * `hubEndpoint` (page only: the Your model view's Hub loads): a Hub mirror's http(s) URL; absent
 * (no default in the settings, so links without it are unchanged) or '' is the API's default
 * (https://huggingface.co). No user name or password, no ? or #, at most
 * 200 characters; trailing slashes trimmed. Anything else is ignored (and said so).
 */
export const hubEndpointCodec = Object.freeze({
  parse(s) {
    if (s === '') return '';
    if (s.length > 200 || !/^https?:\/\//i.test(s)) return undefined;
    let url;
    try {
      url = new URL(s);
    } catch {
      return undefined;
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search || url.hash ||
        s.includes('?') || s.includes('#')) return undefined;
    return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  },
  print: (v) => v || '',
});

// A Hub repo's name part as huggingface_hub accepts it (and lens.loadCheckpoint checks it again):
// letters, digits, '.', '_', '-', at most 96, starting and ending with a letter, digit or '_'.
const HUB_NAME = /^[A-Za-z0-9_](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9_])?$/;

/** Whether `s` is a Hugging Face id 'org/name' (no '..' or '--'): the only form a link's `hub` takes. */
export const isHubId = (s) => typeof s === 'string' && s.split('/').length === 2 && s.split('/').every((part) => HUB_NAME.test(part)) &&
  !s.includes('..') && !s.includes('--');

/**
 * `hub` (page only: the Your model view's model when it came from the Hub): its id 'org/name' (the
 * endpoint is `hubEndpoint`'s); absent or '' when the model is not a Hub repo's. A link holding one
 * loads that repo when the view opens. Anything else is ignored, and the notice says what a
 * valid one looks like (`hint`).
 */
export const hubIdCodec = Object.freeze({
  parse: (s) => (s === '' || isHubId(s) ? s : undefined),
  print: (v) => v || '',
  hint: "not a Hugging Face id org/name: letters, digits, '.', '_', '-'",
});

/**
 * `hubRevision` (page only): the Hub repo's branch, tag or commit when it is not main (absent:
 * main). No spaces or control characters, no '.' or '..' part, at most 100 characters.
 */
export const hubRevisionCodec = Object.freeze({
  parse: (s) => (s === '' || (s.length <= 100 && /^[A-Za-z0-9._/-]+$/.test(s) && !s.split('/').some((p) => p === '' || p === '.' || p === '..'))
    ? s : undefined),
  print: (v) => (v && v !== 'main' ? v : ''),
  hint: 'not a branch, tag or commit name',
});

/**
 * `hubFile` (page only): the GGUF file of the `hub` repo the model came from ('name.gguf', up to
 * two folders down; absent: none, the repo's .safetensors). A name ending in .gguf, of letters,
 * digits, '.', '_', '-' and '/', no part empty or starting with a dot, at most 300 characters
 * (lens.loadCheckpoint checks it again).
 */
export const hubFileCodec = Object.freeze({
  parse: (s) => (s === '' || (s.length <= 300 && /^[A-Za-z0-9._/-]+\.gguf$/.test(s) &&
    !s.split('/').some((p) => p === '' || p.startsWith('.'))) ? s : undefined),
  print: (v) => v || '',
  hint: 'not a .gguf file name',
});

/** The settings' schema with the page's `model`: 'random' in the URL is '' (random weights). */
export function pageSchema(catalog) {
  const schema = makeSchema(catalog);
  const model = { parse: (s) => (s === 'random' ? '' : schema.model.parse(s)), print: (v) => v || 'random' };
  return Object.freeze({ ...schema, model, hubEndpoint: hubEndpointCodec, hub: hubIdCodec, hubRevision: hubRevisionCodec,
    hubFile: hubFileCodec });
}

/** The store's `train` (views/train/) when no run has started. */
export const EMPTY_RUN = Object.freeze({ status: 'idle', modelConfig: null, history: [], scoreHistory: [], snapshots: [],
  latest: null, pinned: null, ablation: null, msPerStep: 0 });

/** The store's `yourModel` (views/model/) before a checkpoint is loaded. */
export const NO_CHECKPOINT = Object.freeze({ model: null, lastRun: null, loading: false });

/**
 * The page's whole state (the store main.js makes): `settings` (what the URL hash holds,
 * shared/state.js), the last good `result` and its walkthrough `steps`, the `pinned` cell, whether
 * the stages are `playing`, the heatmaps' `zoom`, the line view's `allHeads`, click-to-mask
 * (`maskByClick`), and the banners' `error`, `notice` and `linkNotice`; `openedLayer`: a model's
 * layer the Train or Your model view opened in the walkthrough (its key, config, mask and tokens;
 * its arrays stay in shared/opened-layers.js); `train`: the Train view's run; `yourModel`: the
 * Your model view's loaded checkpoint, its last run on the typed text, and whether one is loading;
 * `footer`: each tab's status line ({ walkthrough, train, model, circuits }: what its view computed last),
 * the page's footer showing the shown tab's (setFooter).
 */
export const initialPageState = () => ({ settings: pageDefaults({}), result: null, steps: [], pinned: null, playing: false,
  zoom: 1, allHeads: false, maskByClick: false, error: null, notice: '', linkNotice: '', openedLayer: null, train: EMPTY_RUN,
  yourModel: NO_CHECKPOINT, footer: INITIAL_FOOTER });

/** Each tab's footer before its view has computed anything. */
export const INITIAL_FOOTER = Object.freeze({ walkthrough: 'Loading the WebAssembly core…', train: 'Loading the trainer…',
  model: 'Loading the model…', circuits: 'Circuits: the model loads, then the analysis runs in the model worker.' });

/** The footer line of tab `tab` ('walkthrough' | 'train' | 'model' | 'circuits') in the store, shown while that tab is. */
export function setFooter(store, tab, text) {
  store.update(({ footer }) => (footer[tab] === text ? {} : { footer: { ...footer, [tab]: text } }));
}
