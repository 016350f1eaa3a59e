#!/usr/bin/env python3
"""The c_api_header_cdef test: LuaJIT's ffi.cdef accepts ember.h's declarations as they are (no preprocessor: see
header_for_cdef.py), and the layouts and enum values it then sees are the description's (c_api/ember_api.json):
every struct's size and field offsets, every enum value, every constant declared as an enum value.

  check_cdef.py --header c_api/include/ember.h --description c_api/ember_api.json --luajit luajit
"""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ember_api  # noqa: E402
from header_for_cdef import declarations  # noqa: E402


def lua_checks(api):
    lines = ['local ffi = require("ffi")', "local f = assert(io.open(arg[1]))", "ffi.cdef(f:read('*a'))", "f:close()",
             "local bad = 0",
             "local function eq(what, got, want) if got ~= want then bad = bad + 1 print(what .. "
             "': ffi.cdef sees ' .. tostring(got) .. ', the description says ' .. tostring(want)) end end"]
    for s in api["structs"]:
        lines.append(f'eq("sizeof({s["name"]})", ffi.sizeof("{s["name"]}"), {s["size"]})')
        for fd in s["fields"]:
            lines.append(f'eq("offsetof({s["name"]}, {fd["name"]})", ffi.offsetof("{s["name"]}", "{fd["name"]}"), '
                         f'{fd["offset"]})')
    for e in api["enums"]:
        for v in e["values"]:
            lines.append(f'eq("{v["name"]}", tonumber(ffi.C.{v["name"]}), {v["value"]})')
    lines.append("if bad > 0 then print(bad .. ' disagreement(s)') os.exit(1) end")
    lines.append(f'print("OK: ffi.cdef took ember.h\'s declarations; {len(api["structs"])} struct layouts and the '
                 f'enum values agree with the description")')
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--header", required=True)
    ap.add_argument("--description", required=True)
    ap.add_argument("--luajit", default="luajit")
    args = ap.parse_args()
    api = ember_api.load(args.description)
    with open(args.header) as f:
        decls = declarations(f.read())
    with tempfile.TemporaryDirectory() as tmp:
        decl_path, script = os.path.join(tmp, "ember_decls.h"), os.path.join(tmp, "check.lua")
        with open(decl_path, "w") as f:
            f.write(decls)
        with open(script, "w") as f:
            f.write(lua_checks(api))
        r = subprocess.run([args.luajit, script, decl_path])
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
