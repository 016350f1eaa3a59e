"""ember.optim against updates computed by hand with torch 1.13's formulas; param groups, option checking (torch's
error types and messages), zero_grad, state_dict round trips, lr_scheduler, clip_grad_norm_.

The model is a Linear(3, 1) and the loss sum(model(x)), so the gradients are known without ember: d/dW[0][i] = the
sum of column i of x, d/db = the batch size, whatever the params are.
"""
import math
import unittest

import _support
import ember
import ember.nn as nn
from ember import _assign
from ember.optim import lr_scheduler

X = [[1.0, 2.0, -1.0], [0.5, -3.0, 2.0]]
GW = [sum(row[i] for row in X) for i in range(3)]  # [1.5, -1.0, 1.0]
GB = float(len(X))


def snapshot(model):
    return model.weight.tolist()[0], model.bias.tolist()[0]


def train(model, opt, steps):
    """`steps` optimizer steps on sum(model(X) ** 2)."""
    for _ in range(steps):
        opt.zero_grad()
        model(ember.tensor(X)).pow(2).sum().backward()
        opt.step()


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

    def test_sgd_momentum_nesterov_weight_decay(self):
        for nesterov in (False, True):
            model = nn.Linear(3, 1)
            w0, b0 = snapshot(model)
            opt = ember.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=0.1, nesterov=nesterov)
            ps, bufs = w0 + [b0], [None] * 4
            for _ in range(3):
                opt.zero_grad()
                backward(model)
                opt.step()
                for k, g in enumerate(GW + [GB]):
                    d = g + 0.1 * ps[k]
                    bufs[k] = d if bufs[k] is None else 0.9 * bufs[k] + d
                    ps[k] -= 0.05 * (d + 0.9 * bufs[k] if nesterov else bufs[k])
            self.assertParams(model, ps[:3], ps[3], places=4)

    def test_adam_and_amsgrad(self):
        for amsgrad in (False, True):
            model = nn.Linear(3, 1)
            w0, b0 = snapshot(model)
            opt = ember.optim.Adam(model.parameters(), lr=0.01, betas=(0.8, 0.99), eps=1e-8, weight_decay=0.1,
                                   amsgrad=amsgrad)
            ps = w0 + [b0]
            m, v, vmax = [0.0] * 4, [0.0] * 4, [0.0] * 4
            for t in (1, 2, 3):
                opt.zero_grad()
                backward(model)
                opt.step()
                for k, g0 in enumerate(GW + [GB]):
                    g = g0 + 0.1 * ps[k]
                    m[k] = 0.8 * m[k] + 0.2 * g
                    v[k] = 0.99 * v[k] + 0.01 * g * g
                    vmax[k] = max(vmax[k], v[k])
                    denom = math.sqrt(vmax[k] if amsgrad else v[k]) / math.sqrt(1 - 0.99 ** t) + 1e-8
                    ps[k] -= 0.01 / (1 - 0.8 ** t) * m[k] / denom
            self.assertParams(model, ps[:3], ps[3])
            self.assertEqual(opt.state[model.weight]["step"].item(), 3.0)

    def test_adamw_decouples_weight_decay(self):
        model = nn.Linear(3, 1)
        w0, b0 = snapshot(model)
        opt = ember.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.5)
        self.assertEqual(opt.defaults["weight_decay"], 0.5)
        self.assertEqual(ember.optim.AdamW(model.parameters()).defaults["weight_decay"], 0.01)
        backward(model)
        opt.step()
        want = [p * (1 - 0.01 * 0.5) - 0.01 * g / (abs(g) + 1e-8) for p, g in zip(w0 + [b0], GW + [GB])]
        self.assertParams(model, want[:3], want[3])

    def test_maximize(self):
        model = nn.Linear(3, 1)
        w0, b0 = snapshot(model)
        opt = ember.optim.SGD(model.parameters(), lr=0.1, maximize=True)
        backward(model)
        opt.step()
        self.assertParams(model, [w + 0.1 * g for w, g in zip(w0, GW)], b0 + 0.1 * GB)

    def test_any_tensors_and_param_groups(self):
        a = ember.tensor([1.0, 2.0], requires_grad=True)
        model = nn.Linear(3, 1)
        w0, b0 = snapshot(model)
        opt = ember.optim.SGD([{"params": [a]}, {"params": model.parameters(), "lr": 1.0}], lr=0.1)
        self.assertEqual([g["lr"] for g in opt.param_groups], [0.1, 1.0])
        ((a * a).sum() + model(ember.tensor(X)).sum()).backward()
        opt.step()
        self.assertEqual([round(v, 6) for v in a.tolist()], [0.8, 1.6])
        self.assertParams(model, [w - 1.0 * g for w, g in zip(w0, GW)], b0 - GB)
        opt.param_groups[1]["lr"] = 0.5  # changed between steps, as torch allows
        opt.zero_grad()
        backward(model)
        opt.step()
        self.assertParams(model, [w - 1.5 * g for w, g in zip(w0, GW)], b0 - 1.5 * GB)

    def test_add_param_group_and_frozen_params(self):
        first, second = nn.Linear(3, 1), nn.Linear(3, 1)
        w0, b0 = snapshot(second)
        opt = ember.optim.SGD(first.parameters(), lr=0.1)
        opt.add_param_group({"params": second.parameters(), "lr": 0.2})
        self.assertEqual(opt.param_groups[1]["momentum"], 0)
        backward(second)
        opt.step()  # `first` has no .grad: skipped
        self.assertParams(second, [w - 0.2 * g for w, g in zip(w0, GW)], b0 - 0.2 * GB)
        with self.assertRaisesRegex(ValueError, "some parameters appear in more than one parameter group"):
            opt.add_param_group({"params": [second.weight]})

    def test_option_errors_like_torch(self):
        params = list(nn.Linear(2, 2).parameters())
        with self.assertRaisesRegex(TypeError, "unexpected keyword argument 'foo'"):
            ember.optim.Adam(params, amsgrad=True, foo=3)
        with self.assertRaisesRegex(TypeError, "unexpected keyword argument 'momentum'"):
            ember.optim.Adam(params, momentum=0.9)
        with self.assertRaisesRegex(ValueError, "Invalid beta parameter at index 1: 1.0"):
            ember.optim.Adam(params, betas=(0.9, 1.0))
        with self.assertRaisesRegex(ValueError, "Invalid learning rate: -0.1"):
            ember.optim.AdamW(params, lr=-0.1)
        with self.assertRaisesRegex(ValueError, "Invalid epsilon value: -1"):
            ember.optim.Adam(params, eps=-1)
        with self.assertRaisesRegex(ValueError, "Invalid weight_decay value: -1"):
            ember.optim.SGD(params, lr=0.1, weight_decay=-1)
        with self.assertRaisesRegex(ValueError, "Nesterov momentum requires a momentum and zero dampening"):
            ember.optim.SGD(params, lr=0.1, nesterov=True)
        with self.assertRaisesRegex(ValueError, "required optimization parameter lr"):
            ember.optim.SGD(params)
        with self.assertRaisesRegex(ValueError, "optimizer got an empty parameter list"):
            ember.optim.Adam([])
        with self.assertRaisesRegex(TypeError, "should be an iterable of Tensors or dicts"):
            ember.optim.Adam(params[0])
        with self.assertRaisesRegex(TypeError, "optimizer can only optimize Tensors"):
            ember.optim.Adam([1.0])
        with self.assertRaisesRegex(TypeError, "unknown option"):
            ember.optim.Adam([{"params": params, "lrr": 0.1}])
        with self.assertRaisesRegex(ValueError, "Invalid beta parameter at index 0"):
            ember.optim.Adam([{"params": params, "betas": (1.5, 0.9)}])

    def test_zero_grad(self):
        model = nn.Linear(3, 1)
        opt = ember.optim.SGD(model.parameters(), lr=0.1)
        backward(model, times=2)
        self.assertAlmostEqual(model.bias.grad.item(), 2 * GB)  # gradients accumulate until zero_grad
        opt.zero_grad(set_to_none=False)
        self.assertEqual(model.bias.grad.tolist(), [0.0])
        opt.zero_grad()
        self.assertIsNone(model.weight.grad)
        w0, b0 = snapshot(model)
        opt.step()
        self.assertParams(model, w0, b0, places=7)

    @unittest.skipIf(_assign._INPLACE is None, "this libember has no in-place updates")
    def test_step_updates_the_leaf_in_place(self):
        model = nn.Linear(3, 1)
        w = model.weight
        handle = w._h.value
        opt = ember.optim.SGD(model.parameters(), lr=0.1)
        backward(model)
        pending = model(ember.tensor(X)).sum()  # saved the weight before the step
        opt.step()
        self.assertEqual(w._h.value, handle)  # the same libember leaf, not a new one
        with self.assertRaisesRegex(RuntimeError, "modified by an inplace operation"):
            pending.backward()  # as torch: the step changed a tensor this graph saved

    @unittest.skipIf((ember.ones(1).double() * 0.5).dtype != "float64",
                     "this libember or binding computes float64 as float32")
    def test_float64_model_trains_in_float64(self):
        model = nn.Linear(3, 1).double()
        w0, b0 = snapshot(model)
        opt = ember.optim.Adam(model.parameters(), lr=0.01)
        loss = model(ember.tensor(X).double()).sum()
        self.assertEqual(loss.dtype, "float64")
        loss.backward()
        self.assertEqual(model.weight.grad.dtype, "float64")
        opt.step()
        self.assertEqual(model.weight.dtype, "float64")
        self.assertEqual(opt.state[model.weight]["exp_avg"].dtype, "float64")
        self.assertParams(model, [w - 0.01 * math.copysign(1, g) for w, g in zip(w0, GW)], b0 - 0.01, places=9)

    def test_state_dict_round_trip(self):
        model = nn.Linear(3, 1)
        opt = ember.optim.Adam(model.parameters(), lr=0.05)
        train(model, opt, 3)
        state = opt.state_dict()
        self.assertEqual(sorted(state), ["param_groups", "state"])
        self.assertEqual(state["param_groups"][0]["params"], [0, 1])
        self.assertEqual(sorted(state["state"][0]), ["exp_avg", "exp_avg_sq", "step"])
        path = _support.temp_path(self, "opt.pt")
        ember.save({"model": model.state_dict(), "opt": state}, path)

        twin = nn.Linear(3, 1)
        twin_opt = ember.optim.Adam(twin.parameters(), lr=0.001)
        saved = ember.load(path)
        twin.load_state_dict(saved["model"])
        twin_opt.load_state_dict(saved["opt"])
        self.assertEqual(twin_opt.param_groups[0]["lr"], 0.05)
        train(model, opt, 2)
        train(twin, twin_opt, 2)
        self.assertEqual(twin.weight.tolist(), model.weight.tolist())
        with self.assertRaisesRegex(ValueError, "different number of parameter groups"):
            twin_opt.load_state_dict({"state": {}, "param_groups": []})

    def test_adam_counts_steps_from_a_loaded_state(self):
        # The fused update takes the step count as an argument: an older state loaded into the same optimizer
        # (which remembers the count it wrote last) must restart from the loaded count.
        a, b = nn.Linear(3, 1), nn.Linear(3, 1)
        b.load_state_dict(a.state_dict())
        opt_a = ember.optim.Adam(a.parameters(), lr=0.05)
        opt_b = ember.optim.Adam(b.parameters(), lr=0.05)
        train(a, opt_a, 3)
        path = _support.temp_path(self, "step3.pt")
        ember.save({"model": a.state_dict(), "opt": opt_a.state_dict()}, path)
        train(a, opt_a, 2)
        saved = ember.load(path)
        a.load_state_dict(saved["model"])
        opt_a.load_state_dict(saved["opt"])
        train(a, opt_a, 1)
        train(b, opt_b, 4)
        self.assertEqual(opt_a.state[a.weight]["step"].item(), 4.0)
        self.assertEqual(a.weight.tolist(), b.weight.tolist())
        self.assertEqual(opt_a.state[a.weight]["exp_avg"].tolist(), opt_b.state[b.weight]["exp_avg"].tolist())


class SchedulerTest(unittest.TestCase):
    def lrs(self, make, epochs, lr=1.0):
        opt = ember.optim.SGD(nn.Linear(1, 1).parameters(), lr=lr)
        sched = make(opt)
        out = [opt.param_groups[0]["lr"]]
        for _ in range(epochs):
            opt.step()
            sched.step()
            out.append(sched.get_last_lr()[0])
        return out

    def assertSeq(self, got, want):
        self.assertEqual(len(got), len(want))
        for a, b in zip(got, want):
            self.assertAlmostEqual(a, b, places=12)

    def test_step_multistep_exponential_lambda(self):
        self.assertSeq(self.lrs(lambda o: lr_scheduler.StepLR(o, step_size=2, gamma=0.5), 5),
                       [1, 1, 0.5, 0.5, 0.25, 0.25])
        self.assertSeq(self.lrs(lambda o: lr_scheduler.MultiStepLR(o, milestones=[1, 3, 3], gamma=0.1), 4),
                       [1, 0.1, 0.1, 0.001, 0.001])
        self.assertSeq(self.lrs(lambda o: lr_scheduler.ExponentialLR(o, gamma=0.9), 3), [1, 0.9, 0.81, 0.729])
        self.assertSeq(self.lrs(lambda o: lr_scheduler.LambdaLR(o, lambda e: 1 / (e + 1)), 3, lr=2.0),
                       [2, 1, 2 / 3, 0.5])

    def test_cosine_and_linear_follow_the_closed_forms(self):
        t_max, eta_min = 6, 0.1
        got = self.lrs(lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=t_max, eta_min=eta_min), t_max)
        self.assertSeq(got, [eta_min + (1 - eta_min) * (1 + math.cos(math.pi * t / t_max)) / 2
                             for t in range(t_max + 1)])
        got = self.lrs(lambda o: lr_scheduler.LinearLR(o, start_factor=0.25, total_iters=4), 6)
        self.assertSeq(got, [0.25 + 0.75 * min(t, 4) / 4 for t in range(7)])
        with self.assertRaisesRegex(ValueError, "Starting multiplicative factor"):
            lr_scheduler.LinearLR(ember.optim.SGD(nn.Linear(1, 1).parameters(), lr=1), start_factor=2)
        with self.assertRaises(TypeError):
            lr_scheduler.StepLR(object(), 1)

    def test_per_group_base_lrs(self):
        a, b = nn.Linear(1, 1), nn.Linear(1, 1)
        opt = ember.optim.SGD([{"params": a.parameters()}, {"params": b.parameters(), "lr": 0.5}], lr=1.0)
        sched = lr_scheduler.ExponentialLR(opt, gamma=0.5)
        opt.step()
        sched.step()
        self.assertEqual(sched.get_last_lr(), [0.5, 0.25])
        self.assertEqual(sched.base_lrs, [1.0, 0.5])


class ClipGradTest(unittest.TestCase):
    def test_clip_grad_norm(self):
        a = ember.tensor([3.0, 0.0], requires_grad=True)
        b = ember.tensor([4.0], requires_grad=True)
        ((a * a).sum() * 0.5 + (b * b).sum() * 0.5).backward()  # grads [3, 0] and [4]: total norm 5
        total = ember.nn.utils.clip_grad_norm_([a, b], max_norm=1.0)
        self.assertAlmostEqual(total.item(), 5.0, places=5)
        self.assertAlmostEqual(a.grad.tolist()[0], 3.0 / (5.0 + 1e-6), places=6)
        self.assertAlmostEqual(b.grad.tolist()[0], 4.0 / (5.0 + 1e-6), places=6)
        total = ember.nn.utils.clip_grad_norm_([a, b], max_norm=10.0)  # below the bound: unchanged
        self.assertAlmostEqual(a.grad.tolist()[0], 3.0 / (5.0 + 1e-6), places=6)
        inf = ember.nn.utils.clip_grad_norm_([a, b], max_norm=10.0, norm_type=float("inf"))
        self.assertAlmostEqual(inf.item(), 4.0 / (5.0 + 1e-6), places=6)
        self.assertEqual(ember.nn.utils.clip_grad_norm_([ember.ones(1)], 1.0).item(), 0.0)  # no grads
        ember.nn.utils.clip_grad_value_([a, b], 0.1)
        self.assertAlmostEqual(b.grad.tolist()[0], 0.1, places=6)


if __name__ == "__main__":
    unittest.main()
