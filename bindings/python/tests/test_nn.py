"""ember.nn's module system against torch.nn's rules: attribute registration, traversal order and names,
containers (with user modules inside), train/eval, freezing, zero_grad, state_dict / load_state_dict (strict and
not, torch's messages), casts; and the layers' forward against plain-Python math on their own torch-layout
params."""
import math
import unittest
from collections import OrderedDict

import _support  # noqa: F401
import ember
import ember.nn as nn
import ember.nn.functional as F


def close(test, got, want, tol=1e-5):
    if isinstance(want, (list, tuple)):
        test.assertEqual(len(got), len(want))
        for a, b in zip(got, want):
            close(test, a, b, tol)
    else:
        test.assertLessEqual(abs(got - want), tol * (1 + abs(want)), (got, want))


def py_linear(x, w, b):
    """x [n][in] @ w[out][in].T + b, in plain Python (torch's Linear layout)."""
    return [[sum(r[i] * w[j][i] for i in range(len(r))) + b[j] for j in range(len(b))] for r in x]


class Block(nn.Module):
    """A user module: a Linear, a learnable scale (nn.Parameter) and a step counter buffer."""

    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
        self.scale = nn.Parameter(ember.tensor([2.0]))
        self.register_buffer("calls", ember.tensor([0.0]))
        self.register_buffer("scratch", ember.tensor([0.0]), persistent=False)

    def forward(self, x):
        return x + self.scale * self.lin(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(Block(3), nn.ReLU(), Block(3))
        self.head = nn.Linear(3, 2, bias=False)
        self.extra = nn.ModuleList([nn.Linear(2, 2)])
        self.table = nn.ModuleDict({"b": nn.Linear(2, 1), "a": nn.Identity()})

    def forward(self, x):
        return self.table["b"](self.extra[0](self.head(self.body(x))))


class RegistrationTest(unittest.TestCase):
    def test_names_in_torch_order(self):
        net = Net()
        self.assertEqual([n for n, _ in net.named_parameters()], [
            "body.0.scale", "body.0.lin.weight", "body.0.lin.bias", "body.2.scale", "body.2.lin.weight",
            "body.2.lin.bias", "head.weight", "extra.0.weight", "extra.0.bias", "table.b.weight", "table.b.bias"])
        self.assertEqual([n for n, _ in net.named_buffers()],
                         ["body.0.calls", "body.0.scratch", "body.2.calls", "body.2.scratch"])
        self.assertEqual(list(net.state_dict().keys()), [
            "body.0.scale", "body.0.calls", "body.0.lin.weight", "body.0.lin.bias", "body.2.scale",
            "body.2.calls", "body.2.lin.weight", "body.2.lin.bias", "head.weight", "extra.0.weight",
            "extra.0.bias", "table.b.weight", "table.b.bias"])  # non-persistent buffers are left out
        self.assertEqual([n for n, _ in net.named_modules()], [
            "", "body", "body.0", "body.0.lin", "body.1", "body.2", "body.2.lin", "head", "extra", "extra.0",
            "table", "table.b", "table.a"])
        self.assertEqual([n for n, _ in net.named_children()], ["body", "head", "extra", "table"])
        self.assertEqual(net(ember.ones(4, 3)).shape, (4, 1))

    def test_shared_params_are_listed_once(self):
        lin = nn.Linear(2, 2)
        seq = nn.Sequential(lin, nn.ReLU(), lin)
        self.assertEqual(len(list(seq.parameters())), 2)
        self.assertEqual([n for n, _ in seq.named_modules()], ["", "0", "1"])

    def test_parameter_is_a_leaf_tensor(self):
        p = nn.Parameter(ember.tensor([1.0, 2.0]))
        self.assertIsInstance(p, ember.Tensor)
        self.assertTrue(p.requires_grad)
        self.assertFalse(nn.Parameter(ember.ones(2), requires_grad=False).requires_grad)
        (p * p).sum().backward()
        self.assertEqual(p.grad.tolist(), [2.0, 4.0])
        self.assertTrue(repr(p).startswith("Parameter containing:"))

    def test_assignment_rules(self):
        m = Block(2)
        with self.assertRaisesRegex(TypeError, "cannot assign 'ember.Tensor' as parameter 'scale'"):
            m.scale = ember.ones(1)
        m.scale = None
        self.assertEqual([n for n, _ in m.named_parameters()], ["lin.weight", "lin.bias"])
        m.calls = ember.tensor([5.0])  # a registered buffer takes a plain tensor
        self.assertEqual(m.state_dict()["calls"].tolist(), [5.0])
        with self.assertRaisesRegex(TypeError, "cannot assign 'int' as child module 'lin'"):
            m.lin = 3
        m.plain = 7  # anything else is an ordinary attribute
        self.assertEqual(m.plain, 7)
        del m.lin
        self.assertNotIn("lin", dict(m.named_children()))
        with self.assertRaisesRegex(AttributeError, "'Block' object has no attribute 'lin'"):
            m.lin

        class Early(nn.Module):
            def __init__(self):
                self.w = nn.Parameter(ember.ones(1))
        with self.assertRaisesRegex(AttributeError, "cannot assign parameters before Module.__init__"):
            Early()
        with self.assertRaisesRegex(KeyError, "attribute 'plain' already exists"):
            m.register_buffer("plain", ember.ones(1))

    def test_containers(self):
        seq = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 3)), ("act", nn.Tanh())]))
        self.assertEqual([n for n, _ in seq.named_parameters()], ["fc.weight", "fc.bias"])
        self.assertIs(seq[0], seq.fc)
        self.assertEqual(len(seq[0:1]), 1)
        seq.append(Block(3))
        self.assertIsInstance(seq[-1], Block)
        self.assertEqual(seq(ember.ones(1, 2)).shape, (1, 3))
        ml = nn.ModuleList([nn.Linear(1, 1) for _ in range(3)])
        ml.append(nn.ReLU())
        ml.insert(0, nn.Tanh())
        self.assertEqual([type(m).__name__ for m in ml], ["Tanh", "Linear", "Linear", "Linear", "ReLU"])
        self.assertEqual([n for n, _ in ml.named_parameters()][:2], ["1.weight", "1.bias"])
        with self.assertRaises(IndexError):
            ml[9]
        md = nn.ModuleDict()
        md["x"] = nn.Linear(1, 2)
        self.assertEqual(list(md.keys()), ["x"])
        self.assertIn("x", md)
        pl = nn.ParameterList([ember.ones(2), nn.Parameter(ember.zeros(3))])
        self.assertEqual([n for n, _ in pl.named_parameters()], ["0", "1"])
        self.assertIsInstance(pl[0], nn.Parameter)

    def test_train_eval_reach_every_child(self):
        net = nn.Sequential(nn.Linear(8, 8), nn.Sequential(nn.Dropout(0.5)))
        net.eval()
        self.assertEqual([m.training for m in net.modules()], [False] * 4)
        x = ember.ones(64, 8)
        self.assertEqual(net(x).tolist(), net(x).tolist())  # dropout is the identity in eval mode
        net.train()
        self.assertTrue(all(m.training for m in net.modules()))
        y = net(x).tolist()
        self.assertGreater(sum(v == 0.0 for r in y for v in r), 64 * 8 // 4)
        with self.assertRaises(ValueError):
            net.train("yes")

    def test_apply_visits_children_first(self):
        seen = []
        Net().apply(lambda m: seen.append(type(m).__name__))
        self.assertEqual(seen[:3], ["Linear", "Block", "ReLU"])
        self.assertEqual(seen[-1], "Net")

    def test_freeze_and_zero_grad(self):
        net = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
        net[0].requires_grad_(False)
        net(ember.ones(4, 3)).sum().backward()
        self.assertIsNone(net[0].weight.grad)
        self.assertIsNotNone(net[1].weight.grad)
        net.zero_grad(set_to_none=False)
        self.assertEqual(net[1].bias.grad.tolist(), [0.0])
        net.zero_grad()
        self.assertIsNone(net[1].bias.grad)

    def test_double_keeps_the_parameter_objects(self):
        lin = nn.Linear(2, 2)
        w = lin.weight
        values = w.tolist()
        lin(ember.ones(3, 2)).sum().backward()
        self.assertIs(lin.double(), lin)
        self.assertIs(lin.weight, w)
        self.assertEqual(w.grad.tolist(), [[3.0, 3.0], [3.0, 3.0]])  # the gradient is converted too
        self.assertEqual(w.dtype, ember.ones(1).double().dtype)
        close(self, w.tolist(), values)
        self.assertTrue(w.requires_grad)
        lin.float()
        self.assertEqual(w.dtype, "float32")


class IssueScenarioTest(unittest.TestCase):
    """The trial of issue 11: a PyTorch-style CNN subclass with an Adam over model.parameters() must learn."""

    def test_cnn_subclass_learns(self):
        class CNN(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
                self.fc = nn.Linear(16 * 64, 10)

            def forward(self, x):
                return self.fc(F.relu(self.conv1(x)).view(x.size(0), -1))

        ember.manual_seed(1)
        model = CNN()
        params = list(model.parameters())
        self.assertEqual([p.shape for p in params], [(16, 1, 3, 3), (16,), (10, 1024), (10,)])
        opt = ember.optim.Adam(model.parameters(), lr=1e-3)
        x, y = ember.randn(16, 1, 8, 8, seed=4), ember.arange(16) % 10
        losses = []
        for _ in range(20):
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        self.assertLess(losses[-1], 0.5 * losses[0])
        model.eval()
        self.assertFalse(model.conv1.training)
        self.assertEqual(len(model.state_dict()), 4)
        with self.assertRaises(TypeError):
            ember.optim.Adam(model.parameters(), amsgrad=True, foo=3)


class StateDictTest(unittest.TestCase):
    def test_round_trip_in_place(self):
        a, b = Net(), Net()
        w = b.head.weight
        result = b.load_state_dict(a.state_dict())
        self.assertEqual(repr(result), "<All keys matched successfully>")
        self.assertEqual((result.missing_keys, result.unexpected_keys), ([], []))
        self.assertIs(b.head.weight, w)  # copied into the existing Parameter
        self.assertEqual(w.tolist(), a.head.weight.tolist())
        x = ember.ones(2, 3)
        self.assertEqual(b(x).tolist(), a(x).tolist())

    def test_state_dict_is_a_detached_snapshot_type(self):
        sd = nn.Linear(2, 2).state_dict()
        self.assertIsInstance(sd, OrderedDict)
        self.assertFalse(sd["weight"].requires_grad)

    def test_strict_errors_in_torch_shape(self):
        small = nn.Sequential(nn.Linear(4, 8))
        big = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        with self.assertRaises(RuntimeError) as cm:
            big.load_state_dict(small.state_dict())
        self.assertEqual(str(cm.exception), 'Error(s) in loading state_dict for Sequential:\n\t'
                                            'Missing key(s) in state_dict: "2.weight", "2.bias". ')
        with self.assertRaises(RuntimeError) as cm:
            small.load_state_dict(big.state_dict())
        self.assertIn('Unexpected key(s) in state_dict: "2.weight", "2.bias". ', str(cm.exception))
        result = small.load_state_dict(big.state_dict(), strict=False)
        self.assertEqual(result.unexpected_keys, ["2.weight", "2.bias"])
        self.assertEqual(small[0].weight.tolist(), big[0].weight.tolist())
        other = nn.Sequential(nn.Linear(4, 5))
        before = other[0].bias.tolist()
        with self.assertRaises(RuntimeError) as cm:
            other.load_state_dict(small.state_dict(), strict=False)
        self.assertIn("size mismatch for 0.weight: copying a param with shape torch.Size([8, 4]) from checkpoint, "
                      "the shape in current model is torch.Size([5, 4]).", str(cm.exception))
        self.assertEqual(other[0].bias.tolist(), before)
        with self.assertRaises(TypeError):
            other.load_state_dict([1, 2])


class LayerTest(unittest.TestCase):
    X = [[-1.5, -0.25, 0.5, 2.0]]

    def check(self, layer, fn):
        close(self, layer(ember.tensor(self.X)).tolist(), [[fn(v) for v in self.X[0]]])

    def test_activations(self):
        self.check(nn.ReLU(), lambda v: max(v, 0.0))
        self.check(nn.Sigmoid(), lambda v: 1 / (1 + math.exp(-v)))
        self.check(nn.Tanh(), math.tanh)
        self.check(nn.GELU(), lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2))))
        self.check(nn.SiLU(), lambda v: v / (1 + math.exp(-v)))
        self.check(nn.LeakyReLU(0.1), lambda v: v if v > 0 else 0.1 * v)
        self.check(nn.Threshold(0.0, -7.0), lambda v: v if v > 0 else -7.0)
        self.check(nn.PReLU(), lambda v: v if v > 0 else 0.25 * v)
        self.check(nn.Identity(), lambda v: v)
        z = sum(math.exp(v) for v in self.X[0])
        self.check(nn.Softmax(dim=1), lambda v: math.exp(v) / z)
        self.check(nn.LogSoftmax(dim=1), lambda v: v - math.log(z))

    def test_linear_layout_and_init(self):
        ember.manual_seed(5)
        lin = nn.Linear(50, 40)
        self.assertEqual(lin.weight.shape, (40, 50))
        self.assertEqual(lin.bias.shape, (40,))
        bound = 1 / math.sqrt(50)  # kaiming_uniform_(a=sqrt(5)) and the bias rule both give 1/sqrt(fan_in)
        w = [v for r in lin.weight.tolist() for v in r]
        self.assertLessEqual(max(abs(v) for v in w), bound)
        self.assertGreater(max(abs(v) for v in w), 0.95 * bound)
        self.assertLessEqual(max(abs(v) for v in lin.bias.tolist()), bound)
        x = [[0.5, -1.0] * 25]
        close(self, lin(ember.tensor(x)).tolist(), py_linear(x, lin.weight.tolist(), lin.bias.tolist()), 1e-4)
        self.assertEqual(repr(lin), "Linear(in_features=50, out_features=40, bias=True)")
        small = nn.Linear(3, 2)
        w, b = small.weight.tolist(), small.bias.tolist()
        close(self, small(ember.tensor([1.0, -2.0, 0.5])).tolist(), py_linear([[1.0, -2.0, 0.5]], w, b)[0])  # 1-D
        close(self, F.linear(ember.ones(2, 2, 3), small.weight).tolist(),
              [py_linear([[1.0] * 3] * 2, w, [0.0, 0.0])] * 2)  # rank 3, no bias
        self.assertIsNone(nn.Linear(2, 2, bias=False).bias)

    def test_conv_pool_flatten(self):
        ember.manual_seed(3)
        model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                              nn.Linear(4 * 4 * 4, 10))
        x = ember.randn(2, 1, 8, 8, seed=2)
        y = model(x)
        self.assertEqual(y.shape, (2, 10))
        conv = model[0]
        self.assertEqual(conv.weight.shape, (4, 1, 3, 3))
        bound = 1 / math.sqrt(9)
        self.assertLessEqual(max(abs(v) for v in conv.weight.reshape(-1).tolist()), bound)
        h = F.max_pool2d(F.relu(F.conv2d(x, conv.weight, conv.bias, padding=1)), 2).flatten(1)
        close(self, y.tolist(), (h @ model[4].weight.t() + model[4].bias).tolist(), 1e-4)
        self.assertEqual(nn.AvgPool2d(2)(x).shape, (2, 1, 4, 4))
        self.assertEqual(nn.AdaptiveAvgPool2d(1)(x).shape, (2, 1, 1, 1))
        self.assertEqual(nn.Conv2d(1, 2, 3, padding="same")(x).shape, (2, 2, 8, 8))
        self.assertEqual(nn.Conv2d(2, 4, 3, groups=2).weight.shape, (4, 1, 3, 3))

    def test_layer_norm_and_embedding(self):
        ln = nn.LayerNorm(4)
        self.assertEqual((ln.weight.tolist(), ln.bias.tolist()), ([1.0] * 4, [0.0] * 4))
        x = self.X[0]
        mu = sum(x) / 4
        var = sum((v - mu) ** 2 for v in x) / 4
        close(self, ln(ember.tensor(self.X)).tolist(), [[(v - mu) / math.sqrt(var + 1e-5) for v in x]], 1e-4)
        emb = nn.Embedding(5, 3)
        out = emb(ember.tensor([[4, 0], [1, 1]]))
        self.assertEqual(out.shape, (2, 2, 3))
        table = emb.weight.tolist()
        close(self, out.tolist(), [[table[4], table[0]], [table[1], table[1]]])

    def test_batch_norm_statistics_and_buffers(self):
        bn = nn.BatchNorm1d(3)
        self.assertEqual([n for n, _ in bn.named_parameters()], ["weight", "bias"])
        self.assertEqual([n for n, _ in bn.named_buffers()], ["running_mean", "running_var", "num_batches_tracked"])
        x = ember.tensor([[1.0, 2.0, 3.0], [3.0, 6.0, 9.0]])
        y = bn(x).tolist()
        close(self, [r[0] for r in y], [-1.0, 1.0], 1e-3)  # batch statistics, biased variance
        close(self, bn.running_mean.tolist(), [0.2, 0.4, 0.6])  # momentum 0.1 toward the batch mean
        close(self, bn.running_var.tolist(), [0.9 + 0.1 * 2.0, 0.9 + 0.1 * 8.0, 0.9 + 0.1 * 18.0])  # unbiased
        self.assertEqual(bn.num_batches_tracked.item(), 1)
        bn.eval()
        out = bn(x).tolist()
        close(self, out[0][0], (1.0 - 0.2) / math.sqrt(1.1 + 1e-5), 1e-4)
        self.assertEqual(bn.num_batches_tracked.item(), 1)  # eval leaves the statistics alone
        with self.assertRaisesRegex(ValueError, "expected 4D input"):
            nn.BatchNorm2d(3)(x)

    def test_lazy_layers_materialize_on_first_forward(self):
        lazy = nn.LazyLinear(4)
        with self.assertRaises(ValueError):
            lazy.weight.shape
        opt = ember.optim.SGD(lazy.parameters(), lr=0.5)  # built before the shapes are known
        y = lazy(ember.ones(2, 6))
        self.assertEqual(y.shape, (2, 4))
        self.assertIsInstance(lazy, nn.Linear)
        self.assertEqual((lazy.in_features, lazy.weight.shape), (6, (4, 6)))
        self.assertLessEqual(max(abs(v) for r in lazy.weight.tolist() for v in r), 1 / math.sqrt(6))
        b0 = lazy.bias.tolist()
        y.sum().backward()
        opt.step()
        close(self, lazy.bias.tolist(), [v - 0.5 * 2 for v in b0])
        conv = nn.LazyConv2d(5, 3, padding=1)
        self.assertEqual(conv(ember.ones(1, 2, 4, 4)).shape, (1, 5, 4, 4))
        self.assertEqual(conv.weight.shape, (5, 2, 3, 3))
        self.assertIsInstance(conv, nn.Conv2d)


class LossTest(unittest.TestCase):
    LOGITS = [[1.0, 2.0, 0.5], [0.1, -1.0, 3.0]]
    TARGET = [1, 2]

    def test_cross_entropy_and_nll(self):
        per = []
        for row, t in zip(self.LOGITS, self.TARGET):
            lse = math.log(sum(math.exp(v) for v in row))
            per.append(lse - row[t])
        x, t = ember.tensor(self.LOGITS), ember.tensor(self.TARGET)
        close(self, nn.CrossEntropyLoss()(x, t).item(), sum(per) / 2)
        close(self, nn.CrossEntropyLoss(reduction="sum")(x, t).item(), sum(per))
        close(self, nn.CrossEntropyLoss(reduction="none")(x, t).tolist(), per)
        close(self, nn.NLLLoss()(F.log_softmax(x, 1), t).item(), sum(per) / 2)
        with self.assertRaisesRegex(ValueError, "bogus is not a valid value for reduction"):
            nn.MSELoss(reduction="bogus")

    def test_regression_losses(self):
        a, b = [0.5, -1.0, 3.0, 0.2], [0.0, 1.0, 1.0, 0.3]
        x, y = ember.tensor(a), ember.tensor(b)
        d = [p - q for p, q in zip(a, b)]
        close(self, nn.MSELoss()(x, y).item(), sum(v * v for v in d) / 4)
        close(self, nn.L1Loss(reduction="sum")(x, y).item(), sum(abs(v) for v in d))
        smooth = [0.5 * v * v if abs(v) < 1 else abs(v) - 0.5 for v in d]
        close(self, nn.SmoothL1Loss(reduction="none")(x, y).tolist(), smooth)
        smooth2 = [0.5 * v * v / 2.5 if abs(v) < 2.5 else abs(v) - 1.25 for v in d]
        close(self, nn.SmoothL1Loss(beta=2.5)(x, y).item(), sum(smooth2) / 4)

    def test_binary_losses(self):
        p, t = [0.9, 0.2, 0.6], [1.0, 0.0, 0.0]
        bce = [-(q * math.log(v) + (1 - q) * math.log(1 - v)) for v, q in zip(p, t)]
        close(self, nn.BCELoss()(ember.tensor(p), ember.tensor(t)).item(), sum(bce) / 3)
        z = [3.0, -40.0, 0.25]
        sig = [1 / (1 + math.exp(-v)) for v in z]
        want = [-(q * math.log(s) + (1 - q) * math.log(1 - s)) for s, q in zip(sig, t)]
        close(self, nn.BCEWithLogitsLoss(reduction="none")(ember.tensor(z), ember.tensor(t)).tolist(), want)
        pw = nn.BCEWithLogitsLoss(pos_weight=ember.tensor([2.0, 2.0, 2.0]), reduction="none")
        want_pw = [-(2 * q * math.log(s) + (1 - q) * math.log(1 - s)) for s, q in zip(sig, t)]
        close(self, pw(ember.tensor(z), ember.tensor(t)).tolist(), want_pw)


if __name__ == "__main__":
    unittest.main()
