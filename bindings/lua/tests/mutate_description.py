#!/usr/bin/env python3
"""Shows that the LuaJIT binding's test fails when the description is out of step with the library: for each
mutation of c_api/ember_api.json (a struct field's type, a function's name, a status value) it generates the Lua
module from the mutated copy, runs test_binding.lua against the real libember, and requires the named check to
fail; the unmutated description must pass the same run (so a failure is the mutation's, not the harness's).

    mutate_description.py GEN_EMBER_API.py LUAJIT TEST_BINDING.lua EMBER_API.json

Run by meson (lua_binding_mutations) with EMBER_LIBRARY and LUA_PATH set; the mutated module comes first on
LUA_PATH. Standard library only.
"""
import copy
import json
import os
import subprocess
import sys
import tempfile


def field(api, struct, name):
    s = next(s for s in api["structs"] if s["name"] == struct)
    return next(f for f in s["fields"] if f["name"] == name)


def function(api, name):
    return next(f for f in api["functions"] if f["name"] == name)


def enum_value(api, name):
    return next(v for e in api["enums"] for v in e["values"] if v["name"] == name)


def widen_recorder(api):
    # ember_record_options.recorder described as an int64_t: the fields after struct_size no longer sit at the
    # described offsets (a narrower type padded back into place would not be seen: see optimizer test's lr)
    field(api, "ember_record_options", "recorder")["type"] = "int64_t"


def rename_function(api):
    # a function the library does not export (and one the safe layer calls that is no longer described)
    function(api, "ember_tensor_numel")["name"] = "ember_tensor_numel_v2"


def renumber_status(api):
    enum_value(api, "EMBER_ERR_SHAPE")["value"] = 30


MUTATIONS = [
    ("a struct field's type", widen_recorder, "struct sizes, alignments and field offsets"),
    ("a function's name", rename_function, "every described function is exported"),
    ("a status value", renumber_status, "status values are the library's"),
]


def run(gen, luajit, test, api, tmp):
    path = os.path.join(tmp, "ember_api.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(api, f)
    subprocess.run([sys.executable, gen, path, os.path.join(tmp, "ember_api.lua")], check=True)
    env = dict(os.environ)
    env["LUA_PATH"] = os.path.join(tmp, "?.lua") + ";" + env.get("LUA_PATH", "")
    return subprocess.run([luajit, test], env=env, capture_output=True, text=True)


def main(argv):
    if len(argv) != 5:
        sys.stderr.write(__doc__)
        return 2
    gen, luajit, test, api_path = argv[1:]
    with open(api_path, encoding="utf-8") as f:
        api = json.load(f)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        control = run(gen, luajit, test, api, tmp)
        if control.returncode != 0:
            print("FAIL: the unmutated description does not pass:\n" + control.stdout + control.stderr)
            return 1
        print("ok    unmutated description passes")
        for what, mutate, check in MUTATIONS:
            mutated = copy.deepcopy(api)
            mutate(mutated)
            done = run(gen, luajit, test, mutated, tmp)
            if done.returncode != 0 and ("FAIL  " + check) in done.stdout:
                print("ok    %s out of step: '%s' fails" % (what, check))
            else:
                failures += 1
                print("FAIL  %s out of step: expected '%s' to fail (exit %d)\n%s%s"
                      % (what, check, done.returncode, done.stdout, done.stderr))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
