#!/usr/bin/env python3
"""pytorch_model.bin test data for the zip reader, the weights-only unpickler and the checkpoint
sources (cpp/attention/io/zip, pickle, torch_checkpoint):

tests/data/torch/<case>.bin        written by torch.save (Debian's torch 1.13, the zip format of
                                   torch >= 1.6), and beside each <case>.safetensors: the same
                                   tensors, each made contiguous (row-major), so a reader must
                                   give them bit for bit. safetensors has no integer types beyond
                                   U8: an I64 (I32) tensor of shape S is stored as U8 of shape
                                   S + [8] (S + [4]), its little-endian bytes; BOOL stays BOOL.
  f32, f16, bf16, f64  a small model's state_dict() (OrderedDict with _metadata, applied by BUILD)
                       holding an embedding tied to lm_head (one storage, two tensors), a fused
                       qkv weight with a view of rows 4..8 (a storage offset), its transpose and
                       every other column (non-contiguous strides), a LayerNorm, an int64
                       position_ids buffer and a bool causal-mask buffer, a 0-dim scalar, an empty
                       [0, 4] tensor and a [1, 4] row expanded to [3, 4] (stride 0). The archive
                       folder differs: 'f32' (saved to f32.bin), 'pytorch_model' (saved as
                       pytorch_model.bin, as Hugging Face does), 'archive' (saved to a buffer).
  parameters           a plain dict of nn.Parameter (torch._utils._rebuild_parameter)
  protocol4            f32's state dict with pickle_protocol=4 (FRAME, MEMOIZE,
                       SHORT_BINUNICODE, STACK_GLOBAL)
  many-tensors         1100 one-value views of one storage (SETITEMS in batches of 1000,
                       LONG_BINPUT past memo index 255)
  f32-zip64            f32.bin's entries re-zipped with every ZIP64 field in use (sizes and
                       offsets in ZIP64 extra fields, the end record deferring to the ZIP64 one),
                       as torch writes files over 4 GB; torch.load reads it back (checked here)
  handwritten          the base of the hostile files below, written opcode by opcode by this
                       script's zip and pickle writers; torch.load(weights_only=True) reads it
                       (checked here); handwritten-byteorder adds the byteorder record torch >= 2.1
                       writes after data.pkl

tests/data/torch/models/<case>.bin  the model test checkpoints of tests/data/{gpt2,llama,families}
  re-saved by torch.save as Hugging Face's pytorch_model.bin (each tensor's values unchanged), with
  the layouts torch.save gives: cases.json lists each with its .safetensors twin and config.json.
  gpt2-tiny-f32        lm_head.weight sharing transformer.wte.weight's storage (tied, one entry),
                       h.0's c_attn.weight with transposed strides (non-contiguous, a Conv1D
                       weight), a BOOL attn.bias mask buffer per layer (as older GPT-2 files have)
  gpt2-tiny-f16        as written (archive folder 'archive': saved to a buffer)
  llama-bf16           each layer's q/k/v_proj.weight views of one fused [q; k; v] storage
                       (storage offsets), layer 0's o_proj.weight with transposed strides
  llama-f32-sharded    llama-f32 in two shards (layer 1 and lm_head in the second) with its
                       pytorch_model.bin.index.json
  pythia-f16           GPT-NeoX with its U8 attention.bias and F16 masked_bias/inv_freq buffers

tests/data/malformed-torch/<name>.bin  hostile or broken checkpoints, each one defect away from
  `handwritten` (or a torch.save file for the legacy format), written opcode by opcode and never
  unpickled; expected.json maps each to a fragment of the message reading it must give.

tests/fuzz/seeds-torch/<case>.pkl  the data.pkl of every valid case (the fuzz target reads an input
  that does not start with "PK" as a bare pickle).

Deterministic: rerunning gives the same bytes. Run with /usr/bin/python3 (Debian's python3-torch).
"""

import io
import json
import os
import re
import shutil
import struct
import sys
import tempfile
import zipfile
import zlib
from collections import OrderedDict

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VALID_DIR = os.path.join(ROOT, "tests", "data", "torch")
HOSTILE_DIR = os.path.join(ROOT, "tests", "data", "malformed-torch")
SEED_DIR = os.path.join(ROOT, "tests", "fuzz", "seeds-torch")


# ---- .safetensors twins ---------------------------------------------------------------------

def tensor_record(tensor):
    """(dtype code, shape, little-endian bytes) of a tensor made contiguous (row-major)."""
    t = tensor.detach().contiguous()
    shape = list(t.shape)
    if t.dtype == torch.float32:
        return "F32", shape, t.numpy().tobytes()
    if t.dtype == torch.float64:
        return "F64", shape, t.numpy().tobytes()
    if t.dtype in (torch.float16, torch.bfloat16):  # numpy has no bfloat16: its bits
        return ("F16" if t.dtype == torch.float16 else "BF16"), shape, t.view(torch.int16).numpy().tobytes()
    if t.dtype == torch.bool:
        return "BOOL", shape, t.to(torch.uint8).numpy().tobytes()
    if t.dtype == torch.uint8:
        return "U8", shape, t.numpy().tobytes()
    if t.dtype in (torch.int64, torch.int32):
        width = 8 if t.dtype == torch.int64 else 4
        return "U8", shape + [width], t.numpy().astype("<i%d" % width).tobytes()
    raise TypeError(f"no safetensors twin for {t.dtype}")


def write_safetensors_twin(path, state):
    header, chunks, offset = {}, [], 0
    for name, tensor in state.items():
        code, shape, data = tensor_record(tensor)
        header[name] = {"dtype": code, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


# ---- the valid cases, written by torch.save ---------------------------------------------------

class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(10, 4)
        self.qkv = torch.nn.Linear(4, 12)
        self.norm = torch.nn.LayerNorm(4)
        self.lm_head = torch.nn.Linear(4, 10, bias=False)
        self.lm_head.weight = self.embed.weight  # tied: one storage
        self.register_buffer("position_ids", torch.arange(8).unsqueeze(0))
        self.register_buffer("causal_mask", torch.tril(torch.ones(8, 8, dtype=torch.bool)))


def model_state(dtype):
    torch.manual_seed(0)
    model = Tiny()
    with torch.no_grad():  # LayerNorm starts at 1 and 0: make its values tell apart too
        model.norm.weight.copy_(torch.randn(4))
        model.norm.bias.copy_(torch.randn(4))
    model = model.to(dtype)
    state = model.state_dict()  # OrderedDict with _metadata; lm_head.weight shares embed.weight
    qkv = state["qkv.weight"]  # [12, 4]
    state["k_proj.weight"] = qkv[4:8]  # storage offset 16
    state["qkv_transposed"] = qkv.t()  # strides (1, 4)
    state["qkv_even_columns"] = qkv[:, ::2]  # strides (4, 2)
    state["scale"] = torch.tensor(0.125, dtype=dtype)  # rank 0
    state["empty"] = torch.zeros(0, 4, dtype=dtype)
    state["expanded"] = torch.randn(1, 4).to(dtype).expand(3, 4)  # strides (0, 1)
    return state


def check_round_trip(path, state):
    loaded = torch.load(path)
    assert list(loaded.keys()) == list(state.keys()), path
    for name, tensor in state.items():
        assert loaded[name].dtype == tensor.dtype and torch.equal(loaded[name], tensor), (path, name)


def save_case(name, state, how="path", **save_args):
    """torch.save(state) to tests/data/torch/<name>.bin, its archive folder chosen by `how`."""
    path = os.path.join(VALID_DIR, name + ".bin")
    if how == "path":  # the folder is the file's name: <name>
        torch.save(state, path, **save_args)
    elif how == "hub":  # the folder Hugging Face's files have
        with tempfile.TemporaryDirectory() as scratch:
            hub = os.path.join(scratch, "pytorch_model.bin")
            torch.save(state, hub, **save_args)
            shutil.copyfile(hub, path)
    else:  # a buffer: the folder is 'archive'
        buffer = io.BytesIO()
        torch.save(state, buffer, **save_args)
        with open(path, "wb") as f:
            f.write(buffer.getvalue())
    check_round_trip(path, state)
    write_safetensors_twin(os.path.join(VALID_DIR, name + ".safetensors"), state)
    return path


def write_valid_cases():
    save_case("f32", model_state(torch.float32), "path")
    save_case("f16", model_state(torch.float16), "hub")
    save_case("bf16", model_state(torch.bfloat16), "buffer")
    save_case("f64", model_state(torch.float64), "path")
    torch.manual_seed(1)
    model = Tiny()
    save_case("parameters", {n: p for n, p in model.named_parameters()}, "buffer")
    save_case("protocol4", model_state(torch.float32), "path", pickle_protocol=4)
    values = torch.arange(1100, dtype=torch.float32) * 0.5
    save_case("many-tensors", OrderedDict((f"v.{i}", values[i:i + 1]) for i in range(1100)), "path")
    # f32.bin re-zipped with every ZIP64 field used.
    with zipfile.ZipFile(os.path.join(VALID_DIR, "f32.bin")) as source:
        entries = [(info.filename, source.read(info)) for info in source.infolist()]
    zip64 = os.path.join(VALID_DIR, "f32-zip64.bin")
    with open(zip64, "wb") as f:
        f.write(torch_zip(entries, zip64=True))
    check_round_trip(zip64, model_state(torch.float32))
    shutil.copyfile(os.path.join(VALID_DIR, "f32.safetensors"),
                    os.path.join(VALID_DIR, "f32-zip64.safetensors"))


# ---- a zip writer laid out as torch's (caffe2/serialize/inline_container.cc, miniz) ------------

ALIGN = 64  # torch pads each local header's extra field ("FB") so the data is 64-byte aligned


def torch_zip(entries, zip64=False, descriptor=True, local=None, central=None, end=None):
    """entries: [(full name, data bytes[, method])]. Data descriptors (bit 3, local sizes 0) as
    torch writes them; zip64=True puts every size and offset in ZIP64 extra fields. `local` and
    `central` map an entry's name to a dict of fields to override (lies); `end` overrides the end
    record's fields."""
    local, central, end = local or {}, central or {}, end or {}
    out = bytearray()
    records = []
    for entry in entries:
        name, data = entry[0], entry[1]
        method = entry[2] if len(entry) > 2 else 0
        stored = data
        if method == 8:
            compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
            stored = compressor.compress(data) + compressor.flush()
        crc = zlib.crc32(data)
        fields = {"flags": 0x0808 if descriptor else 0x0800, "method": method, "crc": 0 if descriptor else crc,
                  "compressed": 0 if descriptor else len(stored), "size": 0 if descriptor else len(data),
                  "name": name.encode()}
        fields.update(local.get(name, {}))
        zip64_local = b""
        if zip64:
            zip64_local = struct.pack("<HHQQ", 1, 16, len(data), len(stored))
            fields["compressed"] = fields["size"] = 0xFFFFFFFF
        offset = len(out)
        start = offset + 30 + len(fields["name"]) + len(zip64_local) + 4
        pad = -start % ALIGN
        extra = zip64_local + b"FB" + struct.pack("<H", pad) + b"Z" * pad
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 0, fields["flags"], fields["method"], 0, 0,
                           fields["crc"], fields["compressed"], fields["size"], len(fields["name"]),
                           len(extra))
        out += fields["name"] + extra + stored
        if descriptor:
            if zip64:
                out += struct.pack("<IIQQ", 0x08074B50, crc, len(stored), len(data))
            else:
                out += struct.pack("<IIII", 0x08074B50, crc, len(stored), len(data))
        record = {"flags": 0x0808 if descriptor else 0x0800, "method": method, "crc": crc,
                  "compressed": len(stored), "size": len(data), "offset": offset,
                  "name": name.encode()}
        record.update(central.get(name, {}))
        records.append(record)
    directory_offset = len(out)
    for r in records:
        extra = b""
        compressed, size, offset = r["compressed"], r["size"], r["offset"]
        if zip64:
            extra = struct.pack("<HHQQQ", 1, 24, size, compressed, offset)
            compressed = size = offset = 0xFFFFFFFF
        out += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0, 0, r["flags"], r["method"], 0, 0,
                           r["crc"], compressed, size, len(r["name"]), len(extra), 0, 0, 0, 0, offset)
        out += r["name"] + extra
    directory_size = len(out) - directory_offset
    values = {"entries": len(records), "directory_size": directory_size,
              "directory_offset": directory_offset}
    values.update(end)
    zip64_end = len(out)
    out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 0x2D, 0x2D, 0, 0, values["entries"],
                       values["entries"], values["directory_size"], values["directory_offset"])
    out += struct.pack("<IIQI", 0x07064B50, 0, zip64_end, 1)
    narrow = dict(values)
    if zip64:
        narrow = {"entries": 0xFFFF, "directory_size": 0xFFFFFFFF, "directory_offset": 0xFFFFFFFF}
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, narrow["entries"], narrow["entries"],
                       narrow["directory_size"], narrow["directory_offset"], 0)
    return bytes(out)


# ---- a pickle writer: opcode by opcode ----------------------------------------------------------

class Pickle:
    """Appends pickle opcodes (CPython's Lib/pickle.py); nothing is ever unpickled here."""

    def __init__(self):
        self.out = bytearray(b"\x80\x02")  # PROTO 2, as torch.save writes

    def op(self, code, operand=b""):
        self.out += bytes([code]) if isinstance(code, int) else code
        self.out += operand
        return self

    def mark(self): return self.op(b"(")
    def stop(self): return self.op(b".")
    def none(self): return self.op(b"N")
    def false(self): return self.op(b"\x89")
    def tuple(self): return self.op(b"t")
    def tuple1(self): return self.op(b"\x85")
    def empty_tuple(self): return self.op(b")")
    def empty_dict(self): return self.op(b"}")
    def empty_list(self): return self.op(b"]")
    def reduce(self): return self.op(b"R")
    def build(self): return self.op(b"b")
    def setitems(self): return self.op(b"u")
    def setitem(self): return self.op(b"s")
    def persid(self): return self.op(b"Q")

    def global_(self, module, name):
        return self.op(b"c", module.encode() + b"\n" + name.encode() + b"\n")

    def string(self, text):
        data = text.encode()
        return self.op(b"X", struct.pack("<I", len(data)) + data)

    def int(self, value):
        if 0 <= value < 256:
            return self.op(b"K", bytes([value]))
        if -2**31 <= value < 2**31:
            return self.op(b"J", struct.pack("<i", value))
        return self.op(b"\x8a", bytes([8]) + struct.pack("<q", value))  # LONG1

    def ints(self, values):
        self.mark()
        for v in values:
            self.int(v)
        return self.tuple()

    def ordered_dict(self):
        return self.global_("collections", "OrderedDict").empty_tuple().reduce()

    def storage(self, key="0", storage_type="FloatStorage", elements=6, tag="storage"):
        self.mark().string(tag).global_("torch", storage_type).string(key).string("cpu")
        return self.int(elements).tuple().persid()

    def tensor(self, offset=0, size=(2, 3), stride=(3, 1), **storage):
        """_rebuild_tensor_v2(storage, offset, size, stride, False, OrderedDict())."""
        self.global_("torch._utils", "_rebuild_tensor_v2").mark()
        self.storage(**storage).int(offset).ints(size).ints(stride).false().ordered_dict()
        return self.tuple().reduce()

    def bytes(self):
        return bytes(self.out)


WEIGHT = struct.pack("<6f", 0.5, -1.0, 2.0, 0.25, -3.5, 4.0)


def state_pickle(**tensor):
    """OrderedDict([('weight', tensor)]) with tensor as `tensor(**tensor)`."""
    p = Pickle().ordered_dict().mark().string("weight")
    p.tensor(**tensor)
    return p.setitems().stop().bytes()


def checkpoint(pickle_bytes, storages=(("0", WEIGHT),), byteorder=None, **zip_args):
    """The archive torch.save writes; with `byteorder`, the record torch >= 2.1 adds after data.pkl."""
    entries = [("archive/data.pkl", pickle_bytes)]
    if byteorder is not None:
        entries.append(("archive/byteorder", byteorder))
    entries += [(f"archive/data/{key}", data) for key, data in storages]
    entries.append(("archive/version", b"3\n"))
    return torch_zip(entries, **zip_args)


def write_handwritten():
    path = os.path.join(VALID_DIR, "handwritten.bin")
    with open(path, "wb") as f:
        f.write(checkpoint(state_pickle()))
    expected = OrderedDict(weight=torch.tensor([[0.5, -1.0, 2.0], [0.25, -3.5, 4.0]]))
    loaded = torch.load(path, weights_only=True)  # the writers above are torch's format
    assert list(loaded) == ["weight"] and torch.equal(loaded["weight"], expected["weight"])
    write_safetensors_twin(os.path.join(VALID_DIR, "handwritten.safetensors"), expected)
    # As torch >= 2.1 writes it: a byteorder record after data.pkl.
    path = os.path.join(VALID_DIR, "handwritten-byteorder.bin")
    with open(path, "wb") as f:
        f.write(checkpoint(state_pickle(), byteorder=b"little"))
    assert torch.equal(torch.load(path, weights_only=True)["weight"], expected["weight"])
    write_safetensors_twin(os.path.join(VALID_DIR, "handwritten-byteorder.safetensors"), expected)


# ---- the hostile set ------------------------------------------------------------------------------

def hostile_cases():
    """(file name, bytes, expected message fragment)."""
    cases = []

    def add(name, data, message):
        cases.append((name + ".bin", data, message))

    # Globals a weights-only load refuses, by GLOBAL and by STACK_GLOBAL.
    p = Pickle().ordered_dict().mark().string("weight")
    p.global_("os", "system").mark().string("echo pwned").tuple().reduce().setitems().stop()
    add("global-os-system", checkpoint(p.bytes()),
        "the pickle names os.system, which a weights-only load refuses")
    p = Pickle().ordered_dict().mark().string("weight")
    p.global_("builtins", "eval").mark().string("__import__('os')").tuple().reduce()
    add("global-builtins-eval", checkpoint(p.setitems().stop().bytes()),
        "the pickle names builtins.eval, which a weights-only load refuses")
    p = Pickle().op(b"\x8c", bytes([5]) + b"posix").op(b"\x8c", bytes([6]) + b"system").op(b"\x93")
    add("stack-global-posix-system", checkpoint(p.bytes()),
        "the pickle names posix.system, which a weights-only load refuses")
    add("global-complex-storage", checkpoint(state_pickle(storage_type="ComplexFloatStorage")),
        "the pickle names torch.ComplexFloatStorage, which a weights-only load refuses")
    # REDUCE of what is not an allowed function; opcodes that construct objects.
    p = Pickle().global_("torch", "FloatStorage").mark().int(6).tuple().reduce().stop()
    add("reduce-storage-type", checkpoint(p.bytes()),
        "REDUCE calls torch.FloatStorage, which a weights-only load does not call")
    p = Pickle().string("os.system").mark().string("ls").tuple().reduce().stop()
    add("reduce-string", checkpoint(p.bytes()),
        "REDUCE calls a str, not one of the functions a weights-only load allows")
    p = Pickle().global_("collections", "OrderedDict").empty_tuple().op(b"\x81").stop()
    add("newobj", checkpoint(p.bytes()),
        "opcode NEWOBJ (0x81), which torch.save does not emit and a weights-only load does not run")
    p = Pickle().mark().string("ls").op(b"i", b"os\nsystem\n").stop()
    add("inst-os-system", checkpoint(p.bytes()), "opcode INST (0x69)")
    p = Pickle().tensor().empty_dict().build().stop()
    add("build-tensor", checkpoint(p.bytes()), "BUILD of a tensor, which a weights-only load refuses")
    add("persid-not-storage", checkpoint(state_pickle(tag="module")),
        "a persistent id of kind 'module': a weights-only load reads only storages")
    # Shapes, strides and offsets.
    add("storage-offset-past-storage", checkpoint(state_pickle(offset=5)),
        "needs elements up to 11 of its storage '0', which holds 6 F32 values: it runs past its storage")
    add("shape-2-pow-60", checkpoint(state_pickle(size=(2**60,), stride=(1,))),
        "needs elements up to 1152921504606846976 of its storage '0', which holds 6 F32 values")
    add("shape-overflow", checkpoint(state_pickle(size=(2**32, 2**32, 2**32), stride=(1, 1, 1))),
        "has an element count whose byte size overflows")
    add("shape-negative", checkpoint(state_pickle(size=(-2, 3))), "has a negative size or stride")
    add("shape-stride-mismatch", checkpoint(state_pickle(size=(2, 3), stride=(3,))),
        "have different lengths")
    add("storage-elements-negative", checkpoint(state_pickle(elements=-6)),
        "claims -6 F32 values, which is negative or overflows")
    # The memo, nesting, strings, truncation.
    p = Pickle().empty_dict().op(b"r", struct.pack("<I", 10**8)).stop()
    add("memo-index-1e8", checkpoint(p.bytes()),
        "memo index 100000000 is past the limit of 1048576 memo entries")
    p = Pickle().op(b"h", bytes([7])).stop()
    add("memo-never-set", checkpoint(p.bytes()), "memo index 7 was never set")
    p = Pickle().op(b"(" * 10**5).stop()
    add("nesting-marks-1e5", checkpoint(p.bytes()), "more than 64 MARKs open at once")
    p = Pickle().empty_tuple().op(b"\x85" * 10**5).stop()
    add("nesting-tuples-1e5", checkpoint(p.bytes()), "containers nested more than 64 deep")
    p = Pickle().op(b"X", struct.pack("<I", 1000) + b"weight").stop()
    add("string-past-end", checkpoint(p.bytes()),
        "the pickle ends after 7 of an operand's 1000 bytes (it is truncated)")
    p = Pickle().op(b"X", struct.pack("<I", 0xFFFFFFF0))
    add("string-4-gb", checkpoint(p.bytes()), "a string of 4294967280 bytes, more than the limit")
    add("pickle-truncated", checkpoint(state_pickle()[:60]),
        "the pickle ends inside a GLOBAL line (it is truncated)")
    add("pickle-no-stop", checkpoint(state_pickle()[:-1]), "without STOP (it is truncated)")
    add("pickle-after-stop", checkpoint(state_pickle() + b"N."), "2 bytes follow STOP")
    add("pickle-unknown-opcode", checkpoint(b"\x80\x02\xff."), "an unknown opcode 0xff")
    # What the pickle holds.
    p = Pickle().empty_list().stop()
    add("not-a-dict", checkpoint(p.bytes()), "the pickle holds a list, not a state dict")
    p = Pickle().ordered_dict().mark().string("weight").int(7).setitems().stop()
    add("entry-not-tensor", checkpoint(p.bytes()), "state dict entry 'weight' is an int, not a tensor")
    p = Pickle().ordered_dict().mark().string("weight").tensor().string("bias")
    p.tensor(size=(3,), stride=(1,), storage_type="HalfStorage").setitems().stop()
    add("storage-two-dtypes", checkpoint(p.bytes()),
        "storage '0' is named as 6 values of F32 and as 6 values of F16")
    # The pickle against the archive.
    add("storage-entry-missing", checkpoint(state_pickle(key="1")),
        "storage '1' has no entry 'archive/data/1' in the zip")
    add("storage-entry-short", checkpoint(state_pickle(), storages=(("0", WEIGHT[:20]),)),
        "entry 'archive/data/0' holds 20 bytes but storage '0' is 6 F32 values (24 bytes)")
    add("no-data-pkl", torch_zip([("archive/data/0", WEIGHT), ("archive/version", b"3\n")]),
        "the zip has no 'archive/data.pkl'")
    add("entry-not-in-folder", torch_zip([("data.pkl", state_pickle()), ("data/0", WEIGHT)]),
        "is not in a folder")
    add("byteorder-big", checkpoint(state_pickle(), byteorder=b"big"),
        "the checkpoint was saved on a big-endian machine (its byteorder entry says 'big')")
    # The zip.
    add("zip-entry-deflated", torch_zip([("archive/data.pkl", state_pickle()),
                                         ("archive/data/0", WEIGHT, 8), ("archive/version", b"3\n")]),
        "entry 'archive/data/0' is compressed (method 8, deflate)")
    base = checkpoint(state_pickle())
    add("zip-directory-offset-past-file",
        checkpoint(state_pickle(), central={"archive/data/0": {"offset": len(base) + 1000}}),
        "entry 'archive/data/0' says its local header is at byte %d, past the end of the file" %
        (len(base) + 1000))
    add("zip-local-size-disagrees",
        checkpoint(state_pickle(), local={"archive/data/0": {"flags": 0x0800, "size": 20,
                                                             "compressed": 20}}),
        "entry 'archive/data/0' is 24 bytes in the central directory but its local header says 20")
    add("zip-local-name-disagrees",
        checkpoint(state_pickle(), local={"archive/data/0": {"name": b"archive/data/9"}}),
        "entry 'archive/data/0' is named 'archive/data/9' in its local header")
    add("zip-entries-overlap",
        checkpoint(state_pickle(), central={"archive/data/0": {"offset": 40}}),
        "entry 'archive/data.pkl' (local header at byte 0, at least 46 + 172 bytes) and entry "
        "'archive/data/0' (local header at byte 40) overlap")
    add("zip-directory-size-lies", checkpoint(state_pickle(), end={"directory_size": 5000}),
        "runs past the end records")
    add("zip-truncated", base[:len(base) * 3 // 5],
        "no end of central directory record in the file's last")
    add("not-a-zip", b"\x1f\x8b\x08\x00" + bytes(60), "not a PyTorch zip checkpoint (it begins with 1f 8b")
    add("empty", b"", "the file is 0 bytes")
    # The legacy format, written by torch itself.
    add("legacy-format", legacy_file(),
        "the legacy PyTorch format (torch.save before torch 1.6, or with "
        "_use_new_zipfile_serialization=False)")
    return cases


def legacy_file():
    """torch.save's legacy format. Its storage keys are memory addresses (str(storage._cdata)):
    each is replaced by a number of the same width, so the bytes are the same on every run."""
    state = OrderedDict(weight=torch.tensor([[0.5, -1.0, 2.0], [0.25, -3.5, 4.0]]))
    buffer = io.BytesIO()
    torch.save(state, buffer, _use_new_zipfile_serialization=False)
    data = buffer.getvalue()
    keys = []
    for match in re.finditer(rb"X(....)(\d{6,24})", data):
        if struct.unpack("<I", match.group(1))[0] == len(match.group(2)) and match.group(2) not in keys:
            keys.append(match.group(2))
    assert keys, "no storage key found in the legacy file"
    for index, key in enumerate(keys):
        data = data.replace(key, str(index).zfill(len(key)).encode())
    loaded = torch.load(io.BytesIO(data))
    assert torch.equal(loaded["weight"], state["weight"])
    return data


def write_hostile_cases():
    if os.path.isdir(HOSTILE_DIR):
        for name in os.listdir(HOSTILE_DIR):
            if name.endswith(".bin"):
                os.remove(os.path.join(HOSTILE_DIR, name))
    os.makedirs(HOSTILE_DIR, exist_ok=True)
    expected = OrderedDict()
    for name, data, message in hostile_cases():
        with open(os.path.join(HOSTILE_DIR, name), "wb") as f:
            f.write(data)
        expected[name] = message
    with open(os.path.join(HOSTILE_DIR, "expected.json"), "w") as f:
        json.dump(expected, f, indent=2)
        f.write("\n")


def write_seeds():
    if os.path.isdir(SEED_DIR):
        shutil.rmtree(SEED_DIR)
    os.makedirs(SEED_DIR)
    for name in sorted(os.listdir(VALID_DIR)):
        if name.endswith(".bin"):
            with zipfile.ZipFile(os.path.join(VALID_DIR, name)) as archive:
                pickle_name = next(n for n in archive.namelist() if n.endswith("/data.pkl"))
                with open(os.path.join(SEED_DIR, name[:-4] + ".pkl"), "wb") as f:
                    f.write(archive.read(pickle_name))


# ---- model checkpoints as pytorch_model.bin ----------------------------------------------------

MODEL_DIR = os.path.join(VALID_DIR, "models")
SAFETENSORS_DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
                      "F64": torch.float64, "U8": torch.uint8, "BOOL": torch.bool}


def read_safetensors_state(path):
    """A .safetensors file's tensors in header order, as torch tensors (each its own storage)."""
    with open(path, "rb") as f:
        data = f.read()
    length = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + length])
    state = OrderedDict()
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = bytearray(data[8 + length + begin:8 + length + end])
        dtype = SAFETENSORS_DTYPES[info["dtype"]]
        flat = torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)
        state[name] = flat.reshape(info["shape"]).clone()
    return state


def transposed_strides(tensor):
    """The same values laid out column-major: strides (1, rows), not contiguous."""
    out = tensor.t().contiguous().t()
    assert not out.is_contiguous() and torch.equal(out, tensor)
    return out


def save_model(name, state, how="hub"):
    path = os.path.join(MODEL_DIR, name + ".bin")
    if how == "hub":  # the folder Hugging Face's files have
        with tempfile.TemporaryDirectory() as scratch:
            hub = os.path.join(scratch, "pytorch_model.bin")
            torch.save(state, hub)
            shutil.copyfile(hub, path)
    else:
        buffer = io.BytesIO()
        torch.save(state, buffer)
        with open(path, "wb") as f:
            f.write(buffer.getvalue())
    check_round_trip(path, state)
    return os.path.basename(path)


def write_model_cases():
    os.makedirs(MODEL_DIR, exist_ok=True)
    data = os.path.join(ROOT, "tests", "data")
    cases = []

    def case(name, bins, twin):
        cases.append({"name": name, "bin": bins, "safetensors": twin + ".safetensors",
                      "config": twin + ".config.json"})

    state = read_safetensors_state(os.path.join(data, "gpt2", "tiny-f32.safetensors"))
    assert torch.equal(state["lm_head.weight"], state["transformer.wte.weight"])
    state["lm_head.weight"] = state["transformer.wte.weight"]  # one storage
    state["transformer.h.0.attn.c_attn.weight"] = transposed_strides(state["transformer.h.0.attn.c_attn.weight"])
    for layer in range(2):
        state[f"transformer.h.{layer}.attn.bias"] = torch.tril(torch.ones(1, 1, 32, 32, dtype=torch.bool))
    case("gpt2-tiny-f32", [save_model("gpt2-tiny-f32", state)], "gpt2/tiny-f32")

    state = read_safetensors_state(os.path.join(data, "gpt2", "tiny-f16.safetensors"))
    case("gpt2-tiny-f16", [save_model("gpt2-tiny-f16", state, "buffer")], "gpt2/tiny-f16")

    state = read_safetensors_state(os.path.join(data, "llama", "llama-bf16.safetensors"))
    for layer in range(2):
        names = [f"model.layers.{layer}.self_attn.{p}_proj.weight" for p in "qkv"]
        fused = torch.cat([state[n] for n in names])
        row = 0
        for n in names:
            rows = state[n].shape[0]
            view = fused[row:row + rows]
            assert torch.equal(view, state[n]) and view.is_contiguous()
            state[n] = view
            row += rows
    state["model.layers.0.self_attn.o_proj.weight"] = transposed_strides(state["model.layers.0.self_attn.o_proj.weight"])
    case("llama-bf16", [save_model("llama-bf16", state)], "llama/llama-bf16")

    state = read_safetensors_state(os.path.join(data, "llama", "llama-f32.safetensors"))
    later = lambda n: n.startswith("model.layers.1.") or n == "lm_head.weight"
    shards = [OrderedDict((n, t) for n, t in state.items() if not later(n)),
              OrderedDict((n, t) for n, t in state.items() if later(n))]
    files = []
    for i, shard in enumerate(shards):
        files.append(save_model(f"llama-f32-sharded-0000{i + 1}-of-00002", shard))
    weight_map = OrderedDict()
    for file, shard in zip(files, shards):
        for n in shard:
            weight_map[n] = file
    total = sum(t.numel() * t.element_size() for t in state.values())
    with open(os.path.join(MODEL_DIR, "llama-f32-sharded.bin.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
        f.write("\n")
    case("llama-f32-sharded", files, "llama/llama-f32")

    state = read_safetensors_state(os.path.join(data, "families", "pythia-f16.safetensors"))
    case("pythia-f16", [save_model("pythia-f16", state)], "families/pythia-f16")

    with open(os.path.join(MODEL_DIR, "cases.json"), "w") as f:
        json.dump(cases, f, indent=2)
        f.write("\n")


def main():
    print("torch", torch.__version__, file=sys.stderr)
    os.makedirs(VALID_DIR, exist_ok=True)
    write_valid_cases()
    write_model_cases()
    write_handwritten()
    write_hostile_cases()
    write_seeds()
    print("wrote", VALID_DIR, HOSTILE_DIR, SEED_DIR, file=sys.stderr)


if __name__ == "__main__":
    main()
