"""Fine-tuning a PyTorch export from Python (issue 19): tests/onnx/models/digits_mlp.onnx (`ember train --model
mlp` written in PyTorch 1.13 and exported by torch.onnx.export, gen_torch_models.py) loaded with ember.onnx.load and
trained for 5 plain SGD steps with ember.optim on a digits batch improves its loss exactly like the same model
written natively with ember.nn (same weights, same optimizer) and like PyTorch (the losses recorded in
digits_mlp_finetune.safetensors). tests/onnx/finetune_test.cpp does the same through the C++ importer."""
import array
import json
import os
import struct
import unittest

import _support  # noqa: F401 (puts the package on sys.path)
import ember
import ember.nn as nn
import ember.nn.functional as F
import ember.optim

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "tests", "onnx", "models")
STEPS = 5


def read_safetensors(path):
    """{name: (values, shape)} of a safetensors file (F32 / I64 only), without NumPy."""
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        begin, end = e["data_offsets"]
        values = array.array({"F32": "f", "I64": "q"}[e["dtype"]], data[8 + n + begin:8 + n + end])
        out[name] = (list(values), e["shape"])
    return out


class NativeMlp(nn.Module):
    """tools/ember/models.hpp's DigitsMlp with ember.nn: the layers PyTorch's export names fc1..fc3."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(64, 256), nn.Linear(256, 256), nn.Linear(256, 10)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def _parser_missing():
    try:
        ember.onnx.load(os.path.join(MODELS, "digits_mlp.onnx"))
    except ember.errors.UnsupportedError as e:
        if "not available" in str(e):
            return str(e)
    return None


PARSER_MISSING = _parser_missing()


@unittest.skipIf(PARSER_MISSING, "libember has no ONNX parser: %s" % PARSER_MISSING)
class FinetuneTorchExport(unittest.TestCase):
    def test_digits_mlp_finetunes_like_the_native_model_and_pytorch(self):
        ref = read_safetensors(os.path.join(MODELS, "digits_mlp_finetune.safetensors"))
        x = ember.tensor(ref["x"][0], dtype="float32").reshape(*ref["x"][1])
        y = ember.tensor(ref["y"][0], dtype="int64")
        lr, torch_losses = ref["lr"][0][0], ref["losses"][0]

        imported = ember.onnx.load(os.path.join(MODELS, "digits_mlp.onnx")).train()
        native = NativeMlp()
        native.load_state_dict(imported.state_dict())  # initializer names and layouts are torch.nn.Linear's

        def finetune(model):
            opt = ember.optim.SGD(model.parameters(), lr=lr)
            losses = []
            for _ in range(STEPS):
                loss = F.cross_entropy(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
            return losses

        got, want = finetune(imported), finetune(native)
        self.assertEqual(len(torch_losses), STEPS)
        for step, (g, n, t) in enumerate(zip(got, want, torch_losses)):
            self.assertAlmostEqual(g, n, delta=1e-4, msg="step %d: imported vs native" % step)
            self.assertAlmostEqual(g, t, delta=1e-4, msg="step %d: imported vs PyTorch" % step)
        self.assertLess(got[-1], got[0] - 0.03, "the imported model's loss did not improve")


if __name__ == "__main__":
    unittest.main()
