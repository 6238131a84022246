// lens.loadCheckpoint({ hub }): a checkpoint's files fetched by Hugging Face id, the weights by HTTP
// Range; lens.hubFiles: a repo's file list (a module of the JS API; the page's Your model view imports
// listHubFiles for its File menu: it needs no wasm).
import { progressOption, readCheckpoint, tokenizerText } from './checkpoint.js';
import { checkKeys, describe } from './common.js';

// ---- the Hub (lens.loadCheckpoint({ hub, revision, endpoint, onProgress, signal })) ------------

const HUB_KEYS = ['hub', 'file', 'revision', 'endpoint', 'onProgress', 'signal', 'cache'];
const HUB_CACHE = 'attention-lens-hub'; // the Cache Storage cache the files are kept in
// What Cache Storage's put rejects with when the browser cannot keep a file (not a network error).
const HUB_STORAGE_ERRORS = ['QuotaExceededError', 'UnknownError', 'InvalidStateError'];
const HUB_ENDPOINT = 'https://huggingface.co';
const HUB_PROBE = 1 << 16; // model.safetensors' first request (64 kB): its header, usually
const HUB_WINDOW = 1 << 23; // the bytes of model.safetensors asked for at a time after it (8 MB)
// A repo name as huggingface_hub accepts it: letters, digits, '.', '_', '-', at most 96, starting
// and ending with a letter, digit or '_', no '..' or '--'.
const HUB_NAME = /^[A-Za-z0-9_](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9_])?$/;
// A GGUF file of a repo (loadCheckpoint({ hub, file })): a .gguf name, in the repo's top folder or
// up to two folders down ('Q4_K_M/name.gguf'), no part starting with a dot.
const HUB_GGUF_FILE = /^(?:[\w-][\w.-]{0,199}\/){0,2}[\w-][\w.-]{0,199}\.gguf$/;

/** loadCheckpoint({ hub, file })'s file: a .gguf file of the repo. */
function hubGgufFile(file) {
  if (typeof file !== 'string' || !HUB_GGUF_FILE.test(file)) {
    throw new Error(`file must name a .gguf file of the repo (e.g. 'SmolLM2-135M-Instruct-Q8_0.gguf'; letters, digits, ` +
      `'.', '_', '-', up to two folders), got ${describe(file)}; without file, loadCheckpoint({ hub }) reads the repo's ` +
      'model.safetensors or pytorch_model.bin with its config.json');
  }
  return file;
}

/** { id, endpoint, revision } of loadCheckpoint's hub options (types and shapes only). */
function hubRepo(options) {
  const { hub } = options;
  if (typeof hub !== 'string') {
    throw new Error(`hub must be a Hugging Face id 'org/name' or a repo's URL, got ${describe(hub)}`);
  }
  let endpoint = options.endpoint === undefined ? undefined : hubEndpoint(options.endpoint);
  let id = hub;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(hub)) {
    const url = hubUrl('hub', hub);
    if (url.search || url.hash) throw new Error(`hub's URL must be a repo's, https://host/org/name, got ${describe(hub)}`);
    if (endpoint !== undefined && endpoint !== url.origin) {
      throw new Error(`hub's URL is on ${url.origin} but endpoint is ${endpoint}: give one of them`);
    }
    endpoint = url.origin;
    id = url.pathname.replace(/^\/+|\/+$/g, '');
  }
  const parts = id.split('/');
  if (parts.length !== 2 || !parts.every((part) => HUB_NAME.test(part)) || id.includes('..') || id.includes('--')) {
    throw new Error(`hub must be a Hugging Face id 'org/name' (letters, digits, '.', '_', '-'; ` +
      `at most 96 each; no '..' or '--') or a repo's URL https://host/org/name, got ${describe(hub)}`);
  }
  const revision = options.revision ?? 'main';
  if (typeof revision !== 'string' || revision === '' || revision.length > 256 || /[\s\0-\x1f\x7f]/.test(revision) ||
      revision.split('/').some((part) => part === '..' || part === '.')) {
    throw new Error(`revision must be a branch, tag or commit of the repo (no spaces, no '..'), got ${describe(revision)}`);
  }
  return { id, endpoint: endpoint ?? HUB_ENDPOINT, revision };
}

function hubUrl(name, text) {
  let url;
  try {
    url = new URL(text);
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password) {
    throw new Error(`${name} must be an http(s) URL, got ${describe(text)}`);
  }
  return url;
}

/** The endpoint option: an http(s) URL (a mirror may have a path), its trailing slashes trimmed. */
function hubEndpoint(endpoint) {
  if (typeof endpoint !== 'string') throw new Error(`endpoint must be an http(s) URL, got ${describe(endpoint)}`);
  const url = hubUrl('endpoint', endpoint);
  if (url.search || url.hash) throw new Error(`endpoint must be a URL without ? or #, got ${describe(endpoint)}`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

function hubSignal(signal) {
  if (signal === undefined) return undefined;
  if (signal === null || typeof signal !== 'object' || typeof signal.aborted !== 'boolean' ||
      (typeof AbortSignal === 'function' && !(signal instanceof AbortSignal))) {
    throw new Error(`signal must be an AbortSignal (new AbortController().signal), got ${describe(signal)}`);
  }
  return signal;
}

export async function loadHubCheckpoint(core, options, gpt2Tokenizer) {
  const given = ['weights', 'config', 'tokenizer'].filter((key) => options[key] !== undefined);
  if (given.length) {
    throw new Error(`loadCheckpoint takes hub (the files fetched by id) or weights and config (the files ` +
      `themselves), not both: got hub and ${given.join(' and ')}`);
  }
  checkKeys('loadCheckpoint options', options, HUB_KEYS);
  const gguf = options.file === undefined ? null : hubGgufFile(options.file);
  const hub = {
    ...hubRepo(options),
    signal: hubSignal(options.signal),
    onProgress: progressOption(options.onProgress),
    filesDone: 0, // bytes of the small files read whole
    weights: [], // each weights file's { received, size } once its size is known
    shown: 0, // the last fraction given to onProgress
    prepared: 0, // the fraction of the weights the core has read, once the download is done
    reached: false, // whether the server has answered once
    cache: await hubCacheOf(options.cache), // a Cache (Cache Storage) or null
    kept: [], // the small files to keep once the load succeeds: [url, Response]
    storedWeights: [], // the weights' URLs this load put into the cache
  };
  try {
    // A GGUF file holds its config and tokenizer in its metadata: only the file is fetched.
    const config = gguf ? null : new TextDecoder().decode(await hubFile(hub, 'config.json', true));
    const sources = gguf ? [await hubGgufWeights(hub, gguf)] : await hubWeightFiles(hub);
    const model = await readCheckpoint(core, {
      sources,
      config,
      tokenizer: gguf ? async () => null : () => hubTokenizer(hub),
      onRead: hub.onProgress && ((done, total) => hubPrepared(hub, done / total)),
      cancelled: () => hubCheckCancel(hub),
    }, gpt2Tokenizer);
    for (const [url, response] of hub.kept) await hub.cache.put(url, response);
    if (hub.shown < 1 || hub.prepared < 1) hub.onProgress?.(1, { phase: 'prepare', fraction: 1 });
    return model;
  } catch (error) {
    for (const url of hub.storedWeights) await hub.cache.delete(url).catch(() => {});
    throw error;
  }
}

// ---- a repo's files (lens.hubFiles({ hub, revision, endpoint, signal })) ------------------------

const HUB_FILES_KEYS = ['hub', 'revision', 'endpoint', 'signal'];
// A hostile or broken server cannot keep the listing going: at most this many pages (the Hub gives
// 1000 entries a page when recursive) and this many entries in all.
const HUB_FILES_PAGES = 100;
const HUB_FILES_ENTRIES = 100_000;
const HUB_FILES_PATH = 1000; // the longest path an entry may have

/**
 * Every file of a repo at a revision, from the Hub's tree API as huggingface_hub's list_repo_tree
 * asks it: GET {endpoint}/api/models/{id}/tree/{revision, URL-encoded whole: refs%2Fpr%2F1}
 * ?recursive=true&expand=false, then each `Link: <…>; rel="next"` page. Entries are
 * { type: 'file' | 'directory', path, size, lfs?: { size } }; a file's bytes are lfs.size when
 * the Hub gives it (an LFS file), else size. Returns [{ file, bytes }] sorted by path.
 */
export async function listHubFiles(options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new Error(`hubFiles takes an options object { hub, revision?, endpoint?, signal? }, got ${describe(options)}`);
  }
  checkKeys('hubFiles options', options, HUB_FILES_KEYS);
  const repo = hubRepo(options);
  const hub = { ...repo, signal: hubSignal(options.signal), reached: false, cancelled: `the file list of '${repo.id}' was cancelled` };
  const notUnderstood = (why) => new Error(`the Hub's file list for ${hub.id} was not understood: ${why}`);
  const track = { file: 'the file list', received: 0, size: null };
  let url = `${hub.endpoint}/api/models/${hub.id}/tree/${encodeURIComponent(hub.revision)}?recursive=true&expand=false`;
  const asked = new Set();
  const files = [];
  let entries = 0;
  for (let page = 1; url !== null; ++page) {
    if (page > HUB_FILES_PAGES) throw notUnderstood(`it runs past ${HUB_FILES_PAGES} pages`);
    asked.add(url);
    const response = await hubFetch(hub, track, url, { headers: { Accept: 'application/json' } });
    if (response.status !== 200) throw hubRefusal(hub, 'the file list', response);
    let text;
    try {
      text = await response.text();
    } catch (error) {
      throw hubLost(hub, track, error);
    }
    let list;
    try {
      list = JSON.parse(text);
    } catch (error) {
      throw notUnderstood(`its answer is not JSON (${error.message})`);
    }
    if (!Array.isArray(list)) throw notUnderstood(`its answer is ${describe(list)}, not a list of entries`);
    entries += list.length;
    if (entries > HUB_FILES_ENTRIES) throw notUnderstood(`it lists more than ${HUB_FILES_ENTRIES} entries`);
    for (const entry of list) {
      const file = hubTreeFile(entry, notUnderstood);
      if (file) files.push(file);
    }
    url = hubNextPage(hub, response.headers.get('link'), url, notUnderstood);
    if (url !== null && asked.has(url)) throw notUnderstood('its next page is one already read');
  }
  return files.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}

/** One entry of the tree API as { file, bytes } (null: a directory, or a kind the Hub may add). */
function hubTreeFile(entry, notUnderstood) {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw notUnderstood(`an entry is ${describe(entry)}`);
  const { type, path } = entry;
  if (typeof path !== 'string' || path === '' || path.length > HUB_FILES_PATH || /[\0-\x1f\x7f]/.test(path)) {
    throw notUnderstood(`an entry's path is ${describe(path)}`);
  }
  if (type !== 'file') return null;
  const size = entry.lfs != null && typeof entry.lfs === 'object' ? entry.lfs.size : entry.size;
  if (!Number.isSafeInteger(size) || size < 0) throw notUnderstood(`${describe(path)} has no size in bytes (got ${describe(size)})`);
  return { file: path, bytes: size };
}

/**
 * The next page's URL from a Link header (null: none): its rel="next" link, resolved against the
 * page's URL. A link to the public Hub from a mirror is asked of the mirror (huggingface_hub's
 * fix_hf_endpoint_in_url); one to any other origin is refused.
 */
function hubNextPage(hub, header, current, notUnderstood) {
  if (!header) return null;
  const link = header.split(/,(?=\s*<)/).map((part) => /^\s*<([^>]*)>(.*)$/.exec(part))
    .find((match) => match && /;\s*rel\s*=\s*"?next"?\s*(;|$)/i.test(match[2]));
  if (!link) return null;
  let next;
  try {
    next = new URL(link[1], current);
  } catch {
    throw notUnderstood(`its next page's link ${describe(link[1])} is not a URL`);
  }
  const origin = new URL(hub.endpoint).origin;
  if (next.origin === HUB_ENDPOINT && origin !== HUB_ENDPOINT) next = new URL(`${hub.endpoint}${next.pathname}${next.search}`);
  if (next.origin !== origin) throw notUnderstood(`its next page is on ${next.origin}, not ${origin}`);
  return next.href;
}

// ---- the files kept in the browser (Cache Storage) ---------------------------------------------

/**
 * The cache option: a CacheStorage (default: the browser's `caches`, where there is one) or false.
 * Files are kept under their resolve URL; a load that finds them reads no network.
 */
async function hubCacheOf(option) {
  if (option === false) return null;
  const storage = option === undefined || option === true ? globalThis.caches : option;
  if (option !== undefined && option !== true && (storage === null || typeof storage?.open !== 'function')) {
    throw new Error(`cache must be true, false or a CacheStorage, got ${describe(option)}`);
  }
  if (!storage) return null;
  try {
    return await storage.open(HUB_CACHE);
  } catch {
    return null; // Cache Storage refused (an opaque origin, a private window): load without it
  }
}

/** The cached answer for `url` (a kept file, or a kept "not there"), or null. */
async function hubCached(hub, url) {
  return hub.cache ? (await hub.cache.match(url)) ?? null : null;
}

/**
 * What the cache holds (lens.hubCache): list() → [{ repo, revision, file, bytes, url }] and
 * remove(repo?) → the number of files removed (every file without a repo).
 */
export function hubCacheApi(storage = globalThis.caches) {
  const open = async () => (storage ? storage.open(HUB_CACHE) : null);
  const entries = async () => {
    const cache = await open();
    if (!cache) return [];
    const out = [];
    for (const request of await cache.keys()) {
      const url = typeof request === 'string' ? request : request.url;
      const match = /^(.*)\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(url);
      const response = await cache.match(url);
      if (!match || !response || response.status !== 200) continue;
      const bytes = Number(response.headers.get('content-length') ?? (await response.clone().blob()).size);
      out.push({ repo: match[2], revision: decodeURIComponent(match[3]), file: match[4], bytes, url, endpoint: match[1] });
    }
    return out;
  };
  return {
    list: entries,
    async remove(repo) {
      if (repo !== undefined && typeof repo !== 'string') throw new Error(`remove takes a repo id, got ${describe(repo)}`);
      const cache = await open();
      if (!cache) return 0;
      let removed = 0;
      for (const request of await cache.keys()) {
        const url = typeof request === 'string' ? request : request.url;
        if (repo === undefined || url.includes(`/${repo}/resolve/`)) removed += (await cache.delete(url)) ? 1 : 0;
      }
      return removed;
    },
  };
}

/**
 * The repo's tokenizer as text (tokenizerText's forms, read by the core): tokenizer.json, else
 * vocab.json with merges.txt, else null.
 */
async function hubTokenizer(hub) {
  const text = (bytes) => new TextDecoder().decode(bytes);
  const json = await hubFile(hub, 'tokenizer.json', false);
  if (json) return tokenizerText(text(json));
  const vocab = await hubFile(hub, 'vocab.json', false);
  const merges = await hubFile(hub, 'merges.txt', false);
  if (!vocab && !merges) return null;
  if (!vocab || !merges) {
    throw new Error(`'${hub.id}' has ${vocab ? 'vocab.json' : 'merges.txt'} but no ${vocab ? 'merges.txt' : 'vocab.json'} ` +
      '(and no tokenizer.json): a GPT-2 tokenizer needs both');
  }
  return tokenizerText({ vocab: text(vocab), merges: text(merges) });
}

// ---- requests ----------------------------------------------------------------------------------

function hubFileUrl(hub, file) {
  return `${hub.endpoint}/${hub.id}/resolve/${encodeURIComponent(hub.revision)}/${file}`;
}

function hubCheckCancel(hub) {
  if (hub.signal?.aborted) throw new Error(hub.cancelled ?? `the load of '${hub.id}' was cancelled`);
}

/** The message of a fetch or body read that threw: cancelled, unreachable or the connection lost. */
function hubLost(hub, track, error) {
  hubCheckCancel(hub);
  const cause = error?.cause?.message ?? error?.message ?? String(error);
  if (!hub.reached) {
    return new Error(`could not reach ${hub.endpoint} for ${track.file} of '${hub.id}' (${cause})`);
  }
  const of = track.size == null ? `${track.received} bytes received` : `${track.received} of ${track.size} bytes`;
  return new Error(`the connection was lost while reading ${track.file} of '${hub.id}' from ${hub.endpoint} (${of})`);
}

/** fetch with the load's signal; a throw becomes hubLost's message. */
async function hubFetch(hub, track, url, init = {}) {
  hubCheckCancel(hub);
  let response;
  try {
    response = await fetch(url, { ...init, signal: hub.signal, redirect: 'follow' });
  } catch (error) {
    throw hubLost(hub, track, error);
  }
  hub.reached = true;
  return response;
}

/** The message of an answer that is not the file: the Hub's X-Error-Code, else the status. */
function hubRefusal(hub, file, response) {
  response.body?.cancel().catch(() => {});
  const code = response.headers.get('x-error-code');
  const { id, endpoint, revision } = hub;
  if (code === 'RepositoryNotFound') return new Error(`repository '${id}' was not found on ${endpoint} (or it is private)`);
  if (code === 'GatedRepo') { // 401 when not logged in, 403 when logged in without having accepted
    return new Error(`repository '${id}' on ${endpoint} is gated: its files are given only to an account that ` +
      'has accepted its licence, and this API sends no Hugging Face login or token. To use it: open ' +
      `${endpoint}/${id}, log in and accept the licence there, then download its config.json, model.safetensors ` +
      'and tokenizer.json (Files and versions) and drop them into the page (or pass them as ' +
      'loadCheckpoint({ weights, config, tokenizer }))');
  }
  if (code === 'RevisionNotFound') return new Error(`revision '${revision}' was not found in '${id}' on ${endpoint}`);
  if (response.status === 404) {
    return new Error(`${file} was not found in '${id}' (revision '${revision}') on ${endpoint}`);
  }
  if (response.status === 401 || response.status === 403) {
    return new Error(`${endpoint} refused ${file} of '${id}' (HTTP ${response.status}): the repository may not ` +
      'exist, or be private or gated');
  }
  return new Error(`${endpoint} answered HTTP ${response.status} for ${file} of '${id}'`);
}

function hubProgress(hub) {
  if (!hub.onProgress || hub.weights.length === 0) return;
  let received = 0;
  let size = 0;
  for (const track of hub.weights) {
    received += Math.min(track.received, track.size);
    size += track.size;
  }
  const fraction = Math.min(1, (hub.filesDone + received) / (hub.filesDone + size || 1));
  if (fraction > hub.shown) {
    hub.shown = fraction;
    // The bytes behind the fraction: the small files read and the weights' bytes received so far,
    // of those and the weights' sizes known so far (a page shows "37 MB of 160 MB").
    hub.onProgress(fraction, { phase: 'download', fraction, received: hub.filesDone + received, total: hub.filesDone + size });
  }
}

/**
 * The core has read `fraction` of the weights: the 'prepare' phase once nothing is left to fetch
 * (read by ranges, the weights arrive as they are read: the download is reported until its end).
 * The first argument stays the download's (1 after one), or this fraction when the weights came
 * from the browser's kept copy.
 */
function hubPrepared(hub, fraction) {
  if (hub.weights.some((track) => !track.kept && track.received < track.size)) return;
  hub.prepared = fraction;
  hub.shown = Math.max(hub.shown, fraction);
  hub.onProgress(hub.shown, { phase: 'prepare', fraction });
}

/**
 * The body of `response` as bytes, piece by piece, counted in `track.received`; `length` (when
 * known) is what it must hold. A body that breaks off or ends early is the connection lost.
 */
async function hubBody(hub, track, response, length) {
  const out = length == null ? null : new Uint8Array(length);
  const pieces = [];
  let n = 0;
  const reader = response.body?.getReader();
  for (;;) {
    let piece;
    try {
      piece = reader ? await reader.read() : { done: true };
    } catch (error) {
      throw hubLost(hub, track, error);
    }
    if (piece.done) break;
    const bytes = piece.value;
    if (out) {
      if (n + bytes.length > length) {
        reader.cancel().catch(() => {});
        throw new Error(`${hub.endpoint} sent more than the ${length} bytes it announced for ${track.file} of '${hub.id}'`);
      }
      out.set(bytes, n);
    } else {
      pieces.push(bytes);
    }
    n += bytes.length;
    track.received += bytes.length;
    if (hub.weights.includes(track)) hubProgress(hub);
  }
  if (out) {
    if (n !== length) throw hubLost(hub, track, new Error('the body ended early'));
    return out;
  }
  const whole = new Uint8Array(n);
  let at = 0;
  for (const piece of pieces) {
    whole.set(piece, at);
    at += piece.length;
  }
  return whole;
}

/** A small file read whole (null when it is 404 and not `required`). */
async function hubFile(hub, file, required) {
  const url = hubFileUrl(hub, file);
  const cached = await hubCached(hub, url);
  if (cached) {
    if (cached.status === 404) return null; // kept: the repo has no such file
    const bytes = new Uint8Array(await cached.arrayBuffer());
    hub.filesDone += bytes.length;
    return bytes;
  }
  const track = { file, received: 0, size: null };
  const response = await hubFetch(hub, track, url);
  const code = response.headers.get('x-error-code');
  if (response.status === 404 && !required && (code === null || code === 'EntryNotFound')) {
    response.body?.cancel().catch(() => {});
    if (hub.cache) hub.kept.push([url, new Response(null, { status: 404 })]);
    return null;
  }
  if (response.status !== 200) throw hubRefusal(hub, file, response);
  const length = response.headers.get('content-encoding') ? null : hubNumber(response.headers.get('content-length'));
  if (length != null) track.size = length;
  const bytes = await hubBody(hub, track, response, length);
  hub.filesDone += bytes.length;
  hubProgress(hub);
  if (hub.cache) {
    hub.kept.push([url, new Response(bytes, { headers: { 'content-length': String(bytes.length) } })]);
  }
  return bytes;
}

function hubNumber(text) {
  return text != null && /^\d+$/.test(text) ? Number(text) : null;
}

// ---- model.safetensors by ranges ---------------------------------------------------------------

/**
 * model.safetensors as the { size, read(begin, end) } loadCheckpoint reads: a first small range
 * (the header, and the size from Content-Range), then HUB_WINDOW bytes at a time from where the
 * first answer was redirected to (the Hub sends LFS files to another origin). A server that
 * ignores Range sends the whole file, which is then read once.
 */
async function hubWeights(hub, file) {
  const resolve = hubFileUrl(hub, file);
  const track = { file, received: 0, size: null };
  const cached = await hubCached(hub, resolve);
  if (cached?.status === 200) return hubBlobSource(hub, track, await cached.blob());
  let url = resolve;
  let etag = null;
  let whole = null;
  let blob = null; // the file as kept in the cache
  let window = { start: 0, bytes: new Uint8Array(0) };

  // One range [a, b] (inclusive): its bytes, or the whole file when the server ignores Range.
  const fetchRange = async (a, b) => {
    let response = await hubFetch(hub, track, url, { headers: { Range: `bytes=${a}-${b}` } });
    if (response.status !== 206 && response.status !== 200 && url !== resolve) {
      response.body?.cancel().catch(() => {}); // a redirect's URL that expired: resolve again
      url = resolve;
      response = await hubFetch(hub, track, url, { headers: { Range: `bytes=${a}-${b}` } });
    }
    if (response.status === 404 && track.size === null) {
      response.body?.cancel().catch(() => {});
      return hubNoWeights(hub, file);
    }
    if (response.status === 416 && track.size === null) { // an empty file: the core says so
      response.body?.cancel().catch(() => {});
      return { size: hubNumber(/\/(\d+)$/.exec(response.headers.get('content-range') ?? '')?.[1]) ?? 0, bytes: null };
    }
    if (response.status !== 206 && response.status !== 200) throw hubRefusal(hub, file, response);
    url = response.url || url;
    if (response.status === 200) {
      const length = response.headers.get('content-encoding') ? null : hubNumber(response.headers.get('content-length'));
      if (track.size === null && length != null) {
        track.size = length;
        hub.weights.push(track);
      }
      whole = await hubBody(hub, track, response, length);
      if (track.size === null) {
        track.size = whole.length;
        hub.weights.push(track);
      }
      return { size: whole.length, bytes: null };
    }
    const range = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(response.headers.get('content-range') ?? '');
    const tag = response.headers.get('etag');
    if (range && (Number(range[1]) !== a || Number(range[2]) > b)) {
      response.body?.cancel().catch(() => {});
      throw new Error(`${hub.endpoint} answered bytes ${range[1]}-${range[2]} of ${file} of '${hub.id}' for ${a}-${b}`);
    }
    if (etag !== null && tag !== null && tag !== etag) {
      response.body?.cancel().catch(() => {});
      throw new Error(`${file} of '${hub.id}' changed on ${hub.endpoint} while it was read (ETag ${etag}, then ${tag})`);
    }
    etag ??= tag;
    let size = track.size;
    if (size === null) {
      size = hubNumber(range?.[3]) ?? (await hubSize(hub, track, url));
      track.size = size;
      hub.weights.push(track);
      hubProgress(hub);
    }
    const length = range ? Number(range[2]) - a + 1 : Math.min(b, size - 1) - a + 1;
    return { size, bytes: await hubBody(hub, track, response, length) };
  };

  const first = await fetchRange(0, HUB_PROBE - 1);
  if (first.bytes) window = { start: 0, bytes: first.bytes };
  // A file the first answer held whole (small, or a server ignoring Range) is kept as it is.
  const held = whole ?? (first.bytes?.length === first.size ? first.bytes : null);
  if (hub.cache && held) {
    hub.kept.push([resolve, new Response(held, { headers: { 'content-length': String(held.length) } })]);
  }
  return {
    size: first.size,
    read: async (begin, end) => {
      hubCheckCancel(hub);
      if (whole) return whole.subarray(begin, end);
      const { start, bytes } = window;
      const stop = start + bytes.length;
      if (begin >= start && end <= stop) return bytes.subarray(begin - start, end - start);
      // Past the header, with a cache: the file is kept whole (streamed into the cache, counted
      // for progress) and read from there.
      // A browser that will not keep it (storage full, a private window's limit) is read from by
      // ranges as without a cache.
      if (hub.cache && !track.unkept) {
        blob ??= await hubStore(hub, track, url, resolve);
        if (blob) return new Uint8Array(await blob.slice(begin, end).arrayBuffer());
        track.unkept = true;
      }
      // What the window holds of [begin, …) is kept; the rest is fetched, HUB_WINDOW at least.
      const from = begin >= start && begin < stop ? stop : begin;
      const last = Math.min(first.size, Math.max(end, begin + HUB_WINDOW)) - 1;
      if (from > last) return bytes.subarray(begin - start); // past the end: the core says so
      const more = await fetchRange(from, last);
      if (whole) return whole.subarray(begin, end);
      const kept = from === begin ? new Uint8Array(0) : bytes.subarray(begin - start);
      const joined = kept.length ? new Uint8Array(kept.length + more.bytes.length) : more.bytes;
      if (kept.length) {
        joined.set(kept);
        joined.set(more.bytes, kept.length);
      }
      window = { start: begin, bytes: joined };
      return joined.subarray(0, end - begin);
    },
  };
}

/** model.safetensors read from a Blob (the cache's copy): nothing to download, its reading counted as preparing (hubPrepared). */
function hubBlobSource(hub, track, blob) {
  track.size = blob.size;
  track.kept = true;
  hub.weights.push(track);
  return {
    size: blob.size,
    read: async (begin, end) => {
      hubCheckCancel(hub);
      const bytes = new Uint8Array(await blob.slice(begin, end).arrayBuffer());
      track.received += bytes.length;
      return bytes;
    },
  };
}

/**
 * The whole file fetched (no Range) and streamed into the cache under `resolve`, its bytes counted
 * for progress; returns the cached copy as a Blob, or null when the browser refused to keep it
 * (its storage failed with every byte received, or said it was full: Chromium's private windows
 * fail to keep a few hundred MB). A body that breaks off is the connection lost.
 */
async function hubStore(hub, track, url, resolve) {
  const response = await hubFetch(hub, track, url);
  if (response.status !== 200) throw hubRefusal(hub, track.file, response);
  const size = track.size;
  track.received = 0;
  let received = 0;
  const counted = response.body.pipeThrough(new TransformStream({
    transform(chunk, controller) {
      received += chunk.length;
      track.received = received;
      hubProgress(hub);
      controller.enqueue(chunk);
    },
  }));
  try {
    await hub.cache.put(resolve, new Response(counted, { headers: { 'content-length': String(size) } }));
  } catch (error) {
    await hub.cache.delete(resolve).catch(() => {});
    hubCheckCancel(hub);
    if (received === size || HUB_STORAGE_ERRORS.includes(error?.name)) {
      track.received = 0; // read again by ranges, counted again
      return null;
    }
    throw hubLost(hub, track, error);
  }
  hub.storedWeights.push(resolve);
  if (received !== size) {
    await hub.cache.delete(resolve).catch(() => {});
    hub.storedWeights = hub.storedWeights.filter((url) => url !== resolve);
    throw hubLost(hub, track, new Error('the body ended early'));
  }
  const kept = await hub.cache.match(resolve);
  return kept.blob();
}

/** The size of model.safetensors when a 206 did not show Content-Range: a HEAD's Content-Length. */
async function hubSize(hub, track, url) {
  const response = await hubFetch(hub, track, url, { method: 'HEAD' });
  const size = hubNumber(response.headers.get('content-length'));
  if (!response.ok || size === null) {
    throw new Error(`${hub.endpoint} gave no size for ${track.file} of '${hub.id}' (no Content-Range or Content-Length)`);
  }
  return size;
}

/** The weights file is 404: a sharded repo (its index names the shards) or one without this format's weights. */
async function hubNoWeights(hub, file) {
  const index = `${file}.index.json`;
  const response = await hubFetch(hub, { file: index, received: 0, size: null }, hubFileUrl(hub, index), { method: 'HEAD' });
  response.body?.cancel().catch(() => {});
  if (response.ok) throw Object.assign(new Error(`'${hub.id}' is sharded (${index})`), { hubSharded: index });
  if (response.status !== 404) throw hubRefusal(hub, index, response);
  throw Object.assign(new Error(`${file} was not found in '${hub.id}'`), { hubMissing: file });
}

// The weights files a repo may have, in the order they are looked for: safetensors first, else
// pytorch_model.bin (read by the core's weights-only unpickler); each alone or sharded by its
// index. A shard's file name as an index may give it: a plain name of that format in the repo's
// top folder.
const HUB_WEIGHT_FORMATS = [
  { file: 'model.safetensors', shard: /^[\w.-]{1,200}\.safetensors$/, kind: '.safetensors' },
  { file: 'pytorch_model.bin', shard: /^[\w.-]{1,200}\.bin$/, kind: '.bin' },
];

/**
 * The weights as the sources readCheckpoint reads: model.safetensors, or (when the repo is sharded)
 * each shard model.safetensors.index.json's weight_map names, in the order it first names them;
 * when the repo (at this revision) has neither, pytorch_model.bin or pytorch_model.bin.index.json's
 * shards the same way. A cached index means the repo was sharded when it was kept; a kept "not
 * there" for a format's file and index (from a load that then read the next format) skips it.
 */
async function hubWeightFiles(hub) {
  for (const format of HUB_WEIGHT_FORMATS) {
    const sources = await hubWeightFormat(hub, format);
    if (sources) return sources;
  }
  throw new Error(`model.safetensors was not found in '${hub.id}' (revision '${hub.revision}') on ${hub.endpoint}, ` +
    'nor model.safetensors.index.json, pytorch_model.bin or pytorch_model.bin.index.json: the repo has no weights ' +
    'this API reads');
}

/** A GGUF file of the repo (loadCheckpoint({ hub, file })), read by Range as model.safetensors is. */
async function hubGgufWeights(hub, file) {
  try {
    return await hubWeights(hub, file);
  } catch (error) {
    if (!error.hubMissing && !error.hubSharded) throw error;
    throw new Error(`${file} was not found in '${hub.id}' (revision '${hub.revision}') on ${hub.endpoint}`);
  }
}

/** One format's weights (hubWeightFiles), or null when the repo has neither its file nor its index. */
async function hubWeightFormat(hub, { file, shard: shardName, kind }) {
  const indexFile = `${file}.index.json`;
  const cachedIndex = await hubCached(hub, hubFileUrl(hub, indexFile));
  const cachedFile = await hubCached(hub, hubFileUrl(hub, file));
  if (cachedIndex?.status === 404 && cachedFile?.status === 404) return null;
  if (cachedIndex?.status !== 200) {
    try {
      return [await hubWeights(hub, file)];
    } catch (error) {
      if (error.hubMissing) {
        if (hub.cache) {
          for (const missing of [file, indexFile]) {
            hub.kept.push([hubFileUrl(hub, missing), new Response(null, { status: 404 })]);
          }
        }
        return null;
      }
      if (!error.hubSharded) throw error;
    }
  }
  const text = new TextDecoder().decode(await hubFile(hub, indexFile, true));
  let index;
  try {
    index = JSON.parse(text);
  } catch (error) {
    throw new Error(`${indexFile} of '${hub.id}' is not valid JSON (${error.message})`);
  }
  const map = index?.weight_map;
  if (map === null || typeof map !== 'object' || Array.isArray(map)) {
    throw new Error(`${indexFile} of '${hub.id}' has no weight_map object ({ tensor: shard file })`);
  }
  const shards = [...new Set(Object.values(map))];
  for (const shard of shards) {
    if (typeof shard !== 'string' || !shardName.test(shard) || shard.startsWith('.')) {
      throw new Error(`${indexFile} of '${hub.id}' names a shard ${describe(shard)}; a shard is a ${kind} ` +
        'file beside it (letters, digits, dots, dashes, underscores)');
    }
  }
  if (shards.length === 0) throw new Error(`${indexFile} of '${hub.id}' names no shards`);
  const sources = [];
  for (const shard of shards) {
    try {
      sources.push(await hubWeights(hub, shard));
    } catch (error) {
      if (!error.hubMissing && !error.hubSharded) throw error;
      throw new Error(`${shard} was not found in '${hub.id}' (revision '${hub.revision}') on ${hub.endpoint}, ` +
        `though ${indexFile} names it`);
    }
  }
  return sources;
}
