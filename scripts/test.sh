#!/usr/bin/env bash
# npm test: set up if needed, build native (release + ASan/UBSan + the libFuzzer target) and
# wasm, run every suite, print one summary line ("total: N passed, N failed") and exit non-zero
# on any failure. ATTN_FUZZ_SECONDS sets the fuzzing time (default 30).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ATTN_ROOT"
attn_setup || exit 1
mkdir -p build/test-logs

total_pass=0
total_fail=0
summary=()

# run_suite NAME PARSER COMMAND...: runs, tees to build/test-logs/NAME.log, counts results.
run_suite() {
  local name="$1" parser="$2"
  shift 2
  local log="build/test-logs/$name.log"
  local started=$SECONDS
  echo "=== $name: $*"
  "$@" 2>&1 | tee "$log"
  local status=${PIPESTATUS[0]}
  local pass=0 fail=0
  case "$parser" in
    ctest)
      local line
      line=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)
      if [ -n "$line" ]; then
        fail=$(sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/' <<<"$line")
        pass=$(($(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line") - fail))
      fi
      ;;
    node)
      pass=$(grep -E '^# pass [0-9]+' "$log" | tail -n 1 | awk '{print $3}')
      fail=$(grep -E '^# fail [0-9]+' "$log" | tail -n 1 | awk '{print $3}')
      pass=${pass:-0}
      fail=${fail:-0}
      ;;
    fuzz) # one check: the fuzzer ran to its time limit without a finding
      if [ "$status" -eq 0 ] && grep -qE '^Done [0-9]+ runs' "$log"; then pass=1; fi
      ;;
  esac
  if [ "$status" -ne 0 ] && [ "$fail" -eq 0 ]; then fail=1; fi  # a crash or build failure
  total_pass=$((total_pass + pass))
  total_fail=$((total_fail + fail))
  if [ "$parser" = none ]; then
    summary+=("$(printf '%-22s %-28s %4d s' "$name" "$([ "$status" -eq 0 ] && echo built || echo FAILED)" $((SECONDS - started)))")
  elif [ "$parser" = fuzz ]; then
    local stats
    stats="$(grep -E '^Done [0-9]+ runs' "$log" | awk '{print $2 " runs in " $5 " s"}')"
    stats+="$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | awk '{print ", cov " $4 ", corpus " $8}')"
    summary+=("$(printf '%-22s %5d passed, %d failed %11s %4d s  (%s)' "$name" "$pass" "$fail" '' $((SECONDS - started)) "${stats:-no stats}")")
  else
    summary+=("$(printf '%-22s %5d passed, %-4d failed %6s %4d s' "$name" "$pass" "$fail" '' $((SECONDS - started)))")
  fi
}

# The first run on a fresh machine, simulated (stubbed set-up and tools): the build steps get the
# environment of a second run (tests/first-run/).
run_suite first-run-tests node node --test tests/first-run/
run_suite native-build none attn_build_preset native-release
run_suite native-tests ctest ctest --preset native-release -j2
# The scalar kernels (ATTN_SIMD=OFF, the wasm-nosimd build's) under the same Catch2 cases: only the
# test executable is built (the tools' trained_models_reproduce is left to native-release).
run_suite native-scalar-build none attn_build_preset native-scalar
run_suite native-scalar-tests ctest ctest --preset native-scalar -j2
run_suite asan-ubsan-build none attn_build_preset native-debug
run_suite asan-ubsan-tests ctest ctest --preset native-debug -j2
# run_fuzzer TARGET DICT CORPUS…: libFuzzer's build/fuzz/TARGET (ASan + UBSan) for a bounded time
# from the seed CORPUS folders. New inputs go to a temporary folder and findings (crash-*,
# timeout-*, oom-*) to build/fuzz/: nothing is written into the repository.
run_fuzzer() {
  local target="$1" dict="$2"
  shift 2
  attn_build_preset fuzz || return 1
  local corpus status
  corpus=$(mktemp -d)
  "build/fuzz/$target" -seed=1 -max_total_time="${ATTN_FUZZ_SECONDS:-30}" -timeout=10 \
    -print_final_stats=1 -dict="$dict" -artifact_prefix=build/fuzz/ "$corpus" "$@"
  status=$?
  rm -rf "$corpus"
  return "$status"
}

# The .safetensors reader, AttentionLayer::load_safetensors and the GPT-2 checkpoint import, from
# the valid seeds and the malformed corpora.
run_suite fuzz-safetensors fuzz run_fuzzer fuzz_safetensors tests/fuzz/safetensors.dict \
  tests/fuzz/seeds tests/fuzz/seeds-gpt2 tests/data/malformed tests/data/malformed-gpt2
# pytorch_model.bin: the zip reader, the weights-only unpickler and the tensor sources, from the
# valid files' data.pkl, the valid files and the hostile set.
run_suite fuzz-torch fuzz run_fuzzer fuzz_torch_checkpoint tests/fuzz/torch.dict \
  tests/fuzz/seeds-torch tests/data/torch tests/data/malformed-torch
# GGUF: the header reader (whole and from prefixes), the dequantization, the checkpoint import and
# the tokenizer metadata, from the golden files and the refused ones.
run_suite fuzz-gguf fuzz run_fuzzer fuzz_gguf tests/fuzz/gguf.dict tests/data/gguf tests/data/malformed-gguf
run_suite wasm-and-page-build none bash scripts/build.sh
run_suite js-api-tests node node --test tests/js/
# The same suites on the threaded build (dist/attention-lens-threads.mjs, two threads): the same
# numbers, checked against the same references.
run_suite js-api-tests-threads node env ATTN_THREADS=2 node --test tests/js/
run_suite browser-tests node node --test tests/e2e/*.test.mjs
# The shared page checks (tests/e2e/engines/checks.mjs) in Chromium (the suites above cover most of
# them; these add the opening sentence typed at 1280 and 375 px), Firefox (firefox-esr over
# WebDriver BiDi) and WebKit (WebKitGTK's MiniBrowser under its own Xvfb).
run_suite chromium-engine-tests node node --test tests/e2e/engines/chromium.test.mjs
run_suite firefox-tests node node --test tests/e2e/engines/firefox.test.mjs
run_suite webkit-tests node node --test tests/e2e/engines/webkit.test.mjs
# The npm package: npm pack, installed offline into a blank project, used from Node, a Vite
# bundle in Chromium, tsc --strict and the element (tests/package/).
run_suite package-tests node node --test tests/package/

echo
echo "=== summary"
printf '%s\n' "${summary[@]}"
echo "total: $total_pass passed, $total_fail failed in $((SECONDS / 60)) min $((SECONDS % 60)) s"
[ "$total_fail" -eq 0 ]
