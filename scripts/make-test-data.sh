#!/usr/bin/env bash
# Regenerates the committed test data (a manual step; the tests only read it):
#   tests/data/golden/  PyTorch nn.MultiheadAttention golden vectors   (scripts/make-golden.py)
#   tests/data/numpy/   NumPy RandomState streams and the seeds' examples (scripts/make-numpy-data.py)
#   tests/data/train/   the model's loss, gradients and AdamW steps from PyTorch autograd, float32
#                       and float64                                  (scripts/make-train-golden.py)
#   tests/data/gpt2/    tiny Hugging Face GPT-2 checkpoints, their logits and attention in float32
#                       and float64                                  (scripts/make-gpt2-golden.py)
# Uses Debian's python3-torch and python3-numpy with /usr/bin/python3 (a pyenv python3 on PATH
# lacks them) and installs them when missing. Deterministic: rerunning gives the same bytes.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py=/usr/bin/python3

log() { printf '[test-data] %s\n' "$*"; }

sudo_cmd=()
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then sudo_cmd=(sudo); fi

if ! { [ -x "$py" ] && "$py" -c 'import numpy, torch' >/dev/null 2>&1; }; then
  log "installing python3-torch python3-numpy"
  export DEBIAN_FRONTEND=noninteractive
  if ! "${sudo_cmd[@]}" apt-get install -y -qq python3-torch python3-numpy >/dev/null; then
    "${sudo_cmd[@]}" apt-get update -qq
    "${sudo_cmd[@]}" apt-get install -y -qq python3-torch python3-numpy >/dev/null
  fi
fi

log "$("$py" -c 'import numpy, torch; print("numpy", numpy.__version__, "torch", torch.__version__)')"
# Bytecode caches would land in scripts/__pycache__; keep the tree clean.
export PYTHONDONTWRITEBYTECODE=1
"$py" "$root/scripts/make-golden.py"
"$py" "$root/scripts/make-numpy-data.py"
"$py" "$root/scripts/make-train-golden.py"
"$py" "$root/scripts/make-gpt2-golden.py"
log "done: tests/data/golden, tests/data/numpy, tests/data/train and tests/data/gpt2"
