// The Your model view's picker data (DOM-free): the known-good Hugging Face Hub models, their
// download sizes, families and parameter counts, which families the core reads (GPT-2 and the Llama
// family), and whether a model fits the tab: its parameters in memory against the core's limit
// (lens.catalog.limits.maxCheckpointParameterBytes, passed in; never a copy of it here). The sizes
// are those of each repo's weights as the Hub lists them (decimal units), the parameter counts the
// models' cards'; neither is measured here.

/** The families lens.loadCheckpoint reads (the core's checkpoint import: gpt2, llama, qwen2, mistral). */
export const SUPPORTED_FAMILIES = Object.freeze(['GPT-2', 'Llama', 'Qwen2', 'Mistral']);

/**
 * The bytes one parameter takes in the tab, by the dtype the checkpoint stores: the core keeps F16
 * and BF16 weight matrices in their 2-byte form and widens the rest to float32
 * (model/checkpoint_import.cpp; the norms' few float32 weights are left out of this estimate).
 */
export const BYTES_IN_TAB = Object.freeze({ F32: 4, F16: 2, BF16: 2 });

/**
 * The picker's list: { name (the button's label), id (the Hub id loaded), size (download), bytes,
 * family, params (parameter count), dtype (as stored) }. Frozen: the view only reads it.
 */
export const HUB_MODELS = Object.freeze([
  { name: 'gpt2', id: 'openai-community/gpt2', size: '548 MB', bytes: 548e6, family: 'GPT-2', params: 124e6, dtype: 'F32' },
  { name: 'distilgpt2', id: 'distilbert/distilgpt2', size: '353 MB', bytes: 353e6, family: 'GPT-2', params: 82e6, dtype: 'F32' },
  { name: 'SmolLM2-135M', id: 'HuggingFaceTB/SmolLM2-135M', size: '269 MB', bytes: 269e6, family: 'Llama', params: 135e6, dtype: 'BF16' },
  { name: 'SmolLM2-360M', id: 'HuggingFaceTB/SmolLM2-360M', size: '724 MB', bytes: 724e6, family: 'Llama', params: 362e6, dtype: 'BF16' },
  { name: 'Qwen2.5-0.5B', id: 'Qwen/Qwen2.5-0.5B', size: '988 MB', bytes: 988e6, family: 'Qwen2', params: 494e6, dtype: 'BF16' },
  { name: 'TinyLlama-1.1B-Chat', id: 'TinyLlama/TinyLlama-1.1B-Chat-v1.0', size: '2.2 GB', bytes: 2.2e9, family: 'Llama', params: 1.1e9,
    dtype: 'BF16' },
].map((m) => Object.freeze(m)));

/** Whether the core reads an entry's family. */
export const isSupported = (entry) => SUPPORTED_FAMILIES.includes(entry.family);

/** The bytes an entry's parameters take in the tab (BYTES_IN_TAB of its dtype). */
export const bytesInTab = (entry) => entry.params * BYTES_IN_TAB[entry.dtype];

/** Decimal gigabytes, 3 significant digits: '1.45 GB', '1.07 GB'. */
const gigabytes = (bytes) => `${(bytes / 1e9).toPrecision(3)} GB`;

/**
 * Why an entry cannot be loaded in this tab, or null when it can: its family not read yet, or its
 * parameters above `maxParameterBytes` (the core's limit; undefined: not checked).
 * e.g. "needs 2.20 GB as BF16; the tab's limit is 1.07 GB".
 */
export function whyNotLoadable(entry, maxParameterBytes) {
  if (!isSupported(entry)) return 'not supported yet';
  const need = bytesInTab(entry);
  if (maxParameterBytes !== undefined && need > maxParameterBytes) {
    const form = BYTES_IN_TAB[entry.dtype] === 4 ? 'float32' : entry.dtype;
    return `needs ${gigabytes(need)} as ${form}; the tab's limit is ${gigabytes(maxParameterBytes)}`;
  }
  return null;
}

/**
 * The line under an entry's button: 'openai-community/gpt2 · 548 MB · GPT-2 · 124 M parameters'
 * (+ why it is disabled, with `maxParameterBytes` the core's limit).
 */
export function hubModelLine(entry, maxParameterBytes) {
  const why = whyNotLoadable(entry, maxParameterBytes);
  const params = entry.params >= 1e9 ? `${entry.params / 1e9} B` : `${Math.round(entry.params / 1e6)} M`;
  return [entry.id, entry.size, entry.family, `${params} parameters`, ...(why ? [why] : [])].join(' · ');
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
