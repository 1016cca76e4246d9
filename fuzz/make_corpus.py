"""Writes the seed corpus of fuzz/fuzz_load_file.cpp: small safetensors files, valid and broken.

Plain python3, no torch needed. Run from the repository root:

    python3 fuzz/make_corpus.py

It rewrites fuzz/corpus/. The format: 8 bytes holding N (little-endian u64), N bytes of JSON
({"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}), then the raw
data. The valid files show the fuzzer every feature of the format; the broken ones start it next to
each check the loader makes (a header that claims more data than the file holds, a shape whose
element count overflows, offsets that overlap or leave gaps, truncated files, bad JSON).
"""

import json
import os
import shutil
import struct

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def f32(*values):
    return struct.pack(f"<{len(values)}f", *values)


def f64(*values):
    return struct.pack(f"<{len(values)}d", *values)


def i64(*values):
    return struct.pack(f"<{len(values)}q", *values)


def header_bytes(header):
    """The JSON text, padded with spaces to a multiple of 8 bytes as safetensors writes it."""
    text = json.dumps(header, separators=(",", ":")).encode() if isinstance(header, dict) else header
    return text + b" " * (-len(text) % 8)


def file_bytes(header, data=b"", length=None):
    """8-byte length, header, data; `length` overrides the true header length."""
    text = header_bytes(header)
    return struct.pack("<Q", len(text) if length is None else length) + text + data


def safetensors(tensors, metadata=None):
    """A valid file of (name, dtype, shape, raw bytes), in data order."""
    header, offset = {}, 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    if metadata is not None:
        header["__metadata__"] = metadata
    return file_bytes(header, b"".join(data for *_, data in tensors))


def entry(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


LINEAR_STATE = [("weight", "F32", [2, 3], f32(0.5, -1.0, 2.0, 0.25, 1.5, -0.75)),
                ("bias", "F32", [2], f32(0.1, -0.2))]

VALID = {
    "valid_one_f32_2x3": safetensors([("x", "F32", [2, 3], f32(1, 2, 3, 4, 5, 6))]),
    "valid_linear_state_dict": safetensors(LINEAR_STATE),
    "valid_every_dtype": safetensors([("count", "I64", [3], i64(1, -2, 3)), ("exact", "F64", [1], f64(0.1)),
                                      ("score", "F32", [2], f32(float("inf"), float("nan"))),
                                      ("mask", "BOOL", [4], bytes([1, 0, 0, 1]))]),
    "valid_0d_and_empty": safetensors([("scalar", "F32", [], f32(3.5)), ("empty", "F32", [0, 3], b""),
                                       ("empty_long", "I64", [2, 0], b"")]),
    "valid_with_metadata": safetensors(LINEAR_STATE, {"epoch": "3", "format": "pt"}),
    "valid_no_tensors": safetensors([]),
    "valid_bool_byte_7_reads_as_true": safetensors([("mask", "BOOL", [2], bytes([7, 0]))]),
    "valid_unpadded_header": file_bytes(b'{"x":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}}', i64(42)),
}

# A valid file with its header length replaced, or its bytes cut short.
ONE = VALID["valid_one_f32_2x3"]
BROKEN = {
    "broken_3_bytes": b"\x10\x00\x00",
    "broken_truncated_data": ONE[:-5],
    "broken_truncated_header": ONE[:20],
    "broken_header_length_past_end": struct.pack("<Q", 4096) + ONE[8:],
    "broken_header_length_huge": struct.pack("<Q", 2**64 - 1) + ONE[8:],
    "broken_header_not_json": file_bytes(b'{"x": {"dtype": "F32", "shape": [2, 3'),
    "broken_header_is_a_list": file_bytes(b"[1, 2, 3]"),
    "broken_header_nested_deeply": file_bytes(b'{"x": {"shape": [[[[[[1]]]]]]}}'),
    "broken_tensor_named_twice": file_bytes(
        b'{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"x":{"dtype":"F32","shape":[1],'
        b'"data_offsets":[4,8]}}', f32(1, 2)),
    "broken_shape_overflows_int64": file_bytes({"x": entry("F32", [2**32, 2**32, 2**32], 0, 16)},
                                               f32(1, 2, 3, 4)),
    "broken_bytes_overflow_int64": file_bytes({"x": entry("F64", [2**61], 0, 8)}, f64(1)),
    "broken_header_claims_more_data_than_the_file": file_bytes({"x": entry("F32", [2**40], 0, 2**42)},
                                                               f32(1)),
    "broken_offsets_past_end": file_bytes({"x": entry("F32", [4], 0, 16)}, f32(1, 2)),
    "broken_offsets_overlap": file_bytes({"a": entry("F32", [2], 0, 8), "b": entry("F32", [2], 4, 12)},
                                         f32(1, 2, 3)),
    "broken_offsets_leave_a_gap": file_bytes({"a": entry("F32", [1], 0, 4), "b": entry("F32", [1], 8, 12)},
                                             f32(1, 2, 3)),
    "broken_offsets_reversed": file_bytes({"x": entry("F32", [1], 4, 0)}, f32(1)),
    "broken_offsets_disagree_with_shape": file_bytes({"x": entry("F32", [3], 0, 8)}, f32(1, 2)),
    "broken_negative_size": file_bytes({"x": entry("F32", [-1], 0, 4)}, f32(1)),
    "broken_fractional_size": file_bytes({"x": entry("F32", [1.5], 0, 4)}, f32(1)),
    "broken_unknown_dtype": file_bytes({"x": entry("BF16", [2], 0, 4)}, f32(1)),
    "broken_unknown_field": file_bytes({"x": dict(entry("F32", [1], 0, 4), stride=[1])}, f32(1)),
    "broken_missing_field": file_bytes({"x": {"dtype": "F32", "shape": [1]}}, f32(1)),
    "broken_metadata_not_strings": file_bytes({"__metadata__": {"epoch": 3}}),
    "broken_data_after_the_last_tensor": ONE + b"\x00" * 8,
}


def main():
    if os.path.isdir(CORPUS):
        shutil.rmtree(CORPUS)
    os.makedirs(CORPUS)
    for name, data in {**VALID, **BROKEN}.items():
        with open(os.path.join(CORPUS, name + ".safetensors"), "wb") as f:
            f.write(data)
    print(f"wrote {len(VALID)} valid and {len(BROKEN)} broken files to {os.path.relpath(CORPUS)}")


if __name__ == "__main__":
    main()
