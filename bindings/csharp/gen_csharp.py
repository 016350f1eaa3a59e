#!/usr/bin/env python3
"""Writes the C# P/Invoke layer of Ember (namespace Ember.Native) from the ABI description c_api/ember_api.json.

    gen_csharp.py ember_api.json NativeMethods.g.cs

meson runs it at build time, so the declarations can never drift from the description. What it emits:
  - NativeMethods: every function as [DllImport("ember", CallingConvention.Cdecl)], the constants and the version;
  - an enum per description enum (EmberStatus for the one holding EMBER_OK), a struct per struct
    (LayoutKind.Sequential: the layout is computed by the runtime, and the test compares it with the description),
    a Cdecl delegate per callback, a SafeHandle subclass per handle type whose ReleaseHandle calls its free function;
  - Layout.Structs: each struct's size and field offsets as the description gives them, for the test.
Marshalling rules that keep a native plugin safe (see README.md): a returned `const char*` is an IntPtr (declaring it
`string` makes the runtime free Ember's static string), size_t is UIntPtr (wrapped by the safe layer), strings
passed in are NUL-terminated UTF-8 byte arrays (the same on every OS, unlike LPStr), and only Python's standard
library is used. Unknown keys of the description are ignored (the schema only grows).
"""
import json
import os
import sys

PRIMITIVES = {
    "void": "void", "char": "byte", "int8_t": "sbyte", "uint8_t": "byte", "int16_t": "short",
    "uint16_t": "ushort", "int32_t": "int", "uint32_t": "uint", "int64_t": "long", "uint64_t": "ulong",
    "size_t": "UIntPtr", "float": "float", "double": "double",
}
# Integer C types an enum value may travel in: the C# enum (underlying int) has the same size.
ENUM_CARRIERS = {"int32_t", "uint32_t"}
CSHARP_KEYWORDS = {
    "abstract", "as", "base", "bool", "break", "byte", "case", "catch", "char", "checked", "class", "const",
    "continue", "decimal", "default", "delegate", "do", "double", "else", "enum", "event", "explicit", "extern",
    "false", "finally", "fixed", "float", "for", "foreach", "goto", "if", "implicit", "in", "int", "interface",
    "internal", "is", "lock", "long", "namespace", "new", "null", "object", "operator", "out", "override", "params",
    "private", "protected", "public", "readonly", "ref", "return", "sbyte", "sealed", "short", "sizeof",
    "stackalloc", "static", "string", "struct", "switch", "this", "throw", "true", "try", "typeof", "uint", "ulong",
    "unchecked", "unsafe", "ushort", "using", "virtual", "void", "volatile", "while",
}


def load(path):
    """The description as a dict; through tools/abi/ember_api.py (the shared loader) when the tree has it."""
    loader_dir = os.path.join(os.path.dirname(os.path.abspath(path)), os.pardir, "tools", "abi")
    if os.path.isfile(os.path.join(loader_dir, "ember_api.py")):
        sys.path.insert(0, os.path.abspath(loader_dir))
        sys.dont_write_bytecode = True  # no __pycache__ in the source tree from a build
        import ember_api  # noqa: E402  (the project's loader: validation lives there)
        return ember_api.load(path)
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def pascal(c_name):
    """ember_layer_desc -> EmberLayerDesc (the prefix is kept: these names sit beside the user's own types)."""
    return "".join(part[:1].upper() + part[1:] for part in c_name.split("_") if part)


def ident(name):
    return "@" + name if name in CSHARP_KEYWORDS else name


def xml(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def doc_lines(doc, indent):
    if not doc:
        return []
    lines = [indent + "/// <summary>"]
    lines += [indent + "/// " + xml(line).rstrip() for line in doc.strip().splitlines()]
    return lines + [indent + "/// </summary>"]


def parse_type(c_type):
    """'const ember_tensor* const*' -> ('ember_tensor', 2)."""
    words = c_type.replace("*", " * ").split()
    stars = words.count("*")
    base = [w for w in words if w not in ("const", "*")]
    if len(base) != 1:
        raise ValueError("cannot parse C type %r" % c_type)
    return base[0], stars


class Generator:
    def __init__(self, api):
        self.api = api
        self.enums = {e["name"]: e for e in api.get("enums", [])}
        self.handles = {h["name"]: h for h in api.get("handles", [])}
        self.structs = {s["name"]: s for s in api.get("structs", [])}
        self.callbacks = {c["name"]: c for c in api.get("callbacks", [])}
        self.enum_members = []  # (C# enum, C# member, C name, value), filled by enum()
        self.typedefs = {t["name"]: t for t in api.get("typedefs", [])}
        self.free_functions = {h["free"] for h in api.get("handles", []) if h.get("free")}
        self.status_enum = next((e["name"] for e in api.get("enums", [])
                                 if any(v["name"] == "EMBER_OK" for v in e["values"])), None)

    # ------------------------------------------------------------------ names
    def enum_cs(self, c_name):
        return "EmberStatus" if c_name == self.status_enum else pascal(c_name)

    def handle_cs(self, c_name):
        return pascal(c_name) + "Handle"  # EmberModuleHandle: System.ModuleHandle exists

    # ------------------------------------------------------------------ types
    def scalar(self, base, enum=None):
        """The C# type of a by-value C type (no pointer)."""
        if enum and enum in self.enums and (base in ENUM_CARRIERS or base not in PRIMITIVES):
            return self.enum_cs(enum)
        if base in PRIMITIVES:
            return PRIMITIVES[base]
        if base in self.enums:
            return self.enum_cs(base)
        if base in self.typedefs:  # ember_status: int32_t carrying ember_status_code
            typedef = self.typedefs[base]
            return self.scalar(typedef["type"], enum or typedef.get("enum"))
        if base == "ember_status" and self.status_enum:  # the status typedef, in a description that does not list it
            return "EmberStatus"
        if base in self.callbacks:
            return pascal(base)
        if base in self.structs:
            return pascal(base)
        raise ValueError("unknown C type %r" % base)

    def param(self, fn_name, p, in_callback=False):
        """(C# type with its modifiers, nullable-struct flag) of one parameter."""
        base, stars = parse_type(p["type"])
        role = p.get("role", "value")
        enum = p.get("enum")
        handle_ok = base in self.handles
        if stars == 0:
            return self.scalar(base, enum), False
        if in_callback:
            return "IntPtr", False  # what Ember lends a callback: raw pointers, valid during the call only
        if role == "handle" and stars == 1:
            # A free function receives the raw pointer: SafeHandle.ReleaseHandle passes its own handle value.
            return (self.handle_cs(base) if handle_ok and fn_name not in self.free_functions else "IntPtr"), False
        if role == "out_handle" and stars == 2:
            return "out " + (self.handle_cs(base) if handle_ok else "IntPtr"), False
        if role in ("in_array", "out_array") and stars == 1:
            marshal = "[In] " if role == "in_array" else "[Out] "
            if base == "char":
                return "byte[]", False
            if base == "void":
                return "IntPtr", False
            return marshal + self.scalar(base, enum) + "[]", False
        if role in ("in_array", "out_array") and stars == 2:  # arrays of handles or strings: raw pointers
            return ("[In] " if role == "in_array" else "[Out] ") + "IntPtr[]", False
        if role in ("in_struct", "inout_struct") and stars == 1 and base in self.structs:
            return ("[In] ref " if role == "in_struct" else "ref ") + pascal(base), bool(p.get("nullable"))
        if role in ("string_in", "string_out") and base == "char" and stars == 1:
            return ("[In] " if role == "string_in" else "[Out] ") + "byte[]", False
        if role == "out_value" and stars == 1 and base != "void":
            return "out " + self.scalar(base, enum), False
        if role == "out_value":
            return "out IntPtr", False
        return "IntPtr", False  # bytes_in / bytes_out / user_data / native and anything else passed as a pointer

    def returns(self, ret):
        base, stars = parse_type(ret.get("type", "void"))
        if stars == 0:
            return self.scalar(base, ret.get("enum"))
        if stars == 1 and base in self.handles:
            return self.handle_cs(base)  # a new handle the caller owns
        return "IntPtr"  # strings (static storage: never `string`, the runtime would free them) and other pointers

    # ------------------------------------------------------------------ sections
    def constants(self):
        out = []
        for c in self.api.get("constants", []):
            cs_type = PRIMITIVES.get(c["type"], "long")
            value = c["value"]
            literal = str(value) + {"long": "L", "ulong": "UL", "uint": "U"}.get(cs_type, "")
            out += doc_lines(c.get("doc", ""), "        ")
            out.append("        public const %s %s = %s;" % (cs_type, c["name"], literal))
        version = self.api.get("version", {})
        for key in ("major", "minor", "patch", "abi"):
            if key in version:
                out.append("        public const int Version%s = %d;" % (key.capitalize(), version[key]))
        return out

    def enum(self, e):
        values = e["values"]
        names = [v["name"] for v in values]
        prefix = os.path.commonprefix(names) if len(names) > 1 else os.path.commonprefix(
            [names[0], e["name"].upper() + "_"])
        prefix = prefix[:prefix.rfind("_") + 1]
        out = doc_lines(e.get("doc", "") + "\nC: " + e["name"], "    ")
        if e.get("flags"):
            out.append("    [Flags]")
        out.append("    public enum %s : int" % self.enum_cs(e["name"]))
        out.append("    {")
        for v in values:
            member = pascal(v["name"][len(prefix):].lower()) or pascal(v["name"].lower())
            if member[0].isdigit():
                member = "_" + member
            value = v["value"]
            literal = str(value) if -2**31 <= value < 2**31 else "unchecked((int)%dL)" % value
            out += doc_lines((v.get("doc") or "") + "\n" + v["name"], "        ")
            out.append("        %s = %s," % (member, literal))
            self.enum_members.append((self.enum_cs(e["name"]), member, v["name"], value))
        out.append("    }")
        return out

    def struct(self, s):
        out = doc_lines(s.get("doc", "") + "\nC: " + s["name"] + ("; initialize with NativeMethods." + s["init"]
                                                                    if s.get("init") else ""), "    ")
        out.append("    [StructLayout(LayoutKind.Sequential)]")
        out.append("    public struct %s" % pascal(s["name"]))
        out.append("    {")
        for f in s["fields"]:
            base, stars = parse_type(f["type"])
            if stars or base in self.callbacks:
                cs_type = "IntPtr"  # pointers and function pointers: the struct stays blittable
            else:
                cs_type = self.scalar(base, f.get("enum"))
            out += doc_lines(f.get("doc", ""), "        ")
            if f.get("array"):
                out.append("        [MarshalAs(UnmanagedType.ByValArray, SizeConst = %d)]" % f["array"])
                out.append("        public %s[] %s;" % (cs_type, ident(f["name"])))
            else:
                out.append("        public %s %s;" % (cs_type, ident(f["name"])))
        out.append("    }")
        return out

    def callback(self, c):
        params = ", ".join("%s %s" % (self.param(c["name"], p, in_callback=True)[0], ident(p["name"]))
                           for p in c.get("params", []))
        out = doc_lines(c.get("doc", "") + "\nC: " + c["name"] + " (keep the delegate alive while Ember may call it)",
                        "    ")
        out.append("    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]")
        out.append("    public delegate %s %s(%s);" % (self.returns(c.get("returns", {})), pascal(c["name"]), params))
        return out

    def handle(self, h):
        name = self.handle_cs(h["name"])
        free = h.get("free")
        doc = "%s (C: %s*). Disposing it calls %s.\nThreads: send=%s, sync=%s. %s" % (
            h.get("doc", ""), h["name"], free, h.get("send"), h.get("sync"),
            self.api.get("thread_rules", {}).get(h.get("threads", ""), ""))
        out = doc_lines(doc, "    ")
        out += [
            "    public sealed class %s : SafeHandle" % name,
            "    {",
            "        /// <summary>Used by the marshaller for `out` parameters.</summary>",
            "        public %s() : base(IntPtr.Zero, true) { }" % name,
            "        public %s(IntPtr pointer, bool ownsHandle) : base(IntPtr.Zero, ownsHandle) { SetHandle(pointer); }"
            % name,
            "        /// <summary>NULL, for nullable parameters. Never dispose it.</summary>",
            "        public static readonly %s Null = new %s(IntPtr.Zero, false);" % (name, name),
            "        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }",
        ]
        if free:
            status = self.returns(self.functions_by_name[free].get("returns", {})) == "EmberStatus"
            out.append("        protected override bool ReleaseHandle() { %s }" % (
                "return NativeMethods.%s(handle) == EmberStatus.Ok;" % free if status
                else "NativeMethods.%s(handle); return true;" % free))
        else:
            out.append("        protected override bool ReleaseHandle() { return true; }")
        out.append("    }")
        return out

    def function(self, fn):
        name = fn["name"]
        params = [(self.param(name, p), ident(p["name"])) for p in fn.get("params", [])]
        ret = self.returns(fn.get("returns", {}))
        doc = fn.get("doc", "")
        if fn.get("threads"):
            doc += "\nThreads: " + self.api.get("thread_rules", {}).get(fn["threads"], fn["threads"])
        head = doc_lines(doc, "        ") + [
            "        [DllImport(LibraryName, EntryPoint = \"%s\", CallingConvention = CallingConvention.Cdecl,"
            " ExactSpelling = true)]" % name]
        if ret == "bool":
            raise ValueError("bool returns need MarshalAs")
        out = head + ["        public static extern %s %s(%s);" % (
            ret, name, ", ".join("%s %s" % (t, n) for (t, _), n in params))]
        if any(nullable for (_, nullable), _ in params):
            # The same entry point with every nullable struct as IntPtr, so IntPtr.Zero asks for the defaults.
            out += ["        [DllImport(LibraryName, EntryPoint = \"%s\", CallingConvention = CallingConvention.Cdecl,"
                    " ExactSpelling = true)]" % name,
                    "        public static extern %s %s(%s);" % (ret, name, ", ".join(
                        "%s %s" % ("IntPtr" if nullable else t, n) for (t, nullable), n in params))]
        return out

    def layout_table(self):
        out = ["    /// <summary>Each struct's size and field offsets as the description states them (x86_64), which",
               "    /// the test compares with what the runtime lays out; each enum value with its C name.</summary>",
               "    public static class Layout",
               "    {",
               "        public sealed class Struct",
               "        {",
               "            public Type Type; public string CName; public int Size; public string[] Fields;"
               " public int[] Offsets;",
               "        }",
               "        public static readonly Struct[] Structs = new Struct[]",
               "        {"]
        for s in self.api.get("structs", []):
            out.append("            new Struct { Type = typeof(%s), CName = \"%s\", Size = %d,"
                       " Fields = new string[] {%s},"
                       " Offsets = new int[] {%s} }," % (
                           pascal(s["name"]), s["name"], s["size"],
                           ", ".join('"%s"' % f["name"] for f in s["fields"]),
                           ", ".join(str(f["offset"]) for f in s["fields"])))
        out += ["        };",
                "        public sealed class EnumValue",
                "        {",
                "            public Type Type; public string Member; public string CName; public long Value;",
                "        }",
                "        /// <summary>Every enum value: its C# member and its C name.</summary>",
                "        public static readonly EnumValue[] EnumValues = new EnumValue[]",
                "        {"]
        for cs_enum, member, c_name, value in self.enum_members:
            out.append("            new EnumValue { Type = typeof(%s), Member = \"%s\", CName = \"%s\", Value = %dL },"
                       % (cs_enum, member, c_name, value))
        out += ["        };", "    }"]
        return out

    def generate(self, source_name):
        self.functions_by_name = {f["name"]: f for f in self.api.get("functions", [])}
        out = ["// <auto-generated>",
               "// Generated by bindings/csharp/gen_csharp.py from %s (schema %s). Do not edit: edit the description."
               % (source_name, self.api.get("schema")),
               "// </auto-generated>",
               "using System;",
               "using System.Runtime.InteropServices;",
               "",
               "namespace Ember.Native",
               "{"]
        for e in self.api.get("enums", []):
            out += self.enum(e) + [""]
        for s in self.api.get("structs", []):
            out += self.struct(s) + [""]
        for c in self.api.get("callbacks", []):
            out += self.callback(c) + [""]
        for h in self.api.get("handles", []):
            out += self.handle(h) + [""]
        out += ["    /// <summary>The C functions of lib%s, one to one.</summary>" % self.api.get("library", "ember"),
                "    public static partial class NativeMethods",
                "    {",
                "        /// <summary>DllImport name: libember.so / ember.dll / libember.dylib.</summary>",
                "        public const string LibraryName = \"%s\";" % self.api.get("library", "ember")]
        out += self.constants()
        for fn in self.api.get("functions", []):
            out += [""] + self.function(fn)
        out += ["    }", ""] + self.layout_table() + ["}", ""]
        return "\n".join(out)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: gen_csharp.py ember_api.json out.cs")
    api = load(sys.argv[1])
    if api.get("schema") != 1:
        sys.exit("gen_csharp.py: unsupported description schema %r" % api.get("schema"))
    text = Generator(api).generate(os.path.basename(sys.argv[1]))
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
