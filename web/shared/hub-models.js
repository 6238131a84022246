// The Hub models the page knows (DOM-free): the Your model view's picker data, and the sizes the <attention-lens hub> element names before a download. The known-good Hugging Face Hub models, their
// download sizes, families and parameter counts, and whether a model fits the tab. What the core
// decides comes from the core (lens.catalog, passed in as `tab`): which families it reads and their
// names (catalog.families), the bytes a parameter takes by its stored dtype (catalog.parameterBytes)
// and the memory limit (catalog.limits.maxCheckpointParameterBytes) — never a copy of them here.
// The sizes are those of each repo's weights as the Hub lists them (decimal units), the parameter
// counts the models' cards'; neither is measured here. A GGUF repo (llama.cpp's files: one model
// quantized several ways) lists the .gguf files known to work or known not to yet (`files`); one is
// loaded by name (lens.loadCheckpoint({ hub, file })). Sizes are written by shared/format.js's formatBytes (decimal, the
// page's one byte formatter).
import { formatBytes } from './format.js';

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

/** A GGUF repo's entry: its first file's size, bytes and quant as the entry's own (the file chosen with the repo). */
function ggufRepo({ files, ...entry }) {
  const [first] = files;
  return { ...entry, size: first.size, bytes: first.bytes, dtype: first.quant, gguf: true,
    files: Object.freeze(files.map((f) => Object.freeze(f))) };
}

/**
 * The picker's list: { name (its option's label), id (the Hub id loaded), size (download), bytes,
 * family (the core's name, m.family), params (parameter count), dtype (as stored), revisions (when
 * the repo publishes training checkpoints as revisions: their names, oldest first; main is the
 * final one) }; a GGUF repo's also `files`: its known .gguf files, [{ file, quant (llama.cpp's name
 * of the mix: Q8_0, Q4_K_M), size, bytes, notYet? (why the core cannot read it yet, in words) }],
 * the first the one chosen with the repo (its size, bytes and quant are the entry's size, bytes and
 * dtype). Frozen: the view only reads it. Where each number comes from:
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
  ggufRepo({ name: 'SmolLM2-135M-Instruct', id: 'bartowski/SmolLM2-135M-Instruct-GGUF', family: 'llama', params: 135e6, files: [
    { file: 'SmolLM2-135M-Instruct-Q8_0.gguf', quant: 'Q8_0', size: '145 MB', bytes: 145e6 },
    { file: 'SmolLM2-135M-Instruct-Q4_K_M.gguf', quant: 'Q4_K_M', size: '105 MB', bytes: 105e6 },
  ] }),
  ggufRepo({ name: 'Qwen2.5-0.5B-Instruct', id: 'second-state/Qwen2.5-0.5B-Instruct-GGUF', family: 'qwen2', params: 494e6, files: [
    { file: 'Qwen2.5-0.5B-Instruct-Q8_0.gguf', quant: 'Q8_0', size: '531 MB', bytes: 531e6 },
    { file: 'Qwen2.5-0.5B-Instruct-Q4_K_M.gguf', quant: 'Q4_K_M', size: '398 MB', bytes: 398e6 },
  ] }),
  ggufRepo({ name: 'Llama-3.2-1B-Instruct', id: 'bartowski/Llama-3.2-1B-Instruct-GGUF', family: 'llama', params: 1_235_814_400, files: [
    { file: 'Llama-3.2-1B-Instruct-Q8_0.gguf', quant: 'Q8_0', size: '1.32 GB', bytes: 1.32e9 },
    { file: 'Llama-3.2-1B-Instruct-Q4_K_M.gguf', quant: 'Q4_K_M', size: '0.81 GB', bytes: 0.81e9 },
  ] }),
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

/**
 * The bytes one parameter stored as `dtype` takes in the tab: the core's (catalog.parameterBytes); a
 * quantized type the core does not list there is dequantized to float32 at load (float32's bytes).
 */
export const parameterBytesOf = (dtype, tab) => tab.parameterBytes[dtype] ?? tab.parameterBytes.F32;

/**
 * A GGUF file's quant as the type the core lists: llama.cpp's mixes by their main type ('Q4_K_M',
 * 'Q4_K_S' → 'Q4_K'; their other tensors are types the core keeps as stored too).
 */
const storedType = (quant) => quant?.replace(/^(Q\d_K)_[SML]$/, '$1');

/**
 * The bytes an entry's parameters take in the tab (the core's bytes per parameter of its dtype); a
 * GGUF file whose type the core keeps as stored takes about its file's bytes (its blocks as stored),
 * and one of a repo the page does not list (its parameters unknown until it is read) at least them.
 */
export const bytesInTab = (entry, tab) => (entry.gguf && entry.bytes !== undefined &&
  (tab.parameterBytes[storedType(entry.dtype)] !== undefined || entry.params === undefined)
  ? entry.bytes : entry.params * parameterBytesOf(entry.dtype, tab));

/** The stored types of `types` the core dequantizes to float32 at load: those not in its catalog.parameterBytes. */
export const dequantizedTypes = (types, tab) => types.filter((t) => t !== undefined && tab.parameterBytes[storedType(t)] === undefined);

/**
 * What the page says of quantized weights the core dequantizes at load (`dequantized`: their
 * types, e.g. ['Q8_0']: dequantizedTypes'), '' when none. The one place this is worded: a GGUF
 * entry's facts line and a loaded model's facts line say it.
 */
export function dequantizedNote(dequantized) {
  if (!dequantized.length) return '';
  return `${dequantized.join(', ')} weights are dequantized to float32 at load today (memory ≈ 4 bytes per weight)`;
}


/**
 * A GGUF entry with one of its files chosen (by name; undefined: the first): the entry with that
 * file's file, size, bytes, quant (as dtype) and notYet; a file the entry does not list: the entry
 * with that name alone (nothing known of it). Any other entry is returned as is.
 */
export function withFile(entry, file) {
  if (!entry?.gguf) return entry;
  if (file === NO_GGUF_FILE) return { ...entry, file: undefined, size: '', bytes: undefined, dtype: undefined, notYet: undefined, noFile: true };
  const known = file === undefined ? entry.files.find((f) => !f.split) ?? entry.files[0] : entry.files.find((f) => f.file === file);
  if (!known) return { ...entry, file, size: '', bytes: undefined, dtype: undefined, notYet: undefined, unknownFile: true };
  return { ...entry, file: known.file, size: known.size, bytes: known.bytes, dtype: known.quant, notYet: known.notYet };
}

/**
 * Why an entry cannot be loaded in this tab, or null when it can: its family not read yet, a GGUF
 * file the core cannot read yet (its notYet), or its parameters above the core's limit
 * (tab.maxParameterBytes; undefined: not checked). A GGUF entry is judged by its chosen file
 * (withFile; the first by default). e.g. "needs 2.20 GB as BF16; the tab's limit is 1.07 GB".
 */
export function whyNotLoadable(given, tab) {
  const entry = given.gguf && given.file === undefined && !given.noFile ? withFile(given) : given;
  // A repo the page does not list: its family is in its file, read at load.
  if (entry.family !== undefined && !isSupported(entry, tab)) return 'not supported yet';
  if (entry.notYet) return `not read yet: ${entry.notYet}`;
  if (entry.unknownFile || entry.noFile) return null;
  const need = bytesInTab(entry, tab);
  if (tab.maxParameterBytes !== undefined && need > tab.maxParameterBytes) {
    const limit = `the tab's limit is ${formatBytes(tab.maxParameterBytes)}`;
    if (entry.params === undefined) return `its file alone is ${formatBytes(need)}; ${limit}`;
    const form = parameterBytesOf(entry.dtype, tab) === 4 ? 'float32' : entry.dtype;
    return `needs ${formatBytes(need)} as ${form}; ${limit}`;
  }
  return null;
}

/**
 * The facts line under the menu for the chosen entry: 'openai-community/gpt2 · 548 MB · GPT-2 · 124 M parameters'
 * (+ why it is disabled); a GGUF entry's with its chosen file (withFile) and what its quantized
 * weights take: 'bartowski/…-GGUF · SmolLM2-135M-Instruct-Q8_0.gguf · 145 MB · Llama · 135 M
 * parameters · Q8_0 weights are dequantized to float32 at load today (…): 0.540 GB'.
 */
export function hubModelLine(given, tab) {
  const entry = given.gguf && given.file === undefined && !given.noFile ? withFile(given) : given;
  const why = whyNotLoadable(entry, tab);
  const params = entry.params >= 1e9 ? `${Number((entry.params / 1e9).toPrecision(3))} B` : `${Math.round(entry.params / 1e6)} M`;
  const note = entry.gguf && !entry.unknownFile && !entry.noFile ? dequantizedNote(dequantizedTypes([entry.dtype], tab)) : '';
  // A repo the page does not list: its family and parameters are in its file, said once it is loaded.
  const known = entry.family === undefined ? [] : [familyName(entry, tab), `${params} parameters`];
  return [entry.id, ...(entry.gguf && entry.file ? [entry.file] : []), ...(entry.noFile && entry.weights ? [entry.weights] : []), ...(entry.size ? [entry.size] : []), ...known,
    ...(entry.gated ? ['gated: accept its licence on the Hub'] : []), ...(note ? [`${note}: ${formatBytes(bytesInTab(entry, tab))}`] : []),
    ...(why ? [why] : [])].join(' · ');
}

/** The listed entry whose Hub id is `text` (the id box's, trimmed), or undefined. */
export const hubEntry = (text) => HUB_MODELS.find((m) => m.id === String(text ?? '').trim());

/** The menu's group of GGUF repos (whatever their family: the facts line names it). */
export const GGUF_GROUP = 'GGUF files (llama.cpp)';

/**
 * The picker's menu: the list's entries grouped by family (the core's display name), the GGUF
 * repos in a group of their own last; the groups and the entries in the list's order: [{ label, entries }].
 */
export function hubGroups(tab) {
  const groups = new Map();
  for (const entry of HUB_MODELS) {
    const label = entry.gguf ? GGUF_GROUP : familyName(entry, tab);
    if (!groups.has(label)) groups.set(label, []);
    groups.get(label).push(entry);
  }
  return [...groups].map(([label, entries]) => ({ label, entries }));
}

/**
 * An entry's option in the menu: its name and download size, and in a word why it needs more than
 * a click: 'pythia-70m · 166 MB', 'gemma-3-270m · 536 MB · gated', 'OLMo-2-0425-1B · 5.94 GB · too
 * large' (for the tab; the facts line under the menu says it in full: hubModelLine). A GGUF repo's:
 * its name and its files' quants, 'SmolLM2-135M-Instruct · Q8_0, Q4_K_M' ('· not read yet' when
 * none of them loads).
 */
export function hubOptionLabel(entry, tab) {
  if (entry.gguf) {
    const none = entry.files.every((f) => whyNotLoadable(withFile(entry, f.file), tab) !== null);
    return [entry.name, entry.files.map((f) => f.quant).join(', '), ...(none ? ['not read yet'] : [])].join(' · ');
  }
  const why = whyNotLoadable(entry, tab);
  const short = why === null ? [] : [isSupported(entry, tab) ? 'too large' : why];
  return [entry.name, entry.size, ...(entry.gated ? ['gated'] : []), ...short].join(' · ');
}

/**
 * A GGUF file's option in the File menu: 'Q8_0 · 145 MB', 'Q4_K_M · 105 MB · not read yet',
 * 'Q8_0 · 1.32 GB · too large'.
 */
export function ggufFileLabel(entry, file, tab) {
  // The quant names the file among the repo's (a split model's among the split ones); its name
  // where there is none or another file has it too.
  const shared = !file.quant || entry.files.some((f) => f !== file && Boolean(f.split) === Boolean(file.split) && f.quant === file.quant);
  const name = shared ? file.splitName ?? file.file : file.quant;
  if (file.split) return [name, file.size, `split into ${file.split} files — not read`].join(' · ');
  const chosen = withFile(entry, file.file);
  const why = whyNotLoadable(chosen, tab);
  return [name, file.size, ...(why === null ? [] : [chosen.notYet ? 'not read yet' : 'too large'])].join(' · ');
}

/** The File menu's value for "no .gguf file": the repo's model.safetensors (or pytorch_model.bin) with its config.json. */
export const NO_GGUF_FILE = ':weights';

/**
 * llama.cpp's name of a GGUF file's type, from the file's name as the Hub's GGUF repos write it
 * ('SmolLM2-135M-Instruct-Q4_K_M.gguf' → 'Q4_K_M', 'tinyllama.Q8_0.gguf' → 'Q8_0', 'qwen-fp16.gguf'
 * → 'F16', 'model-IQ4_XS.gguf' → 'IQ4_XS'), upper-cased; undefined when the name has none.
 */
export function ggufQuant(file) {
  const parts = String(file).split('/');
  const base = parts.pop().replace(/(-\d{5}-of-\d{5})?\.gguf$/i, '');
  // At the end of the name, else a folder named after it ('Q4_K_M/name.gguf').
  const match = /(?:^|[-_.])((?:I?Q\d(?:_[A-Z0-9]+)*)|F16|F32|BF16|FP16|FP32)$/i.exec(base) ??
    parts.reverse().map((folder) => /^()((?:I?Q\d(?:_[A-Z0-9]+)*)|F16|F32|BF16|FP16|FP32)$/i.exec(folder)).find(Boolean)?.slice(1);
  return match ? match[1].toUpperCase().replace(/^FP/, 'F') : undefined;
}

/** A split GGUF file's part ('name-00001-of-00003.gguf'): { base: 'name', part: 1, parts: 3 }, or null. */
export function ggufSplit(file) {
  const match = /^(.*)-(\d{5})-of-(\d{5})\.gguf$/i.exec(file);
  return match ? { base: match[1], part: Number(match[2]), parts: Number(match[3]) } : null;
}

// The weights lens.loadCheckpoint({ hub }) reads without a file, in the order it looks for them.
const REPO_WEIGHTS = ['model.safetensors', 'model.safetensors.index.json', 'pytorch_model.bin', 'pytorch_model.bin.index.json'];

/**
 * A repo's files as the Hub lists them (lens.hubFiles: [{ file, bytes }]) made a GGUF entry the File
 * menu offers, or null when it has no .gguf file: `listed` (a listed GGUF repo) with the files it
 * does not know added after its own, else { id, name: id, gguf, files } with nothing known of the
 * model until its file is read (family, parameters). Each .gguf file { file, quant (ggufQuant),
 * size, bytes }; the parts of a split file as one { file: its first part, quant, size and bytes
 * of every part, split: N, splitName, notYet } (not read: ggufFileLabel says so), after the others. `weights`: the
 * weights the repo also has that are read without a file (model.safetensors, …), or undefined.
 */
export function ggufRepoFromFiles(id, listing, listed) {
  const ggufs = listing.filter(({ file }) => /\.gguf$/i.test(file));
  if (!ggufs.length) return null;
  const whole = [];
  const splits = new Map(); // base -> { file, quant, bytes, split }
  for (const { file, bytes } of ggufs) {
    const split = ggufSplit(file);
    if (!split) {
      whole.push({ file, quant: ggufQuant(file), size: formatBytes(bytes), bytes });
      continue;
    }
    const group = splits.get(split.base) ?? { file: `${split.base}.gguf`, splitName: split.base, quant: ggufQuant(file), bytes: 0,
      split: split.parts, notYet: `split into ${split.parts} files` };
    if (split.part === 1) group.file = file;
    group.bytes += bytes;
    splits.set(split.base, group);
  }
  const parts = [...splits.values()].map((group) => ({ ...group, size: formatBytes(group.bytes) }));
  const known = new Set((listed?.files ?? []).map((f) => f.file));
  const files = [...(listed?.files ?? []), ...[...whole, ...parts].filter((f) => !known.has(f.file))];
  const weights = REPO_WEIGHTS.find((name) => listing.some((f) => f.file === name));
  const entry = listed ? { ...listed } : { id, name: id, gguf: true };
  return Object.freeze({ ...entry, files: Object.freeze(files.map((f) => Object.freeze(f))), ...(weights ? { weights } : {}) });
}

/**
 * What the id box (and the File menu or box, `file`: a GGUF repo's .gguf; '' or undefined: none)
 * holds, as lens.loadCheckpoint's hub options: { hub } alone when it is a repo's URL (its origin is
 * the endpoint), else { hub, endpoint } with the page's endpoint ('' or undefined: the API's
 * default, https://huggingface.co); with { file } when one is named. Empty text: { error }. The id
 * and the file name themselves are checked by the API (its message is shown).
 */
export function hubRequest(text, endpoint, file) {
  const hub = String(text ?? '').trim();
  if (!hub) return { error: "type a Hugging Face id (org/name) or a repo's URL" };
  const named = String(file ?? '').trim();
  const withName = named ? { file: named } : {};
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(hub) || !endpoint) return { hub, ...withName };
  return { hub, endpoint, ...withName };
}
