// A local stand-in of the Hugging Face Hub for tests: /{org}/{name}/resolve/{revision}/{file} on loopback, the weights (.safetensors, .bin, .gguf: LFS files on the Hub) redirected to a second origin that serves byte ranges; a repo's file list at /api/models/{org}/{name}/tree/{revision} as the Hub's tree API gives it (paged when a test asks).
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';

const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'Content-Range, Content-Length, ETag, X-Error-Code, Link',
};

const bytesOf = (content) => (typeof content === 'string' ? Buffer.from(content)
  : content instanceof Uint8Array ? Buffer.from(content.buffer, content.byteOffset, content.byteLength)
    : Buffer.from(JSON.stringify(content)));

/**
 * Starts the stand-in. `repos`: { 'org/name': { 'config.json': bytes | string | object, … } };
 * a key 'org/name@rev' holds that revision (plain 'org/name' is 'main'). `gated`: ids answered
 * 401 GatedRepo (as the Hub answers a request without a login), or { id, status: 403 } (a login
 * that has not accepted the repo's licence). Returns { endpoint (the Hub's origin), storage (the second origin), requests
 * (every request: { server: 'hub' | 'storage', method, path, range, status }), count(server,
 * path suffix, method?) , hold(…suffixes) / release() (answers held back), ignoreRange (a switch), dropAfter ({ 'org/name/file': n }: the
 * connection of any answer carrying that file past byte n is destroyed there), treePage (a
 * number: the tree API's entries per page, each page's Link header naming the next; default: all
 * on one page), treeBodies ({ 'org/name': text }: the tree API answers that text, 200, for that
 * repo), close() }.
 */
export async function startStandIn(repos, { gated = [] } = {}) {
  const files = new Map(); // 'org/name@rev/file' -> Buffer
  const known = new Set(); // 'org/name'
  for (const [key, entries] of Object.entries(repos)) {
    const [id, revision = 'main'] = key.split('@');
    known.add(id);
    for (const [file, content] of Object.entries(entries)) files.set(`${id}@${revision}/${file}`, bytesOf(content));
  }
  const hashes = new Map();
  const etagOf = (key) => {
    if (!hashes.has(key)) hashes.set(key, `"${createHash('sha256').update(files.get(key)).digest('hex')}"`);
    return hashes.get(key);
  };
  const state = { ignoreRange: false, dropAfter: {}, requests: [], hold: [], held: [], treePage: Infinity, treeBodies: {} };

  // Sends body (the file's bytes from `offset`), cut off at dropAfter's byte of `dropKey`.
  const send = (response, status, headers, body, dropKey, offset, method) => {
    response.writeHead(status, { ...CORS, ...headers });
    if (method === 'HEAD' || !body) return response.end();
    const cut = state.dropAfter[dropKey];
    if (cut !== undefined && offset + body.length > cut) {
      response.dropped = true;
      response.write(body.subarray(0, Math.max(0, cut - offset)), () => response.socket?.destroy());
      return undefined;
    }
    return response.end(body);
  };
  const refuse = (response, status, code, message) => {
    response.writeHead(status, { ...CORS, 'Content-Type': 'application/json', 'X-Error-Code': code });
    response.end(JSON.stringify({ error: message }));
  };
  // Logged on arrival (so a reset after a load sees none of its requests); the status as sent.
  const log = (server, request, response) => state.requests.push({
    server, method: request.method, path: request.url.split('?')[0], range: request.headers.range ?? null,
    get status() {
      if (!response.headersSent) return null;
      return response.dropped ? `${response.statusCode} dropped` : response.statusCode;
    },
  });
  const preflight = (request, response) => {
    response.writeHead(204, {
      ...CORS, 'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS', 'Access-Control-Allow-Headers': 'Range',
    });
    response.end();
  };

  let storageOrigin = '';
  let endpoint = '';
  const hub = createServer((request, response) => {
    log('hub', request, response);
    if (request.method === 'OPTIONS') return preflight(request, response);
    // A held path: answered only when release() is called (a load kept in flight, to be cancelled).
    if (state.hold.some((suffix) => request.url.split('?')[0].endsWith(suffix))) {
      state.held.push(() => answer(request, response));
      return undefined;
    }
    return answer(request, response);
  });

  // Refuses as the Hub does (unknown: 401 RepositoryNotFound; gated; no such revision); whether it refused.
  const repoRefusal = (response, url, id, revision) => {
    const gate = gated.map((g) => (typeof g === 'string' ? { id: g, status: 401 } : g)).find((g) => g.id === id);
    if (!known.has(id)) refuse(response, 401, 'RepositoryNotFound', `Repository Not Found for url: ${url}`);
    else if (gate) {
      refuse(response, gate.status, 'GatedRepo', gate.status === 401
        ? `Access to model ${id} is restricted. You must have access to it and be authenticated to access it. Please log in.`
        : `Access to model ${id} is restricted and you are not in the authorized list. Visit https://huggingface.co/${id} to ask for access.`);
    } else if (![...files.keys()].some((key) => key.startsWith(`${id}@${revision}/`))) {
      refuse(response, 404, 'RevisionNotFound', `Invalid rev id: ${revision}`);
    } else return false;
    return true;
  };

  /**
   * GET /api/models/{org}/{name}/tree/{revision}[/{folder}]?recursive=true&cursor=…: the Hub's tree
   * API — JSON [{ type: 'directory', oid, size: 0, path } | { type: 'file', oid, size, path,
   * lfs?: { oid, size, pointerSize } }] (the weights' formats are LFS files), folders before files
   * in each folder, by path; treePage entries a page, the next page named by a Link header.
   */
  const answerTree = (request, response, parts, query) => {
    const [, , org, name, , revision, ...folderParts] = parts;
    const id = `${org}/${name}`;
    if (repoRefusal(response, request.url, id, revision)) return undefined;
    if (state.treeBodies[id] !== undefined) {
      response.writeHead(200, { ...CORS, 'Content-Type': 'application/json' });
      return response.end(state.treeBodies[id]);
    }
    const folder = folderParts.join('/');
    const recursive = ['true', 'True', '1'].includes(query.get('recursive'));
    const prefix = `${id}@${revision}/`;
    const paths = [...files.keys()].filter((key) => key.startsWith(prefix)).map((key) => key.slice(prefix.length))
      .filter((path) => !folder || path.startsWith(`${folder}/`));
    const entries = new Map(); // path -> entry
    for (const path of paths) {
      const inner = folder ? path.slice(folder.length + 1) : path;
      const steps = inner.split('/');
      const depth = recursive ? steps.length : 1;
      for (let i = 1; i <= depth; ++i) {
        const at = [folder, ...steps.slice(0, i)].filter(Boolean).join('/');
        if (i < steps.length) {
          entries.set(at, { type: 'directory', oid: createHash('sha1').update(at).digest('hex'), size: 0, path: at });
          continue;
        }
        const body = files.get(`${prefix}${path}`);
        const entry = { type: 'file', oid: createHash('sha1').update(body).digest('hex'), size: body.length, path };
        if (/\.(safetensors|bin|gguf)$/.test(path)) {
          entry.lfs = { oid: createHash('sha256').update(body).digest('hex'), size: body.length, pointerSize: 134 };
        }
        entries.set(at, entry);
      }
    }
    if (folder && entries.size === 0) return refuse(response, 404, 'EntryNotFound', `${folder} does not exist on "${revision}"`);
    const all = [...entries.values()].sort((a, b) => (a.type !== b.type ? (a.type === 'directory' ? -1 : 1) : a.path < b.path ? -1 : 1));
    const from = Number(query.get('cursor') ?? 0);
    const page = all.slice(from, from + state.treePage);
    const headers = { ...CORS, 'Content-Type': 'application/json' };
    if (from + page.length < all.length) {
      const next = new URLSearchParams(query);
      next.set('cursor', String(from + page.length));
      headers.Link = `<${endpoint}${request.url.split('?')[0]}?${next}>; rel="next"`;
    }
    response.writeHead(200, headers);
    return response.end(JSON.stringify(page));
  };

  const answer = (request, response) => {
    const [path, search = ''] = request.url.split('?');
    const parts = path.split('/').slice(1).map(decodeURIComponent);
    if (parts.length >= 6 && parts[0] === 'api' && parts[1] === 'models' && parts[4] === 'tree') {
      return answerTree(request, response, parts, new URLSearchParams(search));
    }
    if (parts.length < 5 || parts[2] !== 'resolve') return refuse(response, 404, 'EntryNotFound', 'not a resolve URL');
    const [org, name, , revision, ...rest] = parts;
    const id = `${org}/${name}`;
    const file = rest.join('/');
    if (repoRefusal(response, request.url, id, revision)) return undefined;
    const key = `${id}@${revision}/${file}`;
    if (!files.has(key)) return refuse(response, 404, 'EntryNotFound', `Entry not found: ${file}`);
    if (file.endsWith('.safetensors') || file.endsWith('.bin') || file.endsWith('.gguf')) {
      const where = `${storageOrigin}/lfs/${[org, name, revision, file].map(encodeURIComponent).join('/')}?expires=1`;
      response.writeHead(302, { ...CORS, Location: where, 'X-Linked-Size': String(files.get(key).length) });
      return response.end();
    }
    const body = files.get(key);
    return send(response, 200, { 'Content-Length': body.length, ETag: etagOf(key) }, body, `${id}/${file}`, 0, request.method);
  };

  const storage = createServer((request, response) => {
    log('storage', request, response);
    if (request.method === 'OPTIONS') return preflight(request, response);
    const parts = request.url.split('?')[0].split('/').slice(1).map(decodeURIComponent);
    const [lfs, org, name, revision, ...rest] = parts;
    const key = `${org}/${name}@${revision}/${rest.join('/')}`;
    if (lfs !== 'lfs' || !files.has(key)) return refuse(response, 404, 'EntryNotFound', 'no such blob');
    const body = files.get(key);
    const dropKey = `${org}/${name}/${rest.join('/')}`;
    const headers = { ETag: etagOf(key), 'Accept-Ranges': 'bytes', 'Content-Type': 'application/octet-stream' };
    const range = request.headers.range;
    if (!range || state.ignoreRange) {
      return send(response, 200, { ...headers, 'Content-Length': body.length }, body, dropKey, 0, request.method);
    }
    const m = /^bytes=(\d*)-(\d*)$/.exec(range);
    let [first, last] = m ? [m[1], m[2]] : [null, null];
    if (m && first === '' && last !== '') [first, last] = [Math.max(0, body.length - Number(last)), body.length - 1];
    else if (m) [first, last] = [Number(first), last === '' ? body.length - 1 : Math.min(Number(last), body.length - 1)];
    if (!m || (m[1] === '' && m[2] === '') || first > last || first >= body.length) {
      response.writeHead(416, { ...CORS, 'Content-Range': `bytes */${body.length}` });
      return response.end();
    }
    const part = body.subarray(first, last + 1);
    return send(response, 206, { ...headers, 'Content-Length': part.length, 'Content-Range': `bytes ${first}-${last}/${body.length}` },
      part, dropKey, first, request.method);
  });

  const listen = (server) => new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}`));
  });
  endpoint = await listen(hub);
  storageOrigin = await listen(storage);

  return {
    endpoint,
    storage: storageOrigin,
    get requests() { return state.requests; },
    /** Requests to `server` whose path ends with `suffix` (and of `method`, when given). */
    count(server, suffix, method) {
      return state.requests.filter((r) => r.server === server && r.path.endsWith(suffix) && (!method || r.method === method)).length;
    },
    reset() { state.requests.length = 0; },
    /** Holds the Hub's answers to paths ending with any of `suffixes` until release() (a request still arrives, and is counted). */
    hold(...suffixes) { state.hold.push(...suffixes); },
    /** Stops holding, and answers the requests held so far (a client that went away gets nothing). */
    release() {
      state.hold.length = 0;
      for (const reply of state.held.splice(0)) reply();
    },
    set ignoreRange(value) { state.ignoreRange = value; },
    set treePage(value) { state.treePage = value; },
    get treeBodies() { return state.treeBodies; },
    get dropAfter() { return state.dropAfter; },
    close: () => Promise.all([hub, storage].map((server) => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }))),
  };
}
