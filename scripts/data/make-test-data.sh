#!/usr/bin/env bash
# Regenerates the committed test data (a manual step; the tests only read it):
#   tests/data/golden/  PyTorch nn.MultiheadAttention golden vectors   (scripts/data/make-golden.py)
#   tests/data/numpy/   NumPy RandomState streams and the seeds' examples (scripts/data/make-numpy-data.py)
#   tests/data/train/   the model's loss, gradients and AdamW steps from PyTorch autograd, float32
#                       and float64                                  (scripts/data/make-train-golden.py)
#   tests/data/gpt2/    tiny Hugging Face GPT-2 checkpoints, their logits and attention in float32
#                       and float64                                  (scripts/data/make-gpt2-golden.py)
#   tests/data/llama/   tiny Hugging Face Llama, Qwen2 and Mistral checkpoints (F32, BF16, F16), their
#                       logits and query-head attention in float32 and float64, following
#                       transformers' eager code                     (scripts/data/make-llama-golden.py)
#   tests/data/families/ tiny GPT-NeoX (Pythia), Qwen3, Gemma 3, Gemma 2, OLMo 2 and Phi-3 checkpoints
#                       (F32, BF16, F16), their logits and query-head attention in float32 and float64,
#                       following transformers' eager code   (scripts/data/make-family-golden.py)
#   tests/data/torch/, tests/data/malformed-torch/, tests/fuzz/seeds-torch/  pytorch_model.bin files
#                       written by torch.save with their .safetensors twins, hostile ones written
#                       opcode by opcode                             (scripts/data/make-torch-bin.py)
#   tests/data/gguf/    GGUF files written by hand (every dequantized format, metadata of every
#                       value type) and their values from an independent numpy reference (numpy only)
#                                                                    (scripts/data/make-gguf-golden.py)
#                       the golden checkpoints of llama/, families/ and gpt2/ as GGUF (F32, F16,
#                       Q8_0; Llama 3's rope_freqs.weight, Pythia, Gemma 2 and 3) with their
#                       .safetensors twins; tests/data/malformed-gguf/ (numpy; torch for llama3)
#                                                                    (scripts/data/make-gguf-checkpoints.py)
#   tests/data/ablation/ the logits of qwen2-f32, mistral-f32 and GPT-2's tiny-f32 with heads
#                       ablated (zeroed or scaled before o_proj), float32 and float64
#                                                                    (scripts/data/make-ablation-golden.py)
#   tests/data/analysis/ the logit lens, attention rollout and direct logit attribution of GPT-2's
#                       tiny-f32, llama-f32 and pythia-f32 from a reference with TransformerLens's
#                       hooks, float32 and float64           (scripts/data/make-analysis-golden.py)
# Uses Debian's python3-torch and python3-numpy with /usr/bin/python3 (a pyenv python3 on PATH
# lacks them); when they are missing, scripts/setup.sh (the one set-up path) installs them.
# Deterministic: rerunning gives the same bytes.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
root="$ATTN_ROOT"
py=/usr/bin/python3

log() { printf '[test-data] %s\n' "$*"; }

has_torch() { [ -x "$py" ] && "$py" -c 'import numpy, torch' >/dev/null 2>&1; }
# set-up's quick path does not look for torch (importing it takes seconds): without it, the full run.
if ! has_torch; then
  log "no torch or numpy for $py: running scripts/setup.sh"
  ATTN_SETUP_FORCE=1 attn_setup
  has_torch || { log "scripts/setup.sh did not make torch and numpy importable by $py"; exit 1; }
fi

log "$("$py" -c 'import numpy, torch; print("numpy", numpy.__version__, "torch", torch.__version__)')"
# Bytecode caches would land in scripts/data/__pycache__; keep the tree clean.
export PYTHONDONTWRITEBYTECODE=1
"$py" "$root/scripts/data/make-golden.py"
"$py" "$root/scripts/data/make-numpy-data.py"
"$py" "$root/scripts/data/make-train-golden.py"
"$py" "$root/scripts/data/make-gpt2-golden.py"
"$py" "$root/scripts/data/make-llama-golden.py"
"$py" "$root/scripts/data/make-family-golden.py"
"$py" "$root/scripts/data/make-ablation-golden.py"  # reads the gpt2 and llama cases written above
"$py" "$root/scripts/data/make-analysis-golden.py"  # reads the gpt2, llama and families cases
"$py" "$root/scripts/data/make-torch-bin.py"
"$py" "$root/scripts/data/make-gguf-golden.py"
"$py" "$root/scripts/data/make-gguf-checkpoints.py"
log "done: tests/data/golden, tests/data/numpy, tests/data/train, tests/data/gpt2, tests/data/llama, tests/data/families, tests/data/ablation, tests/data/analysis, tests/data/torch and tests/data/gguf"
