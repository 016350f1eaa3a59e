#!/usr/bin/env python3
"""Tests of bindings/lua/gen_ember_api.py on small descriptions: the cdef it writes, the Lua data, and the
descriptions it must refuse (a type nothing defines, another schema). Standard library only; no LuaJIT needed."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import gen_ember_api  # noqa: E402

STATUS = {"type": "ember_status"}


def description(**parts):
    api = {"schema": 1, "library": "ember", "version": {"major": 0, "minor": 1, "patch": 0, "abi": 1},
           "constants": [], "enums": [], "handles": [], "callbacks": [], "structs": [], "functions": []}
    api.update(parts)
    return api


def param(name, type_, role="value", **extra):
    return dict(name=name, type=type_, role=role, **extra)


class CdefTest(unittest.TestCase):
    def test_handles_enums_and_functions(self):
        api = description(
            handles=[{"name": "ember_tensor", "free": "ember_tensor_free"}],
            enums=[{"name": "ember_dtype", "underlying": "int32_t",
                    "values": [{"name": "EMBER_DTYPE_F32", "value": 0}]}],
            functions=[{"name": "ember_tensor_cat", "returns": STATUS, "params": [
                param("xs", "const ember_tensor* const*", "in_array", length="n"), param("n", "size_t"),
                param("dtype", "ember_dtype", enum="ember_dtype"), param("out", "ember_tensor**", "out_handle")]},
                {"name": "ember_version", "returns": {"type": "const char*"}, "params": []}])
        cdef = gen_ember_api.make_cdef(api)
        self.assertIn("typedef struct ember_tensor ember_tensor;", cdef)
        self.assertIn("typedef int32_t ember_dtype;", cdef)
        self.assertIn("typedef int32_t ember_status;", cdef)  # the schema's status spelling, always defined
        self.assertIn("ember_status ember_tensor_cat(const ember_tensor* const* xs, size_t n, ember_dtype dtype, "
                      "ember_tensor** out);", cdef)
        self.assertIn("const char* ember_version(void);", cdef)

    def test_typedefs_once_each(self):
        api = description(enums=[{"name": "ember_dtype", "underlying": "int32_t", "typedef": "ember_dtype_t",
                                  "values": []}],
                          typedefs=[{"name": "ember_status", "type": "int32_t"},
                                    {"name": "ember_dtype", "type": "int32_t"}])
        cdef = gen_ember_api.make_cdef(api)
        self.assertEqual(cdef.count("typedef int32_t ember_status;"), 1)
        self.assertEqual(cdef.count("typedef int32_t ember_dtype;"), 1)
        self.assertEqual(cdef.count("typedef int32_t ember_dtype_t;"), 1)  # the header's name for it

    def test_struct_arrays_sized_by_constants_and_embedded_structs_first(self):
        api = description(
            constants=[{"name": "EMBER_MAX_RANK", "type": "int32_t", "value": 8}],
            structs=[{"name": "outer", "fields": [{"name": "inner", "type": "inner", "offset": 0}]},
                     {"name": "inner", "fields": [
                         {"name": "shape", "type": "int64_t", "array": "EMBER_MAX_RANK", "offset": 0},
                         {"name": "stride", "type": "int64_t", "array": 2, "offset": 64}]}])
        cdef = gen_ember_api.make_cdef(api)
        self.assertIn("int64_t shape[8];", cdef)
        self.assertIn("int64_t stride[2];", cdef)
        self.assertLess(cdef.index("struct inner {"), cdef.index("struct outer {"))

    def test_callbacks_and_function_pointer_fields(self):
        api = description(
            callbacks=[{"name": "visit_fn", "returns": STATUS, "params": [param("user", "void*", "user_data")]}],
            structs=[{"name": "hooks", "fields": [
                {"name": "visit", "type": "visit_fn", "offset": 0},
                {"name": "raw", "type": "void (*)(void*)", "offset": 8}]}])
        cdef = gen_ember_api.make_cdef(api)
        self.assertIn("typedef ember_status (*visit_fn)(void* user);", cdef)
        self.assertIn("visit_fn visit;", cdef)
        self.assertIn("void (*raw)(void*);", cdef)

    def test_a_type_nothing_defines_is_refused(self):
        api = description(functions=[{"name": "ember_f", "returns": STATUS,
                                      "params": [param("x", "const ember_unknown*", "handle")]}])
        with self.assertRaisesRegex(gen_ember_api.DescriptionError, "ember_unknown"):
            gen_ember_api.make_cdef(api)


class LuaDataTest(unittest.TestCase):
    def test_integers_beyond_doubles_become_64_bit_literals(self):
        self.assertEqual(gen_ember_api.lua_value(9223372036854775807), "9223372036854775807LL")
        self.assertEqual(gen_ember_api.lua_value(18446744073709551615), "18446744073709551615ULL")
        self.assertEqual(gen_ember_api.lua_value(-9223372036854775808), "-9223372036854775808LL")
        self.assertEqual(gen_ember_api.lua_value(2 ** 53 - 1), str(2 ** 53 - 1))

    def test_strings_keys_and_nesting(self):
        text = gen_ember_api.lua_value({"end": True, "doc": 'say "hi"\n', "xs": [1, None]})
        self.assertIn('["end"] = true', text)  # a Lua keyword as a key
        self.assertIn('doc = "say \\034hi\\034\\010"', text)
        self.assertIn("xs = {", text)


class CommandLineTest(unittest.TestCase):
    def run_generator(self, api):
        with tempfile.TemporaryDirectory() as tmp:
            src, dst = os.path.join(tmp, "api.json"), os.path.join(tmp, "api.lua")
            with open(src, "w") as f:
                json.dump(api, f)
            done = subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "gen_ember_api.py"), src, dst],
                                  capture_output=True, text=True)
            out = None
            if os.path.exists(dst):
                with open(dst) as f:
                    out = f.read()
        return done, out

    def test_writes_a_lua_module_returning_the_description_and_cdef(self):
        done, out = self.run_generator(description(constants=[
            {"name": "EMBER_SLICE_END", "type": "int64_t", "value": 9223372036854775807}]))
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue(out.startswith("-- generated"))
        self.assertIn("value = 9223372036854775807LL", out)
        self.assertIn("api.cdef = [==[", out)
        self.assertTrue(out.rstrip().endswith("return api"))

    def test_another_schema_is_refused(self):
        api = description()
        api["schema"] = 2
        done, out = self.run_generator(api)
        self.assertEqual(done.returncode, 1)
        self.assertIn("schema 2", done.stderr)
        self.assertIsNone(out)


if __name__ == "__main__":
    unittest.main()
