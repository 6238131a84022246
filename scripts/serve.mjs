// Serves dist/ on localhost (static files, correct MIME types incl. application/wasm) and
// prints the URL. Usage: node scripts/serve.mjs [--port N] [--dir D] [--csp [POLICY]] [--connect ORIGINS] [--probe FILE]
// [--no-isolation]
// Every response is cross-origin isolated (Cross-Origin-Opener-Policy: same-origin,
// Cross-Origin-Embedder-Policy: require-corp), so the page gets SharedArrayBuffer and runs the
// threaded build; --no-isolation leaves the headers out (a static host without them: one thread).
// --probe (tests only) serves FILE at /__probe.js and loads it first in every HTML page's <head>
// (a same-origin classic script, so the strict CSP allows it): tests/e2e/engines/probe.js.
// --csp sends a Content-Security-Policy header with every response: STRICT_CSP (scripts/lib/csp.mjs),
// or POLICY when one follows (the browser tests check that the page and the embed run under it).
// --connect ORIGINS (comma-separated; tests and mirrors only) adds origins to STRICT_CSP's
// connect-src: a local stand-in of the Hub (scripts/lib/hub-stand-in.mjs) or a Hub mirror the page is
// pointed at with #hubEndpoint=… (strictCspAlso in scripts/lib/csp.mjs).
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { STRICT_CSP, strictCspAlso } from './lib/csp.mjs';

const args = process.argv.slice(2);
// The last occurrence wins: scripts/start.sh passes its defaults before the user's arguments.
const option = (name, fallback) => {
  const i = args.lastIndexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1] : fallback;
};
const root = resolve(option('--dir', 'dist'));

const cspAt = args.indexOf('--csp');
const connect = option('--connect', '').split(',').filter(Boolean);
for (const origin of connect) {
  if (!/^https?:\/\/[^/\s;,'"]+$/.test(origin)) throw new Error(`--connect takes http(s) origins, got ${origin}`);
}
const csp = cspAt < 0 ? null
  : args[cspAt + 1] && !args[cspAt + 1].startsWith('--') ? args[cspAt + 1] : connect.length ? strictCspAlso(connect) : STRICT_CSP;
const firstPort = Number(option('--port', process.env.PORT ?? '8080')); // 0: any free port
const host = '127.0.0.1';
const isolated = !args.includes('--no-isolation');
const ISOLATION = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };
const probe = args.includes('--probe') ? resolve(option('--probe', '')) : null;
const PROBE_TAG = '<script src="/__probe.js"></script>';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.ts': 'text/plain; charset=utf-8',
  '.safetensors': 'application/octet-stream',
};

const server = createServer(async (req, res) => {
  try {
    const path = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    if (probe && path === '/__probe.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-cache' });
      res.end(await readFile(probe));
      return;
    }
    let file = normalize(join(root, path));
    // Inside root only ("dist2/" is not inside "dist").
    if (file !== root && !file.startsWith(root + sep)) throw Object.assign(new Error('outside root'), { code: 'ENOENT' });
    if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
    let body = await readFile(file);
    if (probe && extname(file) === '.html') body = body.toString('utf8').replace(/<head>/i, `<head>${PROBE_TAG}`);
    res.writeHead(200, {
      'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
      'Cache-Control': 'no-cache',
      ...(csp ? { 'Content-Security-Policy': csp } : {}),
      ...(isolated ? ISOLATION : {}),
    });
    res.end(body);
  } catch {
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('not found');
  }
});

function listen(port, attemptsLeft) {
  server.once('error', (error) => {
    if (error.code === 'EADDRINUSE' && attemptsLeft > 0) listen(port + 1, attemptsLeft - 1);
    else throw error;
  });
  server.listen(port, host, () => {
    const url = `http://${host}:${server.address().port}/`;
    console.log(`Attention Lens is running at ${url}  (Ctrl+C to stop)`);
  });
}
listen(firstPort, 20);
