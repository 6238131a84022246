// The Your model view's picker data (DOM-free): the known-good Hugging Face Hub models, their
// download sizes and families, and which families the core reads today (the GPT-2 family only:
// the others are listed, disabled, "not supported yet"). The sizes are those of each repo's
// model.safetensors as the Hub lists it (decimal units), not measured here.

/** The families lens.loadCheckpoint reads today (the core's checkpoint import). */
export const SUPPORTED_FAMILIES = Object.freeze(['GPT-2']);

/**
 * The picker's list: { name (the button's label), id (the Hub id loaded), size (download), bytes,
 * family, note? }. Frozen: the view only reads it.
 */
export const HUB_MODELS = Object.freeze([
  { name: 'gpt2', id: 'openai-community/gpt2', size: '548 MB', bytes: 548e6, family: 'GPT-2' },
  { name: 'distilgpt2', id: 'distilbert/distilgpt2', size: '353 MB', bytes: 353e6, family: 'GPT-2' },
  { name: 'SmolLM2-135M', id: 'HuggingFaceTB/SmolLM2-135M', size: '269 MB', bytes: 269e6, family: 'Llama' },
  { name: 'SmolLM2-360M', id: 'HuggingFaceTB/SmolLM2-360M', size: '724 MB', bytes: 724e6, family: 'Llama' },
  { name: 'Qwen2.5-0.5B', id: 'Qwen/Qwen2.5-0.5B', size: '988 MB', bytes: 988e6, family: 'Qwen2' },
  { name: 'TinyLlama-1.1B-Chat', id: 'TinyLlama/TinyLlama-1.1B-Chat-v1.0', size: '2.2 GB', bytes: 2.2e9, family: 'Llama',
    note: 'too large for most tabs' },
].map((m) => Object.freeze(m)));

/** Whether the core reads an entry's family today. */
export const isSupported = (entry) => SUPPORTED_FAMILIES.includes(entry.family);

/** The line under an entry's button: 'openai-community/gpt2 · 548 MB · GPT-2' (+ why it is disabled, + its note). */
export function hubModelLine(entry) {
  return [entry.id, entry.size, entry.family, ...(isSupported(entry) ? [] : ['not supported yet']), ...(entry.note ? [entry.note] : [])]
    .join(' · ');
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
