// Builds dist/attention-lens-snapshot.js: <attention-lens> for posts of snapshots only, ONE classic
// script as dist/attention-lens-element.js (vite.element.config.js) but from
// web/element/attention-lens-snapshot.js: the same element and drawing code, without the JS API's
// wasm module, its worker or the Hub loader (no `attention-lens/single-file` alias here: an import
// of it fails the build), and no WebAssembly at all (checked below). Run after the page build.
import { defineConfig } from 'vite';
import { checkClassicScript, VERSION } from './vite.element.config.js';

/** Fails the build if the snapshot element would touch WebAssembly. */
function checkNoWasm() {
  return {
    name: 'attention-lens:check-no-wasm',
    generateBundle(_, bundle) {
      for (const chunk of Object.values(bundle)) {
        if (chunk.type === 'chunk' && /\bWebAssembly\b|AGFzbQ/.test(chunk.code)) this.error(`${chunk.fileName} contains WebAssembly`);
      }
    },
  };
}

export default defineConfig({
  publicDir: false,
  logLevel: 'warn',
  define: { __ATTN_VERSION__: JSON.stringify(VERSION) },
  plugins: [checkClassicScript(), checkNoWasm()],
  build: {
    outDir: 'dist',
    emptyOutDir: false, // the page build (vite.config.js) filled dist/ first
    copyPublicDir: false,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
    lib: {
      entry: 'web/element/attention-lens-snapshot.js',
      formats: ['iife'],
      name: 'AttentionLensSnapshot', // required for iife; the entry exports nothing, so no global
      fileName: () => 'attention-lens-snapshot.js',
    },
  },
});
