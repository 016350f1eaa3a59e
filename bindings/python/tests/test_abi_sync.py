"""The ctypes declarations in ember/_lib.py, built from the description (c_api/ember_api.json), agree with it and
with c_api/include/ember.h: the same functions with the same number of parameters, and struct layouts (sizes and
field offsets) as the description gives them and as a C compiler lays them out. Catches a generator bug or a header
change the description has not followed. The header checks are skipped outside a source checkout (no header) or
without a C compiler."""
import ctypes
import os
import re
import shutil
import subprocess
import unittest

import _support
from ember import _lib

HEADER = os.path.join(os.path.dirname(os.path.dirname(_support._PKG)), "c_api", "include", "ember.h")
STRUCTS = {s["name"]: getattr(_lib, _lib._camel(s["name"])) for s in _lib.API["structs"]}


class DescriptionTest(unittest.TestCase):
    """The binding against the description it was built from (also outside a source checkout)."""

    def test_every_described_function_is_declared_with_its_arity(self):
        self.assertEqual(sorted(_lib._SIGNATURES), sorted(f["name"] for f in _lib.API["functions"]))
        for f in _lib.API["functions"]:
            fn = getattr(_lib.lib, f["name"])
            self.assertEqual(len(fn.argtypes), len(f["params"]), f["name"])

    def test_struct_sizes_and_offsets_are_the_descriptions(self):
        self.assertIn("ember_vulkan_device_desc", STRUCTS)
        for s in _lib.API["structs"]:
            cls = STRUCTS[s["name"]]
            self.assertEqual(ctypes.sizeof(cls), s["size"], "sizeof(%s)" % s["name"])
            self.assertEqual(ctypes.alignment(cls), s["align"], "alignof(%s)" % s["name"])
            for f in s["fields"]:
                self.assertEqual(getattr(cls, f["name"]).offset, f["offset"], s["name"] + "." + f["name"])

    def test_constants_and_enums_are_the_descriptions(self):
        self.assertEqual(_lib.MAX_RANK, 8)
        self.assertEqual(_lib.SLICE_END, 2**63 - 1)
        self.assertEqual(_lib.ENUMS["ember_dtype"]["EMBER_DTYPE_BOOL"], 6)
        self.assertEqual(_lib.version_number(), _lib.CONSTANTS["EMBER_VERSION_NUMBER"])


def header_functions():
    with open(HEADER) as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out = {}
    for m in re.finditer(r"EMBER_API\s+[\w\s\*]+?\b(ember_\w+)\s*\(([^)]*)\)\s*;", text):
        params = m.group(2).strip()
        out[m.group(1)] = 0 if params in ("", "void") else params.count(",") + 1
    return out


@unittest.skipUnless(os.path.exists(HEADER), "c_api/include/ember.h is not here (not a source checkout)")
class AbiSyncTest(unittest.TestCase):
    def test_functions_and_arity(self):
        declared = header_functions()
        self.assertGreater(len(declared), 50)
        missing = sorted(set(declared) - set(_lib._SIGNATURES))
        self.assertEqual(missing, [], "functions of ember.h that _lib.py does not declare")
        unknown = sorted(set(_lib._SIGNATURES) - set(declared))
        self.assertEqual(unknown, [], "functions _lib.py declares that ember.h lacks")
        for name, n in declared.items():
            self.assertEqual(len(_lib._SIGNATURES[name][1]), n, name)

    @unittest.skipUnless(shutil.which("cc") or shutil.which("gcc"), "no C compiler")
    def test_struct_layouts(self):
        lines = ["#include <stddef.h>", "#include <stdio.h>", '#include "ember.h"', "int main(void) {"]
        for cname, cls in STRUCTS.items():
            lines.append('printf("%s %%zu\\n", sizeof(%s));' % (cname, cname))
            for field, _ in cls._fields_:
                lines.append('printf("%s.%s %%zu\\n", offsetof(%s, %s));' % (cname, field, cname, field))
        lines += ["return 0;", "}"]
        src = _support.temp_path(self, "layout.c")
        exe = src[:-2]
        with open(src, "w") as f:
            f.write("\n".join(lines) + "\n")
        cc = shutil.which("cc") or shutil.which("gcc")
        subprocess.run([cc, "-std=c11", "-I", os.path.dirname(HEADER), src, "-o", exe], check=True,
                       capture_output=True, timeout=120)
        out = subprocess.run([exe], check=True, capture_output=True, text=True, timeout=60).stdout
        c = dict(line.rsplit(" ", 1) for line in out.splitlines())
        for cname, cls in STRUCTS.items():
            self.assertEqual(int(c[cname]), ctypes.sizeof(cls), "sizeof(%s)" % cname)
            for field, _ in cls._fields_:
                self.assertEqual(int(c[cname + "." + field]), getattr(cls, field).offset, cname + "." + field)


if __name__ == "__main__":
    unittest.main()
