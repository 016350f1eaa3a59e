"""ember.h's declarations as clang sees them (clang -Xclang -ast-dump=json), in the description's spelling.

Shared by bootstrap_from_header.py (which wrote c_api/ember_api.json) and check_description.py (the
c_api_description test's header -> description direction).
"""
import json
import os
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
        named = node.get("name") or node["kind"] == "EnumDecl"  # anonymous enums declare constants
        if current_file is not None and os.path.basename(current_file) == os.path.basename(header) and named:
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
    anon_values = []
    for n in mine:
        kind, name = n["kind"], n.get("name")
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
            if name:
                enums.append({"name": name, "offset": _offset(n, "range"), "values": values})
            else:  # enum { EMBER_MAX_RANK = 8 }: constants declared as enum values
                anon_values += values
        elif kind == "TypedefDecl":
            qual = n["type"]["qualType"]
            if "(*)" in qual:
                ret, params_text = _split_function_type(qual.replace("(*)", "", 1))
                raw = text[_offset(n, "range"):n["range"]["end"]["offset"] + 1]
                pm = re.search(r"\(\s*(?:EMBER_CALL\s*)?\*\s*\w+\s*\)\s*\((.*)\)", raw, re.S)
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
    # <enum>_t: the int32_t typedef signatures use for an enum (ember.h's enums section says why it is not the
    # tag's own name); the description spells such a type by the enum's name.
    enum_names = {e["name"] for e in enums}
    enum_typedefs = {t["name"]: t["name"][:-2] for t in scalar_typedefs
                     if t["name"].endswith("_t") and t["name"][:-2] in enum_names and t["type"] == "int32_t"}
    return {"opaque": opaque, "structs": structs, "enums": enums, "callbacks": callbacks, "functions": functions,
            "scalar_typedefs": [t for t in scalar_typedefs if t["name"] not in enum_typedefs],
            "enum_typedefs": enum_typedefs, "anon_enum_values": anon_values}


def described_type(spelling, enum_typedefs):
    """ember.h's spelling of a type in the description's: an enum's <enum>_t typedef becomes the enum's name."""
    return re.sub(r"\b(\w+)\b", lambda m: enum_typedefs.get(m.group(1), m.group(1)), spelling)


def comment_before(text, offset):
    """The /* ... */ block that ends on the line right above the line holding `offset`, flattened to one line."""
    line_start = text.rfind("\n", 0, offset) + 1
    prev_end = line_start - 1
    if prev_end <= 0:
        return ""
    prev_start = text.rfind("\n", 0, prev_end) + 1
    if not text[prev_start:prev_end].rstrip().endswith("*/"):
        return ""
    start = text.rfind("/*", 0, prev_end)
    block = text[start:prev_end]
    if not text[text.rfind("\n", 0, start) + 1:start].strip() == "":
        return ""  # a trailing comment of the line above, not a block comment of ours
    if block.startswith("/* ="):  # a section banner: its first line is the section's title, not this decl's doc
        nl = block.find("\n")
        return clean_comment("/*" + block[nl:]) if nl >= 0 else ""
    return clean_comment(block)


def comment_after(text, offset):
    """A /* ... */ that starts on the line holding `offset`, after it (a field's or an enum value's comment)."""
    line_end = text.find("\n", offset)
    start = text.find("/*", offset, line_end)
    if start < 0:
        return ""
    end = text.find("*/", start)
    return clean_comment(text[start:end + 2])


def clean_comment(block):
    body = block.strip()[2:-2]
    lines = [re.sub(r"^\s*\*?\s?", "", ln).rstrip() for ln in body.split("\n")]
    return re.sub(r"\s+", " ", " ".join(lines)).strip()


def macro_constants(text):
    """#define EMBER_* constants (not the include guard or EMBER_API), with their trailing or preceding comment."""
    consts = []
    for m in re.finditer(r"^#define (EMBER_[A-Z0-9_]+)[ \t]+([^/\n]+?)[ \t]*(/\*.*)?$", text, re.M):
        name, raw = m.group(1), m.group(2).strip()
        if name in ("EMBER_API", "EMBER_H", "EMBER_CALL"):
            continue
        if raw == "INT64_MAX":
            ctype, value = "int64_t", 2**63 - 1
        elif raw.endswith("u"):
            ctype, value = "uint32_t", int(raw[:-1], 0)
        elif re.fullmatch(r"-?[0-9]+|0x[0-9a-fA-F]+", raw):
            value = int(raw, 0)
            ctype = "int32_t" if -2**31 <= value < 2**31 else "int64_t"
        else:
            continue  # a macro that is not a constant (EMBER_CALL's expansions, ...)
        doc = clean_comment(m.group(3)) if m.group(3) else comment_before(text, m.start())
        consts.append({"name": name, "type": ctype, "value": value, "doc": doc, "offset": m.start()})
    return consts
