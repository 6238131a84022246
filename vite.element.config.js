// Builds dist/attention-lens-element.js: the <attention-lens> element for blog posts, ONE classic
// script (an IIFE: no import/export, no import.meta) with the wasm inlined, that also runs when
// loaded with <script type="module">. It bundles web/element/attention-lens-element.js, the page
// modules it reuses (web/shared/) and the single-file JS API: the element imports it as
// `attention-lens/single-file` (package.json's export name), which this config resolves to the
// wasm-release preset's embed build (build/wasm-release/attention-lens.embed.mjs: the same API
// and wasm inlined, without the trainer and checkpoint import, which the element's own drawing never
// uses; 368 KB of wasm instead of 564 — a hub="…" element imports the full dist/attention-lens.mjs
// from beside the script at run time, when its reader asks). Run after the page build, which empties dist/.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const SINGLE_FILE_API = fileURLToPath(new URL('build/wasm-release/attention-lens.embed.mjs', import.meta.url));

// The project's version, written into exported figures' provenance (web/shared/exporting.js).
const VERSION = JSON.parse(readFileSync(new URL('package.json', import.meta.url), 'utf8')).version;

const GLUE = /attention-lens\.(single|embed)\.mjs$/;

/**
 * Adapts the Emscripten 3.1.6 single-file glue to a classic script that never fetches:
 * - `import.meta.url` (the glue's script directory and the API's Node-only wasm path) becomes
 *   undefined: with the wasm inlined nothing is ever located by URL, and a classic script may not
 *   contain import.meta at all.
 * - A module-scoped `fetch` shadows the global one inside the glue only. Emscripten 3.1.6 reads
 *   an inlined wasm with fetch('data:application/octet-stream;base64,…'), which a page's CSP
 *   connect-src can block; without fetch the glue decodes the same base64 itself (getBinary →
 *   tryParseAsDataURI). The rest of the bundle still sees the real fetch (and does not use it).
 */
function classicSingleFileGlue() {
  return {
    name: 'attention-lens:classic-single-file-glue',
    enforce: 'pre',
    transform(code, id) {
      if (!GLUE.test(id.split('?')[0])) return null;
      if (!code.includes('const ATTN_WASM_INLINED = true;')) {
        this.error(`${id} is not the single-file (wasm-inlined) build`);
      }
      const uses = code.split('import.meta.url').length - 1;
      if (uses === 0) this.warn('the glue no longer uses import.meta.url; revisit this plugin');
      return {
        code: '/* no fetch: decode the inlined wasm in place */ const fetch = undefined;\n' +
          code.replaceAll('import.meta.url', 'undefined'),
        map: null,
      };
    },
  };
}

/** Fails the build if the output is not a classic script that a strict CSP allows. */
function checkClassicScript() {
  return {
    name: 'attention-lens:check-classic-script',
    generateBundle(_, bundle) {
      for (const chunk of Object.values(bundle)) {
        if (chunk.type !== 'chunk') continue;
        const problems = [
          [/\bimport\.meta\b/, 'import.meta'],
          [/^\s*(import|export)\b[^(]/m, 'a top-level import/export'],
          [/\bnew Function\b|\bFunction\s*\(\s*["'`]/, 'new Function'],
          [/(^|[^.\w$])eval\s*\(/, 'eval('],
          [/fetch\(\s*["'`]?data:/, 'a fetch of the inlined wasm'],
        ].filter(([pattern]) => pattern.test(chunk.code)).map(([, what]) => what);
        if (problems.length) this.error(`${chunk.fileName} contains ${problems.join(', ')}`);
      }
    },
  };
}

/**
 * The config of one element script: `entry` (web/element/…) built into dist/`fileName` as one classic
 * script (an IIFE named `name`: required, though the entry exports nothing, so no global), with
 * `plugins` after the classic-script check and the version defined; `resolve` as Vite's.
 */
export function elementScriptConfig({ entry, fileName, name, plugins = [], resolve = {} }) {
  return defineConfig({
    publicDir: false,
    logLevel: 'warn',
    define: { __ATTN_VERSION__: JSON.stringify(VERSION) },
    plugins: [...plugins, checkClassicScript()],
    resolve,
    build: {
      outDir: 'dist',
      emptyOutDir: false, // the page build (vite.config.js) filled dist/ first
      copyPublicDir: false,
      target: 'es2022',
      sourcemap: false,
      reportCompressedSize: false,
      lib: { entry, formats: ['iife'], name, fileName: () => fileName },
    },
  });
}

export default elementScriptConfig({
  entry: 'web/element/attention-lens-element.js',
  fileName: 'attention-lens-element.js',
  name: 'AttentionLensElement',
  plugins: [classicSingleFileGlue()],
  resolve: { alias: { 'attention-lens/single-file': SINGLE_FILE_API } },
});
