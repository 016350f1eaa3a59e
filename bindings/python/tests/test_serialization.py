"""ember.save / ember.load / Record: round trips for every recorder, strict and partial loading, reports."""
import unittest

import _support
import ember
import ember.nn as nn


def mlp(out=3):
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, out))


def values(model):
    return [p.tolist() for p in model.parameters()]


def max_diff(a, b):
    if isinstance(a, list):
        return max((max_diff(x, y) for x, y in zip(a, b)), default=0.0)
    return abs(a - b)


class SerializationTest(unittest.TestCase):
    def test_round_trip_every_recorder(self):
        model = mlp()
        x = ember.randn(5, 4, seed=3)
        want = model(x).tolist()
        for recorder, precision, tol in (("binary", "default", 0.0), ("json", "default", 0.0),
                                         ("compact", "default", 2e-3), ("binary", "double", 0.0),
                                         ("json", "half", 2e-3)):
            path = _support.temp_path(self, "m.emr")
            ember.save(model, path, recorder=recorder, precision=precision)
            fresh = mlp()
            report = ember.load(fresh, path)
            self.assertFalse(report, report)
            self.assertLessEqual(max_diff(values(fresh), values(model)), tol, (recorder, precision))
            self.assertLessEqual(max_diff(fresh(x).tolist(), want), 20 * tol + 1e-6, (recorder, precision))

    def test_standalone_layer_round_trip(self):
        layer = nn.Linear(3, 2)
        path = _support.temp_path(self, "l.emr")
        ember.save(layer, path)
        other = nn.Linear(3, 2)
        ember.load(other, path)
        self.assertEqual(other.weight.tolist(), layer.weight.tolist())

    def test_strict_mismatch_reports_and_changes_nothing(self):
        path = _support.temp_path(self, "m.emr")
        ember.save(mlp(3), path)
        other = mlp(5)
        before = values(other)
        with self.assertRaises(ember.RecordError) as cm:
            ember.load(other, path)
        text = str(cm.exception)
        self.assertIn("ember_module_load", text)
        self.assertIn("layers.2.weight", text)
        self.assertIn("[8, 3] in record, [8, 5] in module", text)
        report = cm.exception.report
        self.assertEqual(len(report.mismatched), 2)
        self.assertEqual(values(other), before)

    def test_partial_load(self):
        path = _support.temp_path(self, "m.emr")
        src = mlp(3)
        ember.save(src, path)
        other = mlp(5)
        report = ember.load(other, path, strict=False)
        self.assertTrue(report)
        self.assertEqual(report.missing_keys, [])
        self.assertEqual(len(report.mismatched), 2)
        self.assertEqual(other[0].weight.tolist(), src[0].weight.tolist())  # what matched was loaded

    def test_missing_and_unexpected_keys(self):
        small = nn.Sequential(nn.Linear(4, 8))
        path = _support.temp_path(self, "s.emr")
        ember.save(small, path)
        with self.assertRaises(ember.RecordError) as cm:
            ember.load(mlp(), path)
        self.assertEqual(sorted(cm.exception.report.missing_keys), ["layers.2.bias", "layers.2.weight"])
        ember.save(mlp(), path)
        report = ember.load(small, path, strict=False)
        self.assertEqual(sorted(report.unexpected_keys), ["layers.2.bias", "layers.2.weight"])

    def test_state_dict_and_bytes(self):
        model = mlp()
        rec = model.state_dict()
        self.assertEqual(len(rec), 4)
        for recorder in ("binary", "json", "compact"):
            data = rec.to_bytes(recorder=recorder)
            self.assertTrue(data.startswith(b"EMBERREC"))
            again = ember.Record.from_bytes(data)
            fresh = mlp()
            fresh.load_state_dict(again)
            tol = 2e-3 if recorder == "compact" else 0.0
            self.assertLessEqual(max_diff(values(fresh), values(model)), tol)
        self.assertIn(b'"path": "layers.0.bias"', rec.to_bytes(recorder="json"))

    def test_load_path_returns_a_record(self):
        path = _support.temp_path(self, "m.emr")
        model = mlp()
        ember.save(model, path, recorder="json")
        rec = ember.load(path)
        self.assertIsInstance(rec, ember.Record)
        self.assertEqual(len(rec), 4)
        rec2_path = _support.temp_path(self, "copy.emr")
        ember.save(rec, rec2_path)
        fresh = mlp()
        ember.load(fresh, rec2_path)
        self.assertEqual(values(fresh), values(model))

    def test_load_after_step_is_seen_by_param_views(self):
        model = mlp()
        w = model[0].weight
        path = _support.temp_path(self, "m.emr")
        ember.save(model, path)
        saved = w.tolist()
        opt = ember.optim.SGD(model, lr=0.5)
        model(ember.ones(2, 4)).sum().backward()
        opt.step()
        self.assertNotEqual(w.tolist(), saved)
        ember.load(model, path)
        self.assertEqual(w.tolist(), saved)

    def test_corrupt_bytes(self):
        data = bytearray(mlp().state_dict().to_bytes())
        data[-3] ^= 0xFF
        with self.assertRaises(ember.RecordError) as cm:
            ember.Record.from_bytes(bytes(data))
        self.assertIn("checksum", str(cm.exception))
        with self.assertRaises(ember.RecordError):
            ember.Record.from_bytes(bytes(data[:20]))


if __name__ == "__main__":
    unittest.main()
