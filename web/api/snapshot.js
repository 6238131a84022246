// A snapshot: the numbers a view drew, as one versioned JSON document that the <attention-lens>
// element draws without a model, a core or a worker (docs/embedding.md). This module
// is the format, once: makeModelSnapshot / makeCircuitsSnapshot write it from the model session's
// results (copies of the API's numbers, nothing computed but their 8-bit quantisation), and
// readSnapshot reads it back as untrusted input: every count bounded and consistent with the
// others, every number finite, every base64 part of the size its counts say, strings only ever
// shown as text; the first thing wrong is named in a SnapshotError. DOM-free (tests/js runs it).
//
// Attention (and rollout, and generation's rows) is quantised per row: q = round(w / s) in 0…255
// with s = (the row's largest weight) / 255, stored as float32; a weight reads back as q · s, within
// s / 2 ≤ 1 / 510 < 0.002 of the float32 weight. Causal matrices keep only their lower triangle
// (a query's row i has keys 0…i). Other arrays are float32 or int32, little-endian, in base64.

export const SNAPSHOT_FORMAT = 'attention-lens-snapshot';
export const SNAPSHOT_VERSION = 1;

/** Limits of what a snapshot may hold (a reader refuses more before decoding anything large). */
export const SNAPSHOT_LIMITS = Object.freeze({
  chars: 16 * 1024 * 1024, // the JSON text
  tokens: 512, // prompt tokens
  layers: 128,
  heads: 128,
  attentionValues: 1 << 23, // stored weights of every kind together (8 MiB of bytes)
  generated: 256, // generated tokens
  next: 64, // next-token entries
  text: 20000, // characters of a prompt or text
  tokenText: 256, // characters of one token's text
  lensTop: 10,
});

/** The one quantisation's worst error for probabilities (row maximum ≤ 1): half a step of 1/255. */
export const QUANTISATION_BOUND = 1 / 510;

/** What a bad snapshot is refused with: its message names the first thing wrong. */
export class SnapshotError extends Error {
  constructor(message) {
    super(message);
    this.name = 'SnapshotError';
  }
}

const fail = (message) => {
  throw new SnapshotError(message);
};

// ---- base64 of typed arrays -----------------------------------------------------------------

/** Bytes as base64 (btoa over chunks: no call with more arguments than an engine takes). */
export function toBase64(bytes) {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let binary = '';
  for (let i = 0; i < view.length; i += 0x8000) binary += String.fromCharCode.apply(null, view.subarray(i, i + 0x8000));
  return btoa(binary);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** `text` decoded as exactly `bytes` bytes; its length is checked before anything is decoded. */
function fromBase64(text, bytes, what) {
  if (typeof text !== 'string') fail(`${what} must be a base64 string`);
  const want = 4 * Math.ceil(bytes / 3);
  if (text.length !== want) fail(`${what} is ${text.length} base64 characters; its counts need ${want} (${bytes} bytes)`);
  if (!BASE64.test(text)) fail(`${what} is not valid base64`);
  let binary;
  try {
    binary = atob(text);
  } catch {
    fail(`${what} is not valid base64`);
  }
  if (binary.length !== bytes) fail(`${what} decodes to ${binary.length} bytes; its counts need ${bytes}`);
  const out = new Uint8Array(bytes);
  for (let i = 0; i < bytes; ++i) out[i] = binary.charCodeAt(i);
  return out;
}

// Typed arrays are read in the platform's byte order: little-endian in every engine the page runs in.
const f32Base64 = (values) => toBase64(Float32Array.from(values));
const i32Base64 = (values) => toBase64(Int32Array.from(values));
const readF32 = (text, count, what) => new Float32Array(fromBase64(text, 4 * count, what).buffer);
const readI32 = (text, count, what) => new Int32Array(fromBase64(text, 4 * count, what).buffer);

// ---- quantised rows -------------------------------------------------------------------------

/**
 * Rows of weights (each an array of numbers ≥ 0) as { scales: base64 float32 per row, values:
 * base64 uint8 }: q = round(w / s), s = the row's maximum / 255 as float32 (1/255 for a row of zeros).
 */
export function quantiseRows(rows) {
  const total = rows.reduce((sum, row) => sum + row.length, 0);
  const scales = new Float32Array(rows.length);
  const values = new Uint8Array(total);
  let at = 0;
  rows.forEach((row, r) => {
    let max = 0;
    for (const w of row) {
      if (!Number.isFinite(w) || w < 0) throw new Error(`cannot quantise a weight of ${w} (row ${r})`);
      if (w > max) max = w;
    }
    const scale = Math.fround(max > 0 ? max / 255 : 1 / 255);
    scales[r] = scale;
    for (const w of row) values[at++] = Math.min(255, Math.round(w / scale));
  });
  return { scales: toBase64(scales), values: toBase64(values) };
}

/**
 * The rows of `lengths` (one length per row) back from quantiseRows' { scales, values }: one
 * Float32Array per row; the largest scale (the bound is half of it).
 */
function dequantiseRows(stored, lengths, what) {
  if (!stored || typeof stored !== 'object') fail(`${what} is missing`);
  const total = lengths.reduce((sum, n) => sum + n, 0);
  const scales = readF32(stored.scales, lengths.length, `${what}.scales`);
  const values = fromBase64(stored.values, total, `${what}.values`);
  let largest = 0;
  const rows = new Array(lengths.length);
  let at = 0;
  for (let r = 0; r < lengths.length; ++r) {
    const s = scales[r];
    if (!Number.isFinite(s) || s <= 0) fail(`${what}.scales[${r}] is ${s}: every scale must be a finite number > 0`);
    if (s > (1 / 255) * (1 + 1e-6)) fail(`${what}.scales[${r}] is ${s}: weights are at most 1, so a scale is at most 1/255`);
    if (s > largest) largest = s;
    const row = new Float32Array(lengths[r]);
    for (let j = 0; j < row.length; ++j) row[j] = values[at++] * s;
    rows[r] = row;
  }
  return { rows, largest };
}

/** Whether every [n, n] matrix of `matrices` (arrays of heads·n·n) is zero above the diagonal. */
function lowerTriangular(matrices, n) {
  for (const data of matrices) {
    for (let start = 0; start < data.length; start += n * n) {
      for (let i = 0; i < n; ++i) for (let j = i + 1; j < n; ++j) if (data[start + i * n + j] !== 0) return false;
    }
  }
  return true;
}

/** The rows of `count` [n, n] matrices (row i: keys 0…i when causal, else all n) in order. */
function matrixRows(matrices, n, causal) {
  const rows = [];
  for (const data of matrices) {
    for (let start = 0; start < data.length; start += n * n) {
      for (let i = 0; i < n; ++i) rows.push(data.subarray(start + i * n, start + i * n + (causal ? i + 1 : n)));
    }
  }
  return rows;
}

/** [n, n] matrices back from their rows, zero above the diagonal when causal: one Float32Array per `perArray` matrices. */
function matricesFromRows(rows, arrays, perArray, n) {
  const out = [];
  let r = 0;
  for (let a = 0; a < arrays; ++a) {
    const data = new Float32Array(perArray * n * n);
    for (let m = 0; m < perArray; ++m) {
      for (let i = 0; i < n; ++i) data.set(rows[r++], m * n * n + i * n);
    }
    out.push(data);
  }
  return out;
}

/** Quantised matrices: { causal, scales, values } of `matrices` (each heads·n·n). */
function quantiseMatrices(matrices, n) {
  const causal = lowerTriangular(matrices, n);
  return { causal, ...quantiseRows(matrixRows(matrices, n, causal)) };
}

/** Matrices back: `arrays` Float32Arrays of `perArray` [n, n] matrices each, and the bound. */
function readMatrices(stored, arrays, perArray, n, what) {
  if (!stored || typeof stored !== 'object') fail(`${what} is missing`);
  if (typeof stored.causal !== 'boolean') fail(`${what}.causal must be true or false`);
  const count = arrays * perArray * n;
  const lengths = new Array(count);
  for (let r = 0; r < count; ++r) lengths[r] = stored.causal ? (r % n) + 1 : n;
  const { rows, largest } = dequantiseRows(stored, lengths, what);
  return { matrices: matricesFromRows(rows, arrays, perArray, n), largest };
}

// ---- small readers --------------------------------------------------------------------------

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

function integer(value, what, min, max) {
  if (!Number.isInteger(value) || value < min || value > max) {
    fail(`${what} is ${JSON.stringify(value)?.slice(0, 40)}: it must be a whole number from ${min} to ${max}`);
  }
  return value;
}

function finite(value, what) {
  if (typeof value !== 'number' || !Number.isFinite(value)) fail(`${what} is ${JSON.stringify(value)?.slice(0, 40) ?? 'missing'}: it must be a finite number`);
  return value;
}

function probability(value, what) {
  finite(value, what);
  if (value < 0 || value > 1) fail(`${what} is ${value}: a probability is from 0 to 1`);
  return value;
}

function text(value, what, max) {
  if (typeof value !== 'string') fail(`${what} must be a string`);
  if (value.length > max) fail(`${what} is ${value.length} characters; at most ${max} are read`);
  return value;
}

const optionalText = (value, what, max) => (value === undefined || value === null ? '' : text(value, what, max));

function list(value, what, max) {
  if (!Array.isArray(value)) fail(`${what} must be a list`);
  if (value.length > max) fail(`${what} has ${value.length} entries; at most ${max} are read`);
  return value;
}

/** A float32 array of `count` finite numbers from base64. */
function finiteF32(textValue, count, what) {
  const values = readF32(textValue, count, what);
  const bad = values.findIndex((v) => !Number.isFinite(v));
  if (bad >= 0) fail(`${what}[${bad}] is ${values[bad]}: every number must be finite`);
  return values;
}

/** Throws a readable Error if a result to snapshot holds a number that is not finite. */
function assertFinite(values, what) {
  for (const v of values) if (!Number.isFinite(v)) throw new Error(`${what} holds ${v}: a snapshot stores finite numbers only`);
}

// ---- provenance -----------------------------------------------------------------------------

/**
 * Where the numbers came from, as the snapshot records it: the model (a shipped model's name, a
 * Hub id and revision, or files with their sizes and SHA-256), its family, the text, the view's
 * settings, the project's version and the date.
 * @param {object} model the model session's description (source 'shipped' | 'hub' | 'files')
 * @param {{files?: {name: string, bytes: number, sha256: string}[], text?: string, settings?: object,
 *   version?: string, date?: Date}} facts files: the weights files' hashes (sha256Hex) for a model from files
 */
export function snapshotProvenance(model, { files, text: typed = '', settings = {}, version = 'dev', date = new Date() } = {}) {
  let source = null;
  if (model?.source === 'shipped') source = { source: 'shipped', name: model.name, title: model.title ?? model.name };
  else if (model?.source === 'hub') {
    source = { source: 'hub', id: model.id, revision: model.revision ?? 'main', ...(model.file ? { file: model.file } : {}),
      ...(model.endpoint ? { endpoint: model.endpoint } : {}) };
  } else if (model) source = { source: 'files', fileName: model.fileName ?? '', files: files ?? [] };
  return { generator: 'Attention Lens', version: String(version), created: date.toISOString(), model: source,
    family: model?.familyName ?? model?.family ?? '', text: typed, settings };
}

/** SHA-256 of bytes as hex (crypto.subtle: the page and node both have it). */
export async function sha256Hex(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

const SOURCES = ['shipped', 'hub', 'files'];

function readProvenance(p) {
  if (!isObject(p)) fail('provenance must be an object');
  const out = { generator: optionalText(p.generator, 'provenance.generator', 80), version: optionalText(p.version, 'provenance.version', 40),
    created: optionalText(p.created, 'provenance.created', 40), family: optionalText(p.family, 'provenance.family', 80),
    text: optionalText(p.text, 'provenance.text', SNAPSHOT_LIMITS.text), settings: {}, model: null };
  if (p.settings !== undefined) {
    if (!isObject(p.settings)) fail('provenance.settings must be an object');
    // Kept as plain values (shown as text): numbers, strings, booleans, lists of {layer, head}.
    for (const [key, value] of Object.entries(p.settings).slice(0, 40)) {
      text(key, 'a provenance.settings name', 40);
      if (typeof value === 'string') out.settings[key] = text(value, `provenance.settings.${key}`, 200);
      else if (typeof value === 'number' && Number.isFinite(value)) out.settings[key] = value;
      else if (typeof value === 'boolean') out.settings[key] = value;
    }
  }
  const m = p.model;
  if (m !== undefined && m !== null) {
    if (!isObject(m) || !SOURCES.includes(m.source)) fail(`provenance.model.source must be one of ${SOURCES.join(', ')}`);
    out.model = { source: m.source };
    if (m.source === 'shipped') Object.assign(out.model, { name: text(m.name, 'provenance.model.name', 80), title: optionalText(m.title, 'provenance.model.title', 200) });
    if (m.source === 'hub') {
      Object.assign(out.model, { id: text(m.id, 'provenance.model.id', 300), revision: optionalText(m.revision, 'provenance.model.revision', 200) || 'main',
        endpoint: optionalText(m.endpoint, 'provenance.model.endpoint', 300), file: optionalText(m.file, 'provenance.model.file', 300) });
    }
    if (m.source === 'files') {
      out.model.fileName = optionalText(m.fileName, 'provenance.model.fileName', 300);
      out.model.files = list(m.files ?? [], 'provenance.model.files', 64).map((f, i) => {
        if (!isObject(f)) fail(`provenance.model.files[${i}] must be an object`);
        const sha256 = optionalText(f.sha256, `provenance.model.files[${i}].sha256`, 64);
        if (sha256 && !/^[0-9a-f]{64}$/.test(sha256)) fail(`provenance.model.files[${i}].sha256 is not 64 hex digits`);
        return { name: text(f.name, `provenance.model.files[${i}].name`, 300), bytes: integer(f.bytes, `provenance.model.files[${i}].bytes`, 0, 2 ** 52),
          sha256 };
      });
    }
  }
  return out;
}

// ---- the document ---------------------------------------------------------------------------

/** The model's shape as a snapshot records it. */
const modelShape = (config) => ({ layers: config.layers, heads: config.heads, kvHeads: config.kvHeads ?? config.heads });

function readShape(m) {
  if (!isObject(m)) fail('model must be an object with layers and heads');
  const layers = integer(m.layers, 'model.layers', 1, SNAPSHOT_LIMITS.layers);
  const heads = integer(m.heads, 'model.heads', 1, SNAPSHOT_LIMITS.heads);
  const kvHeads = m.kvHeads === undefined ? heads : integer(m.kvHeads, 'model.kvHeads', 1, heads);
  if (heads % kvHeads !== 0) fail(`model.kvHeads (${kvHeads}) must divide model.heads (${heads})`);
  return { layers, heads, kvHeads };
}

function readTokens(tokens, what = 'tokens') {
  list(tokens, what, SNAPSHOT_LIMITS.tokens);
  if (tokens.length === 0) fail(`${what} is empty: a snapshot has at least one token`);
  return tokens.map((t, i) => text(t, `${what}[${i}]`, SNAPSHOT_LIMITS.tokenText));
}

/** A list of next tokens [{ id, text, probability }]. */
function readNext(value, what) {
  return list(value, what, SNAPSHOT_LIMITS.next).map((t, i) => {
    if (!isObject(t)) fail(`${what}[${i}] must be an object`);
    return { id: integer(t.id, `${what}[${i}].id`, 0, 2 ** 31 - 1), token: text(t.text, `${what}[${i}].text`, SNAPSHOT_LIMITS.tokenText),
      probability: probability(t.probability, `${what}[${i}].probability`) };
  });
}

const nullableProbability = (v, what) => (v === null ? null : probability(v, what));

/**
 * The Your model view's run as a snapshot (kind 'model'): the tokens, every layer × head's attention
 * (or `layers`' only), the next tokens (before → after when heads are knocked out), the generation
 * when there is one, the head shown, and the provenance.
 * @param {{run: object, config: object, provenance: object, view?: {layer: number, head: number},
 *   layers?: number[], generation?: {steps: {id: number, token: string, probability: number, attention: Float32Array[]}[]}}} parts
 *   run: the session's 'run' reply; config: the model's; generation.steps: the session's streamed steps
 */
export function makeModelSnapshot({ run, config, provenance, view = { layer: 0, head: 0 }, layers, generation }) {
  const { n } = run;
  const shown = layers ?? Array.from({ length: config.layers }, (_, l) => l);
  const attention = quantiseMatrices(shown.map((l) => run.attention[l]), n);
  const snapshot = { format: SNAPSHOT_FORMAT, version: SNAPSHOT_VERSION, kind: 'model', provenance, model: modelShape(config),
    tokens: [...run.tokens], ids: [...run.ids], view: { layer: view.layer, head: view.head },
    attention: { layers: shown, ...attention },
    next: run.top.map((t) => ({ id: t.id, text: t.token, probability: t.probability })),
    knockedOut: (run.ablated ?? []).map(({ layer, head }) => ({ layer, head })) };
  if (run.compare) {
    snapshot.compare = { floor: run.compareFloor, tokens: run.compare.map((t) => ({ id: t.id, text: t.token, before: t.before, after: t.after })) };
  }
  if (generation?.steps?.length) {
    const rows = [];
    for (const step of generation.steps) for (const layer of step.attention) for (let h = 0; h < config.heads; ++h) {
      const t = layer.length / config.heads;
      rows.push(layer.subarray(h * t, (h + 1) * t));
    }
    snapshot.generation = { tokens: generation.steps.map((s) => ({ id: s.id, text: s.token, probability: s.probability })),
      attention: quantiseRows(rows) };
  }
  return snapshot;
}

/**
 * The Circuits view's analysis as a snapshot (kind 'circuits'): `result` the session's 'circuit'
 * reply (heads, residual, layers, attribution, lens or rollout), `context` { clean, corrupted,
 * answers: [{ text, id } | null], layer } as drawn.
 */
export function makeCircuitsSnapshot({ result, config, context, provenance }) {
  const { kind } = result;
  const base = { format: SNAPSHOT_FORMAT, version: SNAPSHOT_VERSION, kind: 'circuits', analysis: kind, provenance, model: modelShape(config),
    prompts: { clean: context.clean, corrupted: PATCHING.includes(kind) ? context.corrupted : '' },
    answers: context.answers.map((a) => (a ? { text: a.text, id: a.id } : null)), view: { layer: context.layer ?? 0 } };
  const f32 = (values, what) => {
    assertFinite(values, what);
    return f32Base64(values);
  };
  const scalar = (v, what) => {
    assertFinite([v], what);
    return v;
  };
  if (kind === 'heads' || kind === 'residual') {
    return { ...base, ...(kind === 'residual' ? { tokens: [...result.tokens] } : {}),
      result: { clean: scalar(result.clean, 'clean'), corrupted: scalar(result.corrupted, 'corrupted'), effect: f32(result.effect, 'the effect') } };
  }
  if (kind === 'layers') {
    return { ...base, result: { clean: scalar(result.clean, 'clean'), corrupted: scalar(result.corrupted, 'corrupted'),
      attention: f32(result.effect.attention, 'the attention effect'), mlp: f32(result.effect.mlp, 'the MLP effect') } };
  }
  if (kind === 'attribution') {
    return { ...base, tokens: [...result.tokens], result: { total: scalar(result.total, 'total'), embed: scalar(result.embed, 'embed'),
      constant: scalar(result.constant, 'constant'), heads: f32(result.heads, 'the heads'), attentionBias: f32(result.attentionBias, 'the biases'),
      mlp: f32(result.mlp, 'the MLPs') } };
  }
  if (kind === 'lens') {
    // Each id's text once: the lens's ids index a table of the texts they have.
    const vocab = new Map();
    Array.from(result.ids).forEach((id, i) => vocab.set(id, result.texts[i]));
    const lens = { rows: result.rows, topK: result.topK, ids: i32Base64(result.ids), probs: f32(result.probs, 'the lens probabilities'),
      vocab: { ids: i32Base64([...vocab.keys()]), texts: [...vocab.values()] }, token: null };
    if (result.token) {
      lens.token = { id: result.token.id, text: result.tokenText ?? '', probs: f32(result.token.probs, 'the answer probabilities'),
        ranks: i32Base64(result.token.ranks) };
    }
    return { ...base, tokens: [...result.tokens], result: lens };
  }
  if (kind === 'rollout') {
    const { n, layers } = result;
    const matrices = Array.from({ length: layers }, (_, l) => result.rollout.subarray(l * n * n, (l + 1) * n * n));
    return { ...base, tokens: [...result.tokens], result: { rollout: quantiseMatrices(matrices, n) } };
  }
  throw new Error(`there is no snapshot of the analysis '${String(kind).slice(0, 40)}'`);
}

const PATCHING = ['heads', 'residual', 'layers'];
const ANALYSES = [...PATCHING, 'attribution', 'lens', 'rollout'];

/** JSON text of a snapshot (compact), and the same made safe inside an HTML <script> element. */
export const snapshotJson = (snapshot) => JSON.stringify(snapshot);

/**
 * JSON text that an HTML parser cannot end early: every '<', '>' and '&' (and U+2028/2029) written
 * as a JSON \u escape, so no '</script>' or '<!--' in a token's text can close or comment out the
 * <script type="application/json"> it sits in. JSON.parse reads it back unchanged.
 */
export const scriptSafeJson = (snapshot) => JSON.stringify(snapshot)
  .replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * Reads a snapshot (its JSON text, or the parsed value) as untrusted input. Returns the numbers
 * ready to draw: { kind, model, tokens, provenance, bound (the worst quantisation error of its
 * weights), … } with attention as one Float32Array [heads·n·n] per stored layer; throws a
 * SnapshotError naming the first thing wrong.
 */
export function readSnapshot(input) {
  let doc = input;
  if (typeof input === 'string') {
    if (input.length > SNAPSHOT_LIMITS.chars) fail(`the snapshot is ${input.length} characters; at most ${SNAPSHOT_LIMITS.chars} are read`);
    try {
      doc = JSON.parse(input);
    } catch (error) {
      fail(`the snapshot is not valid JSON (is the file complete?): ${error.message}`);
    }
  }
  if (!isObject(doc)) fail('a snapshot is a JSON object');
  if (doc.format !== SNAPSHOT_FORMAT) fail(`this is not an Attention Lens snapshot (its format is ${JSON.stringify(doc.format)?.slice(0, 60) ?? 'missing'}, not "${SNAPSHOT_FORMAT}")`);
  if (!Number.isInteger(doc.version) || doc.version < 1) fail(`the snapshot's version is ${JSON.stringify(doc.version)?.slice(0, 20) ?? 'missing'}: it must be a whole number`);
  if (doc.version > SNAPSHOT_VERSION) fail(`the snapshot is version ${doc.version}; this element reads version ${SNAPSHOT_VERSION}: use a newer attention-lens-element.js`);
  if (doc.kind !== 'model' && doc.kind !== 'circuits') fail(`the snapshot's kind is ${JSON.stringify(doc.kind)?.slice(0, 40) ?? 'missing'}: it must be "model" or "circuits"`);
  const model = readShape(doc.model);
  const provenance = readProvenance(doc.provenance ?? {});
  return doc.kind === 'model' ? readModel(doc, model, provenance) : readCircuits(doc, model, provenance);
}

function readModel(doc, model, provenance) {
  const tokens = readTokens(doc.tokens);
  const n = tokens.length;
  const a = doc.attention;
  if (!isObject(a)) fail('attention is missing');
  const layers = list(a.layers, 'attention.layers', model.layers).map((l, i) => integer(l, `attention.layers[${i}]`, 0, model.layers - 1));
  if (layers.length === 0) fail('attention.layers is empty');
  if (layers.some((l, i) => i > 0 && l <= layers[i - 1])) fail('attention.layers must be in increasing order, each once');
  const stored = layers.length * model.heads * n * n;
  if (stored > SNAPSHOT_LIMITS.attentionValues) {
    fail(`attention claims ${layers.length} layers × ${model.heads} heads × ${n}² = ${stored} weights; at most ${SNAPSHOT_LIMITS.attentionValues} are read`);
  }
  const { matrices, largest } = readMatrices(a, layers.length, model.heads, n, 'attention');
  let bound = largest / 2;
  const out = { kind: 'model', model, provenance, tokens, n, attention: new Map(layers.map((l, i) => [l, matrices[i]])), layers,
    next: readNext(doc.next ?? [], 'next'), compare: null, generation: null, knockedOut: [] };
  if (doc.ids !== undefined) {
    out.ids = list(doc.ids, 'ids', SNAPSHOT_LIMITS.tokens).map((id, i) => integer(id, `ids[${i}]`, 0, 2 ** 31 - 1));
    if (out.ids.length !== n) fail(`ids has ${out.ids.length} entries for ${n} tokens`);
  }
  out.knockedOut = list(doc.knockedOut ?? [], 'knockedOut', model.layers * model.heads).map((k, i) => {
    if (!isObject(k)) fail(`knockedOut[${i}] must be { layer, head }`);
    return { layer: integer(k.layer, `knockedOut[${i}].layer`, 0, model.layers - 1), head: integer(k.head, `knockedOut[${i}].head`, 0, model.heads - 1) };
  });
  if (doc.compare !== undefined && doc.compare !== null) {
    const c = doc.compare;
    if (!isObject(c)) fail('compare must be an object');
    out.compare = { floor: c.floor === null || c.floor === undefined ? 0 : probability(c.floor, 'compare.floor'),
      tokens: list(c.tokens, 'compare.tokens', SNAPSHOT_LIMITS.next).map((t, i) => {
        if (!isObject(t)) fail(`compare.tokens[${i}] must be an object`);
        return { id: integer(t.id, `compare.tokens[${i}].id`, 0, 2 ** 31 - 1), token: text(t.text, `compare.tokens[${i}].text`, SNAPSHOT_LIMITS.tokenText),
          before: nullableProbability(t.before, `compare.tokens[${i}].before`), after: nullableProbability(t.after, `compare.tokens[${i}].after`) };
      }) };
  }
  if (doc.generation !== undefined && doc.generation !== null) {
    const g = doc.generation;
    if (!isObject(g)) fail('generation must be an object');
    const steps = readNext(list(g.tokens, 'generation.tokens', SNAPSHOT_LIMITS.generated), 'generation.tokens');
    const lengths = [];
    steps.forEach((_, k) => {
      for (let r = 0; r < model.layers * model.heads; ++r) lengths.push(n + k);
    });
    const values = lengths.reduce((sum, t) => sum + t, 0);
    if (stored + values > SNAPSHOT_LIMITS.attentionValues) fail(`generation.attention claims ${values} more weights; at most ${SNAPSHOT_LIMITS.attentionValues} are read in all`);
    const { rows, largest: genLargest } = dequantiseRows(g.attention, lengths, 'generation.attention');
    bound = Math.max(bound, genLargest / 2);
    // Per step: per layer a Float32Array [heads · t], as m.generate's steps.
    out.generation = steps.map((s, k) => ({ ...s, attention: Array.from({ length: model.layers }, (_, l) => {
      const t = n + k;
      const data = new Float32Array(model.heads * t);
      for (let h = 0; h < model.heads; ++h) data.set(rows[(k * model.layers + l) * model.heads + h], h * t);
      return data;
    }) }));
  }
  const view = isObject(doc.view) ? doc.view : {};
  const layer = Number.isInteger(view.layer) && layers.includes(view.layer) ? view.layer : layers[0];
  const head = Number.isInteger(view.head) && view.head >= 0 && view.head < model.heads ? view.head : 0;
  return { ...out, view: { layer, head }, bound };
}

function readAnswers(value) {
  return list(value ?? [null, null], 'answers', 2).map((a, i) => {
    if (a === null) return null;
    if (!isObject(a)) fail(`answers[${i}] must be { text, id } or null`);
    return { text: text(a.text, `answers[${i}].text`, SNAPSHOT_LIMITS.tokenText), id: integer(a.id, `answers[${i}].id`, 0, 2 ** 31 - 1) };
  });
}

function readCircuits(doc, model, provenance) {
  const analysis = doc.analysis;
  if (!ANALYSES.includes(analysis)) fail(`analysis is ${JSON.stringify(analysis)?.slice(0, 40) ?? 'missing'}: it must be one of ${ANALYSES.join(', ')}`);
  const { layers, heads } = model;
  const p = isObject(doc.prompts) ? doc.prompts : fail('prompts must be { clean, corrupted }');
  const prompts = { clean: text(p.clean, 'prompts.clean', SNAPSHOT_LIMITS.text), corrupted: optionalText(p.corrupted, 'prompts.corrupted', SNAPSHOT_LIMITS.text) };
  const r = isObject(doc.result) ? doc.result : fail('result is missing');
  const needsTokens = !['heads', 'layers'].includes(analysis);
  const tokens = needsTokens || doc.tokens !== undefined ? readTokens(doc.tokens) : [];
  const n = tokens.length;
  const view = { layer: Number.isInteger(doc.view?.layer) ? Math.max(0, Math.min(layers - 1, doc.view.layer)) : 0 };
  const out = { kind: 'circuits', analysis, model, provenance, prompts, answers: readAnswers(doc.answers), tokens, n, view, bound: 0 };
  let result;
  if (analysis === 'heads' || analysis === 'residual') {
    result = { kind: analysis, clean: finite(r.clean, 'result.clean'), corrupted: finite(r.corrupted, 'result.corrupted'),
      effect: finiteF32(r.effect, analysis === 'heads' ? layers * heads : layers * n, 'result.effect'), ...(analysis === 'residual' ? { n, tokens } : {}) };
  } else if (analysis === 'layers') {
    result = { kind: analysis, clean: finite(r.clean, 'result.clean'), corrupted: finite(r.corrupted, 'result.corrupted'),
      effect: { attention: finiteF32(r.attention, layers, 'result.attention'), mlp: finiteF32(r.mlp, layers, 'result.mlp') } };
  } else if (analysis === 'attribution') {
    result = { kind: analysis, n, tokens, total: finite(r.total, 'result.total'), embed: finite(r.embed, 'result.embed'),
      constant: finite(r.constant, 'result.constant'), heads: finiteF32(r.heads, layers * heads, 'result.heads'),
      attentionBias: finiteF32(r.attentionBias, layers, 'result.attentionBias'), mlp: finiteF32(r.mlp, layers, 'result.mlp') };
  } else if (analysis === 'lens') {
    const rows = integer(r.rows, 'result.rows', layers + 1, layers + 1);
    const topK = integer(r.topK, 'result.topK', 1, SNAPSHOT_LIMITS.lensTop);
    const count = rows * n * topK;
    const ids = readI32(r.ids, count, 'result.ids');
    const probs = finiteF32(r.probs, count, 'result.probs');
    probs.forEach((v, i) => probability(v, `result.probs[${i}]`));
    if (!isObject(r.vocab)) fail('result.vocab is missing');
    const texts = list(r.vocab.texts, 'result.vocab.texts', count).map((t, i) => text(t, `result.vocab.texts[${i}]`, SNAPSHOT_LIMITS.tokenText));
    const vocabIds = readI32(r.vocab.ids, texts.length, 'result.vocab.ids');
    const byId = new Map(Array.from(vocabIds, (id, i) => [id, texts[i]]));
    const lensTexts = Array.from(ids, (id, i) => (byId.has(id) ? byId.get(id) : fail(`result.ids[${i}] (${id}) has no text in result.vocab`)));
    result = { kind: analysis, rows, n, topK, ids, probs, texts: lensTexts, tokens, token: null, tokenText: null };
    if (r.token !== null && r.token !== undefined) {
      if (!isObject(r.token)) fail('result.token must be an object or null');
      const tokenProbs = finiteF32(r.token.probs, rows * n, 'result.token.probs');
      tokenProbs.forEach((v, i) => probability(v, `result.token.probs[${i}]`));
      const ranks = readI32(r.token.ranks, rows * n, 'result.token.ranks');
      const badRank = ranks.findIndex((v) => v < 0);
      if (badRank >= 0) fail(`result.token.ranks[${badRank}] is ${ranks[badRank]}: a rank is 0 or more`);
      result.token = { id: integer(r.token.id, 'result.token.id', 0, 2 ** 31 - 1), probs: tokenProbs, ranks };
      result.tokenText = text(r.token.text, 'result.token.text', SNAPSHOT_LIMITS.tokenText);
    }
  } else {
    if (layers * n * n > SNAPSHOT_LIMITS.attentionValues) fail(`result.rollout claims ${layers} layers × ${n}² weights; at most ${SNAPSHOT_LIMITS.attentionValues} are read`);
    const { matrices, largest } = readMatrices(r.rollout, 1, layers, n, 'result.rollout');
    result = { kind: analysis, n, tokens, layers, rollout: matrices[0] };
    out.bound = largest / 2;
  }
  return { ...out, result };
}
