"""Device names come from libember (ember_backend_list / ember_backend_query), not from a list in the binding."""
import ctypes
import unittest

import _support  # noqa: F401
import ember
from ember import _lib


def reported_backends():
    """{id: (name, compiled)} asked of the C ABI directly: the compiled ones from ember_backend_list, then every
    id ember_backend_query accepts from 0 up."""
    count = ctypes.c_size_t()
    _lib.backend_list(None, 0, ctypes.byref(count))
    ids = (ctypes.c_int32 * count.value)()
    _lib.check(_lib.backend_list(ids, count.value, ctypes.byref(count)))
    out = {}
    for b in range(64):
        info = _lib.BackendInfo()
        info.struct_size = ctypes.sizeof(info)
        if _lib.backend_query(b, ctypes.byref(info)):
            break
        out[b] = (info.name.decode(), bool(info.compiled))
    for b in ids:
        info = _lib.BackendInfo()
        info.struct_size = ctypes.sizeof(info)
        _lib.check(_lib.backend_query(b, ctypes.byref(info)))
        out[b] = (info.name.decode(), bool(info.compiled))
    return out, list(ids)


class DeviceNamesTest(unittest.TestCase):
    def setUp(self):
        self.reported, self.compiled_ids = reported_backends()

    def test_backends_are_the_ones_the_library_reports(self):
        listed = ember.backends()
        self.assertEqual(set(listed), {name for name, _ in self.reported.values()})
        for b in self.compiled_ids:
            name = self.reported[b][0]
            self.assertTrue(listed[name]["compiled"], name)
        self.assertIn(0, self.compiled_ids)  # ember.h: the CPU backend is always there

    def test_every_reported_name_is_a_device(self):
        for name, _ in self.reported.values():
            d = ember.device(name)
            self.assertEqual(d.type, name)
            self.assertEqual(ember.device("%s:1" % name).index, 1)

    def test_unknown_name_lists_the_known_ones(self):
        with self.assertRaises(ValueError) as cm:
            ember.device("tpu")
        for name, _ in self.reported.values():
            self.assertIn(name, str(cm.exception))

    def test_tensors_on_every_usable_backend_report_it(self):
        for name, info in ember.backends().items():
            if not info["usable"]:
                continue
            t = ember.zeros(2, 3, device=name)
            self.assertEqual(t.device, ember.device(name))
            self.assertEqual(t.device.type, name)
            self.assertEqual((t + 1).sum().item(), 6.0)

    def test_backends_built_without_say_so(self):
        for name, info in ember.backends().items():
            if not info["compiled"]:
                with self.assertRaises(ember.UnsupportedError) as cm:
                    ember.zeros(2, device=name)
                self.assertIn(name, str(cm.exception))

    def test_default_device_prints_as_its_name(self):
        self.assertEqual(str(ember.zeros(1).device), self.reported[0][0])
        self.assertEqual(str(ember.device(self.reported[0][0], 1)), self.reported[0][0] + ":1")


if __name__ == "__main__":
    unittest.main()
