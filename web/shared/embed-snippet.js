// The <attention-lens> element's attributes, shared by the element (parsing) and the page's
// Embed dialog (printing a snippet of the current state, or of a view's snapshot).
import { readSnapshot, scriptSafeJson, snapshotJson } from '../api/snapshot.js';
import { DEFAULTS } from './state.js';

// attribute name -> state key. `head` is 1-based in the attribute, as the page labels heads.
export const ELEMENT_ATTRIBUTES = {
  text: 'text',
  tokenizer: 'tokenizer',
  'd-model': 'dModel',
  heads: 'heads',
  seed: 'seed',
  positional: 'positional',
  mask: 'mask',
  window: 'window',
  prefix: 'prefix',
  'pad-to': 'padTo',
  source: 'source',
  step: 'stage',
  head: 'head',
  model: 'model',
  layer: 'layer',
  'color-scale': 'colorScale',
};

// Attributes counted from 1 (as the page shows heads and layers); the state counts from 0.
const ONE_BASED = new Set(['head', 'layer']);

/**
 * Reads element attributes into a state (defaults for anything absent), checked against
 * `schema` (makeSchema(catalog)). Returns { state, problems } with a message for every
 * attribute that could not be used.
 */
export function stateFromAttributes(getAttribute, schema) {
  const state = { ...DEFAULTS, cells: [], stage: 'weights' };
  const problems = [];
  for (const [attribute, key] of Object.entries(ELEMENT_ATTRIBUTES)) {
    const raw = getAttribute(attribute);
    if (raw === null) continue;
    let value = raw;
    if (ONE_BASED.has(key)) value = /^\d{1,3}$/.test(raw.trim()) && Number(raw) >= 1 ? String(Number(raw) - 1) : '';
    const parsed = schema[key].parse(value.trim ? (key === 'text' || key === 'source' ? value : value.trim()) : value);
    if (parsed === undefined) problems.push(`${attribute}="${raw.slice(0, 40)}" is not valid; using ${ONE_BASED.has(key) ? Number(DEFAULTS[key]) + 1 : DEFAULTS[key] || 'none'}`);
    else state[key] = parsed;
  }
  const scale = getAttribute('scale');
  if (scale !== null) state.scale = !['false', '0', 'off', 'no'].includes(scale.trim().toLowerCase());
  state.cross = getAttribute('source') !== null;
  return { state, problems };
}

const escapeAttribute = (value) =>
  String(value).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The <script> + <attention-lens> snippet for a state (attributes that differ from defaults).
 * The script tag is a classic `defer` script, not type="module": Chromium refuses module scripts
 * from file:// pages, and attention-lens-element.js is a classic script that works either way.
 */
export function elementSnippet(state, scriptSrc = 'attention-lens-element.js') {
  const attributes = [];
  for (const [attribute, key] of Object.entries(ELEMENT_ATTRIBUTES)) {
    if (key === 'source' && !state.cross) continue;
    if (key === 'layer' && !state.model) continue;
    let value = state[key];
    if (ONE_BASED.has(key)) value = value + 1;
    const always = key === 'text' || key === 'stage' || (key === 'layer' && state.model);
    const differs = ONE_BASED.has(key) ? state[key] !== DEFAULTS[key] : String(state[key] ?? '') !== String(DEFAULTS[key]);
    if (always || differs || key === 'source') attributes.push(`${attribute}="${escapeAttribute(value)}"`);
  }
  if (!state.scale) attributes.push('scale="false"');
  return `<script src="${escapeAttribute(scriptSrc)}" defer></script>\n` +
    `<attention-lens ${attributes.join(' ')}></attention-lens>`;
}

/** An iframe of the page at `pageUrl` (which carries the state in its hash). */
export function iframeSnippet(pageUrl) {
  return `<iframe src="${escapeAttribute(pageUrl)}" title="Attention Lens" width="100%" height="720" ` +
    'style="border:0" loading="lazy"></iframe>';
}

/**
 * A snapshot's snippets: `inline` (the element with the snapshot in a <script type="application/json">
 * child, escaped so no text in it can end the script element), `file` (the element naming
 * `fileName`, the .json beside the post), the file's `json`, its size in `bytes` (of the inline
 * JSON) and the weights' bound ('±0.002', or '' without weights), read back as the element reads it.
 */
export function snapshotSnippets(snapshot, { fileName = 'snapshot.json', scriptSrc = 'attention-lens-snapshot.js' } = {}) {
  const inlineJson = scriptSafeJson(snapshot);
  const json = snapshotJson(snapshot);
  const { bound } = readSnapshot(json); // the element's own check: a snapshot it would refuse is never offered
  const script = `<script src="${escapeAttribute(scriptSrc)}" defer></script>\n`;
  return {
    inline: `${script}<attention-lens snapshot><script type="application/json">${inlineJson}</script></attention-lens>`,
    file: `${script}<attention-lens snapshot="${escapeAttribute(fileName)}"></attention-lens>`,
    json,
    bytes: new TextEncoder().encode(inlineJson).length,
    bound: bound > 0 ? boundText(bound) : '',
  };
}

/** '±0.002': a snapshot's bound on its 8-bit weights, to one significant digit (rounded up). */
export function boundText(bound) {
  const digits = Math.max(0, -Math.floor(Math.log10(bound)));
  const step = 10 ** -digits;
  return `±${(Math.ceil(bound / step - 1e-9) * step).toFixed(digits)}`;
}
