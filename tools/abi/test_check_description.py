#!/usr/bin/env python3
"""The c_api_description_mutations test: check_description.py rejects a description or a header out of step.

Each case changes one thing in a copy of c_api/ember_api.json (a param's type, a missing param, a missing or extra
function, an enum value, a struct field's offset or type, a struct's size, a constant) or of ember.h (a function
without EMBER_CALL, an undescribed function, a changed enum value), runs the checker on the copies and expects it to
fail naming what changed; the unchanged copies must pass. Fails when any case is accepted.

  test_check_description.py --header c_api/include/ember.h --description c_api/ember_api.json [--clang clang-14]
"""
import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "check_description.py")


def fn(api, name):
    return next(f for f in api["functions"] if f["name"] == name)


def enum(api, name):
    return next(e for e in api["enums"] if e["name"] == name)


def struct(api, name):
    return next(s for s in api["structs"] if s["name"] == name)


def field(api, sname, fname):
    return next(f for f in struct(api, sname)["fields"] if f["name"] == fname)


def set_(obj, key, value):
    obj[key] = value


# (name, what the checker's report must mention, mutation of the description)
DESCRIPTION_CASES = [
    ("param type", "ember_tensor_add", lambda a: set_(fn(a, "ember_tensor_add")["params"][1], "type", "ember_tensor*")),
    ("param enum", "ember_tensor_unary", lambda a: set_(fn(a, "ember_tensor_unary")["params"][1], "type",
                                                        "ember_binary_op")),
    ("param name", "ember_tensor_cast", lambda a: set_(fn(a, "ember_tensor_cast")["params"][1], "name", "kind")),
    ("missing param", "ember_tensor_cast", lambda a: fn(a, "ember_tensor_cast")["params"].pop()),
    ("return type", "ember_abi_version", lambda a: set_(fn(a, "ember_abi_version")["returns"], "type", "int64_t")),
    ("missing function", "ember_tensor_sub", lambda a: a["functions"].remove(fn(a, "ember_tensor_sub"))),
    ("extra function", "ember_tensor_add2", lambda a: a["functions"].append(
        dict(copy.deepcopy(fn(a, "ember_tensor_add")), name="ember_tensor_add2"))),
    ("enum value", "EMBER_DTYPE_F64", lambda a: set_(enum(a, "ember_dtype")["values"][1], "value", 9)),
    ("missing enum value", "ember_dtype", lambda a: enum(a, "ember_dtype")["values"].pop()),
    ("extra enum value", "EMBER_DTYPE_X", lambda a: enum(a, "ember_dtype")["values"].append(
        {"name": "EMBER_DTYPE_X", "value": 99, "doc": ""})),
    ("field offset", "ember_param_info", lambda a: set_(field(a, "ember_param_info", "shape"), "offset", 48)),
    ("field type", "ember_conv2d_options", lambda a: set_(field(a, "ember_conv2d_options", "groups"), "type",
                                                          "int32_t")),
    ("field array", "ember_layer_desc", lambda a: set_(field(a, "ember_layer_desc", "stride"), "array", 3)),
    ("missing field", "ember_record_options", lambda a: struct(a, "ember_record_options")["fields"].pop()),
    ("struct size", "ember_optimizer_options", lambda a: set_(struct(a, "ember_optimizer_options"), "size", 80)),
    ("constant", "EMBER_MAX_RANK", lambda a: set_(next(c for c in a["constants"] if c["name"] == "EMBER_MAX_RANK"),
                                                  "value", 9)),
    ("callback param", "ember_module_visitor", lambda a: set_(
        next(c for c in a["callbacks"] if c["name"] == "ember_module_visitor")["params"][2], "type", "char*")),
    ("version", "version", lambda a: set_(a["version"], "minor", 2)),
]

# (name, what the report must mention, (old, new) replaced once in the header copy)
HEADER_CASES = [
    ("no EMBER_CALL", "ember_tensor_matmul", ("EMBER_API ember_status EMBER_CALL ember_tensor_matmul(",
                                             "EMBER_API ember_status ember_tensor_matmul(")),
    ("undescribed function", "ember_undescribed", ("#ifdef __cplusplus\n} /* extern \"C\" */",
                                                   "EMBER_API ember_status EMBER_CALL ember_undescribed(void);\n"
                                                   "#ifdef __cplusplus\n} /* extern \"C\" */")),
    ("enum value", "EMBER_REDUCTION_SUM", ("EMBER_REDUCTION_SUM = 1", "EMBER_REDUCTION_SUM = 2")),
    ("param typed with another enum", "ember_tensor_reduce", ("ember_tensor_reduce(const ember_tensor* x, "
                                                              "ember_reduce_op_t op",
                                                              "ember_tensor_reduce(const ember_tensor* x, "
                                                              "ember_unary_op_t op")),
]


def run(header, description, clang):
    r = subprocess.run([sys.executable, CHECKER, "--header", header, "--description", description, "--clang", clang],
                       capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--header", required=True)
    ap.add_argument("--description", required=True)
    ap.add_argument("--clang", default="clang-14")
    args = ap.parse_args()
    with open(args.description) as f:
        api = json.load(f)
    with open(args.header) as f:
        header_text = f.read()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        header = os.path.join(tmp, "ember.h")
        shutil.copy(args.header, header)
        desc = os.path.join(tmp, "ember_api.json")

        def write_desc(a):
            with open(desc, "w") as f:
                json.dump(a, f)

        write_desc(api)
        rc, out = run(header, desc, args.clang)
        if rc != 0:
            failures.append(f"the unchanged copies were rejected:\n{out}")
        for name, mention, mutate in DESCRIPTION_CASES:
            a = copy.deepcopy(api)
            mutate(a)
            write_desc(a)
            rc, out = run(header, desc, args.clang)
            ok = rc != 0 and mention in out
            print(f"{'rejected' if ok else 'ACCEPTED'}: description {name} ({mention})")
            if not ok:
                failures.append(f"description case '{name}' was not rejected naming {mention}:\n{out}")
        write_desc(api)
        for name, mention, (old, new) in HEADER_CASES:
            if header_text.count(old) != 1:
                failures.append(f"header case '{name}': its text is not in ember.h once (update the case)")
                continue
            with open(header, "w") as f:
                f.write(header_text.replace(old, new))
            rc, out = run(header, desc, args.clang)
            ok = rc != 0 and mention in out
            print(f"{'rejected' if ok else 'ACCEPTED'}: header {name} ({mention})")
            if not ok:
                failures.append(f"header case '{name}' was not rejected naming {mention}:\n{out}")
    for f in failures:
        print(f"FAIL: {f}")
    print(f"{len(DESCRIPTION_CASES) + len(HEADER_CASES)} cases, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
