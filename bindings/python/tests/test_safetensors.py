"""issue 13: safetensors from Python. PyTorch 1.13 state_dicts (tests/reference/torch_*.safetensors, written by
tests/reference/gen_torch_safetensors.py) load into the equivalent ember.nn modules with Module.load_state_dict and
give PyTorch's outputs; state_dicts save to safetensors and read back; hostile files raise RecordError with the
name escaped."""
import os
import unittest
from collections import OrderedDict

import _support
import ember
import ember.nn as nn
import ember.nn.functional as F
import ember.safetensors
from ember import _record_bridge, errors

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
REFERENCE = os.path.join(ROOT, "tests", "reference")
CORPUS = os.path.join(ROOT, "tests", "fuzz", "safetensors_corpus")


def io_tensors(shapes):
    """The named tensors of torch_io.safetensors, shaped as `shapes` says."""
    like = OrderedDict((k, ember.zeros(*s)) for k, s in shapes.items())
    rec = ember.load_safetensors(os.path.join(REFERENCE, "torch_io.safetensors"))
    return _record_bridge.state_dict_from_record(rec, like, strict=False)


class TinyCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 5 * 5, 3)

    def forward(self, x):
        return self.fc(F.relu(self.bn(self.conv(x))).flatten(1))


@unittest.skipUnless(_record_bridge.available(), "this libember has no module trees")
class SafetensorsTest(unittest.TestCase):
    def assert_close(self, got, want, tol=1e-5):
        g, w = got.tolist(), want.tolist()
        self.assertEqual(len(g), len(w))
        for a, b in zip(g, w):
            for x, y in zip(a, b):
                self.assertLessEqual(abs(x - y), tol, (x, y))

    def test_pytorch_mlp_state_dict_gives_pytorch_outputs(self):
        mlp = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
        keys = mlp.load_state_dict(ember.load_safetensors(os.path.join(REFERENCE, "torch_mlp.safetensors")))
        self.assertEqual((keys.missing_keys, keys.unexpected_keys), ([], []))
        io = io_tensors({"mlp.input": (4, 5), "mlp.output": (4, 3)})
        self.assert_close(mlp(io["mlp.input"]), io["mlp.output"])

    def test_pytorch_cnn_with_batch_norm_gives_pytorch_outputs(self):
        cnn = TinyCnn()
        ember.safetensors.load_model(cnn, os.path.join(REFERENCE, "torch_cnn.safetensors"))
        cnn.eval()
        io = io_tensors({"cnn.input": (2, 2, 5, 5), "cnn.output": (2, 3)})
        self.assert_close(cnn(io["cnn.input"]), io["cnn.output"])

    def test_save_and_read_back(self):
        mlp = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
        path = _support.temp_path(self, "mlp.safetensors")
        ember.save_safetensors(mlp.state_dict(), path)
        other = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
        other.load_state_dict(ember.load_safetensors(path))
        for (k, a), (_, b) in zip(mlp.state_dict().items(), other.state_dict().items()):
            self.assertEqual(a.tolist(), b.tolist(), k)
        with open(path, "rb") as f:
            head = f.read(9)
        self.assertEqual(head[8:9], b"{")  # a safetensors file, not an ember record

    def test_partial_and_strict_mismatch(self):
        wide = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 4))
        rec = ember.load_safetensors(os.path.join(REFERENCE, "torch_mlp.safetensors"))
        with self.assertRaises(errors.EmberError) as cm:
            wide.load_state_dict(rec)
        self.assertIn("2.weight", str(cm.exception))
        wide.load_state_dict(rec, strict=False)  # the first layer matches and loads; the last keeps its values
        mlp = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
        mlp.load_state_dict(rec)
        self.assertEqual(wide[0].weight.tolist(), mlp[0].weight.tolist())
        self.assertEqual(list(wide[2].weight.shape), [4, 8])

    def test_hostile_files_raise_record_errors(self):
        with self.assertRaises(errors.RecordError) as cm:
            ember.load_safetensors(os.path.join(CORPUS, "hostile_offsets_past_end.safetensors"))
        self.assertIn("tensor 'x': data_offsets [0, 16] run past the end", str(cm.exception))
        with self.assertRaises(errors.RecordError) as cm:
            ember.load_safetensors(os.path.join(CORPUS, "hostile_escape_in_name.safetensors"))
        self.assertIn("'\\x1b[31mred'", str(cm.exception))
        self.assertNotIn("\x1b", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
