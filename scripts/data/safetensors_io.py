"""Writes .safetensors files without the safetensors package (used by the test-data scripts).

Layout: 8-byte little-endian u64 header length N, N bytes of JSON
    {"name": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...,
     "__metadata__": {"key": "value", ...}}
padded with spaces so N is a multiple of 8, then the little-endian tensor bytes back to back
in header order (offsets are relative to the start of that data buffer).
The output depends only on the arguments, so regenerating gives the same bytes.
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


def write_safetensors(path, tensors, metadata=None):
    """tensors: dict name -> np.ndarray (float32, float64, uint8 or bool), written in dict order.
    metadata: dict str -> str, stored as "__metadata__" (omitted when empty)."""
    header = {}
    chunks = []
    offset = 0
    for name, array in tensors.items():
        if not isinstance(name, str) or name == "__metadata__":
            raise ValueError(f"bad tensor name {name!r}")
        array = np.asarray(array)
        if array.dtype not in _DTYPES:
            raise TypeError(f"{name}: unsupported dtype {array.dtype}")
        code, le = _DTYPES[array.dtype]
        data = np.ascontiguousarray(array, dtype=np.dtype(le)).tobytes(order="C")
        header[name] = {
            "dtype": code,
            "shape": [int(s) for s in array.shape],
            "data_offsets": [offset, offset + len(data)],
        }
        chunks.append(data)
        offset += len(data)
    if metadata:
        for key, value in metadata.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise TypeError(f"metadata must map str to str, got {key!r}: {value!r}")
        header["__metadata__"] = dict(metadata)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=True).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for chunk in chunks:
            f.write(chunk)


_READ_DTYPES = {"F32": "<f4", "F64": "<f8", "U8": "u1", "I32": "<i4", "I64": "<i8"}


def read_safetensors(path):
    """(tensors, metadata): dict name -> np.ndarray in file order, and the "__metadata__" dict."""
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length].decode("utf-8"))
    metadata = header.pop("__metadata__", {})
    body = data[8 + length:]
    tensors = {}
    for name, info in header.items():
        if info["dtype"] not in _READ_DTYPES:
            raise TypeError(f"{name}: unsupported dtype {info['dtype']}")
        begin, end = info["data_offsets"]
        array = np.frombuffer(body[begin:end], dtype=np.dtype(_READ_DTYPES[info["dtype"]]))
        tensors[name] = array.reshape(info["shape"])
    return tensors, metadata
