"""Optimizer steps against updates computed by hand (PyTorch's formulas), pending-gradient handling, state records.

The model is a Linear(3, 1) and the loss sum(model(x)), so the gradients are known without ember: d/dW[i] = the
sum of column i of x, d/db = the batch size, whatever the params are.
"""
import math
import unittest

import _support
import ember
import ember.nn as nn

X = [[1.0, 2.0, -1.0], [0.5, -3.0, 2.0]]
GW = [sum(row[i] for row in X) for i in range(3)]  # [1.5, -1.0, 1.0]
GB = float(len(X))


def snapshot(model):
    return [v[0] for v in model.weight.tolist()], model.bias.tolist()[0]


def backward(model, times=1):
    for _ in range(times):
        model(ember.tensor(X)).sum().backward()


class OptimTest(unittest.TestCase):
    def assertParams(self, model, want_w, want_b, places=5):
        w, b = snapshot(model)
        for a, e in zip(w, want_w):
            self.assertAlmostEqual(a, e, places=places)
        self.assertAlmostEqual(b, want_b, places=places)

    def test_sgd(self):
        model = nn.Linear(3, 1)
        w0, b0 = snapshot(model)
        opt = ember.optim.SGD(model.parameters(), lr=0.1)
        opt.zero_grad()
        backward(model)
        opt.step()
        self.assertParams(model, [w - 0.1 * g for w, g in zip(w0, GW)], b0 - 0.1 * GB)

    def test_sgd_momentum_and_weight_decay(self):
        model = nn.Linear(3, 1)
        w0, b0 = snapshot(model)
        opt = ember.optim.SGD(model, lr=0.05, momentum=0.9, weight_decay=0.1)
        params = list(zip(w0 + [b0], GW + [GB]))
        bufs = [None] * len(params)
        for _ in range(2):
            opt.zero_grad()
            backward(model)
            opt.step()
            new = []
            for k, (p, g) in enumerate(params):
                d = g + 0.1 * p
                bufs[k] = d if bufs[k] is None else 0.9 * bufs[k] + d
                new.append((p - 0.05 * bufs[k], g))
            params = new
        self.assertParams(model, [p for p, _ in params[:3]], params[3][0])

    def test_adam(self):
        model = nn.Linear(3, 1)
        w0, b0 = snapshot(model)
        opt = ember.optim.Adam(model.parameters(), lr=0.01, betas=(0.8, 0.99), eps=1e-8)
        ps = w0 + [b0]
        m, v = [0.0] * 4, [0.0] * 4
        for t in (1, 2, 3):
            opt.zero_grad()
            backward(model)
            opt.step()
            for k, g in enumerate(GW + [GB]):
                m[k] = 0.8 * m[k] + 0.2 * g
                v[k] = 0.99 * v[k] + 0.01 * g * g
                mhat, vhat = m[k] / (1 - 0.8 ** t), v[k] / (1 - 0.99 ** t)
                ps[k] -= 0.01 * mhat / (math.sqrt(vhat) + 1e-8)
        self.assertParams(model, ps[:3], ps[3])

    def test_adamw_decouples_weight_decay(self):
        model = nn.Linear(3, 1)
        w0, b0 = snapshot(model)
        opt = ember.optim.AdamW(model, lr=0.01, weight_decay=0.5)
        backward(model)
        opt.step()
        want = [p * (1 - 0.01 * 0.5) - 0.01 * g / (abs(g) + 1e-8) for p, g in zip(w0 + [b0], GW + [GB])]
        self.assertParams(model, want[:3], want[3])

    def test_gradients_accumulate_until_step(self):
        model = nn.Linear(3, 1)
        w0, b0 = snapshot(model)
        opt = ember.optim.SGD(model, lr=0.1)
        backward(model, times=2)
        self.assertAlmostEqual(model.bias.grad.item(), 2 * GB)
        opt.step()
        self.assertParams(model, [w - 0.2 * g for w, g in zip(w0, GW)], b0 - 0.2 * GB)

    def test_zero_grad_drops_pending_gradients(self):
        model = nn.Linear(3, 1)
        w0, b0 = snapshot(model)
        opt = ember.optim.SGD(model, lr=0.1)
        backward(model)
        opt.zero_grad()
        self.assertIsNone(model.weight.grad)
        opt.step()
        self.assertParams(model, w0, b0, places=7)

    def test_lr_changes(self):
        model = nn.Linear(3, 1)
        w0, b0 = snapshot(model)
        opt = ember.optim.SGD(model, lr=0.1)
        self.assertAlmostEqual(opt.lr, 0.1)
        opt.param_groups[0]["lr"] = 0.5
        backward(model)
        opt.step()
        self.assertParams(model, [w - 0.5 * g for w, g in zip(w0, GW)], b0 - 0.5 * GB)
        opt.lr = 0.25
        self.assertAlmostEqual(opt.lr, 0.25)

    def test_sequential_params_and_partial_lists(self):
        model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
        ember.optim.Adam(model.parameters())
        with self.assertRaises(ValueError):
            ember.optim.Adam(model.parameters()[:2])  # libember steps a whole module
        with self.assertRaises(TypeError):
            ember.optim.SGD([ember.ones(2, requires_grad=True)], lr=0.1)

    def test_param_groups_over_two_modules(self):
        a, b = nn.Linear(3, 1), nn.Linear(3, 1)
        wa, _ = snapshot(a)
        wb, _ = snapshot(b)
        opt = ember.optim.SGD([{"params": a.parameters()}, {"params": b.parameters(), "lr": 1.0}], lr=0.1)
        (a(ember.tensor(X)).sum() + b(ember.tensor(X)).sum()).backward()
        opt.step()
        self.assertParams(a, [w - 0.1 * g for w, g in zip(wa, GW)], snapshot(a)[1])
        self.assertParams(b, [w - 1.0 * g for w, g in zip(wb, GW)], snapshot(b)[1])

    def test_state_dict_round_trip(self):
        model = nn.Sequential(nn.Linear(3, 1))
        opt = ember.optim.Adam(model, lr=0.05)
        for _ in range(3):
            opt.zero_grad()
            model(ember.tensor(X)).pow(2).sum().backward()
            opt.step()
        path_m, path_o = _support.temp_path(self, "m.emr"), _support.temp_path(self, "o.emr")
        ember.save(model, path_m)
        ember.save(opt, path_o)
        state = opt.state_dict()
        self.assertGreater(len(state), 0)

        twin = nn.Sequential(nn.Linear(3, 1))
        ember.load(twin, path_m)
        twin_opt = ember.optim.Adam(twin, lr=0.001)
        ember.load(twin_opt, path_o)
        self.assertAlmostEqual(twin_opt.lr, 0.05)
        third = nn.Sequential(nn.Linear(3, 1))
        third.load_state_dict(model.state_dict())
        third_opt = ember.optim.Adam(third, lr=0.05)
        third_opt.load_state_dict(state)
        for m, o in ((model, opt), (twin, twin_opt), (third, third_opt)):
            o.zero_grad()
            m(ember.tensor(X)).pow(2).sum().backward()
            o.step()
        want = model.parameters()[0].tolist()
        self.assertEqual(twin.parameters()[0].tolist(), want)
        self.assertEqual(third.parameters()[0].tolist(), want)

    def test_reset_forgets_moments(self):
        model = nn.Linear(3, 1)
        opt = ember.optim.Adam(model, lr=0.01)
        backward(model)
        opt.step()
        opt.reset()
        w1, b1 = snapshot(model)
        opt.zero_grad()
        backward(model)
        opt.step()  # a first step again: p -= lr * g / (|g| + eps)
        self.assertParams(model, [w - 0.01 * math.copysign(1, g) for w, g in zip(w1, GW)], b1 - 0.01)


if __name__ == "__main__":
    unittest.main()
