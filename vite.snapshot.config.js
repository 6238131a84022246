// Builds dist/attention-lens-snapshot.js: <attention-lens> for posts of snapshots only, ONE classic
// script as dist/attention-lens-element.js (vite.element.config.js) but from
// web/element/attention-lens-snapshot.js: the same element and drawing code, without the JS API's
// wasm module, its worker or the Hub loader (no `attention-lens/single-file` alias here: an import
// of it fails the build), and no WebAssembly at all (checked below). Run after the page build.
import { elementScriptConfig } from './vite.element.config.js';

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

export default elementScriptConfig({
  entry: 'web/element/attention-lens-snapshot.js',
  fileName: 'attention-lens-snapshot.js',
  name: 'AttentionLensSnapshot',
  plugins: [checkNoWasm()],
});
