"""ember.save / ember.load: tensors and nested dicts / lists of them (state_dicts, optimizer states) round trip
exactly in a format that never executes code on load; modules and optimizers save their state_dict; malformed
files are errors. Records (ember train's files) still read, write and convert to bytes."""
import ctypes
import io
import json
import struct
import unittest
from collections import OrderedDict

import _support
import ember
import ember.nn as nn
from ember import _lib, _record_bridge


def mlp(out=3):
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, out))


def runtime_record():
    """A Record made by libember itself (a runtime Sequential's record), as `ember train` would write one."""
    desc = _lib.LayerDesc()
    _lib.check(_lib.layer_init(ctypes.byref(desc), 0))
    desc.in_features, desc.out_features, desc.bias = 3, 2, 1
    module, record = ctypes.c_void_p(), ctypes.c_void_p()
    _lib.check(_lib.module_sequential(None, ctypes.byref(desc), 1, ctypes.byref(module)))
    try:
        _lib.check(_lib.module_to_record(module, ctypes.byref(record)))
    finally:
        _lib.module_free(module)
    return ember.Record._wrap(record)


class SaveLoadTest(unittest.TestCase):
    def test_nested_objects_round_trip_exactly(self):
        obj = {"w": ember.randn(3, 4), "ints": ember.tensor([[1, -2], [3, 2**40]]),
               "mask": ember.tensor([True, False]), "nested": [ember.ones(2), (1, 2.5, "s", None)],
               7: OrderedDict([("b", ember.zeros(0)), ("a", float("inf"))])}
        path = _support.temp_path(self, "obj.pt")
        ember.save(obj, path)
        back = ember.load(path)
        self.assertEqual(sorted(map(str, back)), sorted(map(str, obj)))
        self.assertEqual(back["w"].tolist(), obj["w"].tolist())
        self.assertEqual(back["w"].dtype, "float32")
        self.assertEqual(back["ints"].tolist(), [[1, -2], [3, 2**40]])
        self.assertEqual(back["ints"].dtype, "int64")
        self.assertEqual(back["mask"].tolist(), [True, False])
        self.assertEqual(back["nested"][1], (1, 2.5, "s", None))
        self.assertIsInstance(back[7], OrderedDict)
        self.assertEqual(list(back[7]), ["b", "a"])
        self.assertEqual(back[7]["b"].shape, (0,))
        self.assertEqual(back[7]["a"], float("inf"))

    def test_file_objects_and_requires_grad(self):
        buf = io.BytesIO()
        ember.save(ember.tensor([1.0, 2.0], requires_grad=True), buf)
        buf.seek(0)
        t = ember.load(buf)
        self.assertTrue(t.requires_grad)
        self.assertEqual(t.tolist(), [1.0, 2.0])

    def test_module_state_dict_round_trip(self):
        model = mlp()
        x = ember.randn(5, 4, seed=3)
        path = _support.temp_path(self, "m.pt")
        ember.save(model.state_dict(), path)
        fresh = mlp()
        fresh.load_state_dict(ember.load(path))
        self.assertEqual(fresh(x).tolist(), model(x).tolist())
        ember.save(model, path)  # a module saves its state_dict
        other = mlp()
        self.assertEqual(repr(ember.load(other, path)), "<All keys matched successfully>")
        self.assertEqual(other(x).tolist(), model(x).tolist())
        with self.assertRaisesRegex(RuntimeError, "size mismatch for 2.weight"):
            ember.load(mlp(5), path)
        result = ember.load(nn.Sequential(nn.Linear(4, 8)), path, strict=False)
        self.assertEqual(result.unexpected_keys, ["2.weight", "2.bias"])

    def test_unsupported_objects(self):
        with self.assertRaisesRegex(TypeError, "cannot save a builtin_function_or_method"):
            ember.save({"f": len}, io.BytesIO())
        with self.assertRaisesRegex(TypeError, "dict keys must be str or int"):
            ember.save({(1, 2): ember.ones(1)}, io.BytesIO())

    def test_malformed_files_are_errors(self):
        good = io.BytesIO()
        ember.save({"w": ember.ones(4)}, good)
        data = good.getvalue()
        (n,) = struct.unpack("<Q", data[8:16])
        header = json.loads(data[16:16 + n])

        def with_header(h, tail=data[16 + n:]):
            raw = json.dumps(h).encode()
            return io.BytesIO(b"EMBERPY1" + struct.pack("<Q", len(raw)) + raw + tail)

        cases = {
            "truncated data": io.BytesIO(data[:-3]),
            "no magic": io.BytesIO(b"\x80\x04K\x01." + data),  # e.g. a pickle
            "truncated header": io.BytesIO(data[:20]),
            "unknown node": with_header({"format": 1, "root": {"pickle": "os.system"}}),
            "unknown dtype": with_header({"format": 1, "root": {"tensor": dict(header["root"]["dict"][0][1]["tensor"],
                                                                               dtype="object")}}),
            "wrong version": with_header(dict(header, format=2)),
        }
        for why, f in cases.items():
            with self.assertRaises(ember.RecordError, msg=why):
                ember.load(f)


class RecordTest(unittest.TestCase):
    def test_record_bytes_and_files(self):
        rec = runtime_record()
        self.assertEqual(len(rec), 2)
        for recorder in ("binary", "json", "compact"):
            data = rec.to_bytes(recorder=recorder)
            self.assertTrue(data.startswith(b"EMBERREC"))
            self.assertEqual(len(ember.Record.from_bytes(data)), 2)
        self.assertIn(b'"path": "layers.0.bias"', rec.to_bytes(recorder="json"))
        path = _support.temp_path(self, "r.emr")
        ember.save(rec, path, recorder="json")
        back = ember.load(path)  # a record file loads as a Record
        self.assertIsInstance(back, ember.Record)
        self.assertEqual(back.to_bytes(), rec.to_bytes())
        with self.assertRaises(ValueError):
            ember.save(rec, path, recorder="xml")

    @unittest.skipUnless(_record_bridge.available(), "this libember has no module trees")
    def test_models_as_record_files(self):
        model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 3))
        model(ember.randn(5, 4, seed=1))  # running statistics move away from their defaults
        x = ember.randn(3, 4, seed=2)
        model.eval()
        want = model(x).tolist()
        for recorder, precision, tol in (("binary", None, 0.0), ("json", None, 0.0), ("compact", "half", 2e-3)):
            path = _support.temp_path(self, "m.emr")
            ember.save(model, path, recorder=recorder, precision=precision)
            with open(path, "rb") as f:
                self.assertEqual(f.read(8), b"EMBERREC")
            fresh = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 3)).eval()
            self.assertEqual(repr(ember.load(fresh, path)), "<All keys matched successfully>")
            got = fresh(x).tolist()
            for r, w in zip(got, want):
                for a, b in zip(r, w):
                    self.assertLessEqual(abs(a - b), 20 * tol + 1e-6, (recorder, precision))
            again = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 3))
            again.load_state_dict(ember.load(path))  # a Record loads like a state_dict
            self.assertEqual(again[1].running_mean.tolist(), fresh[1].running_mean.tolist())
        json_bytes = ember.Record.read(path).to_bytes(recorder="json")
        self.assertIn(b'"path": "1.running_var"', json_bytes)
        with self.assertRaises(ember.RecordError) as cm:
            ember.load(nn.Sequential(nn.Linear(4, 8)), path)  # strict: the record has more
        self.assertIn("2.weight", str(cm.exception))
        small = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 5))
        result = ember.load(small, path, strict=False)
        self.assertEqual(sorted(result.missing_keys), ["2.bias", "2.weight"])  # mismatched shapes stay as they were
        self.assertEqual(small[0].weight.tolist(), fresh[0].weight.tolist())

    def test_corrupt_record_bytes(self):
        data = bytearray(runtime_record().to_bytes())
        data[-3] ^= 0xFF
        with self.assertRaises(ember.RecordError) as cm:
            ember.Record.from_bytes(bytes(data))
        self.assertIn("checksum", str(cm.exception))
        with self.assertRaises(ember.RecordError):
            ember.Record.from_bytes(bytes(data[:20]))


if __name__ == "__main__":
    unittest.main()
