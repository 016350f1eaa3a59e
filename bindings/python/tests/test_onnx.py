"""ember.onnx.load (issue 19): an ONNX model as an nn.Module whose parameters are its initializers, against torch
1.13's values for the same models (tests/c_api/onnx_models/gen_onnx_models.py writes the models and
onnx_expected.json): outputs, gradients w.r.t. the initializers, ember.optim steps and state_dict round trips,
several inputs and outputs, the mode flag, and the errors."""
import json
import os
import unittest

import _support
import ember
import ember.optim

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "tests", "c_api", "onnx_models")
with open(os.path.join(MODELS, "onnx_expected.json")) as f:
    EXPECTED = json.load(f)


def model(name):
    return os.path.join(MODELS, name)


def tensor(key, device="cpu"):
    e = EXPECTED[key]
    return ember.tensor(e["values"], dtype="float32", device=device).reshape(*e["shape"])


def _parser_missing():
    try:
        ember.onnx.load(model("two_io.onnx"))
    except ember.errors.UnsupportedError as e:
        if "not available" in str(e):  # not an operator the importer lacks
            return str(e)
    return None


PARSER_MISSING = _parser_missing()


@unittest.skipIf(PARSER_MISSING, "libember has no ONNX parser: %s" % PARSER_MISSING)
class OnnxLoad(unittest.TestCase):
    def assert_close(self, got, key, tol=1e-4):
        want = EXPECTED[key]
        self.assertEqual(list(got.shape), want["shape"], key)
        for i, (g, w) in enumerate(zip(got.reshape(-1).tolist(), want["values"])):
            self.assertLessEqual(abs(g - w), tol, "%s[%d]: %r, torch %r" % (key, i, g, w))

    def test_operator_list(self):
        names = ember.onnx.supported_operators()
        self.assertEqual(names, sorted(names))
        self.assertIn("Identity", names)
        self.assertNotIn("NotAnOnnxOp", names)

    def test_mlp_is_a_module_of_its_initializers(self):
        m = ember.onnx.load(model("mlp.onnx"))
        self.assertIsInstance(m, ember.nn.Module)
        self.assertFalse(m.training)  # an exported graph starts in eval mode
        self.assertEqual(m.input_names, ["x"])
        self.assertEqual(m.output_names, ["y"])
        self.assertEqual([n for n, _ in m.named_parameters()], ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"])
        self.assertTrue(all(isinstance(p, ember.nn.Parameter) and p.requires_grad for p in m.parameters()))
        self.assertEqual(list(m.fc1.weight.shape), [4, 3])
        self.assert_close(m(tensor("mlp_x")), "mlp_y")

    def test_gradients_reach_the_parameters(self):
        m = ember.onnx.load(model("mlp.onnx")).train()
        m(tensor("mlp_x")).sum().backward()
        self.assert_close(m.fc1.weight.grad, "mlp_grad_fc1_weight")
        self.assert_close(m.fc2.bias.grad, "mlp_grad_fc2_bias")

    def test_optimizer_steps_and_state_dict_loads_reach_the_graph(self):
        m = ember.onnx.load(model("mlp.onnx"))
        saved = {k: v.detach().clone() for k, v in m.state_dict().items()}
        self.assertEqual(sorted(saved), ["fc1.bias", "fc1.weight", "fc2.bias", "fc2.weight"])
        x = tensor("mlp_x")
        before = m(x).reshape(-1).tolist()
        opt = ember.optim.SGD(m.parameters(), lr=0.1)
        opt.zero_grad()
        m(x).sum().backward()
        opt.step()
        after = m(x).reshape(-1).tolist()
        # SGD on sum(y) moves fc2.bias by -0.1 * 5 per output, so every output drops by at least 0.5.
        for b, a in zip(before, after):
            self.assertLess(a, b - 0.49)
        m.load_state_dict(saved)
        for b, a in zip(before, m(x).reshape(-1).tolist()):
            self.assertAlmostEqual(a, b, places=5)

    def test_record_file_round_trip(self):
        m = ember.onnx.load(model("mlp.onnx"))
        x = tensor("mlp_x")
        path = _support.temp_path(self, "mlp.emr")
        ember.save(m, path, recorder="binary")  # an ember record, keyed by the initializer names
        before = m(x).reshape(-1).tolist()
        with ember.no_grad():
            m.fc2.bias.add_(1.0)
        self.assertNotAlmostEqual(m(x).reshape(-1).tolist()[0], before[0], places=3)
        m.load_state_dict(ember.load(path))
        for b, a in zip(before, m(x).reshape(-1).tolist()):
            self.assertAlmostEqual(a, b, places=5)

    def test_several_inputs_and_outputs(self):
        m = ember.onnx.load(model("two_io.onnx"))
        self.assertEqual(m.input_names, ["a", "b"])
        self.assertEqual(m.output_names, ["sum", "prod"])
        s, p = m(tensor("two_a"), tensor("two_b"))
        self.assert_close(s, "two_sum")
        self.assert_close(p, "two_prod")
        self.assertEqual(list(m.state_dict()), ["scale"])
        with self.assertRaisesRegex(TypeError, r"2 input\(s\) \(a, b\), 1 given"):
            m(tensor("two_a"))

    def test_integer_initializers_are_buffers(self):
        m = ember.onnx.load(model("reshape.onnx"))
        self.assertEqual(list(m.parameters()), [])
        self.assertEqual(m.state_dict()["shape"].tolist(), [3, 2])
        y = m(ember.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
        self.assertEqual(y.tolist(), [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])

    def test_train_and_eval_reach_dropout(self):
        m = ember.onnx.load(model("dropout.onnx"))
        x = ember.ones(4, 8)
        self.assertEqual(m(x).reshape(-1).tolist(), [1.0] * 32)
        values = set(m.train()(x).reshape(-1).tolist())
        self.assertEqual(values, {0.0, 2.0})

    def test_unsupported_operator_is_named_at_load(self):
        with self.assertRaisesRegex(ember.errors.UnsupportedError, "NotAnOnnxOp"):
            ember.onnx.load(model("unsupported.onnx"))

    def test_gpu_backends_give_the_cpu_values(self):
        gpus = [n for n, b in ember.backends().items() if n != "cpu" and b["usable"]]
        if not gpus:
            self.skipTest("no usable GPU backend")
        for name in gpus:
            with self.subTest(backend=name):
                m = ember.onnx.load(model("mlp.onnx"), device=name).train()
                y = m(tensor("mlp_x", device=name))
                self.assert_close(y, "mlp_y")
                y.sum().backward()
                self.assert_close(m.fc2.bias.grad, "mlp_grad_fc2_bias")

    def test_missing_file(self):
        with self.assertRaisesRegex(ember.errors.EmberError, "no_such.onnx"):
            ember.onnx.load(model("no_such.onnx"))


@unittest.skipUnless(PARSER_MISSING, "libember has the ONNX parser")
class OnnxWithoutParser(unittest.TestCase):
    def test_load_says_unsupported(self):
        with self.assertRaisesRegex(ember.errors.UnsupportedError, "ONNX"):
            ember.onnx.load(model("mlp.onnx"))


if __name__ == "__main__":
    unittest.main()
