#!/usr/bin/python3
"""Writes the seed corpus of the safetensors parser fuzzer (tests/fuzz/safetensors_fuzz.cpp), which the records
tests (tests/records_safetensors_test.cpp) also load one by one, each expecting its own error:

  valid_*.safetensors     well-formed files (every dtype Ember reads, metadata, an empty tensor, no tensor)
  hostile_*.safetensors   one defect each: header length huge / past the end, offsets past the end, overlapping and
                          gapped tensors, a bad dtype, a shape that overflows or does not match the bytes, broken
                          JSON, deep nesting, a control character or invalid UTF-8 in a name, duplicate names or fields

    /usr/bin/python3 tests/fuzz/safetensors_corpus/gen_corpus.py    # rewrites the files next to this script
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def raw_file(header_bytes, data=b"", length=None):
    n = len(header_bytes) if length is None else length
    return struct.pack("<Q", n) + header_bytes + data


def file_of(header, data=b"", length=None):
    return raw_file(json.dumps(header, separators=(",", ":")).encode(), data, length)


def entry(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


FILES = {
    "valid_dtypes": file_of({
        "a.f32": entry("F32", [2], 0, 8), "b.f16": entry("F16", [2], 8, 12), "c.bf16": entry("BF16", [2], 12, 16),
        "d.i64": entry("I64", [1], 16, 24), "e.bool": entry("BOOL", [2], 24, 26), "f.u8": entry("U8", [1], 26, 27),
        "__metadata__": {"format": "pt"}}, bytes(range(27))),
    "valid_empty_tensor": file_of({"x": entry("F32", [0, 3], 0, 0), "y": entry("I32", [1], 0, 4)}, b"\1\0\0\0"),
    "valid_no_tensor": file_of({}),
    "hostile_header_huge": raw_file(b"{}", length=1 << 62),
    "hostile_header_past_end": raw_file(b'{"x":{}}', length=4096),
    "hostile_offsets_past_end": file_of({"x": entry("F32", [4], 0, 16)}, bytes(8)),
    "hostile_overlap": file_of({"x": entry("F32", [2], 0, 8), "y": entry("F32", [2], 4, 12)}, bytes(12)),
    "hostile_gap": file_of({"x": entry("F32", [1], 0, 4), "y": entry("F32", [1], 8, 12)}, bytes(12)),
    "hostile_bad_dtype": file_of({"x": entry("Q7", [1], 0, 1)}, bytes(1)),
    "hostile_shape_overflow": file_of({"x": entry("F64", [1 << 62, 1 << 62, 16], 0, 8)}, bytes(8)),
    "hostile_shape_mismatch": file_of({"x": entry("F32", [3], 0, 8)}, bytes(8)),
    "hostile_not_json": raw_file(b'{"x": [1, 2'),
    "hostile_deep_nesting": raw_file(b'{"x":' + b"[" * 100000 + b"]" * 100000 + b"}"),
    "hostile_escape_in_name": file_of({"\x1b[31mred": entry("F32", [1], 0, 4)}, bytes(4)),
    "hostile_invalid_utf8_name": raw_file(b'{"a\xe6\xff":' + json.dumps(entry("F32", [1], 0, 4)).encode() + b"}",
                                          bytes(4)),
    "hostile_duplicate_field": raw_file(b'{"x":{"dtype":"F32","shape":[1],"shape":[1],"data_offsets":[0,4]}}',
                                        bytes(4)),
    "hostile_duplicate_name": raw_file(b'{"x":' + json.dumps(entry("F32", [1], 0, 4)).encode() + b',"x":'
                                       + json.dumps(entry("F32", [1], 4, 8)).encode() + b"}", bytes(8)),
}


def main():
    for name, data in FILES.items():
        with open(os.path.join(HERE, name + ".safetensors"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
