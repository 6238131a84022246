// The Hub models the page knows (DOM-free): the Your model view's picker data, and the sizes the <attention-lens hub> element names before a download. The known-good Hugging Face Hub models, their
// download sizes, families and parameter counts, and whether a model fits the tab. What the core
// decides comes from the core (lens.catalog, passed in as `tab`): which families it reads and their
// names (catalog.families), the bytes a parameter takes by its stored dtype (catalog.parameterBytes)
// and the memory limit (catalog.limits.maxCheckpointParameterBytes) — never a copy of them here.
// The sizes are those of each repo's weights as the Hub lists them (decimal units), the parameter
// counts the models' cards'; neither is measured here.

/**
 * Pythia's training checkpoints, published as revisions of each Pythia repo (the Pythia card's
 * "Quickstart": 154 checkpoints, step0, then 10 log-spaced steps 1, 2, 4, …, 512, then every 1000
 * steps up to step143000, which is also main). Oldest first.
 */
export const PYTHIA_REVISIONS = Object.freeze([
  'step0',
  ...Array.from({ length: 10 }, (_, i) => `step${2 ** i}`),
  ...Array.from({ length: 143 }, (_, i) => `step${(i + 1) * 1000}`),
]);

/**
 * The picker's list: { name (its option's label), id (the Hub id loaded), size (download), bytes,
 * family (the core's name, m.family), params (parameter count), dtype (as stored), revisions (when
 * the repo publishes training checkpoints as revisions: their names, oldest first; main is the
 * final one) }. Frozen: the view only reads it. Where each number comes from:
 * tests/js/hub-models.test.mjs (each entry's config.json values, parameter count and file size).
 */
export const HUB_MODELS = Object.freeze([
  { name: 'gpt2', id: 'openai-community/gpt2', size: '548 MB', bytes: 548e6, family: 'gpt2', params: 124e6, dtype: 'F32' },
  { name: 'distilgpt2', id: 'distilbert/distilgpt2', size: '353 MB', bytes: 353e6, family: 'gpt2', params: 82e6, dtype: 'F32' },
  { name: 'SmolLM2-135M', id: 'HuggingFaceTB/SmolLM2-135M', size: '269 MB', bytes: 269e6, family: 'llama', params: 135e6, dtype: 'BF16' },
  { name: 'SmolLM2-360M', id: 'HuggingFaceTB/SmolLM2-360M', size: '724 MB', bytes: 724e6, family: 'llama', params: 362e6, dtype: 'BF16' },
  { name: 'Qwen2.5-0.5B', id: 'Qwen/Qwen2.5-0.5B', size: '988 MB', bytes: 988e6, family: 'qwen2', params: 494e6, dtype: 'BF16' },
  { name: 'TinyLlama-1.1B-Chat', id: 'TinyLlama/TinyLlama-1.1B-Chat-v1.0', size: '2.2 GB', bytes: 2.2e9, family: 'llama', params: 1.1e9,
    dtype: 'BF16' },
  { name: 'pythia-70m', id: 'EleutherAI/pythia-70m', size: '166 MB', bytes: 166e6, family: 'gpt_neox', params: 70_426_624, dtype: 'F16',
    revisions: PYTHIA_REVISIONS },
  { name: 'pythia-160m', id: 'EleutherAI/pythia-160m', size: '375 MB', bytes: 375e6, family: 'gpt_neox', params: 162_322_944, dtype: 'F16',
    revisions: PYTHIA_REVISIONS },
  { name: 'pythia-410m', id: 'EleutherAI/pythia-410m', size: '911 MB', bytes: 911e6, family: 'gpt_neox', params: 405_334_016, dtype: 'F16',
    revisions: PYTHIA_REVISIONS },
  { name: 'Qwen3-0.6B', id: 'Qwen/Qwen3-0.6B', size: '1.5 GB', bytes: 1.5e9, family: 'qwen3', params: 596_049_920, dtype: 'BF16' },
  { name: 'gemma-3-270m', id: 'google/gemma-3-270m', size: '536 MB', bytes: 536e6, family: 'gemma3_text', params: 268_098_176,
    dtype: 'BF16', gated: true },
  { name: 'gemma-3-270m-it', id: 'google/gemma-3-270m-it', size: '536 MB', bytes: 536e6, family: 'gemma3_text', params: 268_098_176,
    dtype: 'BF16', gated: true },
  { name: 'OLMo-2-0425-1B', id: 'allenai/OLMo-2-0425-1B', size: '5.94 GB', bytes: 5.94e9, family: 'olmo2', params: 1_484_916_736,
    dtype: 'F32' },
].map((m) => Object.freeze(m)));

/**
 * What the core says a model needs to fit the tab (lens.catalog's, or the model session's info):
 * { families: [{ name, displayName }], parameterBytes: { F32, F16, BF16, … }, maxParameterBytes? }.
 * @typedef {{ families: { name: string, displayName: string }[], parameterBytes: Record<string, number>, maxParameterBytes?: number }} TabLimits
 */

/** The name people know an entry's family by (the core's display name). */
export const familyName = (entry, tab) => tab.families.find((f) => f.name === entry.family)?.displayName ?? entry.family;

/** Whether the core reads an entry's family. */
export const isSupported = (entry, tab) => tab.families.some((f) => f.name === entry.family);

/** The bytes an entry's parameters take in the tab (the core's bytes per parameter of its dtype). */
export const bytesInTab = (entry, tab) => entry.params * tab.parameterBytes[entry.dtype];

/** Decimal gigabytes, 3 significant digits: '1.45 GB', '1.07 GB'. */
const gigabytes = (bytes) => `${(bytes / 1e9).toPrecision(3)} GB`;

/**
 * Why an entry cannot be loaded in this tab, or null when it can: its family not read yet, or its
 * parameters above the core's limit (tab.maxParameterBytes; undefined: not checked).
 * e.g. "needs 2.20 GB as BF16; the tab's limit is 1.07 GB".
 */
export function whyNotLoadable(entry, tab) {
  if (!isSupported(entry, tab)) return 'not supported yet';
  const need = bytesInTab(entry, tab);
  if (tab.maxParameterBytes !== undefined && need > tab.maxParameterBytes) {
    const form = tab.parameterBytes[entry.dtype] === 4 ? 'float32' : entry.dtype;
    return `needs ${gigabytes(need)} as ${form}; the tab's limit is ${gigabytes(tab.maxParameterBytes)}`;
  }
  return null;
}

/**
 * The facts line under the menu for the chosen entry: 'openai-community/gpt2 · 548 MB · GPT-2 · 124 M parameters'
 * (+ why it is disabled).
 */
export function hubModelLine(entry, tab) {
  const why = whyNotLoadable(entry, tab);
  const params = entry.params >= 1e9 ? `${Number((entry.params / 1e9).toPrecision(3))} B` : `${Math.round(entry.params / 1e6)} M`;
  return [entry.id, entry.size, familyName(entry, tab), `${params} parameters`, ...(entry.gated ? ['gated: accept its licence on the Hub'] : []),
    ...(why ? [why] : [])].join(' · ');
}

/** The listed entry whose Hub id is `text` (the id box's, trimmed), or undefined. */
export const hubEntry = (text) => HUB_MODELS.find((m) => m.id === String(text ?? '').trim());

/**
 * The picker's menu: the list's entries grouped by family (the core's display name), the groups
 * and the entries in the list's order: [{ label, entries }].
 */
export function hubGroups(tab) {
  const groups = new Map();
  for (const entry of HUB_MODELS) {
    const label = familyName(entry, tab);
    if (!groups.has(label)) groups.set(label, []);
    groups.get(label).push(entry);
  }
  return [...groups].map(([label, entries]) => ({ label, entries }));
}

/**
 * An entry's option in the menu: its name and download size, and in a word why it needs more than
 * a click: 'pythia-70m · 166 MB', 'gemma-3-270m · 536 MB · gated', 'OLMo-2-0425-1B · 5.94 GB · too
 * large' (for the tab; the facts line under the menu says it in full: hubModelLine).
 */
export function hubOptionLabel(entry, tab) {
  const why = whyNotLoadable(entry, tab);
  const short = why === null ? [] : [isSupported(entry, tab) ? 'too large' : why];
  return [entry.name, entry.size, ...(entry.gated ? ['gated'] : []), ...short].join(' · ');
}

/**
 * What the id box holds, as lens.loadCheckpoint's hub options: { hub } alone when it is a repo's
 * URL (its origin is the endpoint), else { hub, endpoint } with the page's endpoint ('' or
 * undefined: the API's default, https://huggingface.co). Empty text: { error }. The id itself is
 * checked by the API (its message is shown).
 */
export function hubRequest(text, endpoint) {
  const hub = String(text ?? '').trim();
  if (!hub) return { error: "type a Hugging Face id (org/name) or a repo's URL" };
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(hub) || !endpoint) return { hub };
  return { hub, endpoint };
}
