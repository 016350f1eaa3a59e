"""ember.h's declarations as clang sees them (clang -Xclang -ast-dump=json), in the description's spelling.

Shared by bootstrap_from_header.py (which wrote c_api/ember_api.json) and check_description.py (the
c_api_description test's header -> description direction).
"""
import json
import re
import subprocess


def spell(qual):
    """The description's type spelling: single spaces, `const` first, `*` attached to the left."""
    s = re.sub(r"\s+", " ", qual.strip())
    s = re.sub(r"\s*\*", "*", s)
    s = re.sub(r"\*(?=[A-Za-z_])", "* ", s)
    return s.strip()


def _split_function_type(qual):
    """'ret (params)' -> (ret, params text) for a FunctionDecl's qualType."""
    assert qual.endswith(")"), qual
    depth = 0
    for i in range(len(qual) - 1, -1, -1):
        if qual[i] == ")":
            depth += 1
        elif qual[i] == "(":
            depth -= 1
            if depth == 0:
                return qual[:i].strip(), qual[i + 1:-1]
    raise ValueError(qual)


def _offset(node, key="loc"):
    loc = node.get(key, {})
    if key == "range":
        loc = loc.get("begin", {})
    if "expansionLoc" in loc:
        loc = loc["expansionLoc"]
    return loc.get("offset")


def parse_header(header, clang="clang-14", extra_args=()):
    """{opaque, structs, enums, callbacks, functions, scalar_typedefs} declared by `header` itself (C mode)."""
    dump = subprocess.run([clang, "-Xclang", "-ast-dump=json", "-fsyntax-only", "-x", "c", "-std=c11",
                           *extra_args, header], check=True, capture_output=True, text=True).stdout
    ast = json.loads(dump)
    with open(header) as f:
        text = f.read()
    # The top-level decls after the header's own includes: clang marks a decl from another file by a "file" key
    # in its loc the first time the file changes; track it.
    current_file = None
    mine = []
    for node in ast.get("inner", []):
        loc = node.get("loc", {})
        loc = loc.get("expansionLoc", loc)
        if "file" in loc:
            current_file = loc["file"]
        if current_file is not None and current_file.endswith(header.split("/")[-1]) and node.get("name"):
            mine.append(node)
    defined = set()
    records = {}
    for n in mine:
        if n["kind"] == "RecordDecl":
            if n.get("completeDefinition"):
                defined.add(n["name"])
                records[n["name"]] = n
            else:
                records.setdefault(n["name"], n)
    opaque, structs, enums, callbacks, functions, scalar_typedefs = [], [], [], [], [], []
    seen_records = set()
    for n in mine:
        kind, name = n["kind"], n["name"]
        if kind == "RecordDecl":
            if name in seen_records:
                continue
            seen_records.add(name)
            if name not in defined:
                opaque.append({"name": name, "offset": _offset(n, "range")})
                continue
            rec = records[name]
            fields = []
            for fd in rec.get("inner", []):
                if fd["kind"] != "FieldDecl":
                    continue
                qual = fd["type"]["qualType"]
                start = _offset(fd, "loc")
                end = fd["range"]["end"]["offset"] + fd["range"]["end"].get("tokLen", 1)
                raw_begin = _offset(fd, "range")
                field = {"name": fd["name"], "offset": start, "raw": text[raw_begin:end]}
                m = re.fullmatch(r"(.*?)\s*\[(\d+)\]", qual)
                if m:
                    field["type"], field["array"] = spell(m.group(1)), int(m.group(2))
                    field["raw"] = text[start:end]
                else:
                    field["type"] = spell(qual)
                fields.append(field)
            structs.append({"name": name, "offset": _offset(rec, "range"), "fields": fields})
        elif kind == "EnumDecl":
            values = []
            for v in n.get("inner", []):
                if v["kind"] != "EnumConstantDecl":
                    continue
                val = None
                for sub in v.get("inner", []):
                    if "value" in sub:
                        val = int(sub["value"])
                values.append({"name": v["name"], "value": val, "offset": _offset(v, "loc")})
            # implicit values follow the previous one (ember.h gives every value explicitly; keep C's rule anyway)
            for i, v in enumerate(values):
                if v["value"] is None:
                    v["value"] = values[i - 1]["value"] + 1 if i else 0
            enums.append({"name": name, "offset": _offset(n, "range"), "values": values})
        elif kind == "TypedefDecl":
            qual = n["type"]["qualType"]
            if "(*)" in qual:
                ret, params_text = _split_function_type(qual.replace("(*)", "", 1))
                raw = text[_offset(n, "range"):n["range"]["end"]["offset"] + 1]
                pm = re.search(r"\(\s*\*\s*\w+\s*\)\s*\((.*)\)", raw, re.S)
                params = []
                for piece in pm.group(1).split(","):
                    piece = re.sub(r"\s+", " ", piece.strip())
                    if piece and piece != "void":
                        m = re.fullmatch(r"(.*?[\s*])(\w+)", piece)
                        params.append({"name": m.group(2), "type": spell(m.group(1))})
                callbacks.append({"name": name, "returns": spell(ret), "params": params,
                                  "offset": _offset(n, "range"), "qual": qual})
            elif not qual.startswith(("struct ", "enum ")):
                scalar_typedefs.append({"name": name, "type": spell(qual), "offset": _offset(n, "range")})
        elif kind == "FunctionDecl":
            ret, _ = _split_function_type(n["type"]["qualType"])
            params = [{"name": p["name"], "type": spell(p["type"]["qualType"])}
                      for p in n.get("inner", []) if p["kind"] == "ParmVarDecl"]
            functions.append({"name": name, "returns": spell(ret), "params": params, "offset": _offset(n, "range")})
    return {"opaque": opaque, "structs": structs, "enums": enums, "callbacks": callbacks, "functions": functions,
            "scalar_typedefs": scalar_typedefs}
