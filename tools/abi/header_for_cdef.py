#!/usr/bin/env python3
"""ember.h's declarations with the preprocessor's part taken out, as a program that cannot run a C preprocessor
sees them (LuaJIT's ffi.cdef): directive lines and the C++-only `extern "C"` block markers dropped, EMBER_API and
EMBER_CALL removed. The c_api_header_cdef test feeds the result to LuaJIT's ffi.cdef, which fails on anything it
cannot declare (a macro sizing an array, a constant only #defined, ...).

  header_for_cdef.py ember.h > declarations.h
"""
import re
import sys


def declarations(text):
    out, skip_depth, depth = [], None, 0
    lines = text.replace("\\\n", " ").split("\n")
    for ln in lines:
        stripped = ln.strip()
        if stripped.startswith("#"):
            directive = stripped[1:].strip()
            if directive.startswith(("if", "ifdef", "ifndef")):
                depth += 1
                if skip_depth is None and directive.startswith("ifdef") and "__cplusplus" in directive:
                    skip_depth = depth
            elif directive.startswith("endif"):
                if skip_depth == depth:
                    skip_depth = None
                depth -= 1
            continue
        if skip_depth is not None:
            continue
        out.append(re.sub(r"\b(EMBER_API|EMBER_CALL)\b ?", "", ln))
    return "\n".join(out)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        sys.stdout.write(declarations(f.read()))
