"""ember.compile(model) (issue 14): a compiled digits-shaped MLP trains exactly as the eager one (losses and params
bit for bit over 20 Adam steps), eval() / train() and a new batch size capture again, gradient accumulation over two
forwards, an optimizer made before or after the wrap, dropout captured (each replay draws the eager step's mask), and
the fallbacks (a host read, float64 inputs) with their reasons and eager results."""
import array
import random
import struct
import unittest

import _support  # noqa: F401  (puts the package on sys.path)
import ember
import ember.nn as nn
import ember.nn.functional as F


def mlp(seed, dropout=0.0):
    ember.manual_seed(seed)
    layers = [nn.Linear(64, 32), nn.ReLU()]
    if dropout:
        layers.append(nn.Dropout(dropout))
    layers += [nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 10)]
    return nn.Sequential(*layers)


def batches(n_steps, batch=16, seed=7):
    rng = random.Random(seed)
    out = []
    for _ in range(n_steps):
        x = ember.tensor(array.array("f", (rng.random() for _ in range(batch * 64))), shape=[batch, 64],
                         dtype="float32")
        y = ember.tensor(array.array("q", (rng.randrange(10) for _ in range(batch))), shape=[batch], dtype="int64")
        out.append((x, y))
    return out


def bits(t):
    """The float32 values of t as their bit patterns (exact comparison, NaN-safe)."""
    flat = t.detach().reshape(-1).tolist()
    return [struct.unpack("<I", struct.pack("<f", v))[0] for v in flat]


def train(model, data, optimizer_after_wrap=False, compiled=False):
    """Adam steps over data; the losses (as floats) and how each compiled call ran."""
    opt = None if optimizer_after_wrap else ember.optim.Adam(model.parameters(), lr=1e-3)
    if compiled:
        model = ember.compile(model)
    if opt is None:
        opt = ember.optim.Adam(model.parameters(), lr=1e-3)
    losses, calls = [], []
    for x, y in data:
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if compiled:
            calls.append(model.last_call)
    return model, losses, calls


class CompileTest(unittest.TestCase):
    def assert_same_params(self, a, b):
        pa, pb = list(a.parameters()), list(b.parameters())
        self.assertEqual(len(pa), len(pb))
        for i, (p, q) in enumerate(zip(pa, pb)):
            self.assertEqual(bits(p), bits(q), "param %d differs" % i)

    def test_training_matches_eager_bit_for_bit(self):
        data = batches(20)
        eager, le, _ = train(mlp(1), data)
        for after in (False, True):
            with self.subTest(optimizer_after_wrap=after):
                compiled, lc, calls = train(mlp(1), data, optimizer_after_wrap=after, compiled=True)
                self.assertEqual(le, lc)
                self.assertEqual(calls, ["captured"] + ["replayed"] * 19)
                self.assertEqual(compiled.fallback_reason, "")
                self.assert_same_params(eager, compiled)
                self.assertIsInstance(compiled, nn.Module)
                self.assertEqual(list(compiled.state_dict().keys()), list(eager.state_dict().keys()))

    def test_modes_and_batch_sizes_capture_again(self):
        model = ember.compile(mlp(2))
        ref = mlp(2)
        x8, x4 = batches(1, 8)[0][0], batches(1, 4)[0][0]
        seen = []
        for x, train_mode in ((x8, True), (x8, True), (x4, True), (x4, True), (x8, False), (x8, False), (x8, True)):
            model.train(train_mode)
            ref.train(train_mode)
            self.assertEqual(model.training, train_mode)
            self.assertEqual(model._orig_mod.training, train_mode)
            y = model(x)
            seen.append(model.last_call)
            self.assertEqual(bits(y), bits(ref(x)))
        self.assertEqual(seen, ["captured", "replayed", "captured", "replayed", "captured", "replayed", "replayed"])
        model.eval()
        with ember.no_grad():
            a, b = model(x8), model(x8)
        self.assertFalse(b.requires_grad)
        self.assertEqual(bits(a), bits(b))
        self.assertEqual(model.last_call, "replayed")

    def test_gradient_accumulation_over_two_forwards(self):
        (x1, y1), (x2, y2), (x0, y0) = batches(3)
        eager, compiled = mlp(3), ember.compile(mlp(3))
        F.cross_entropy(compiled(x0), y0).backward()  # the capture; both forwards below replay
        F.cross_entropy(eager(x0), y0).backward()
        le = F.cross_entropy(eager(x1), y1) + F.cross_entropy(eager(x2), y2)
        lc = F.cross_entropy(compiled(x1), y1) + F.cross_entropy(compiled(x2), y2)
        self.assertEqual(compiled.last_call, "replayed")
        le.backward()
        lc.backward()
        self.assertEqual(bits(le), bits(lc))
        for p, q in zip(eager.parameters(), compiled.parameters()):
            self.assertEqual(bits(p.grad), bits(q.grad))

    def test_dropout_is_captured_and_replays_the_eager_masks(self):
        # F.dropout is one op (ember_tensor_dropout) drawing from libember's generator: the capture records the draw
        # and each replay draws the next mask, the one the eager step draws from the same seed.
        data = batches(6)
        eager, le, _ = train(mlp(4, dropout=0.3), data)
        compiled, lc, calls = train(mlp(4, dropout=0.3), data, compiled=True)
        self.assertEqual(le, lc)
        self.assertEqual(calls, ["captured"] + ["replayed"] * 5)
        self.assertEqual(compiled.fallback_reason, "")
        self.assert_same_params(eager, compiled)
        _, l_off, _ = train(mlp(4), data)
        self.assertNotEqual(le, l_off)  # the masks did change the losses
        # In eval mode dropout is the identity: that signature captures.
        compiled.eval()
        compiled(data[0][0])
        self.assertEqual(compiled.last_call, "captured")

    def test_host_read_and_float64_fall_back(self):
        class Reads(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)

            def forward(self, x):
                y = self.fc(x)
                return y * 2.0 if y.sum().item() > 1e9 else y

        ember.manual_seed(5)
        model = ember.compile(Reads())
        x = ember.tensor([[1.0, 2.0, 3.0, 4.0]])
        for _ in range(3):
            y = model(x)
            self.assertEqual(model.last_call, "eager")
        self.assertIn("runs eagerly", model.fallback_reason)
        self.assertEqual(bits(y), bits(model._orig_mod(x)))
        model.requires_grad_(False)  # a float32 param that requires grad cannot meet float64 (not differentiable)
        y64 = model(x.double())
        self.assertEqual(model.last_call, "eager")
        self.assertIn("compile captures CPU float32 tensors", model.fallback_reason)
        self.assertEqual(y64.dtype, "float64")

    def test_rebound_parameters_are_followed(self):
        model = ember.compile(mlp(6))
        x = batches(1, 4)[0][0]
        model(x)
        model(x)
        self.assertEqual(model.last_call, "replayed")
        model.double()  # new handles (float64): a new compiled object over them, which runs eagerly
        y = model(x.double())
        self.assertEqual(model.last_call, "eager")
        self.assertIn("cpu f64 tensor: compile captures CPU float32 tensors", model.fallback_reason)
        self.assertEqual(y.dtype, "float64")
        self.assertIs(ember.compile(model), model)

    def test_errors_in_the_forward_are_raised(self):
        class Bad(nn.Module):
            def forward(self, x):
                raise ValueError("bad forward")

        model = ember.compile(Bad())
        with self.assertRaisesRegex(ValueError, "bad forward"):
            model(ember.tensor([1.0]))
        self.assertEqual(model.fallback_reason, "")  # nothing ran: no reason kept


if __name__ == "__main__":
    unittest.main()
