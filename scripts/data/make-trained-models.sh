#!/usr/bin/env bash
# Makes the trained models that ship with the page: builds the native tool
# (cpp/tools/make_trained_models.cpp, native-release preset) and trains every model with the
# core's own trainer, deterministically, into web/models/ (NAME.safetensors and models.json).
#   bash scripts/data/make-trained-models.sh [OUT_DIR [NAME ...]]   (default: web/models, all models)
# Same machine and binary: the same bytes. Native SIMD results can differ across CPUs
# (models.json records the SIMD architecture it was made with).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
out="${1:-$ATTN_ROOT/web/models}"
shift || true
attn_build_preset native-release -j2 --target make_trained_models >/dev/null
mkdir -p "$out"
start=$(date +%s)
"$ATTN_ROOT/build/native-release/make_trained_models" "$out" "$@"
echo "trained models in $out ($(($(date +%s) - start)) s):"
ls -l "$out"
