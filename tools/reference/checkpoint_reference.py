"""Checkpoints in the safetensors format, exchanged between PyTorch and minigrad.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/checkpoint_reference.py
        trains the lesson's FeedForward for a few SGD steps and writes, for tests/io/test_safetensors.cpp,
        tests/fixtures/feedforward_pytorch.safetensors  its state_dict
        tests/fixtures/feedforward_pytorch.json         its outputs for the fixed input, and how it was made
        tests/fixtures/safetensors_corpus/*.safetensors small valid and damaged files (a fuzzer's seeds)
    /usr/bin/python3 tools/reference/checkpoint_reference.py --check model.safetensors
        loads a checkpoint saved by minigrad (`minigrad::save(ff, "model.safetensors")`) into the
        lesson's FeedForward with load_state_dict and prints its outputs for the same fixed input.

The `safetensors` package is not in Debian, so the format (https://github.com/huggingface/safetensors)
is written and read below in a few lines with struct, json and torch.frombuffer, following the
reference implementation: an 8-byte little-endian header length N, N bytes of compact JSON
("__metadata__" first, then the tensors sorted by dtype, widest first, then by name), padded with
spaces to a multiple of 8, then the data.
"""

import json
import os
import struct
import sys

import torch
from torch import nn

sys.dont_write_bytecode = True  # importing the lesson must leave no __pycache__ here
from feedforward_lesson import FeedForward, n_embd  # noqa: E402  (the lesson's class, unchanged)
from reference_common import FIXTURES, write_json  # noqa: E402

NAME = "feedforward_pytorch"

SEED = 0
STEPS = 5
LR = 0.1
BATCH = 16

# The four dtypes minigrad has, by their safetensors names, in safetensors' Dtype order (the writer
# sorts by it, largest first: I64, F64, F32, BOOL).
DTYPES = {"BOOL": torch.bool, "F32": torch.float32, "F64": torch.float64, "I64": torch.int64}
ORDER = list(DTYPES)
NAMES = {dtype: name for name, dtype in DTYPES.items()}


def fixed_input():
    """[2, n_embd] with element i = ((7 i) mod 17 - 8) / 8: exact in float32, easy to rebuild in C++."""
    return torch.tensor([((7 * i) % 17 - 8) / 8 for i in range(2 * n_embd)]).reshape(2, n_embd)


# --- the format ---------------------------------------------------------------------------------------


def serialize(tensors, metadata=None):
    """The bytes of a safetensors file, as safetensors.torch.save(tensors, metadata) makes them."""
    items = sorted(tensors.items(), key=lambda item: (-ORDER.index(NAMES[item[1].dtype]), item[0]))
    header, blobs, offset = {}, [], 0
    if metadata is not None:
        # safetensors writes a hash map's order; minigrad sorts the keys, and so do we here
        header["__metadata__"] = dict(sorted(metadata.items()))
    for name, tensor in items:
        data = tensor.detach().contiguous().numpy().tobytes()  # row-major, little-endian on this host
        header[name] = {"dtype": NAMES[tensor.dtype], "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def deserialize(raw):
    """(tensors, metadata) of a safetensors file's bytes, checking its layout as the format requires."""
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    data = raw[8 + length:]
    metadata = header.pop("__metadata__", {})
    tensors, end = {}, 0
    for name, info in sorted(header.items(), key=lambda item: item[1]["data_offsets"]):
        begin, stop = info["data_offsets"]
        dtype, shape = DTYPES[info["dtype"]], info["shape"]
        assert begin == end, f"{name}: data starts at {begin}, expected {end}"
        count = 1
        for size in shape:
            count *= size
        assert stop - begin == count * torch.empty(0, dtype=dtype).element_size(), f"{name}: wrong size"
        chunk = bytearray(data[begin:stop])
        if chunk:
            tensors[name] = torch.frombuffer(chunk, dtype=dtype).reshape(shape)
        else:  # frombuffer refuses an empty buffer
            tensors[name] = torch.empty(shape, dtype=dtype)
        end = stop
    assert end == len(data), f"{len(data) - end} bytes of data are not covered"
    return tensors, metadata


# --- the fixtures ----------------------------------------------------------------------------------------


def train():
    """The lesson's FeedForward after manual_seed(0), then a few SGD steps fitting random targets."""
    torch.manual_seed(SEED)
    ff = FeedForward()
    x = torch.randn(BATCH, n_embd)
    target = torch.randn(BATCH, n_embd)
    optimizer = torch.optim.SGD(ff.parameters(), lr=LR)
    losses = []
    for _ in range(STEPS):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(ff(x), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return ff, losses


def corpus():
    """Small files for a fuzzer to start from, name -> bytes: `valid_*` load, every other one is refused."""
    def raw(header, data=b"", length=None):
        text = header.encode()
        return struct.pack("<Q", len(text) if length is None else length) + text + data

    valid = {"weight": torch.tensor([[1.0, -2.0], [0.5, 4.0]]), "step": torch.tensor(3),
             "mask": torch.tensor([True, False, True]), "empty": torch.zeros(0, 2, dtype=torch.float64)}
    entry = '{"w":{"dtype":"F32","shape":[2],"data_offsets":[%d,%d]}}'
    return {
        "valid_every_dtype": serialize(valid, {"epoch": "1"}),
        "valid_no_tensors": serialize({}),
        "short_file": b"\x08\x00\x00",
        "header_past_end": raw("{}", length=1000),
        "header_not_json": raw('{"w":{"dtype":"F32",'),
        "unknown_dtype": raw('{"w":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}}', b"\0" * 4),
        "negative_size": raw('{"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}', b"\0" * 8),
        "count_overflow": raw('{"w":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,8]}}',
                              b"\0" * 8),
        "size_mismatch": raw(entry % (0, 4), b"\0" * 4),
        "offsets_past_end": raw(entry % (0, 8), b"\0" * 4),
        "overlap": raw('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},'
                       '"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}', b"\0" * 12),
        "duplicate_name": raw('{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
                              '"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', b"\0" * 8),
    }


def write_fixtures():
    ff, losses = train()
    state = ff.state_dict()
    metadata = {"format": "pt", "sgd_steps": str(STEPS),
                "trained_by": "tools/reference/checkpoint_reference.py"}
    raw = serialize(state, metadata)
    path = os.path.join(FIXTURES, NAME + ".safetensors")
    with open(path, "wb") as f:
        f.write(raw)
    print("wrote", os.path.normpath(path), len(raw), "bytes")

    loaded, loaded_metadata = deserialize(raw)  # our reader gives back exactly what was written
    assert loaded_metadata == metadata and all(torch.equal(loaded[k], v) for k, v in state.items())

    with torch.no_grad():
        out = ff(fixed_input())
    (header_length,) = struct.unpack("<Q", raw[:8])
    data = {
        "note": "The lesson's FeedForward after manual_seed(0) and SGD steps on randn data; see the script.",
        "seed": SEED, "sgd_steps": STEPS, "lr": LR, "batch": BATCH, "losses": losses,
        "names": list(state), "metadata": metadata,
        "header_length": header_length, "file_bytes": len(raw),
        "input_shape": [2, n_embd], "input": fixed_input().reshape(-1).tolist(),
        "output": out.reshape(-1).tolist(),
        "torch_version": torch.__version__,
    }
    print("wrote", write_json(os.path.join(FIXTURES, NAME + ".json"), data))

    folder = os.path.join(FIXTURES, "safetensors_corpus")
    os.makedirs(folder, exist_ok=True)
    for name, raw in corpus().items():
        with open(os.path.join(folder, name + ".safetensors"), "wb") as f:
            f.write(raw)
    print("wrote", len(corpus()), "files in", os.path.normpath(folder))


def check(path):
    """Loads a minigrad checkpoint into PyTorch's FeedForward and prints its outputs for the fixed input."""
    with open(path, "rb") as f:
        tensors, metadata = deserialize(f.read())
    ff = FeedForward()
    ff.load_state_dict(tensors)  # strict: every name, and every shape, must match
    with torch.no_grad():
        out = ff(fixed_input())
    print("metadata:", json.dumps(metadata, sort_keys=True))
    print("tensors:", ", ".join(f"{name} {list(t.shape)} {NAMES[t.dtype]}" for name, t in tensors.items()))
    print("output sum:", repr(out.double().sum().item()), " abs sum:", repr(out.double().abs().sum().item()))
    for row in range(out.shape[0]):
        print(f"output[{row}][:8]:", " ".join(f"{v:.8f}" for v in out[row, :8].tolist()))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        check(sys.argv[2])
    elif len(sys.argv) == 1:
        write_fixtures()
    else:
        sys.exit(__doc__)
