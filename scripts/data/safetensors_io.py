"""Writes and reads .safetensors files without the safetensors package (for the test-data scripts).

Layout: 8-byte little-endian u64 header length N, N bytes of JSON
    {"name": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...,
     "__metadata__": {"key": "value", ...}}
padded with spaces so N is a multiple of 8, then the little-endian tensor bytes back to back
in header order (offsets are relative to the start of that data buffer).
The output depends only on the arguments, so regenerating gives the same bytes.

Two writers share the file layout:
  write_safetensors   test data (expected values): numpy arrays F32/F64/U8 in the caller's order,
                      "__metadata__" last.
  write_checkpoint    a Hugging Face model.safetensors as the safetensors library writes one: torch
                      tensors stored as F32, F16, BF16, U8 or BOOL (or F64), header keys sorted by
                      name (or in the caller's order: GPT-2's files as older conversions wrote
                      them), "__metadata__" first ({"format": "pt"} unless told otherwise).
and two readers: read_safetensors (numpy, as stored) and read_checkpoint (torch; float tensors
upcast exactly to float64, BF16 bits shifted up; U8 and BOOL kept as uint8 / bool).
"""

import json
import struct

import numpy as np

_DTYPES = {
    np.dtype(np.float32): ("F32", "<f4"),
    np.dtype(np.float64): ("F64", "<f8"),
    np.dtype(np.uint8): ("U8", "u1"),
    np.dtype(np.bool_): ("U8", "u1"),
}


def _write_file(path, entries, metadata, metadata_first):
    """entries: [(name, dtype code, shape, bytes)] in data order. The header JSON (compact,
    ASCII) lists them in that order, "__metadata__" first or last, padded with spaces so its
    length is a multiple of 8."""
    header, offset = {}, 0
    if metadata and metadata_first:
        header["__metadata__"] = dict(metadata)
    for name, code, shape, data in entries:
        header[name] = {"dtype": code, "shape": [int(s) for s in shape],
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    if metadata and not metadata_first:
        header["__metadata__"] = dict(metadata)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=True).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, _, _, data in entries:
            f.write(data)


def _check_metadata(metadata):
    for key, value in (metadata or {}).items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(f"metadata must map str to str, got {key!r}: {value!r}")


def write_safetensors(path, tensors, metadata=None):
    """tensors: dict name -> np.ndarray (float32, float64, uint8 or bool), written in dict order.
    metadata: dict str -> str, stored as "__metadata__" (omitted when empty)."""
    entries = []
    for name, array in tensors.items():
        if not isinstance(name, str) or name == "__metadata__":
            raise ValueError(f"bad tensor name {name!r}")
        array = np.asarray(array)
        if array.dtype not in _DTYPES:
            raise TypeError(f"{name}: unsupported dtype {array.dtype}")
        code, le = _DTYPES[array.dtype]
        data = np.ascontiguousarray(array, dtype=np.dtype(le)).tobytes(order="C")
        entries.append((name, code, array.shape, data))
    _check_metadata(metadata)
    _write_file(path, entries, metadata, metadata_first=False)


# Checkpoint dtypes: (torch dtype to store as, integer view for numpy when numpy lacks the type,
# little-endian numpy dtype of the stored bytes).
_CHECKPOINT_DTYPES = {
    "F32": ("float32", None, "<f4"),
    "F64": ("float64", None, "<f8"),
    "F16": ("float16", None, "<f2"),
    "BF16": ("bfloat16", "int16", "<i2"),
    "U8": ("uint8", None, "u1"),
    "BOOL": ("bool", None, "u1"),
}


def checkpoint_tensor_bytes(x, dtype):
    """The little-endian bytes of torch tensor x stored as dtype (F32, F64, F16, BF16, U8 or BOOL):
    floats rounded to nearest even by torch, BF16 written as its bits, BOOL as bytes 0/1."""
    import torch  # only the checkpoint functions need torch

    if dtype not in _CHECKPOINT_DTYPES:
        raise ValueError(f"unsupported checkpoint dtype {dtype!r}")
    store, view, le = _CHECKPOINT_DTYPES[dtype]
    x = x.to(getattr(torch, store)).contiguous()
    if view is not None:  # numpy has no bfloat16: write its bits
        x = x.view(getattr(torch, view))
    if dtype == "BOOL":
        x = x.to(torch.uint8)
    return x.numpy().astype(np.dtype(le), copy=False).tobytes()


def write_checkpoint(path, tensors, dtype, dtypes=None, metadata=None, sort_names=True):
    """A model.safetensors as the safetensors library writes it: header keys sorted by name
    (sort_names=False: in the dict's order), "__metadata__" first ({"format": "pt"} unless
    metadata is given), data in that order. tensors: dict name -> torch tensor; every tensor is
    stored as dtype, except the names in dtypes (dict name -> dtype), e.g. U8/BOOL buffers beside
    F16 weights."""
    dtypes = dtypes or {}
    unknown = sorted(set(dtypes) - set(tensors))
    if unknown:
        raise ValueError(f"dtypes for tensors not written: {unknown}")
    entries = []
    for name in sorted(tensors) if sort_names else tensors:
        code = dtypes.get(name, dtype)
        entries.append((name, code, tensors[name].shape,
                        checkpoint_tensor_bytes(tensors[name], code)))
    metadata = {"format": "pt"} if metadata is None else metadata
    _check_metadata(metadata)
    _write_file(path, entries, metadata, metadata_first=True)


def read_header(path):
    """(header, metadata): the JSON header without "__metadata__", and "__metadata__"."""
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length).decode("utf-8"))
    metadata = header.pop("__metadata__", {})
    return header, metadata


def _read_arrays(path, dtypes):
    """(arrays, metadata): each tensor as a numpy array of its stored little-endian dtype
    (dtypes: code -> numpy dtype; any other code is refused), in file order, and "__metadata__"."""
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length].decode("utf-8"))
    metadata = header.pop("__metadata__", {})
    body = data[8 + length:]
    arrays = {}
    for name, info in header.items():
        if info["dtype"] not in dtypes:
            raise TypeError(f"{name}: unsupported dtype {info['dtype']}")
        begin, end = info["data_offsets"]
        arrays[name] = (np.frombuffer(body[begin:end], dtype=np.dtype(dtypes[info["dtype"]]))
                        .reshape(info["shape"]), info["dtype"])
    return arrays, metadata


def read_checkpoint(path):
    """The checkpoint's tensors as stored, as torch tensors: F32/F16/BF16 upcast exactly to
    float64 (BF16 bits shifted up), U8 as uint8, BOOL as bool."""
    import torch

    arrays, _ = _read_arrays(path, {code: le for code, (_, _, le) in _CHECKPOINT_DTYPES.items()})
    out = {}
    for name, (a, code) in arrays.items():
        if code == "BF16":
            a = (a.astype(np.uint16).astype(np.uint32) << 16).view(np.float32)
        if code == "U8":
            out[name] = torch.from_numpy(a.copy())
        elif code == "BOOL":
            out[name] = torch.from_numpy(a != 0)
        else:
            out[name] = torch.from_numpy(a.astype(np.float64))
    return out


_READ_DTYPES = {"F32": "<f4", "F64": "<f8", "U8": "u1", "I32": "<i4", "I64": "<i8"}


def read_safetensors(path):
    """(tensors, metadata): dict name -> np.ndarray in file order, and the "__metadata__" dict."""
    arrays, metadata = _read_arrays(path, _READ_DTYPES)
    return {name: a for name, (a, _) in arrays.items()}, metadata
