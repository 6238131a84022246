#!/usr/bin/env bash
# npm run bench: builds what the benchmarks need, then runs them (see tests/bench/README.md).
#   1. scripts/setup.sh (quick when done; once: build.sh skips it) and scripts/build.sh:
#      dist/attention-lens.mjs + .wasm
#   2. the same core without SIMD: preset wasm-nosimd -> build/wasm-nosimd/attention-lens.mjs
#   3. the wasm peak/kernel probe: tests/bench/peak-probe.cpp -> build/wasm-release/peak-probe.mjs
#      (a CMake target of the wasm-release preset, built by step 1)
#   4. native-release's attention_bench (tests/bench/native_bench.cpp + peak-probe.cpp)
#   5. node tests/bench/bench.mjs, then build/native-release/attention_bench
#   6. node tests/bench/train-bench.mjs: training steps per second against tfjs-wasm, plain JS and
#      PyTorch on one thread (Debian's python3-torch; skipped with a note when missing)
#   7. native-release's train_bench (tests/bench/train/train_bench.cpp): one training
#      step of the standard model config natively and the backward's matmuls as % of peak
#   8. node tests/bench/gpt2-bench.mjs: a GPT-2-small-sized forward (64 and 256 tokens, every
#      layer's attention) against onnxruntime-web, at 1 and at 2 threads each (--threads), and the load time / peak memory of its ~500 MB
#      checkpoint; the model is written by /usr/bin/python3 scripts/data/make-gpt2-bench-model.py into
#      build/bench-gpt2/ (~1.2 GB, cached; skipped with a note when Debian's python3-torch is missing)
#      then node tests/bench/analysis-bench.mjs: m.logitLens, m.rollout and m.attribute on that model
#      at 16 tokens, 1 and 2 threads, each as a ratio to one forward
#   9. node tests/bench/generate-bench.mjs: tokens/s generating 64 tokens after a 64-token prompt
#      (KV cache, greedy), ours and onnxruntime-web each at 1 and 2 threads, GPT-2-small-sized and
#      SmolLM2-135M-sized random models; the second is written by /usr/bin/python3
#      scripts/data/make-llama-bench-model.py into build/bench-llama/ (~1.2 GB, cached; both
#      skipped with a note when Debian's python3-torch is missing)
#  10. node tests/bench/wllama-bench.mjs: generation on GGUF files (SmolLM2-135M/-360M-shaped random
#      models in F32, F16, Q8_0, Q4_0, Q4_K_M, written by scripts/lib/gguf-writer.mjs into
#      build/bench-gguf/, cached), ours vs @wllama/wllama in headless Chromium at 1 and 2 threads, with
#      a wasm bandwidth probe; WLLAMA_BENCH picks the files (default: every 135M one, 360M Q8_0 and Q4_K_M)
# Extra arguments go to bench.mjs (e.g. --quick: the three small sizes only); --quick also gives
# train-bench.mjs and gpt2-bench.mjs 3 short rounds.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ATTN_ROOT"
start=$(date +%s)
log() { printf '[bench] %s\n' "$*"; }

attn_setup
bash scripts/build.sh

attn_build_preset wasm-nosimd
attn_build_preset native-release --target attention_bench train_bench

built=$(date +%s)
log "builds done in $((built - start)) s"
echo
node tests/bench/bench.mjs "$@"
echo
build/native-release/attention_bench
echo
train_args=()
for arg in "$@"; do if [ "$arg" = --quick ]; then train_args+=(--quick); fi; done
node tests/bench/train-bench.mjs ${train_args[@]+"${train_args[@]}"}
echo
build/native-release/train_bench
echo
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  /usr/bin/python3 scripts/data/make-gpt2-bench-model.py
  node tests/bench/gpt2-bench.mjs ${train_args[@]+"${train_args[@]}"} --threads 1
  node tests/bench/gpt2-bench.mjs ${train_args[@]+"${train_args[@]}"} --threads 2
  echo
  node tests/bench/analysis-bench.mjs ${train_args[@]+"${train_args[@]}"}
  echo
  /usr/bin/python3 scripts/data/make-llama-bench-model.py
  node --expose-gc tests/bench/generate-bench.mjs ${train_args[@]+"${train_args[@]}"}
else
  log "gpt2-bench and generate-bench skipped: /usr/bin/python3 has no torch (Debian's python3-torch) to write the models"
fi
echo
node tests/bench/wllama-bench.mjs
log "total: $(($(date +%s) - start)) s (builds $((built - start)) s)"
