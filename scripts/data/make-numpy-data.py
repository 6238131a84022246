#!/usr/bin/env python3
"""NumPy reference data: tests/data/numpy/*.safetensors (F64, NumPy's own float64 numbers).

- randn_streams: raw numpy.random.RandomState streams, for the C++ NumpyRandomState.
- seed001_*, seed004_*: the NumPy examples of the tutorials in shared/seeds/ (001 and 004),
  replayed exactly as written there (their functions are copied verbatim below), so the core
  can reproduce them number for number.

Run through scripts/data/make-test-data.sh. Deterministic: the same bytes every run. Only the
PyTorch comparison block of seed 004 uses torch, and only when it is importable.
"""

import contextlib
import io
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import write_safetensors  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "data", "numpy")


def write(name, tensors, meta):
    """tests/data/numpy/<name>.safetensors: the tensors as F64, in the order given."""
    write_safetensors(os.path.join(OUT, name + ".safetensors"),
                      {k: np.asarray(v, dtype=np.float64) for k, v in tensors.items()}, meta)


# ---- raw RandomState streams ---------------------------------------------------------------

def randn_streams():
    tensors = {}
    for seed in (0, 1, 42, 123456789, 4294967295):
        tensors[f"seed_{seed}"] = np.random.RandomState(seed).randn(2000)
    tensors["random_sample_seed_7"] = np.random.RandomState(7).random_sample(1000)
    tensors["uniform_seed_3"] = np.random.RandomState(3).uniform(-0.5, 0.5, 1000)
    meta = {
        "description": "seed_<s> = np.random.RandomState(s).randn(2000); "
                       "random_sample_seed_7 = RandomState(7).random_sample(1000); "
                       "uniform_seed_3 = RandomState(3).uniform(-0.5, 0.5, 1000)",
    }
    write("randn_streams", tensors, meta)


# ---- seed 001: "practical PyTorch/NumPy code", the NumPy example -----------------------------

def seed001_causal():
    # --- verbatim from seed 001 (its own softmax, distinct from seed 004's) ---
    def softmax(x, axis=-1):
        x = x - x.max(axis=axis, keepdims=True)
        e = np.exp(x)
        return e / e.sum(axis=axis, keepdims=True)

    def self_attention_numpy(X, Wq, Wk, Wv, mask=None):
        """
        X: [n, d_model]
        W*: [d_model, d_k]
        mask: [n, n] with 0 for allowed, -inf for blocked (added before softmax)
        """
        Q = X @ Wq # [n, d_k]
        K = X @ Wk # [n, d_k]
        V = X @ Wv # [n, d_k] (or d_v)
        scores = (Q @ K.T) / np.sqrt(K.shape[1]) # [n, n]
        if mask is not None:
            scores = scores + mask # add -inf to illegal connections
        A = softmax(scores, axis=-1) # attention weights
        Y = A @ V # [n, d_k]
        return Y, A

    # Example
    np.random.seed(0)
    n, d_model, d_k = 5, 16, 8
    X = np.random.randn(n, d_model)
    Wq = np.random.randn(d_model, d_k)
    Wk = np.random.randn(d_model, d_k)
    Wv = np.random.randn(d_model, d_k)
    # causal mask (upper-triangular set to -inf)
    mask = np.triu(np.ones((n,n)) * -1e9, k=1)
    Y, A = self_attention_numpy(X, Wq, Wk, Wv, mask=mask)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        print("Output shape:", Y.shape, " Attn shape:", A.shape)
    # --- end of verbatim code ---

    # The intermediates, computed the same way as inside self_attention_numpy.
    Q = X @ Wq
    K = X @ Wk
    V = X @ Wv
    scores = (Q @ K.T) / np.sqrt(K.shape[1])
    tensors = {"X": X, "Wq": Wq, "Wk": Wk, "Wv": Wv, "Q": Q, "K": K, "V": V,
               "scores": scores, "Y": Y, "A": A}
    meta = {
        "printed": printed.getvalue().rstrip("\n"),
        "description": "seed 001, NumPy example: np.random.seed(0); n, d_model, d_k = 5, 16, 8; "
                       "X, Wq, Wk, Wv = randn in that order; causal mask "
                       "np.triu(np.ones((n,n)) * -1e9, k=1) added to scores = Q@K.T/sqrt(d_k) "
                       "(stored before the mask); Y, A = self_attention_numpy(...)",
    }
    write("seed001_causal", tensors, meta)


# ---- seed 004: verbatim definitions ----------------------------------------------------------

def softmax(x, axis=-1):
    """Numerically stable softmax"""
    e_x = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e_x / np.sum(e_x, axis=axis, keepdims=True)

def scaled_dot_product_attention(Q, K, V):
    """
    Scaled Dot-Product Attention (Eq. 2)

    Parameters:
        Q: Query matrix (n, d_k)
        K: Key matrix   (n, d_k)
        V: Value matrix  (n, d_v)
    Returns:
        output: Attention output (n, d_v)
        weights: Attention weights (n, n)
    """
    d_k = Q.shape[-1]
    # Steps 1-2: Similarity computation and scaling
    scores = Q @ K.T / np.sqrt(d_k)
    # Step 3: Attention weights
    weights = softmax(scores)
    # Step 4: Weighted sum
    output = weights @ V
    return output, weights


class MultiHeadAttention:
    """Multi-Head Attention (Eqs. 7, 8)"""

    def __init__(self, d_model, n_heads, seed=0):
        assert d_model % n_heads == 0
        self.d_model = d_model
        self.n_heads = n_heads
        self.d_k = d_model // n_heads

        rng = np.random.RandomState(seed)
        scale = 0.1

        # Projection matrices for each head
        self.W_Q = rng.randn(n_heads, d_model, self.d_k) * scale
        self.W_K = rng.randn(n_heads, d_model, self.d_k) * scale
        self.W_V = rng.randn(n_heads, d_model, self.d_k) * scale
        # Output projection matrix
        self.W_O = rng.randn(n_heads * self.d_k, d_model) * scale

    def forward(self, X):
        """
        Parameters:
            X: Input sequence (n, d_model)
        Returns:
            output: Multi-Head Attention output (n, d_model)
            all_weights: Attention weights per head (n_heads, n, n)
        """
        head_outputs = []
        all_weights = []

        for i in range(self.n_heads):
            Q = X @ self.W_Q[i]
            K = X @ self.W_K[i]
            V = X @ self.W_V[i]
            head_out, weights = scaled_dot_product_attention(Q, K, V)
            head_outputs.append(head_out)
            all_weights.append(weights)

        # Concatenate heads and apply output projection (Eq. 7)
        concat = np.concatenate(head_outputs, axis=-1)
        output = concat @ self.W_O

        return output, np.array(all_weights)


def positional_encoding(max_len, d_model):
    """
    Sinusoidal Positional Encoding (Eqs. 9, 10)

    Parameters:
        max_len: Maximum sequence length
        d_model: Model dimension
    Returns:
        PE: Positional encoding matrix (max_len, d_model)
    """
    PE = np.zeros((max_len, d_model))
    position = np.arange(max_len)[:, np.newaxis]
    div_term = 10000 ** (2 * np.arange(d_model // 2) / d_model)

    PE[:, 0::2] = np.sin(position / div_term)
    PE[:, 1::2] = np.cos(position / div_term)
    return PE


# ---- seed 004: the blocks ----------------------------------------------------------------------

def seed004_single_head():
    # "Demonstration and Visualization" (plotting left out)
    np.random.seed(42)

    # Input: 4 tokens, model dimension 8
    n_tokens = 4
    d_model = 8
    d_k = d_v = 8

    # Random input sequence
    X = np.random.randn(n_tokens, d_model)

    # Weight matrices (normally learned via training)
    W_Q = np.random.randn(d_model, d_k) * 0.1
    W_K = np.random.randn(d_model, d_k) * 0.1
    W_V = np.random.randn(d_model, d_v) * 0.1

    # Compute Q, K, V (Eq. 1)
    Q = X @ W_Q
    K = X @ W_K
    V = X @ W_V

    # Attention computation
    output, weights = scaled_dot_product_attention(Q, K, V)

    tensors = {"X": X, "W_Q": W_Q, "W_K": W_K, "W_V": W_V, "Q": Q, "K": K, "V": V,
               "output": output, "weights": weights}
    meta = {
        "printed_weights": str(np.round(weights, 3)),
        "description": "seed 004, 'Demonstration and Visualization': np.random.seed(42); "
                       "X = randn(4, 8); W_Q, W_K, W_V = randn(8, 8) * 0.1 in that order; "
                       "output, weights = scaled_dot_product_attention(X@W_Q, X@W_K, X@W_V)",
    }
    write("seed004_single_head", tensors, meta)


def seed004_multi_head():
    # "Visualizing Multi-Head Attention" (plotting left out)
    np.random.seed(42)

    n_tokens = 6
    d_model = 16
    n_heads = 4

    X = np.random.randn(n_tokens, d_model)
    mha = MultiHeadAttention(d_model, n_heads, seed=42)
    output, all_weights = mha.forward(X)

    tensors = {"X": X, "W_Q": mha.W_Q, "W_K": mha.W_K, "W_V": mha.W_V, "W_O": mha.W_O,
               "output": output, "all_weights": all_weights}
    meta = {
        "description": "seed 004, 'Visualizing Multi-Head Attention': np.random.seed(42); "
                       "X = randn(6, 16); mha = MultiHeadAttention(16, 4, seed=42) (W_Q, W_K, "
                       "W_V [4, 16, 4] then W_O [16, 16] from RandomState(42).randn * 0.1); "
                       "output, all_weights = mha.forward(X); no biases, no mask",
    }
    write("seed004_multi_head", tensors, meta)


def seed004_pytorch_compare():
    # "Comparison with PyTorch nn.MultiheadAttention"
    np.random.seed(42)

    n_tokens = 4
    d_model = 8
    n_heads = 2
    d_k = d_model // n_heads

    # Input data
    X_np = np.random.randn(n_tokens, d_model).astype(np.float32)

    # --- Scratch implementation ---
    mha_np = MultiHeadAttention(d_model, n_heads, seed=0)
    out_np, _ = mha_np.forward(X_np)

    # Copy weights from scratch implementation into PyTorch's in_proj_weight
    # PyTorch stores [W_Q; W_K; W_V] concatenated as (3*d_model, d_model)
    W_Q_cat = np.concatenate([mha_np.W_Q[i] for i in range(n_heads)], axis=1).T
    W_K_cat = np.concatenate([mha_np.W_K[i] for i in range(n_heads)], axis=1).T
    W_V_cat = np.concatenate([mha_np.W_V[i] for i in range(n_heads)], axis=1).T
    in_proj_weight = np.concatenate([W_Q_cat, W_K_cat, W_V_cat], axis=0)

    tensors = {"X": X_np, "in_proj_weight": in_proj_weight,
               "out_proj_weight": mha_np.W_O.T, "out_np": out_np}
    description = ("seed 004, 'Comparison with PyTorch nn.MultiheadAttention': "
                   "np.random.seed(42); X = randn(4, 8).astype(float32) (stored as F64); "
                   "MultiHeadAttention(8, 2, seed=0); out_np = its forward(X) in float64; "
                   "in_proj_weight = [W_Q; W_K; W_V] as built there, out_proj_weight = W_O.T")
    try:
        import torch
        import torch.nn as nn
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
        torch.manual_seed(42)
        # --- PyTorch implementation ---
        mha_pt = nn.MultiheadAttention(d_model, n_heads, bias=False, batch_first=False)
        with torch.no_grad():
            mha_pt.in_proj_weight.copy_(torch.from_numpy(in_proj_weight))
            mha_pt.out_proj.weight.copy_(torch.from_numpy(mha_np.W_O.T))

        # PyTorch expects (seq_len, batch, d_model) by default
        X_pt = torch.from_numpy(X_np).unsqueeze(1)  # (n_tokens, 1, d_model)
        out_pt, _ = mha_pt(X_pt, X_pt, X_pt)
        out_pt = out_pt.squeeze(1).detach().numpy()
        tensors["out_pt"] = out_pt
        description += (f"; out_pt = PyTorch {torch.__version__} float32 output with those "
                        "weights (stored as F64)")
    write("seed004_pytorch_compare", tensors, {"description": description})


def seed004_positional():
    max_len = 50
    d_model = 64
    PE = positional_encoding(max_len, d_model)
    write("seed004_positional", {"PE": PE},
          {"description": "seed 004, 'Positional Encoding': PE = positional_encoding(50, 64)"})


def main():
    os.makedirs(OUT, exist_ok=True)
    randn_streams()
    seed001_causal()
    seed004_single_head()
    seed004_multi_head()
    seed004_pytorch_compare()
    seed004_positional()
    for name in sorted(os.listdir(OUT)):
        if name.endswith(".safetensors"):
            print(f"numpy: {name}")


if __name__ == "__main__":
    main()
