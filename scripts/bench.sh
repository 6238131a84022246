#!/usr/bin/env bash
# npm run bench: builds what the benchmarks need, then runs them (see tests/bench/README.md).
#   1. scripts/setup.sh (quick when done) and scripts/build.sh: dist/attention-lens.mjs + .wasm
#   2. the same core without SIMD: preset wasm-nosimd -> build/wasm-nosimd/attention-lens.mjs
#   3. the wasm peak/kernel probe: tests/bench/peak-probe.cpp -> build/wasm-release/peak-probe.mjs
#      (a CMake target of the wasm-release preset, built by step 1)
#   4. native-release's attention_bench (tests/bench/native_bench.cpp + peak-probe.cpp)
#   5. node tests/bench/bench.mjs, then build/native-release/attention_bench
#   6. native-release's attention_train_bench (tests/bench/train/train_bench.cpp): one training
#      step of the standard model config and the backward's matmuls
# Extra arguments go to bench.mjs (e.g. --quick: the three small sizes only).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ATTN_ROOT"
start=$(date +%s)
log() { printf '[bench] %s\n' "$*"; }

bash scripts/setup.sh
bash scripts/build.sh

mkdir -p build
if [ ! -f build/wasm-nosimd/build.ninja ]; then
  log "configuring wasm-nosimd"
  emcmake cmake --preset wasm-nosimd >build/wasm-nosimd.configure.log 2>&1 ||
    { cat build/wasm-nosimd.configure.log; exit 1; }
fi
cmake --build --preset wasm-nosimd

if [ ! -f build/native-release/build.ninja ]; then
  log "configuring native-release"
  cmake --preset native-release >build/native-release.configure.log 2>&1 ||
    { cat build/native-release.configure.log; exit 1; }
fi
cmake --build --preset native-release --target attention_bench attention_train_bench

built=$(date +%s)
log "builds done in $((built - start)) s"
echo
node tests/bench/bench.mjs "$@"
echo
build/native-release/attention_bench
echo
build/native-release/attention_train_bench
log "total: $(($(date +%s) - start)) s (builds $((built - start)) s)"
