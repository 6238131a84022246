// The page's own defaults and schema for its URL (main.js): the shared ones (shared/state.js)
// with the page opening on a shipped trained model; and the page's store's initial state.
import { DEFAULTS, makeSchema } from './shared/state.js';
import { formatBytes } from './shared/format.js';

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

/** Weights files a link names at most (a checkpoint's shards). */
export const MAX_LINK_FILES = 64;

/**
 * `files` (page only: the Your model view's model when it came from files): the weights files'
 * names, sizes and SHA-256 as a snapshot's provenance records them ([{ name, bytes, sha256 }]; sha256
 * '' when not hashed), "name:bytes:sha256" joined by commas, each name URI-encoded. A link holding
 * them is restored only on those files (the reader drops them); absent or '': none.
 */
export const filesCodec = Object.freeze({
  parse(s) {
    if (s === '') return [];
    const entries = s.split(',');
    if (entries.length > MAX_LINK_FILES) return undefined;
    const files = [];
    for (const entry of entries) {
      const match = /^([^:]{1,600}):(\d{1,15}):([0-9a-f]{64}|)$/.exec(entry);
      if (!match) return undefined;
      let name;
      try {
        name = decodeURIComponent(match[1]);
      } catch {
        return undefined;
      }
      if (name.length > 255 || /[\u0000-\u001f/\\]/.test(name)) return undefined;
      files.push(Object.freeze({ name, bytes: Number(match[2]), sha256: match[3] }));
    }
    return files;
  },
  print: (v) => (v ?? []).map((f) => `${encodeURIComponent(f.name)}:${f.bytes}:${f.sha256 ?? ''}`).join(','),
  hint: 'not a list of files as name:bytes:sha256',
});

/** A file a link names, as a reader reads it: 'model.safetensors (9.6 MB, sha256 1a2b3c4d…)'. */
export const linkFileText = (f) => `${f.name} (${formatBytes(f.bytes)}${f.sha256 ? `, sha256 ${f.sha256.slice(0, 8)}…` : ''})`;

/** Files named in a sentence: 'a', 'a and b', 'a, b and 2 more'. */
export function filesText(files) {
  const named = files.slice(0, 2).map(linkFileText);
  if (files.length > 2) return `${named.join(', ')} and ${files.length - 2} more`;
  return named.join(' and ');
}

/** Whether files a link names are `loaded` ([{ name, bytes, sha256 }]): each by its SHA-256 (both hashed), else by name and size. */
export function sameFiles(named, loaded) {
  if (!named?.length || named.length !== loaded?.length) return false;
  const key = (f) => `${f.name}\u0000${f.bytes}`;
  const left = [...named].sort((a, b) => key(a).localeCompare(key(b)));
  const right = [...loaded].sort((a, b) => key(a).localeCompare(key(b)));
  return left.every((f, i) => (f.sha256 && right[i].sha256 ? f.sha256 === right[i].sha256 : key(f) === key(right[i])));
}

/** Heads as a reader names them: 'L1 H4, L2 H1'. */
export const headsText = (heads) => heads.map(({ layer, head }) => `L${layer + 1} H${head + 1}`).join(', ');

/**
 * A link's knocked-out heads against the model's `config` ({ layers, heads }): { kept, dropped } and,
 * when some are dropped, the notice saying so ('' otherwise).
 */
export function linkHeads(knock, config, modelName) {
  const kept = (knock ?? []).filter(({ layer, head }) => layer < config.layers && head < config.heads);
  const dropped = (knock ?? []).filter((h) => !kept.includes(h));
  const notice = dropped.length ? `Ignored in the link: knock ${headsText(dropped)} (${modelName} has ${config.layers} layer` +
    `${config.layers === 1 ? '' : 's'} × ${config.heads} head${config.heads === 1 ? '' : 's'}).` : '';
  return { kept, dropped, notice };
}

/**
 * What a link made with files says when it is opened (the page's link notice): the files it needs
 * and that its view waits for them; nothing of it is applied to another model.
 */
export function filesNeededText(files, knock) {
  const what = knock?.length ? ` (${headsText(knock)} knocked out)` : '';
  return `This link was made with ${filesText(files)} loaded from files: drop ${files.length === 1 ? 'it' : 'them'} anywhere on the ` +
    `Your model tab (or pick ${files.length === 1 ? 'it' : 'them'} with Open files…) to restore the view${what}. Until then its ` +
    'knock-outs are not applied to another model.';
}

/**
 * What a copied link restores, said when it is copied (and what it cannot hold), a sentence from the
 * page's state { settings, yourModel, openedLayer, result }.
 */
export function linkSummary({ settings, yourModel, openedLayer, result }) {
  const knocked = settings.knock?.length ? `, with ${headsText(settings.knock)} knocked out` : '';
  const model = yourModel?.model;
  // The model the Your model and Circuits views work on: where the link gets it, or that it cannot.
  const whose = settings.tab === 'circuits' ? 'the Circuits prompts, answers and analysis' : 'Your model\'s text and sampling settings';
  if (settings.tab === 'model' || settings.tab === 'circuits') {
    if (model?.source === 'files') {
      const files = settings.files?.length ? settings.files : [{ name: model.fileName, bytes: 0, sha256: '' }];
      const one = files.length === 1;
      return `It restores ${whose} and names ${filesText(files)}: a reader who drops ${one ? 'that file' : 'those files'} gets this ` +
        `view${knocked} (a link cannot hold the ${one ? 'file itself' : 'files themselves'}; until then nothing of it is applied to another model).`;
    }
    const on = !model ? 'the model Your model loads first (the shipped english one)'
      : model.source === 'hub' ? `${settings.hub}${settings.hubRevision ? ` @ ${settings.hubRevision}` : ''}` +
        `${settings.hubFile ? `, file ${settings.hubFile}` : ''}, loaded from the Hub when the link opens`
        : `the shipped ${model.name} model`;
    return `It restores ${whose} on ${on}${knocked}.`;
  }
  if (settings.tab === 'train') {
    return `It restores the Train tab's settings (${settings.task}, ${settings.layers} layer${settings.layers === 1 ? '' : 's'} × ` +
      `${settings.trainHeads} heads); the reader's browser trains that run again from step 0 (the same steps give the same numbers).`;
  }
  const weights = settings.model ? `the shipped ${settings.model} model (layer ${settings.layer + 1})`
    : settings.preset ? `the tutorial preset ${settings.preset}` : `random weights (seed ${settings.seed})`;
  const lost = openedLayer ? `the layer opened from ${openedLayer.source === 'checkpoint' ? 'Your model' : 'the Train view'}`
    : result?.weightsFile ? `the weights loaded from ${result.weightsFile}` : '';
  if (lost) return `A link cannot hold ${lost}: it opens the walkthrough's stage and head on ${weights} instead.`;
  return `It restores the walkthrough's text, settings, stage and head on ${weights}.`;
}

/** The settings' schema with the page's `model`: 'random' in the URL is '' (random weights). */
export function pageSchema(catalog) {
  const schema = makeSchema(catalog);
  const model = { parse: (s) => (s === 'random' ? '' : schema.model.parse(s)), print: (v) => v || 'random' };
  return Object.freeze({ ...schema, model, hubEndpoint: hubEndpointCodec, hub: hubIdCodec, hubRevision: hubRevisionCodec,
    hubFile: hubFileCodec, files: filesCodec });
}

/** The store's `train` (views/train/) when no run has started. */
export const EMPTY_RUN = Object.freeze({ status: 'idle', modelConfig: null, runConfig: null, history: [], scoreHistory: [], snapshots: [],
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
