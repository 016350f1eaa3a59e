#!/usr/bin/env python3
"""Writes c_api/ember_api.json from c_api/include/ember.h (clang's AST) plus tools/abi/annotations.json.

Used once to bootstrap the description; from then on the JSON is the checked-in source of truth, edited by hand
when ember.h grows, and tools/abi/check_description.py (the c_api_description test) keeps the two in step. Run it
again only to see what a header change would look like in the description (diff its output with the file).

  bootstrap_from_header.py [--header c_api/include/ember.h] [--annotations tools/abi/annotations.json]
                           [--out c_api/ember_api.json] [--clang clang-14] [--cc cc]

Struct layouts come from compiling and running a probe (offsetof / sizeof / _Alignof) on this x86_64 host.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
from header_ast import comment_after, comment_before, described_type, macro_constants, parse_header  # noqa: E402


def layout_probe(header, structs, cc):
    """{struct: (size, align, {field: offset})} from a program compiled against the header on this host."""
    lines = ["#include <stdio.h>", "#include <stddef.h>", f'#include "{os.path.abspath(header)}"', "int main(void) {"]
    for s in structs:
        lines.append(f'  printf("S {s["name"]} %zu %zu\\n", sizeof({s["name"]}), _Alignof({s["name"]}));')
        for f in s["fields"]:
            lines.append(f'  printf("F {s["name"]} {f["name"]} %zu\\n", offsetof({s["name"]}, {f["name"]}));')
    lines += ["  return 0;", "}"]
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "probe.c")
        exe = os.path.join(tmp, "probe")
        with open(src, "w") as f:
            f.write("\n".join(lines) + "\n")
        subprocess.run([cc, "-std=c11", "-o", exe, src], check=True)
        out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    result = {}
    for ln in out.splitlines():
        parts = ln.split()
        if parts[0] == "S":
            result[parts[1]] = [int(parts[2]), int(parts[3]), {}]
        else:
            result[parts[1]][2][parts[2]] = int(parts[3])
    return result


def assign_roles(fn, params, handles, structs, callbacks, enums, ann):
    """The schema's role of each param, from its C type and its neighbours, then annotations.json's overrides."""
    names = [p["name"] for p in params]
    fn_enums = ann["function_enums"].get(fn, {})
    consumed = {}
    for i, p in enumerate(params):
        t = p["type"]
        nxt = params[i + 1] if i + 1 < len(params) else None
        nxt2 = params[i + 2] if i + 2 < len(params) else None
        base = re.sub(r"\bconst\b", "", t).replace("*", "").strip()
        stars = t.count("*")
        next_size = next((q["name"] for q in params[i + 1:] if q["type"] == "size_t"), None)
        if p["name"] in consumed:  # the capacity / length / count of an earlier buffer param
            p["role"] = "out_value" if t.endswith("*") else "value"
            if t.endswith("*"):
                p["nullable"] = False
            p["of"] = consumed[p["name"]]
            continue
        if t in callbacks:
            p["role"] = "callback"
        elif t == "void*" and p["name"] in ("user", "user_data"):
            p["role"] = "user_data"
        elif base in handles and stars == 1:
            p["role"] = "handle"
            p["handle"] = base
            p["nullable"] = fn == base + "_free"  # "Every ember_*_free(NULL) is a no-op"
        elif base in handles and stars == 2 and "const*" not in t.replace(" ", ""):
            p["role"] = "out_handle"
            p["handle"] = base
            p["nullable"] = False
        elif base in handles and stars == 2:  # const ember_tensor* const*, ember_tensor* const*: an array of handles
            p.update(role="in_array", handle=base, length=next_size, nullable=False)
        elif t == "const char*":
            p.update(role="string_in", nullable=False)
        elif t == "char*" and nxt and nxt2 and nxt["type"] == "size_t" and nxt2["type"] == "size_t*":
            p.update(role="string_out", capacity=nxt["name"], length=nxt2["name"])
            consumed.update({nxt["name"]: p["name"], nxt2["name"]: p["name"]})
        elif t == "const void*" and nxt and nxt["type"] == "size_t":
            p.update(role="bytes_in", size=nxt["name"])
            consumed[nxt["name"]] = p["name"]
        elif t == "void*" and nxt and nxt2 and nxt["type"] == "size_t" and nxt2["type"] == "size_t*":
            p.update(role="bytes_out", capacity=nxt["name"], size=nxt2["name"], nullable=False)
            consumed.update({nxt["name"]: p["name"], nxt2["name"]: p["name"]})
        elif base in structs and stars == 1:
            if t.startswith("const "):
                # "options NULL for defaults" everywhere; a desc / layers / other struct input is required.
                p.update(role="in_struct", struct=base, nullable=p["name"] == "options")
            else:
                p.update(role="inout_struct", struct=base, nullable=False)
        elif t.startswith("const ") and stars == 1 and next_size:  # shape, rank / starts, ends, n
            p.update(role="in_array", length=next_size, nullable=False)
        elif stars == 1 and not t.startswith("const ") and nxt and nxt2 and nxt["type"] == "size_t" \
                and nxt2["type"] == "size_t*":
            p.update(role="out_array", capacity=nxt["name"], count=nxt2["name"], nullable=False)
            consumed.update({nxt["name"]: p["name"], nxt2["name"]: p["name"]})
        elif stars >= 1 and t not in ("void*",):
            p.update(role="out_value", nullable=False)
        elif t == "void*":
            p.update(role="native", nullable=False)
        else:
            p["role"] = "value"
        if base in enums:  # typed in ember.h (<enum>_t)
            p["enum"] = base
        elif base == "ember_status":
            p["enum"] = "ember_status_code"
        elif t == "int32_t" or (p["role"] in ("out_value", "out_array") and t == "int32_t*"):
            enum = fn_enums.get(p["name"]) or (ann["param_enums"].get(p["name"]) if t == "int32_t" else None)
            if enum:
                p["enum"] = enum
        elif t == "uint32_t" and p["name"] in fn_enums:
            p["enum"] = fn_enums[p["name"]]
        if p["role"] == "handle" and base == "ember_device" and t.startswith("const "):
            # "Functions taking a const ember_device* accept NULL for the default device"; Vulkan ones do not.
            p["nullable"] = not fn.startswith("ember_vulkan_")
        for k, v in ann["params"].get(fn, {}).get(p["name"], {}).items():
            if v is None:
                p.pop(k, None)
            else:
                p[k] = v
    unknown = set(ann["params"].get(fn, {})) - set(names)
    if unknown:
        raise SystemExit(f"annotations.json: {fn} has no params {sorted(unknown)}")
    return params


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--header", default=os.path.join(ROOT, "c_api", "include", "ember.h"))
    ap.add_argument("--annotations", default=os.path.join(HERE, "annotations.json"))
    ap.add_argument("--out", default=os.path.join(ROOT, "c_api", "ember_api.json"))
    ap.add_argument("--clang", default="clang-14")
    ap.add_argument("--cc", default="cc")
    args = ap.parse_args()
    with open(args.annotations) as f:
        ann = json.load(f)
    with open(args.header) as f:
        text = f.read()
    decls = parse_header(args.header, args.clang)
    # The description spells an enum's <enum>_t typedef by the enum's name (header_ast.described_type).
    etd = decls["enum_typedefs"]
    for item in decls["functions"] + decls["callbacks"]:
        item["returns"] = described_type(item["returns"], etd)
        for p in item["params"]:
            p["type"] = described_type(p["type"], etd)
    for st in decls["structs"]:
        for f in st["fields"]:
            f["type"] = described_type(f["type"], etd)
    enum_names = {e["name"] for e in decls["enums"]}
    typedef_of_enum = {e: t for t, e in etd.items()}
    consts = macro_constants(text) + [{"name": v["name"], "type": "int32_t", "value": v["value"],
                                       "doc": comment_before(text, v["offset"]), "offset": v["offset"]}
                                      for v in decls["anon_enum_values"]]
    consts.sort(key=lambda c: c["offset"])
    for c in consts:
        del c["offset"]
    const_values = {c["name"]: c["value"] for c in consts}

    handles = [d["name"] for d in decls["opaque"]]
    struct_names = [d["name"] for d in decls["structs"]]
    callbacks_out = []
    for cb in decls["callbacks"]:
        callbacks_out.append({"name": cb["name"], "returns": {"type": cb["returns"]}, "params": cb["params"],
                              "doc": comment_before(text, cb["offset"])})
    callback_names = [c["name"] for c in callbacks_out]
    for cb in callbacks_out:
        for p in cb["params"]:
            base = p["type"].replace("const ", "").rstrip("*").strip()
            if p["type"] == "void*" and p["name"] == "user":
                p["role"] = "user_data"
            elif base in handles:
                p.update(role="handle", handle=base, nullable=False)
            elif p["type"] == "const char*":
                p.update(role="string_in", nullable=False)
            elif base in struct_names:
                p.update(role="in_struct" if p["type"].startswith("const") else "inout_struct", struct=base,
                         nullable=False)
            else:
                p["role"] = "value"
        if cb["returns"]["type"] == "ember_status":
            cb["returns"]["enum"] = "ember_status_code"

    enums_out = []
    for e in decls["enums"]:
        values = [{"name": v["name"], "value": v["value"], "doc": comment_after(text, v["offset"])}
                  for v in e["values"]]
        entry = {"name": e["name"], "underlying": "int32_t", "flags": e["name"] in ann["enum_flags"],
                 "doc": comment_after(text, e["offset"]) or comment_before(text, e["offset"]), "values": values}
        if e["name"] == "ember_status_code":
            entry["typedef"] = "ember_status"
        elif e["name"] in typedef_of_enum:
            entry["typedef"] = typedef_of_enum[e["name"]]
        enums_out.append(entry)

    handles_out = []
    for h in decls["opaque"]:
        a = ann["handles"][h["name"]]
        handles_out.append({"name": h["name"], "free": f"{h['name']}_free", "send": a["send"], "sync": a["sync"],
                            "threads": a["threads"], "doc": comment_after(text, h["offset"])})

    function_names = [f["name"] for f in decls["functions"]]
    layouts = layout_probe(args.header, decls["structs"], args.cc)
    structs_out = []
    for s in decls["structs"]:
        size, align, offsets = layouts[s["name"]]
        fields = []
        for f in s["fields"]:
            field = {"name": f["name"], "type": f["type"], "offset": offsets[f["name"]]}
            if f.get("array") is not None:
                field["array"] = f["array"]
                m = re.search(r"\[\s*(EMBER_[A-Z_]+)\s*\]", f["raw"])
                if m:
                    field["array_constant"] = m.group(1)
            enum = f["type"] if f["type"] in enum_names else ann["field_enums"].get(s["name"], {}).get(f["name"])
            if enum:
                field["enum"] = enum
            doc = comment_after(text, f["offset"])
            if doc:
                field["doc"] = doc
            fields.append(field)
        versioned = bool(fields) and fields[0]["name"] == "struct_size" and fields[0]["type"] == "uint32_t"
        init = ann["struct_inits"].get(s["name"], f"{s['name']}_init")
        if init not in function_names:
            init = None
        doc = comment_before(text, s["offset"])
        structs_out.append({"name": s["name"], "versioned": versioned, "init": init, "size": size, "align": align,
                            "fields": fields, "doc": doc})

    functions_out = []
    for f in decls["functions"]:
        params = assign_roles(f["name"], [dict(p) for p in f["params"]], handles, struct_names, callback_names,
                              enum_names, ann)
        ret = {"type": f["returns"]}
        if f["returns"] == "ember_status":
            ret["enum"] = "ember_status_code"
        ret.update(ann["returns"].get(f["name"], {}))
        entry = {"name": f["name"], "doc": comment_before(text, f["offset"]), "returns": ret}
        if f["name"] in ann["function_threads"]:
            entry["threads"] = ann["function_threads"][f["name"]]
        entry["params"] = params
        functions_out.append(entry)

    api = {
        "schema": 1,
        "library": "ember",
        "version": {"major": const_values["EMBER_VERSION_MAJOR"], "minor": const_values["EMBER_VERSION_MINOR"],
                    "patch": const_values["EMBER_VERSION_PATCH"], "abi": const_values["EMBER_ABI_VERSION"]},
        "header": "ember.h",
        "thread_rules": ann["thread_rules"],
        "typedefs": [{"name": t["name"], "type": t["type"], **({"enum": "ember_status_code"}
                      if t["name"] == "ember_status" else {})} for t in decls["scalar_typedefs"]],
        "constants": consts,
        "enums": enums_out,
        "handles": handles_out,
        "callbacks": callbacks_out,
        "structs": structs_out,
        "functions": functions_out,
    }
    with open(args.out, "w") as f:
        json.dump(api, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{args.out}: {len(functions_out)} functions, {len(enums_out)} enums, {len(structs_out)} structs, "
          f"{len(handles_out)} handles, {len(callbacks_out)} callbacks, {len(consts)} constants")


if __name__ == "__main__":
    main()
