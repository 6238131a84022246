// A local stand-in of the Hugging Face Hub for tests: /{org}/{name}/resolve/{revision}/{file} on loopback, the weights (.safetensors, .bin, .gguf: LFS files on the Hub) redirected to a second origin that serves byte ranges.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';

const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'Content-Range, Content-Length, ETag, X-Error-Code',
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
 * connection of any answer carrying that file past byte n is destroyed there), close() }.
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
  const state = { ignoreRange: false, dropAfter: {}, requests: [], hold: [], held: [] };

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

  const answer = (request, response) => {
    const parts = request.url.split('?')[0].split('/').slice(1).map(decodeURIComponent);
    if (parts.length < 5 || parts[2] !== 'resolve') return refuse(response, 404, 'EntryNotFound', 'not a resolve URL');
    const [org, name, , revision, ...rest] = parts;
    const id = `${org}/${name}`;
    const file = rest.join('/');
    if (!known.has(id)) return refuse(response, 401, 'RepositoryNotFound', `Repository Not Found for url: ${request.url}`);
    const gate = gated.map((g) => (typeof g === 'string' ? { id: g, status: 401 } : g)).find((g) => g.id === id);
    if (gate) {
      return refuse(response, gate.status, 'GatedRepo', gate.status === 401
        ? `Access to model ${id} is restricted. You must have access to it and be authenticated to access it. Please log in.`
        : `Access to model ${id} is restricted and you are not in the authorized list. Visit https://huggingface.co/${id} to ask for access.`);
    }
    if (![...files.keys()].some((key) => key.startsWith(`${id}@${revision}/`))) {
      return refuse(response, 404, 'RevisionNotFound', `Invalid rev id: ${revision}`);
    }
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
  const endpoint = await listen(hub);
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
    get dropAfter() { return state.dropAfter; },
    close: () => Promise.all([hub, storage].map((server) => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }))),
  };
}
