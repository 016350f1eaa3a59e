#!/usr/bin/env python3
"""Generates the raw Rust declarations of ember-sys from the ABI description (c_api/ember_api.json, schema 1).

    gen_ember_sys.py ember_api.json out.rs

Run by build.rs at build time, so the crate can never fall out of step with the description: every constant, enum
value, handle, callback, struct and function becomes its Rust twin, plus
  - `STRUCT_LAYOUTS` and `struct_layout_mismatches()`: the description's size, alignment and field offsets next to
    what rustc laid out, which the tests assert equal (a generator bug or a hand-edited description fails there);
  - `impl_thread_traits!`: implements Send / Sync for a safe wrapper exactly as the description's handle says.
Python 3 standard library only (CI has no pip). Unknown keys of the description are ignored (the schema only grows).
"""
import json
import os
import re
import sys

# Fixed-width C types and their Rust spelling (LP64 / x86_64, as the description's layouts are).
SCALARS = {
    "void": "c_void", "char": "c_char", "int8_t": "i8", "uint8_t": "u8", "int16_t": "i16", "uint16_t": "u16",
    "int32_t": "i32", "uint32_t": "u32", "int64_t": "i64", "uint64_t": "u64", "size_t": "usize", "float": "f32",
    "double": "f64",
}
RUST_KEYWORDS = {"as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for", "if",
                 "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self", "Self",
                 "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while", "async",
                 "await", "dyn", "abstract", "become", "box", "do", "final", "macro", "override", "priv", "typeof",
                 "unsized", "virtual", "yield", "try"}


def load(path):
    """The description, through h-desc's loader (tools/abi/ember_api.py) when the source tree has it."""
    tools = os.path.join(os.path.dirname(os.path.abspath(path)), "..", "tools", "abi")
    if os.path.exists(os.path.join(tools, "ember_api.py")):
        sys.path.insert(0, tools)
        sys.dont_write_bytecode = True  # nothing written into the source tree
        import ember_api  # noqa: E402  (the shared loader validates the schema version)
        return ember_api.load(path)
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class Types:
    """Maps the description's C type spellings ("const ember_tensor* const*") to Rust types."""

    def __init__(self, api):
        self.known = dict(SCALARS)
        self.enums = {e["name"] for e in api.get("enums", [])}
        for e in api.get("enums", []):
            self.known[e["name"]] = e["name"]
        for h in api.get("handles", []):
            self.known[h["name"]] = h["name"]
        for s in api.get("structs", []):
            self.known[s["name"]] = s["name"]
        for c in api.get("callbacks", []):
            self.known[c["name"]] = c["name"]
        for t in api.get("typedefs", []):  # ember_status: int32_t carrying ember_status_code values
            self.known[t["name"]] = t["name"]

    def rust(self, spelling, where, enum=None):
        """`enum`: the enum an int32_t (or a pointer to one) carries; its alias replaces the base type (same i32,
        but the signature says which values it takes)."""
        tokens = re.findall(r"\w+|\*", spelling)
        consts = [False]  # consts[i]: whether the thing i pointers deep from the base is const
        base = None
        for tok in tokens:
            if tok == "const":
                consts[-1] = True
            elif tok == "*":
                consts.append(False)
            elif base is None:
                base = tok
            else:
                raise SystemExit(f"gen_ember_sys: {where}: cannot parse type '{spelling}'")
        if base not in self.known:
            raise SystemExit(f"gen_ember_sys: {where}: unknown type '{base}' in '{spelling}'")
        ty = self.known[base]
        if enum and base == "int32_t" and enum in self.enums:
            ty = enum
        for level in range(len(consts) - 1):
            ty = f"*{'const' if consts[level] else 'mut'} {ty}"
        return ty


def ident(name):
    """A Rust identifier for a C name: a raw identifier for keywords, a trailing _ where Rust allows no raw one."""
    if name in ("self", "Self", "super", "crate"):
        return name + "_"
    return f"r#{name}" if name in RUST_KEYWORDS else name


def doc(text, indent=""):
    """Rust doc comment lines (the crate disables doctests: C prose is not Rust code)."""
    if not text:
        return []
    return [f"{indent}/// {line}".rstrip() for line in str(text).splitlines()]


def signature(params, returns, types, where):
    args = ", ".join(f"{ident(p['name'])}: {types.rust(p['type'], where + '.' + p['name'], p.get('enum'))}"
                     for p in params)
    ret = returns.get("type", "void") if returns else "void"
    ret_rust = "" if ret == "void" else f" -> {types.rust(ret, where + ' return', returns.get('enum'))}"
    return args, ret_rust


def generate(api):
    types = Types(api)
    out = ["// Generated by gen_ember_sys.py from the ABI description: do not edit.", ""]
    version = api.get("version", {})
    out.append(f"/// The description's library version ({version.get('major')}.{version.get('minor')}."
               f"{version.get('patch')}) and ABI version.")
    for key in ("major", "minor", "patch", "abi"):
        out.append(f"pub const DESCRIPTION_VERSION_{key.upper()}: i64 = {int(version.get(key, 0))};")
    out.append(f"/// The shared library's base name (lib{api.get('library', 'ember')}.so).")
    out.append(f"pub const LIBRARY: &str = {json.dumps(api.get('library', 'ember'))};")
    out.append("")

    for c in api.get("constants", []):
        out += doc(c.get("doc"))
        out.append(f"pub const {c['name']}: {types.rust(c['type'], c['name'])} = {c['value']};")
    out.append("")

    for t in api.get("typedefs", []):
        out += doc(t.get("doc"))
        if t.get("enum"):
            out.append(f"/// Carries `{t['enum']}` values.")
        out.append(f"pub type {t['name']} = {types.rust(t['type'], t['name'])};")
    out.append("")

    for e in api.get("enums", []):
        # A plain i32 alias, the ABI's type, so values of one enum are typed constants of that name.
        out += doc(e.get("doc"))
        out.append(f"pub type {e['name']} = i32;")
        for v in e.get("values", []):
            out += doc(v.get("doc"))
            out.append(f"pub const {v['name']}: {e['name']} = {v['value']};")
        out.append("")

    for h in api.get("handles", []):
        out += doc(h.get("doc"))
        out.append(f"/// Opaque; freed with `{h.get('free')}`. Send: {h.get('send')}, Sync: {h.get('sync')}.")
        out.append("#[repr(C)]")
        out.append(f"pub struct {h['name']} {{")
        out.append("    _private: [u8; 0],")
        out.append("    _not_send_sync_unpin: core::marker::PhantomData<(*mut u8, core::marker::PhantomPinned)>,")
        out.append("}")
    out.append("")

    for c in api.get("callbacks", []):
        args, ret = signature(c.get("params", []), c.get("returns"), types, c["name"])
        out += doc(c.get("doc"))
        out.append(f"pub type {c['name']} = Option<unsafe extern \"C\" fn({args}){ret}>;")
    out.append("")

    for s in api.get("structs", []):
        out += doc(s.get("doc"))
        out.append("#[repr(C)]")
        out.append("#[derive(Clone, Copy, Debug)]")
        out.append(f"pub struct {s['name']} {{")
        for f in sorted(s.get("fields", []), key=lambda f: f.get("offset", 0)):
            ty = types.rust(f["type"], f"{s['name']}.{f['name']}", f.get("enum"))
            if "array" in f:
                n = f["array"]
                ty = f"[{ty}; {n if isinstance(n, int) else str(n) + ' as usize'}]"
            out += doc(f.get("doc"), "    ")
            out.append(f"    pub {ident(f['name'])}: {ty},")
        out.append("}")
        out.append(f"impl Default for {s['name']} {{")
        out.append("    /// All zero (null pointers, no callbacks); the struct's `_init` sets Ember's defaults.")
        out.append("    fn default() -> Self {")
        out.append("        // SAFETY: all fields are integers, floats, raw pointers, arrays of those or Option<fn>.")
        out.append("        unsafe { core::mem::zeroed() }")
        out.append("    }")
        out.append("}")
    out.append("")

    out.append(f"#[link(name = {json.dumps(api.get('library', 'ember'))})]")
    out.append("extern \"C\" {")
    for f in api.get("functions", []):
        args, ret = signature(f.get("params", []), f.get("returns"), types, f["name"])
        out += doc(f.get("doc"), "    ")
        if f.get("threads"):
            out.append(f"    /// Threads: {f['threads']}.")
        out.append(f"    pub fn {f['name']}({args}){ret};")
    out.append("}")
    out.append("")

    out.append("/// (struct, size, align, [(field, offset)]) as the description lays them out.")
    out.append("pub const STRUCT_LAYOUTS: &[(&str, usize, usize, &[(&str, usize)])] = &[")
    for s in api.get("structs", []):
        fields = ", ".join(f"({json.dumps(f['name'])}, {f['offset']})" for f in s.get("fields", []))
        out.append(f"    ({json.dumps(s['name'])}, {s['size']}, {s['align']}, &[{fields}]),")
    out.append("];")
    out.append("")
    out.append("/// Every difference between the description's layouts and the structs above as rustc laid them out")
    out.append("/// (size, alignment, each field's offset); empty when they agree.")
    out.append("pub fn struct_layout_mismatches() -> Vec<String> {")
    out.append("    let mut bad = Vec::new();")
    for s in api.get("structs", []):
        n = s["name"]
        out.append("    {")
        out.append(f"        let probe = core::mem::MaybeUninit::<{n}>::uninit();")
        out.append("        let base = probe.as_ptr() as usize;")
        out.append(f"        if core::mem::size_of::<{n}>() != {s['size']} {{")
        out.append(f"            bad.push(format!(\"{n}: size {{}}, description {s['size']}\", "
                   f"core::mem::size_of::<{n}>()));")
        out.append("        }")
        out.append(f"        if core::mem::align_of::<{n}>() != {s['align']} {{")
        out.append(f"            bad.push(format!(\"{n}: align {{}}, description {s['align']}\", "
                   f"core::mem::align_of::<{n}>()));")
        out.append("        }")
        for f in s.get("fields", []):
            fn = ident(f["name"])
            out.append("        // SAFETY: addr_of! takes the field's address without reading the uninitialized value.")
            out.append(f"        let at = unsafe {{ core::ptr::addr_of!((*probe.as_ptr()).{fn}) }} as usize - base;")
            out.append(f"        if at != {f['offset']} {{")
            message = f"{n}.{f['name']}: offset {{}}, description {f['offset']}"
            out.append(f"            bad.push(format!(\"{message}\", at));")
            out.append("        }")
        out.append("    }")
    out.append("    bad")
    out.append("}")
    out.append("")

    out += init_struct_sizes(api)

    out.append("/// `impl_thread_traits!(ember_tensor, Tensor)` implements Send and Sync for the safe wrapper `Tensor`")
    out.append("/// exactly as the description's entry for the handle `ember_tensor` allows (and neither for a name it")
    out.append("/// does not list: that is a compile error).")
    out.append("#[macro_export]")
    out.append("macro_rules! impl_thread_traits {")
    for h in api.get("handles", []):
        body = []
        if h.get("send"):
            body.append("unsafe impl Send for $t {}")
        if h.get("sync"):
            body.append("unsafe impl Sync for $t {}")
        out.append(f"    ({h['name']}, $t:ty) => {{ {' '.join(body)} }};")
    out.append("}")
    out.append("")
    out.append("/// (handle, send, sync) as the description says.")
    out.append("pub const HANDLE_THREADS: &[(&str, bool, bool)] = &[")
    for h in api.get("handles", []):
        out.append(f"    ({json.dumps(h['name'])}, {str(bool(h.get('send'))).lower()}, "
                   f"{str(bool(h.get('sync'))).lower()}),")
    out.append("];")
    out.append("")
    out.append("/// Every function of the description with its address in the loaded library: taking them all makes")
    out.append("/// the link fail when libember lacks one the description lists.")
    out.append("pub fn function_addresses() -> Vec<(&'static str, usize)> {")
    out.append("    vec![")
    for f in api.get("functions", []):
        out.append(f"        ({json.dumps(f['name'])}, {f['name']} as usize),")
    out.append("    ]")
    out.append("}")
    out.append("")
    out.append("/// Every function name of the description, in its order.")
    out.append("pub const FUNCTION_NAMES: &[&str] = &[")
    for f in api.get("functions", []):
        out.append(f"    {json.dumps(f['name'])},")
    out.append("];")
    return "\n".join(out) + "\n"


def init_struct_sizes(api):
    """`init_struct_sizes()`: calls each versioned struct's `_init` (an enum argument gets the enum's first value)
    and returns what the library set struct_size to, i.e. sizeof the C struct, beside the Rust size."""
    functions = {f["name"]: f for f in api.get("functions", [])}
    first_value = {e["name"]: e["values"][0]["name"] for e in api.get("enums", []) if e.get("values")}
    out = ["/// (struct, status of its `_init`, the struct_size the library set, size_of the Rust struct) for every",
           "/// versioned struct with an `_init`: the library's sizeof against the generated layout.",
           "pub fn init_struct_sizes() -> Vec<(&'static str, ember_status, u32, usize)> {",
           "    let mut sizes = Vec::new();"]
    for s in api.get("structs", []):
        init = functions.get(s.get("init") or "")
        if not s.get("versioned") or not init or not init.get("params"):
            continue
        params = init["params"]
        if params[0]["type"] != s["name"] + "*" or init.get("returns", {}).get("type") != "ember_status":
            continue
        args = ["&mut value"]
        for p in params[1:]:
            if p.get("enum") in first_value:
                args.append(first_value[p["enum"]])
            elif p["type"] in ("int32_t", "uint32_t", "int64_t", "uint64_t", "size_t"):
                args.append("0")
            else:
                args = None
                break
        if args is None:
            continue
        out.append("    {")
        out.append(f"        let mut value = {s['name']}::default();")
        out.append("        // SAFETY: a whole, zeroed struct of the type the function fills.")
        out.append(f"        let status = unsafe {{ {init['name']}({', '.join(args)}) }};")
        out.append(f"        sizes.push(({json.dumps(s['name'])}, status, value.struct_size, "
                   f"core::mem::size_of::<{s['name']}>()));")
        out.append("    }")
    out += ["    sizes", "}", ""]
    return out


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: gen_ember_sys.py ember_api.json out.rs")
    text = generate(load(sys.argv[1]))
    tmp = sys.argv[2] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, sys.argv[2])


if __name__ == "__main__":
    main()
