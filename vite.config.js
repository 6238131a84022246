// Builds the page (web/) into dist/. The JS API module is not bundled: the page imports
// dist/attention-lens.mjs at run time, the same file every other user gets.
import { readFileSync } from 'node:fs';
import { defineConfig } from 'vite';

// The project's version, written into exported figures' provenance (web/shared/exporting.js).
const VERSION = JSON.parse(readFileSync(new URL('package.json', import.meta.url), 'utf8')).version;

export default defineConfig({
  root: 'web',
  define: { __ATTN_VERSION__: JSON.stringify(VERSION) },
  base: './',
  publicDir: false,
  build: {
    outDir: '../dist',
    emptyOutDir: true,
    target: 'es2022',
    // Every asset as a file, never a data: URL: a page under a strict Content-Security-Policy
    // (font-src 'self') may not load a KaTeX font that Vite inlined as data:font/woff2.
    assetsInlineLimit: 0,
    rollupOptions: { input: 'web/index.html' },
  },
  worker: { format: 'es' },
});
