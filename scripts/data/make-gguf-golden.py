#!/usr/bin/env python3
"""GGUF test data for the core's GGUF reader and dequantization (cpp/attention/io/gguf,
cpp/attention/ops/dequantize): tests/data/gguf/

  quants.gguf        GGUF v3, default alignment (32): one tensor per format the core dequantizes,
                     random blocks with their scales chosen to cover every case:
                       f32   [4, 64]    random values and inf, -inf, NaN, -0, the smallest
                                        subnormal, the largest float
                       f16   [8, 64]    every exponent (subnormals, inf, NaN) with both signs and
                                        five mantissas, then random bits
                       bf16  [16, 64]   every exponent with both signs and two mantissas
                       q8_0  [20, 64]   40 blocks: d random, 0, -0, negative, ±65504, the smallest
                                        and largest subnormal, the smallest normal, ±inf, NaN;
                                        every int8 quant
                       q4_0  [20, 64]   40 blocks, d as q8_0's
                       q4_k  [32, 512]  64 super-blocks: each of the 8 six-bit sub-scales and the 8
                                        six-bit mins takes every value 0..63 across the blocks;
                                        d and dmin random, negative, zero, extreme, inf, NaN
                       q5_k  [32, 512]  as q4_k, with random fifth bits
                       q6_k  [8, 512]   16 super-blocks: the 256 int8 sub-scales are every value
                                        -128..127 once; d as q8_0's
                       q4_1  [20, 64]   40 blocks, d as q8_0's, m random and special (rolled)
                       q5_0  [20, 64]   40 blocks, d as q8_0's, random fifth bits
                       q5_1  [20, 64]   as q4_1, with random fifth bits
  quants.expected.safetensors   each tensor's values [rows, ne[0]] as F32: computed in float64 by
                     the vectorised numpy reference below (written from ggml-common.h's block
                     layouts and ggml-quants.c's dequantize_row_*, independently of the C++), where
                     every value is exact — checked against the same values computed in integers
                     (each half is a whole multiple of 2^-24) — so its one rounding to float32 is
                     the correctly rounded value the C++ must give bit for bit.
  metadata.gguf      GGUF v3, general.alignment 64 (u32): a metadata key of every value type
                     (u8 … f64, bool, string), arrays of each of them, an empty array, arrays of
                     arrays (nested twice), a tokenizer-shaped string array with its scores and
                     types, and three small tensors (F32, F16, Q8_0) at offsets 0, 64 and 128.

Written by hand (no gguf package is installable): header "GGUF", u32 version, u64 tensor count,
u64 metadata count, the key-values, the tensor infos (name, u32 rank, u64 dims ne[0] first, u32
ggml type, u64 offset), padding to the alignment, the data with each tensor padded to it.
Deterministic: rerunning writes the same bytes. Needs only numpy (Debian's python3-numpy).
"""

import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import write_safetensors  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "data", "gguf")

# ---- the GGUF writer -----------------------------------------------------------------------------

U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
SCALAR_FORMATS = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f",
                  BOOL: "<?", U64: "<Q", I64: "<q", F64: "<d"}

# ggml type ids and (values per block, bytes per block), from ggml.h and ggml.c's type_traits.
GGML_TYPES = {"F32": (0, 1, 4), "F16": (1, 1, 2), "Q4_0": (2, 32, 18), "Q4_1": (3, 32, 20),
              "Q5_0": (6, 32, 22), "Q5_1": (7, 32, 24), "Q8_0": (8, 32, 34),
              "Q4_K": (12, 256, 144), "Q5_K": (13, 256, 176), "Q6_K": (14, 256, 210),
              "BF16": (30, 1, 2)}


def gguf_string(text):
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    return struct.pack("<Q", len(data)) + data


def gguf_value(kind, value):
    """kind: a value type id; value: a Python scalar, a str, or for ARRAY (element kind, items)."""
    if kind == STRING:
        return gguf_string(value)
    if kind == ARRAY:
        element, items = value
        out = struct.pack("<IQ", element, len(items))
        for item in items:
            out += gguf_value(element, item)
        return out
    return struct.pack(SCALAR_FORMATS[kind], value)


def pad(data, alignment):
    return data + b"\0" * (-len(data) % alignment)


def write_gguf(path, metadata, tensors, alignment=32, version=3):
    """metadata: [(key, kind, value)]; tensors: [(name, type name, dims ne[0] first, bytes)]."""
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(metadata))
    for key, kind, value in metadata:
        out += gguf_string(key) + struct.pack("<I", kind) + gguf_value(kind, value)
    offset = 0
    for name, type_name, dims, data in tensors:
        type_id, block_values, block_bytes = GGML_TYPES[type_name]
        count = int(np.prod(dims))
        assert dims[0] % block_values == 0 and len(data) == count // block_values * block_bytes
        out += gguf_string(name) + struct.pack("<I", len(dims))
        out += b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", type_id, offset)
        offset += len(pad(data, alignment))
    out = pad(out, alignment)
    for _, _, _, data in tensors:
        out += pad(data, alignment)
    with open(path, "wb") as f:
        f.write(out)


# ---- the reference dequantization (float64, vectorised) ------------------------------------------

def halves(raw):
    return raw.astype("<u2").view("<f2").astype(np.float64)


def unpack_k_scales(scales):
    """Q4_K / Q5_K: the 12 packed bytes of each block -> (scale, min) [blocks, 8] each, 6 bits:
    sub-blocks 0-3 in the low 6 bits of bytes 0-3 (scales) and 4-7 (mins); sub-blocks 4-7 their
    low 4 bits in bytes 8-11 (scale: low nibble, min: high nibble) and their top 2 bits in the top
    2 bits of bytes 0-3 (scales) and 4-7 (mins)."""
    s = scales.astype(np.int64)
    low_scale, low_min = s[:, 0:4] & 63, s[:, 4:8] & 63
    high_scale = (s[:, 8:12] & 0xF) | ((s[:, 0:4] >> 6) << 4)
    high_min = (s[:, 8:12] >> 4) | ((s[:, 4:8] >> 6) << 4)
    return (np.concatenate([low_scale, high_scale], axis=1),
            np.concatenate([low_min, high_min], axis=1))


def k_quants_4bit(qs):
    """Q4_K / Q5_K's qs [blocks, 128] -> [blocks, 8, 32]: each 32 bytes hold sub-block 2g in their
    low nibbles and sub-block 2g + 1 in their high nibbles."""
    q = qs.astype(np.int64).reshape(-1, 4, 32)
    return np.stack([q & 0xF, q >> 4], axis=2).reshape(-1, 8, 32)


Q8_0 = np.dtype([("d", "<u2"), ("qs", "i1", 32)])
Q4_0 = np.dtype([("d", "<u2"), ("qs", "u1", 16)])
Q4_1 = np.dtype([("d", "<u2"), ("m", "<u2"), ("qs", "u1", 16)])
Q5_0 = np.dtype([("d", "<u2"), ("qh", "u1", 4), ("qs", "u1", 16)])
Q5_1 = np.dtype([("d", "<u2"), ("m", "<u2"), ("qh", "u1", 4), ("qs", "u1", 16)])
Q4_K = np.dtype([("d", "<u2"), ("dmin", "<u2"), ("scales", "u1", 12), ("qs", "u1", 128)])
Q5_K = np.dtype([("d", "<u2"), ("dmin", "<u2"), ("scales", "u1", 12), ("qh", "u1", 32),
                 ("qs", "u1", 128)])
Q6_K = np.dtype([("ql", "u1", 128), ("qh", "u1", 64), ("scales", "i1", 16), ("d", "<u2")])
for dtype, size in ((Q8_0, 34), (Q4_0, 18), (Q4_1, 20), (Q5_0, 22), (Q5_1, 24), (Q4_K, 144),
                    (Q5_K, 176), (Q6_K, 210)):
    assert dtype.itemsize == size


# Each format as (d, scale, q, dmin, min) per value, [blocks, n]: x = (d * scale) * q - dmin * min,
# multiplied in ggml's order (d · scale first) so even the sign of a zero is ggml's.
def terms_q8_0(raw):
    b = np.frombuffer(raw, Q8_0)
    q = b["qs"].astype(np.int64)
    return b["d"], np.ones_like(q), q, None, None


def terms_q4_0(raw):
    b = np.frombuffer(raw, Q4_0)
    q = b["qs"].astype(np.int64)
    q = np.concatenate([q & 0xF, q >> 4], axis=1) - 8
    return b["d"], np.ones_like(q), q, None, None


def fifth_bits(qh):
    """Q5_0 / Q5_1: value j's fifth bit is bit j of qh read as a little-endian u32 -> [blocks, 32]."""
    word = qh.astype(np.int64) @ (1 << (8 * np.arange(4)))
    return (word[:, None] >> np.arange(32)[None, :]) & 1


def nibbles(qs):
    q = qs.astype(np.int64)
    return np.concatenate([q & 0xF, q >> 4], axis=1)


# x = d * q + m (ggml: x0*d + m): as (d, 1, q, m, -1)
def terms_q4_1(raw):
    b = np.frombuffer(raw, Q4_1)
    q = nibbles(b["qs"])
    return b["d"], np.ones_like(q), q, b["m"], -np.ones_like(q)


def terms_q5_0(raw):
    b = np.frombuffer(raw, Q5_0)
    q = nibbles(b["qs"]) + 16 * fifth_bits(b["qh"]) - 16
    return b["d"], np.ones_like(q), q, None, None


def terms_q5_1(raw):
    b = np.frombuffer(raw, Q5_1)
    q = nibbles(b["qs"]) + 16 * fifth_bits(b["qh"])
    return b["d"], np.ones_like(q), q, b["m"], -np.ones_like(q)


def terms_k(b, q):
    """Q4_K / Q5_K: q [blocks, 8, 32] with the blocks' packed scales and mins."""
    scale, minimum = unpack_k_scales(b["scales"])
    return (b["d"], np.repeat(scale, 32, axis=1), q.reshape(len(b), 256), b["dmin"],
            np.repeat(minimum, 32, axis=1))


def terms_q4_k(raw):
    b = np.frombuffer(raw, Q4_K)
    return terms_k(b, k_quants_4bit(b["qs"]))


def terms_q5_k(raw):
    b = np.frombuffer(raw, Q5_K)
    # Sub-block s takes its fifth bits from bit s of qh[0..31].
    fifth = (b["qh"].astype(np.int64)[:, None, :] >> np.arange(8)[None, :, None]) & 1
    return terms_k(b, k_quants_4bit(b["qs"]) + 16 * fifth)


def terms_q6_k(raw):
    b = np.frombuffer(raw, Q6_K)
    ql, qh = b["ql"].astype(np.int64), b["qh"].astype(np.int64)
    parts = []
    for half in range(2):  # each 128 values: ql [64 h, 64 h + 64), qh [32 h, 32 h + 32)
        low = ql[:, 64 * half:64 * half + 64]
        high = qh[:, 32 * half:32 * half + 32]
        nibbles = [low[:, :32] & 0xF, low[:, 32:] & 0xF, low[:, :32] >> 4, low[:, 32:] >> 4]
        parts += [nibbles[k] | (((high >> (2 * k)) & 3) << 4) for k in range(4)]
    q = np.concatenate(parts, axis=1) - 32           # [blocks, 256], value i at position i
    scale = np.repeat(b["scales"].astype(np.int64), 16, axis=1)  # value i: sub-block i // 16
    return b["d"], scale, q, None, None


TERMS = {"Q8_0": terms_q8_0, "Q4_0": terms_q4_0, "Q4_1": terms_q4_1, "Q5_0": terms_q5_0,
         "Q5_1": terms_q5_1, "Q4_K": terms_q4_k, "Q5_K": terms_q5_k, "Q6_K": terms_q6_k}


def dequantize(type_name, raw):
    """The values of raw blocks in float64, and a check that each finite one is exact."""
    d_bits, scale, q, dmin_bits, b = TERMS[type_name](raw)
    a = scale * q
    d = halves(d_bits)
    with np.errstate(invalid="ignore", over="ignore"):
        y = (d[:, None] * scale.astype(np.float64)) * q.astype(np.float64)
        if dmin_bits is not None:
            dmin = halves(dmin_bits)
            y = y - dmin[:, None] * b.astype(np.float64)
    # Exactness: every finite half is a whole multiple of 2^-24, so y * 2^24 is an integer, which
    # int64 computes exactly; float64 must have it exactly (|y| · 2^24 < 2^53 for these formats).
    finite = np.isfinite(d) if dmin_bits is None else np.isfinite(d) & np.isfinite(dmin)
    d_units = np.where(finite, d * 2.0**24, 0).astype(np.int64)
    units = d_units[:, None] * a
    if dmin_bits is not None:
        units -= np.where(finite, dmin * 2.0**24, 0).astype(np.int64)[:, None] * b
    assert np.all(np.abs(units[finite]) < 2**53)
    assert np.array_equal(y[finite] * 2.0**24, units[finite].astype(np.float64)), type_name
    return y.reshape(-1)


# ---- the blocks ----------------------------------------------------------------------------------

def f16_bits(values):
    return np.asarray(values, dtype=np.float16).view("<u2")


# Halves a scale can be: random ones first, then the cases worth a block each.
SPECIAL_HALVES = np.array([0x0000, 0x8000, 0xBC00, 0x7BFF, 0xFBFF, 0x0001, 0x03FF, 0x0400,
                           0x8001, 0x7C00, 0xFC00, 0x7E00], dtype="<u2")


def scale_halves(rng, count, spread):
    bits = f16_bits(rng.standard_normal(count) * spread)
    bits[-len(SPECIAL_HALVES):] = SPECIAL_HALVES
    return bits


def pack_k_scales(scale, minimum):
    """[blocks, 8] six-bit scales and mins -> [blocks, 12] bytes, the layout unpack_k_scales reads
    (written from ggml-common.h's description, separately from it; the script checks both agree)."""
    packed = np.zeros((len(scale), 12), dtype=np.int64)
    packed[:, 0:4] = (scale[:, 0:4] & 63) | ((scale[:, 4:8] >> 4) << 6)
    packed[:, 4:8] = (minimum[:, 0:4] & 63) | ((minimum[:, 4:8] >> 4) << 6)
    packed[:, 8:12] = (scale[:, 4:8] & 0xF) | ((minimum[:, 4:8] & 0xF) << 4)
    return packed.astype(np.uint8)


def blocks_q8_0(rng, count):
    b = np.zeros(count, Q8_0)
    b["d"] = scale_halves(rng, count, 0.01)
    qs = rng.randint(-128, 128, size=(count, 32))
    qs.reshape(-1)[:256] = np.arange(-128, 128)  # every int8 once
    b["qs"] = qs
    return b.tobytes()


def blocks_q4_0(rng, count):
    b = np.zeros(count, Q4_0)
    b["d"] = scale_halves(rng, count, 0.01)
    b["qs"] = rng.randint(0, 256, size=(count, 16))
    return b.tobytes()


def blocks_32(rng, count, dtype):
    """Q4_1 / Q5_0 / Q5_1 blocks: d as q8_0's, m (where the format has it) random and special in
    other blocks than d's, random quants and fifth bits."""
    b = np.zeros(count, dtype)
    b["d"] = scale_halves(rng, count, 0.01)
    if "m" in dtype.names:
        b["m"] = np.roll(scale_halves(rng, count, 0.1), 5)
    if "qh" in dtype.names:
        b["qh"] = rng.randint(0, 256, size=(count, 4))
    b["qs"] = rng.randint(0, 256, size=(count, 16))
    return b.tobytes()


def k_scales_every_value(count, step, offset):
    """[count = 64, 8] six-bit values: position j takes every value 0..63 across the blocks."""
    blocks = np.arange(count)[:, None]
    return (blocks * step + offset * np.arange(8)[None, :] + offset) % 64


def blocks_q4_k(rng, count, dtype=Q4_K):
    b = np.zeros(count, dtype)
    scale = k_scales_every_value(count, 1, 9)
    minimum = k_scales_every_value(count, 5, 13)
    b["scales"] = pack_k_scales(scale, minimum)
    unpacked = unpack_k_scales(b["scales"])
    assert np.array_equal(unpacked[0], scale) and np.array_equal(unpacked[1], minimum)
    for j in range(8):
        assert len(set(scale[:, j])) == 64 and len(set(minimum[:, j])) == 64
    b["d"] = scale_halves(rng, count, 0.001)
    dmin = scale_halves(rng, count, 0.001)
    b["dmin"] = np.roll(dmin, 5)  # the special dmin in other blocks than the special d
    b["qs"] = rng.randint(0, 256, size=(count, 128))
    if "qh" in dtype.names:
        b["qh"] = rng.randint(0, 256, size=(count, 32))
    return b.tobytes()


def blocks_q6_k(rng, count):
    b = np.zeros(count, Q6_K)
    b["ql"] = rng.randint(0, 256, size=(count, 128))
    b["qh"] = rng.randint(0, 256, size=(count, 64))
    b["scales"] = rng.permutation(np.arange(-128, 128)).reshape(count, 16)  # every int8 once
    b["d"] = scale_halves(rng, count, 0.001)
    return b.tobytes()


def f16_patterns(rng):
    exponents = np.arange(32)[:, None, None] << 10
    signs = np.array([0, 0x8000])[None, :, None]
    mantissas = np.array([0, 1, 0x155, 0x2AA, 0x3FF])[None, None, :]
    bits = (exponents | signs | mantissas).reshape(-1)
    return np.concatenate([bits, rng.randint(0, 1 << 16, size=512 - len(bits))]).astype("<u2")


def bf16_patterns():
    exponents = np.arange(256)[:, None, None] << 7
    signs = np.array([0, 0x8000])[None, :, None]
    mantissas = np.array([0, 0x55])[None, None, :]
    return (exponents | signs | mantissas).reshape(-1).astype("<u2")


def f32_values(rng):
    values = rng.standard_normal(256).astype("<f4")
    values[:7] = [np.inf, -np.inf, np.nan, -0.0, np.float32(1e-45), np.finfo(np.float32).max,
                  np.finfo(np.float32).tiny]
    return values


def quants(rng):
    """[(name, type, dims ne[0] first, bytes, expected [rows, ne[0]] float64)]."""
    cases = []
    f32 = f32_values(rng)
    cases.append(("f32", "F32", [64, 4], f32.tobytes(), f32.astype(np.float64)))
    f16 = f16_patterns(rng)
    cases.append(("f16", "F16", [64, 8], f16.tobytes(), f16.view("<f2").astype(np.float64)))
    bf16 = bf16_patterns()
    bf16_values = (bf16.astype(np.uint32) << 16).view("<f4").astype(np.float64)
    cases.append(("bf16", "BF16", [64, 16], bf16.tobytes(), bf16_values))
    for name, type_name, dims, raw in (
            ("q8_0", "Q8_0", [64, 20], blocks_q8_0(rng, 40)),
            ("q4_0", "Q4_0", [64, 20], blocks_q4_0(rng, 40)),
            ("q4_k", "Q4_K", [512, 32], blocks_q4_k(rng, 64)),
            ("q5_k", "Q5_K", [512, 32], blocks_q4_k(rng, 64, Q5_K)),
            ("q6_k", "Q6_K", [512, 8], blocks_q6_k(rng, 16)),
            ("q4_1", "Q4_1", [64, 20], blocks_32(rng, 40, Q4_1)),
            ("q5_0", "Q5_0", [64, 20], blocks_32(rng, 40, Q5_0)),
            ("q5_1", "Q5_1", [64, 20], blocks_32(rng, 40, Q5_1))):
        cases.append((name, type_name, dims, raw, dequantize(type_name, raw)))
    return cases


# ---- metadata of every type ----------------------------------------------------------------------

# The C++ test (tests/cpp/test_gguf.cpp) checks these values; keep the two in step.
METADATA = [
    ("general.architecture", STRING, "test"),
    ("general.alignment", U32, 64),
    ("test.u8", U8, 255),
    ("test.i8", I8, -128),
    ("test.u16", U16, 65535),
    ("test.i16", I16, -32768),
    ("test.u32", U32, 4294967295),
    ("test.i32", I32, -2147483648),
    ("test.f32", F32, 1.5),
    ("test.bool", BOOL, True),
    ("test.string", STRING, "h\u00e9llo \u2713"),
    ("test.u64", U64, 18446744073709551615),
    ("test.i64", I64, -9223372036854775808),
    ("test.f64", F64, 0.1),
    ("test.empty_string", STRING, ""),
    ("test.array.u8", ARRAY, (U8, [0, 1, 255])),
    ("test.array.i8", ARRAY, (I8, [-128, 0, 127])),
    ("test.array.u16", ARRAY, (U16, [0, 65535])),
    ("test.array.i16", ARRAY, (I16, [-32768, 32767])),
    ("test.array.u32", ARRAY, (U32, [0, 4294967295])),
    ("test.array.i32", ARRAY, (I32, [-2147483648, 2147483647])),
    ("test.array.f32", ARRAY, (F32, [0.5, -2.0, 3.25])),
    ("test.array.bool", ARRAY, (BOOL, [True, False, True])),
    ("test.array.string", ARRAY, (STRING, ["", "a", "\u0120Hello", "\u00e9\u4e2d"])),
    ("test.array.u64", ARRAY, (U64, [0, 9223372036854775807])),
    ("test.array.i64", ARRAY, (I64, [-9223372036854775808, 1])),
    ("test.array.f64", ARRAY, (F64, [0.25, -1e300])),
    ("test.array.empty", ARRAY, (I32, [])),
    ("test.array.nested", ARRAY, (ARRAY, [(I32, [1, 2]), (I32, [3]), (STRING, ["x", "yz"])])),
    ("test.array.nested2", ARRAY, (ARRAY, [(ARRAY, [(U8, [7])])])),
    ("tokenizer.ggml.model", STRING, "gpt2"),
    ("tokenizer.ggml.tokens", ARRAY, (STRING, ["<s>", "</s>", "a", "b", "ab"])),
    ("tokenizer.ggml.scores", ARRAY, (F32, [0.0, 0.0, -1.0, -2.0, -3.5])),
    ("tokenizer.ggml.token_type", ARRAY, (I32, [3, 3, 1, 1, 1])),
    ("tokenizer.ggml.merges", ARRAY, (STRING, ["a b"])),
    ("tokenizer.ggml.bos_token_id", U32, 0),
]


def metadata_tensors():
    a = np.array([1.0, -2.0, 0.5], dtype="<f4")
    b = np.array([[1.0, 2.0], [-3.0, 65504.0], [0.0, -0.0], [0.25, 6e-8]], dtype="<f2")
    q = np.zeros(1, Q8_0)
    q["d"] = f16_bits([0.5])
    q["qs"] = np.arange(-16, 16)
    return [("a", "F32", [3], a.tobytes()), ("b", "F16", [2, 4], b.tobytes()),
            ("c", "Q8_0", [32], q.tobytes())]


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.RandomState(34)
    cases = quants(rng)
    write_gguf(os.path.join(OUT, "quants.gguf"), [("general.architecture", STRING, "quants")],
               [(name, type_name, dims, raw) for name, type_name, dims, raw, _ in cases])
    with np.errstate(invalid="ignore"):  # NaN stays NaN
        expected = {name: values.astype(np.float32).reshape(dims[1], dims[0])
                    for name, _, dims, _, values in cases}
    write_safetensors(os.path.join(OUT, "quants.expected.safetensors"), expected,
                      {"note": "float64 reference values (exact), rounded once to float32"})
    write_gguf(os.path.join(OUT, "metadata.gguf"), METADATA, metadata_tensors(), alignment=64)
    for name in sorted(os.listdir(OUT)):
        print(f"{name}: {os.path.getsize(os.path.join(OUT, name))} bytes")


if __name__ == "__main__":
    main()
