"""ember.nn layers and Sequential: forward against plain-Python math on the layers' own params, layer views,
train/eval, parameters and buffers."""
import math
import unittest

import _support  # noqa: F401
import ember
import ember.nn as nn
import ember.nn.functional as F


def close(test, got, want, tol=1e-5):
    if isinstance(want, list):
        test.assertEqual(len(got), len(want))
        for a, b in zip(got, want):
            close(test, a, b, tol)
    else:
        test.assertLessEqual(abs(got - want), tol * (1 + abs(want)), (got, want))


def py_linear(x, w, b):
    """x [n][in] @ w [in][out] + b, in plain Python (Ember's Linear layout)."""
    return [[sum(r[i] * w[i][j] for i in range(len(r))) + b[j] for j in range(len(b))] for r in x]


class SequentialTest(unittest.TestCase):
    def test_mlp_forward_matches_plain_python(self):
        model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
        x = [[0.5, -1.0, 2.0, 0.25], [1.5, 0.0, -0.5, 1.0]]
        w1, b1, w2, b2 = [p.tolist() for p in model.parameters()]
        h = [[max(0.0, v) for v in r] for r in py_linear(x, w1, b1)]
        close(self, model(ember.tensor(x)).tolist(), py_linear(h, w2, b2))

    def test_names_counts_and_views(self):
        model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2, bias=False))
        names = [n for n, _ in model.named_parameters()]
        self.assertEqual(names, ["layers.0.weight", "layers.0.bias", "layers.2.weight"])
        self.assertEqual(model.num_parameters(), 4 * 3 + 3 + 3 * 2)
        self.assertEqual(model[0].weight.shape, (4, 3))
        self.assertIs(model[0].weight, model.parameters()[0])
        self.assertEqual([n for n, _ in model[0].named_parameters()], ["weight", "bias"])
        self.assertEqual(model[1].parameters(), [])
        self.assertEqual(len(model), 3)
        self.assertIn("Linear(in_features=4", repr(model))
        with self.assertRaises(ValueError):
            model[0].state_dict()  # a view: records and optimizers cover the whole Sequential
        with self.assertRaises(ValueError):
            ember.optim.SGD(model[0], lr=0.1)

    def test_child_layers_run_alone_with_the_shared_params(self):
        model = nn.Sequential(nn.Linear(4, 3), nn.GELU(approximate="tanh"), nn.Linear(3, 2))
        x = ember.randn(2, 4, seed=1)
        step = x
        for layer in model:
            step = layer(step)
        close(self, step.tolist(), model(x).tolist())

    def test_nested_sequentials_are_flattened(self):
        inner = nn.Sequential(nn.Linear(2, 3), nn.Tanh())
        outer = nn.Sequential(inner, nn.Linear(3, 1))
        self.assertEqual(len(outer), 3)
        self.assertEqual(outer.parameters()[0].tolist(), inner.parameters()[0].tolist())  # carried over
        with self.assertRaises(ValueError):
            nn.Sequential(nn.ReLU(), inner)  # a module's layers at other positions cannot keep their params
        self.assertEqual(outer(ember.ones(4, 2)).shape, (4, 1))

    def test_first_layer_params_carry_over(self):
        first = nn.Linear(2, 3)
        w = first.weight.tolist()
        model = nn.Sequential(first, nn.ReLU())
        self.assertEqual(model[0].weight.tolist(), w)
        used = nn.Linear(3, 3)
        used(ember.ones(1, 3))
        with self.assertRaises(ValueError):
            nn.Sequential(nn.Linear(2, 3), used)
        with self.assertRaises(TypeError):
            nn.Sequential(nn.Linear(2, 3), lambda t: t)

    def test_train_eval_and_dropout(self):
        model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5))
        self.assertTrue(model.training)
        model.eval()
        self.assertFalse(model.training)
        self.assertFalse(model[1].training)
        x = ember.ones(64, 8)
        a, b = model(x).tolist(), model(x).tolist()
        self.assertEqual(a, b)  # eval: dropout is the identity
        model.train()
        base = model[0](x).tolist()
        y = model(x).tolist()
        zeros = sum(v == 0.0 for r in y for v in r)
        self.assertGreater(zeros, 64 * 8 // 4)
        for r, br in zip(y, base):
            for v, bv in zip(r, br):
                if v != 0.0:
                    self.assertAlmostEqual(v, 2 * bv, places=4)

    def test_batch_norm_buffers(self):
        model = nn.Sequential(nn.BatchNorm1d(3))
        self.assertEqual([n for n, _ in model.named_buffers()], ["layers.0.running_mean", "layers.0.running_var"])
        self.assertEqual([n for n, _ in model.named_parameters()], ["layers.0.gamma", "layers.0.beta"])
        x = ember.tensor([[1.0, 2.0, 3.0], [3.0, 6.0, 9.0]])
        y = model(x).tolist()
        close(self, [r[0] for r in y], [-1.0, 1.0], 1e-3)
        close(self, model.buffers()[0].tolist(), [0.2, 0.4, 0.6])  # momentum 0.1 toward the batch mean
        model.eval()
        out = model(x).tolist()
        close(self, out[0][0], (1.0 - 0.2) / math.sqrt(model.buffers()[1].tolist()[0] + 1e-5), 1e-4)
        close(self, model[0](x).tolist(), out, 1e-4)  # the layer alone, through nn.functional, in eval mode


class LayerTest(unittest.TestCase):
    X = [[-1.5, -0.25, 0.5, 2.0]]

    def check(self, layer, fn):
        x = ember.tensor(self.X)
        close(self, layer(x).tolist(), [[fn(v) for v in self.X[0]]])

    def test_activations(self):
        self.check(nn.ReLU(), lambda v: max(v, 0.0))
        self.check(nn.Sigmoid(), lambda v: 1 / (1 + math.exp(-v)))
        self.check(nn.Tanh(), math.tanh)
        self.check(nn.GELU(), lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2))))
        self.check(nn.SiLU(), lambda v: v / (1 + math.exp(-v)))
        self.check(nn.LeakyReLU(0.1), lambda v: v if v > 0 else 0.1 * v)
        self.check(nn.Threshold(0.0, -7.0), lambda v: v if v > 0 else -7.0)
        self.check(nn.PReLU(), lambda v: v if v > 0 else 0.25 * v)

    def test_softmax_layers(self):
        x = self.X[0]
        z = sum(math.exp(v) for v in x)
        close(self, nn.Softmax(dim=-1)(ember.tensor(self.X)).tolist(), [[math.exp(v) / z for v in x]])
        close(self, nn.LogSoftmax(dim=1)(ember.tensor(self.X)).tolist(), [[v - math.log(z) for v in x]])

    def test_layer_norm_and_embedding(self):
        ln = nn.LayerNorm(4)
        x = ember.tensor(self.X)
        close(self, ln(x).tolist(), F.layer_norm(x, 4, ln.gamma, ln.beta).tolist())
        emb = nn.Embedding(5, 3)
        idx = ember.tensor([[4, 0], [1, 1]])
        out = emb(idx)
        self.assertEqual(out.shape, (2, 2, 3))
        table = emb.weight.tolist()
        close(self, out.tolist(), [[table[4], table[0]], [table[1], table[1]]])

    def test_conv_pool_flatten(self):
        ember.manual_seed(3)
        model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                              nn.Linear(4 * 4 * 4, 10))
        x = ember.randn(2, 1, 8, 8, seed=2)
        y = model(x)
        self.assertEqual(y.shape, (2, 10))
        conv = model[0]
        self.assertEqual(conv.weight.shape, (4, 1, 3, 3))
        h = F.max_pool2d(F.relu(F.conv2d(x, conv.weight, conv.bias, padding=1)), 2).flatten(1)
        close(self, y.tolist(), (h @ model[4].weight + model[4].bias).tolist(), 1e-4)
        self.assertEqual(nn.AvgPool2d(2)(x).shape, (2, 1, 4, 4))
        self.assertEqual(nn.AdaptiveAvgPool2d(1)(x).shape, (2, 1, 1, 1))

    def test_standalone_layer_is_a_module(self):
        layer = nn.Linear(3, 2)
        self.assertEqual(len(layer.parameters()), 2)
        x = [[1.0, 2.0, 3.0]]
        close(self, layer(ember.tensor(x)).tolist(), py_linear(x, layer.weight.tolist(), layer.bias.tolist()))
        opt = ember.optim.SGD(layer.parameters(), lr=0.1)
        layer(ember.tensor(x)).sum().backward()
        opt.step()
        with self.assertRaises(AttributeError):
            layer.nonexistent


if __name__ == "__main__":
    unittest.main()
