"""Side by side with PyTorch (skipped where torch is not importable; Debian's python3-torch is 1.13): the same
models give the same names, state_dict keys and load_state_dict messages; optimizers with the same options move
the same params along the same trajectories; schedulers give the same lrs; losses the same values."""
import math
import unittest

import _support  # noqa: F401
import ember
import ember.nn as enn
import ember.nn.functional as EF

try:
    import torch
    import torch.nn as tnn
    import torch.nn.functional as TF
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

TOL = 2e-5


def build(nn, Parameter, scalar):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            # no conv bias before BatchNorm: its gradient is rounding noise, which Adam would amplify
            self.features = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1, bias=False), nn.BatchNorm2d(2), nn.ReLU())
            self.heads = nn.ModuleList([nn.Linear(16, 3), nn.Linear(3, 2, bias=False)])
            self.gate = Parameter(scalar(1.5))
            self.register_buffer("offset", scalar(0.25))
            self.extra = nn.ModuleDict({"norm": nn.LayerNorm(3)})

        def forward(self, x):
            h = self.features(x).flatten(1)
            return self.heads[1](self.extra["norm"](self.heads[0](h)) * self.gate + self.offset)
    return Net()


def to_torch(t):
    return torch.tensor(t.tolist()).reshape(t.shape) if t.shape else torch.tensor(t.item())


@unittest.skipIf(torch is None, "torch is not installed (Debian: python3-torch)")
class TorchAgreementTest(unittest.TestCase):
    def pair(self):
        e = build(enn, enn.Parameter, lambda v: ember.tensor(v))
        t = build(tnn, tnn.Parameter, lambda v: torch.tensor(v))
        state = {}
        for k, v in e.state_dict().items():
            ref = t.state_dict()[k]
            state[k] = to_torch(v).reshape(ref.shape).to(ref.dtype)
        t.load_state_dict(state)
        return e, t

    def test_names_and_keys(self):
        e, t = self.pair()
        self.assertEqual([n for n, _ in e.named_parameters()], [n for n, _ in t.named_parameters()])
        self.assertEqual([n for n, _ in e.named_buffers()], [n for n, _ in t.named_buffers()])
        self.assertEqual([n for n, _ in e.named_modules()], [n for n, _ in t.named_modules()])
        self.assertEqual(list(e.state_dict()), list(t.state_dict()))
        self.assertEqual(repr(e.features), repr(t.features))
        self.assertEqual(repr(e.heads), repr(t.heads))

    def test_forward_and_gradients(self):
        e, t = self.pair()
        x = [[[[((i * 3 + j * 5 + n) % 7) / 7.0 for j in range(2)] for i in range(4)]] for n in range(3)]
        ye, yt = e(ember.tensor(x)), t(torch.tensor(x))
        for a, b in zip(ye.reshape(-1).tolist(), yt.reshape(-1).tolist()):
            self.assertAlmostEqual(a, b, delta=TOL)
        ye.pow(2).sum().backward()
        yt.pow(2).sum().backward()
        for (n, pe), (_, pt) in zip(e.named_parameters(), t.named_parameters()):
            for a, b in zip(pe.grad.reshape(-1).tolist(), pt.grad.reshape(-1).tolist()):
                self.assertAlmostEqual(a, b, delta=1e-4, msg=n)
        for a, b in zip(e.features[1].running_var.tolist(), t.features[1].running_var.tolist()):
            self.assertAlmostEqual(a, b, delta=TOL)

    def test_load_state_dict_messages(self):
        for strict in (True, False):
            small_e, small_t = enn.Sequential(enn.Linear(4, 2)), tnn.Sequential(tnn.Linear(4, 2))
            big_e = enn.Sequential(enn.Linear(4, 3), enn.ReLU(), enn.Linear(3, 1))
            big_t = tnn.Sequential(tnn.Linear(4, 3), tnn.ReLU(), tnn.Linear(3, 1))
            for target_e, target_t, src_e, src_t in ((big_e, big_t, small_e, small_t),
                                                      (small_e, small_t, big_e, big_t)):
                try:
                    got = repr(target_e.load_state_dict(src_e.state_dict(), strict=strict))
                except RuntimeError as err:
                    got = str(err)
                try:
                    want = repr(target_t.load_state_dict(src_t.state_dict(), strict=strict))
                except RuntimeError as err:
                    want = str(err)
                self.assertEqual(got, want)
            with self.assertRaises(RuntimeError) as got:
                enn.Linear(5, 4).load_state_dict(enn.Linear(2, 4).state_dict(), strict=strict)
            with self.assertRaises(RuntimeError) as want:
                tnn.Linear(5, 4).load_state_dict(tnn.Linear(2, 4).state_dict(), strict=strict)
            self.assertEqual(str(got.exception), str(want.exception))

    def check_optimizer(self, make_e, make_t, steps=4):
        e, t = self.pair()
        oe, ot = make_e(e), make_t(t)
        x = [[[[((i + j * 2 + n) % 5) / 5.0 for j in range(2)] for i in range(4)]] for n in range(3)]
        for _ in range(steps):
            oe.zero_grad()
            ot.zero_grad()
            e(ember.tensor(x)).pow(2).mean().backward()
            t(torch.tensor(x)).pow(2).mean().backward()
            oe.step()
            ot.step()
        for (n, pe), (_, pt) in zip(e.named_parameters(), t.named_parameters()):
            for a, b in zip(pe.reshape(-1).tolist(), pt.detach().reshape(-1).tolist()):
                self.assertAlmostEqual(a, b, delta=1e-4 * (1 + abs(b)), msg=n)

    def groups(self, model, lib):
        return [{"params": list(model.features.parameters()), "lr": 0.05},
                {"params": [p for n, p in model.named_parameters() if not n.startswith("features")]}]

    def test_optimizers(self):
        cases = [
            ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)),
            ("SGD", dict(lr=0.1, momentum=0.5, dampening=0.1, maximize=True)),
            ("Adam", dict(lr=0.01, betas=(0.8, 0.95), weight_decay=0.1, amsgrad=True)),
            ("AdamW", dict(lr=0.01, weight_decay=0.3)),
        ]
        for name, opts in cases:
            with self.subTest(name=name, **{k: str(v) for k, v in opts.items()}):
                self.check_optimizer(lambda m: getattr(ember.optim, name)(self.groups(m, ember), **opts),
                                     lambda m: getattr(torch.optim, name)(self.groups(m, torch), **opts))

    def test_schedulers(self):
        cases = [
            ("StepLR", dict(step_size=3, gamma=0.5)),
            ("MultiStepLR", dict(milestones=[2, 5, 5], gamma=0.3)),
            ("ExponentialLR", dict(gamma=0.8)),
            ("CosineAnnealingLR", dict(T_max=4, eta_min=0.01)),
            ("LinearLR", dict(start_factor=0.2, end_factor=0.9, total_iters=5)),
            ("LambdaLR", dict(lr_lambda=lambda ep: 0.9 ** ep + 0.1)),
        ]
        for name, opts in cases:
            with self.subTest(name=name):
                e = ember.optim.SGD([ember.ones(1, requires_grad=True)], lr=0.5)
                t = torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.5)
                se = getattr(ember.optim.lr_scheduler, name)(e, **opts)
                st = getattr(torch.optim.lr_scheduler, name)(t, **opts)
                for _ in range(12):  # past T_max: the recursive cosine climbs back, as torch's does
                    e.step()
                    t.step()
                    se.step()
                    st.step()
                    self.assertAlmostEqual(se.get_last_lr()[0], st.get_last_lr()[0], places=12)

    def test_losses(self):
        logits = [[1.0, -2.0, 0.5], [0.3, 0.2, -1.0], [2.0, 1.0, 0.0]]
        target = [2, 0, 1]
        probs = [0.9, 0.1, 0.6]
        labels = [1.0, 0.0, 1.0]
        for reduction in ("mean", "sum", "none"):
            pairs = [
                (enn.CrossEntropyLoss(reduction=reduction)(ember.tensor(logits), ember.tensor(target)),
                 tnn.CrossEntropyLoss(reduction=reduction)(torch.tensor(logits), torch.tensor(target))),
                (enn.NLLLoss(reduction=reduction)(EF.log_softmax(ember.tensor(logits), 1), ember.tensor(target)),
                 tnn.NLLLoss(reduction=reduction)(TF.log_softmax(torch.tensor(logits), 1), torch.tensor(target))),
                (enn.MSELoss(reduction=reduction)(ember.tensor(probs), ember.tensor(labels)),
                 tnn.MSELoss(reduction=reduction)(torch.tensor(probs), torch.tensor(labels))),
                (enn.L1Loss(reduction=reduction)(ember.tensor(probs), ember.tensor(labels)),
                 tnn.L1Loss(reduction=reduction)(torch.tensor(probs), torch.tensor(labels))),
                (enn.BCELoss(reduction=reduction)(ember.tensor(probs), ember.tensor(labels)),
                 tnn.BCELoss(reduction=reduction)(torch.tensor(probs), torch.tensor(labels))),
                (enn.BCEWithLogitsLoss(reduction=reduction)(ember.tensor(logits[0]), ember.tensor(labels)),
                 tnn.BCEWithLogitsLoss(reduction=reduction)(torch.tensor(logits[0]), torch.tensor(labels))),
                (enn.SmoothL1Loss(reduction=reduction, beta=0.5)(ember.tensor(logits[0]), ember.tensor(probs)),
                 tnn.SmoothL1Loss(reduction=reduction, beta=0.5)(torch.tensor(logits[0]), torch.tensor(probs))),
            ]
            for i, (a, b) in enumerate(pairs):
                got, want = a.reshape(-1).tolist(), b.reshape(-1).tolist()
                self.assertEqual(len(got), len(want))
                for u, v in zip(got, want):
                    self.assertAlmostEqual(u, v, delta=TOL, msg="%s loss %d" % (reduction, i))

    def test_clip_grad_norm(self):
        for norm_type in (2.0, 1.0, 3.0, math.inf):
            ge = [ember.tensor([0.5, -2.0], requires_grad=True), ember.tensor([[1.5, 0.25]], requires_grad=True)]
            gt = [torch.tensor([0.5, -2.0], requires_grad=True), torch.tensor([[1.5, 0.25]], requires_grad=True)]
            sum((p * p * p).sum() for p in ge).backward()
            sum((p * p * p).sum() for p in gt).backward()
            ne = enn.utils.clip_grad_norm_(ge, 1.0, norm_type)
            nt = tnn.utils.clip_grad_norm_(gt, 1.0, norm_type)
            self.assertAlmostEqual(ne.item(), nt.item(), delta=1e-4)
            for a, b in zip(ge, gt):
                for u, v in zip(a.grad.reshape(-1).tolist(), b.grad.reshape(-1).tolist()):
                    self.assertAlmostEqual(u, v, delta=1e-5)


if __name__ == "__main__":
    unittest.main()
