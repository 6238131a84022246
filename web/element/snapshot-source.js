// Where an <attention-lens> element's snapshot comes from, and the attributes that choose what of
// it is shown: a child <script type="application/json"> (inline: read from the page, works from
// file://), or snapshot="finding.json" (one fetch over http(s), its size bounded as it streams; a
// file:// page is told to use the inline form and nothing is requested). Either way the text goes
// through readSnapshot (web/api/snapshot.js), which treats it as untrusted input.
import { readSnapshot, SNAPSHOT_LIMITS } from '../api/snapshot.js';
import { COLOR_SCALES } from '../shared/color-scale.js';

/** The inline snapshot's script element, if the element has one as a child. */
const inlineScript = (element) => [...element.children].find((c) => c.localName === 'script' &&
  (c.getAttribute('type') ?? '').trim().toLowerCase() === 'application/json') ?? null;

/**
 * The element's snapshot source, or null when it has none (the element computes as before):
 * { key (the same key: the same snapshot, not read again), read: () => Promise of readSnapshot's value }.
 */
export function snapshotSource(element) {
  const script = inlineScript(element);
  if (script) {
    const text = script.textContent;
    return { key: `inline:${text}`, read: async () => readSnapshot(text) };
  }
  const raw = element.getAttribute('snapshot');
  if (raw === null) return null;
  const name = raw.trim();
  if (!name) {
    return { key: 'empty', read: async () => {
      throw new Error('snapshot="" names no file: give the file (snapshot="finding.json") or put the snapshot inside the element ' +
        'in a <script type="application/json"> child');
    } };
  }
  let url;
  try {
    url = new URL(name, element.ownerDocument.baseURI);
  } catch {
    return { key: `bad:${name}`, read: async () => {
      throw new Error(`snapshot="${name.slice(0, 80)}" is not a file name or URL`);
    } };
  }
  return { key: `url:${url.href}`, read: () => fetchSnapshot(url, name, element.ownerDocument.location?.protocol) };
}

/** The file's text, read up to the snapshot limit, through readSnapshot. */
async function fetchSnapshot(url, name, pageProtocol) {
  const shown = name.slice(0, 80);
  if (pageProtocol === 'file:' || url.protocol === 'file:') {
    throw new Error(`snapshot="${shown}" cannot be read by a page opened from file:// (browsers refuse it): ` +
      'use the inline form, the snapshot inside the element in a <script type="application/json"> child, or serve the page over http');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`snapshot="${shown}" is not an http(s) file`);
  let response;
  try {
    response = await fetch(url.href, { credentials: 'same-origin' });
  } catch (error) {
    throw new Error(`could not fetch ${shown} (${error.message}). If this page sets a Content-Security-Policy, its connect-src ` +
      `must allow ${url.origin}.`);
  }
  if (!response.ok) throw new Error(`could not fetch ${shown}: the server answered ${response.status} ${response.statusText}`.trim());
  const limit = SNAPSHOT_LIMITS.chars;
  const declared = Number(response.headers.get('content-length'));
  if (declared > limit) throw new Error(`${shown} is ${declared} bytes; a snapshot of at most ${limit} bytes is read`);
  let text;
  if (response.body?.getReader) {
    const reader = response.body.getReader();
    const chunks = [];
    let bytes = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.length;
      if (bytes > limit) {
        reader.cancel().catch(() => {});
        throw new Error(`${shown} is more than ${limit} bytes; a snapshot of at most ${limit} bytes is read`);
      }
      chunks.push(value);
    }
    const all = new Uint8Array(bytes);
    let at = 0;
    for (const chunk of chunks) {
      all.set(chunk, at);
      at += chunk.length;
    }
    text = new TextDecoder().decode(all);
  } else text = await response.text();
  return readSnapshot(text);
}

/**
 * The attributes a snapshot is shown with: layer and head (1-based; null: the snapshot's own),
 * compact, color-scale; { options, problems } with a message for each value that cannot be used.
 */
export function snapshotOptions(getAttribute) {
  const problems = [];
  const oneBased = (name) => {
    const raw = getAttribute(name);
    if (raw === null) return null;
    if (/^\s*\d{1,3}\s*$/.test(raw) && Number(raw) >= 1) return Number(raw) - 1;
    problems.push(`${name}="${raw.slice(0, 40)}" is not a number from 1; showing the snapshot's own ${name}.`);
    return null;
  };
  const layer = oneBased('layer');
  const head = oneBased('head');
  let colorScale = 'linear';
  const scale = getAttribute('color-scale');
  if (scale !== null) {
    if (COLOR_SCALES.includes(scale.trim())) colorScale = scale.trim();
    else problems.push(`color-scale="${scale.slice(0, 40)}" is not ${COLOR_SCALES.join(', ')}; using linear.`);
  }
  return { options: { layer, head, compact: getAttribute('compact') !== null, colorScale }, problems };
}
