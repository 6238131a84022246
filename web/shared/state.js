// The page's settings (what a link or an <attention-lens> tag can say), their defaults, and
// their URL-hash form. The hash is untrusted input: every field is checked against a schema
// built from the core's catalog (makeSchema) and anything unknown or invalid is dropped (with a
// note saying what was ignored), never evaluated or inserted as HTML.
import { pageMasks } from './catalog.js';
import { COLOR_SCALES } from './color-scale.js';
import { STAGES } from './stages.js';

export const EXAMPLES = [
  { label: 'The bank will not loan money', text: 'The bank will not loan money' },
  { label: 'The boat reached the bank', text: 'The boat reached the bank' },
  { label: 'The cat sat on the mat', text: 'The cat sat on the mat' },
];

export const MAX_TEXT = 20000; // characters kept from a URL or the text box (2 048+ word tokens)
export const MAX_CELLS = 256; // user-masked cells kept in a URL

const choice = (options) => ({ parse: (s) => (options.includes(s) ? s : undefined), print: String });
const integer = (min, max) => ({
  parse: (s) => (/^\d{1,10}$/.test(s) && Number(s) >= min && Number(s) <= max ? Number(s) : undefined),
  print: String,
});
const flag = { parse: (s) => (s === '1' ? true : s === '0' ? false : undefined), print: (v) => (v ? '1' : '0') };
const text = { parse: (s) => s.slice(0, MAX_TEXT), print: String };
// A positive decimal such as a learning rate ("0.001", "3e-3"), within [min, max].
const decimal = (min, max) => ({
  parse: (s) => (/^\d{0,7}(\.\d{1,12})?(e-?\d{1,2})?$/i.test(s) && Number(s) >= min && Number(s) <= max ? Number(s) : undefined),
  print: String,
});
const cells = {
  // "2.3,4.0": query.key pairs
  parse: (s) => {
    if (s === '') return [];
    const pairs = s.split(',').slice(0, MAX_CELLS);
    if (!pairs.every((p) => /^\d{1,5}\.\d{1,5}$/.test(p))) return undefined;
    return pairs.map((p) => p.split('.').map(Number));
  },
  print: (v) => v.map(([i, j]) => `${i}.${j}`).join(','),
};

// The Your model view's knocked-out heads: "0.2,1.3" as layer.head pairs (0-based).
const headList = {
  parse: (s) => {
    if (s === '') return [];
    const pairs = s.split(',').slice(0, MAX_CELLS);
    if (!pairs.every((p) => /^\d{1,3}\.\d{1,3}$/.test(p))) return undefined;
    return pairs.map((p) => {
      const [layer, head] = p.split('.').map(Number);
      return { layer, head };
    });
  },
  print: (v) => v.map(({ layer, head }) => `${layer}.${head}`).join(','),
};

export const PRESETS = ['seed001-causal', 'seed004-single', 'seed004-multi', 'seed004-pytorch'];

/** The Circuits view's analyses (circuitShow): patching over heads, the residual stream, whole layers; attribution; lens; rollout. */
export const CIRCUIT_ANALYSES = Object.freeze(['heads', 'residual', 'layers', 'attribution', 'lens', 'rollout']);
export const MAX_ANSWER = 200; // characters of an answer token's text kept from a URL
const answerText = { parse: (s) => s.slice(0, MAX_ANSWER), print: String };

/** The settings' schema: field -> { parse, print }; the choice lists come from the catalog. */
export function makeSchema(catalog) {
  return Object.freeze({
    text,
    tokenizer: choice(catalog.tokenizers),
    dModel: choice([8, 16, 32, 64, 128, 256].map(String)),
    heads: integer(1, 16),
    seed: integer(0, 4294967295),
    positional: choice(catalog.positional),
    mask: choice(pageMasks(catalog)),
    window: integer(1, 4096),
    prefix: integer(0, 4096),
    padTo: integer(0, 4096),
    cells,
    scale: flag,
    cross: flag,
    source: text,
    preset: choice(['', ...PRESETS]),
    stage: choice(STAGES.map((stage) => stage.id)),
    head: integer(0, 255),
    view: choice(['grid', 'lines']),
    // A shipped trained model by name ('' = random weights; checked against lens.trainedModels
    // when it is used) and its layer (0-based here; 1-based in the element's attribute).
    model: { parse: (s) => (/^[a-z0-9-]{0,40}$/.test(s) ? s : undefined), print: String },
    layer: integer(0, 15),
    tab: choice(['walkthrough', 'train', 'model', 'circuits']),
    // The Train view's run (views/train/): a shared link reproduces it (training is deterministic).
    task: choice(catalog.tasks ?? ['induction']),
    layers: integer(1, 4),
    trainHeads: choice(['1', '2', '4', '8']),
    trainDModel: choice(['16', '32', '64', '128']),
    context: integer(8, 128),
    lr: decimal(1e-6, 1e6),
    batch: integer(1, 256),
    trainSeed: integer(0, 4294967295),
    probe: { parse: (s) => s.slice(0, 128), print: String },
    colorScale: choice(COLOR_SCALES),
    // The Your model view (views/model/): its text, the generation's sampling settings and seed,
    // the heads knocked out.
    modelText: text,
    genTokens: integer(1, 4096),
    genTemperature: decimal(0, 100),
    genTopK: integer(0, 1000000),
    genTopP: decimal(0.01, 1),
    genSeed: integer(0, 4294967295),
    knock: headList,
    // The Circuits view (views/circuits/): the clean and corrupted prompts, the answer tokens' texts
    // ('' = each prompt's top next token), the analysis shown and the rollout's layer (0-based).
    circuitClean: text,
    circuitCorrupt: text,
    circuitA: answerText,
    circuitB: answerText,
    circuitShow: choice(CIRCUIT_ANALYSES),
    circuitLayer: integer(0, 255),
  });
}

export const DEFAULTS = Object.freeze({
  text: EXAMPLES[0].text,
  tokenizer: 'word',
  dModel: '64',
  heads: 4,
  seed: 42,
  positional: 'sinusoidal',
  mask: 'none',
  window: 3,
  prefix: 2,
  padTo: 0,
  cells: [],
  scale: true,
  cross: false,
  source: 'The boat reached the bank',
  preset: '',
  stage: 'weights',
  head: 0,
  view: 'grid',
  model: '',
  layer: 0,
  tab: 'walkthrough',
  task: 'induction',
  layers: 2,
  trainHeads: '4',
  trainDModel: '64',
  context: 64,
  lr: 0.001,
  batch: 32,
  trainSeed: 1,
  probe: '', // '' = the task's example probe
  // Linear for every length: a colour means the same weight in every link and tutorial; past
  // LONG_INPUT tokens the control suggests the log and per-row scales (controls.js).
  colorScale: 'linear',
  modelText: 'When Mary and John went to the store, John gave a drink to',
  genTokens: 32,
  genTemperature: 0,
  genTopK: 0,
  genTopP: 1,
  genSeed: 1,
  knock: [],
  circuitClean: 'When Mary and John went to the store, John gave a drink to',
  circuitCorrupt: 'When Mary and John went to the store, Mary gave a drink to',
  circuitA: '',
  circuitB: '',
  circuitShow: 'heads',
  circuitLayer: 0,
});

/** The Train view's settings (and the Your model view's: MODEL_KEYS): changing them never recomputes the walkthrough. */
// hub, hubRevision, hubFile, hubEndpoint, files: the page's own keys (page-settings.js), none of the walkthrough's.
export const MODEL_KEYS = Object.freeze(['modelText', 'genTokens', 'genTemperature', 'genTopK', 'genTopP', 'genSeed', 'knock',
  'hub', 'hubRevision', 'hubFile', 'hubEndpoint', 'files']);
/** The Circuits view's settings: changing them never recomputes the walkthrough either. */
export const CIRCUIT_KEYS = Object.freeze(['circuitClean', 'circuitCorrupt', 'circuitA', 'circuitB', 'circuitShow', 'circuitLayer']);
export const TRAIN_KEYS = Object.freeze(['tab', 'task', 'layers', 'trainHeads', 'trainDModel', 'context', 'lr',
  'batch', 'trainSeed', 'probe', ...MODEL_KEYS, ...CIRCUIT_KEYS]);

/** `defaults` as stateToHash and hashToState take it: an object, or a function of the state. */
const defaultsOf = (defaults, state) => (typeof defaults === 'function' ? defaults(state) : defaults);

/**
 * The state as a URL hash ("#text=…&heads=4"): only `schema`'s fields that differ from the
 * defaults (DEFAULTS, or the page's own: an object or a function of the state giving one).
 */
export function stateToHash(state, schema, defaults = DEFAULTS) {
  const base = defaultsOf(defaults, state);
  const params = new URLSearchParams();
  for (const [key, codec] of Object.entries(schema)) {
    const printed = codec.print(state[key]);
    if (printed !== codec.print(base[key])) params.set(key, printed);
  }
  const query = params.toString();
  return query ? `#${query}` : '';
}

/**
 * Parses a URL hash into a full state, each field checked by `schema` (makeSchema). Returns
 * { state, ignored } where ignored lists the keys that were unknown or held invalid values
 * (they fall back to the defaults: DEFAULTS, or `defaults` as stateToHash takes it, a function
 * receiving the fields the hash gave).
 */
export function hashToState(hash, schema, defaults = DEFAULTS) {
  const given = {};
  const ignored = [];
  const done = () => ({ state: { ...defaultsOf(defaults, given), cells: [], ...given }, ignored });
  const raw = typeof hash === 'string' ? hash.replace(/^#/, '') : '';
  if (!raw) return done();
  let params;
  try {
    params = new URLSearchParams(raw);
  } catch {
    ignored.push('the whole link (it could not be read)');
    return done();
  }
  for (const [key, value] of params) {
    const codec = Object.hasOwn(schema, key) ? schema[key] : null;
    const parsed = codec ? codec.parse(value) : undefined;
    if (parsed === undefined) {
      // A codec may say what a valid value looks like (its hint).
      ignored.push(codec?.hint ? `${key} (${codec.hint})` : key.slice(0, 40));
    } else {
      given[key] = parsed;
    }
  }
  return done();
}
