// The threaded module only (--extern-pre-js): in node, the CommonJS globals Emscripten 3.1.6's
// node code uses (require, __dirname), which an ES module lacks. Elsewhere nothing.
var require, __dirname;
if (typeof process == 'object' && typeof process.versions == 'object' && typeof process.versions.node == 'string') {
  const { createRequire } = await import('node:module');
  require = createRequire(import.meta.url);
  __dirname = require('node:path').dirname(require('node:url').fileURLToPath(import.meta.url));
}
