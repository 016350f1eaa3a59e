"""Handle lifetime: parents deleted before children, objects outliving what made them, interpreter exit."""
import copy
import gc
import pickle
import os
import subprocess
import sys
import unittest
import weakref

import _support
import ember
import ember.nn as nn
import ember.nn.functional as F


def collect():
    gc.collect()
    gc.collect()


class LifetimeTest(unittest.TestCase):
    def test_copies_own_their_handle(self):
        # The default slot copy shared the libember handle: both objects then freed it (InvalidHandleError).
        a = ember.tensor([1.0, 2.0], requires_grad=True)
        for c in (copy.copy(a), copy.deepcopy(a)):
            self.assertIsNot(c._h, a._h)
            self.assertTrue(c.requires_grad and c.is_leaf)
            with ember.no_grad():
                c.add_(1.0)
            self.assertEqual((a.tolist(), c.tolist()), ([1.0, 2.0], [2.0, 3.0]))
            del c
            collect()
        self.assertEqual(a.tolist(), [1.0, 2.0])
        with self.assertRaises(TypeError):
            pickle.dumps(a)

    def test_deepcopy_of_a_model_is_independent(self):
        m = nn.Linear(3, 2)
        twin = copy.deepcopy(m)
        self.assertIsInstance(twin.weight, nn.Parameter)
        with ember.no_grad():
            twin.weight.fill_(0.5)
        self.assertNotEqual(m.weight.tolist(), twin.weight.tolist())
        del m
        collect()
        self.assertEqual(twin(ember.ones(1, 3)).shape, (1, 2))

    def test_results_outlive_their_inputs(self):
        a, b = ember.ones(2, 2), ember.full((2, 2), 3.0)
        c = a @ b + a
        del a, b
        collect()
        self.assertEqual(c.tolist(), [[7.0, 7.0], [7.0, 7.0]])

    def test_graph_outlives_the_tensors_that_built_it(self):
        x = ember.tensor([1.0, 2.0], requires_grad=True)
        h = x * x
        loss = (h * 3).sum()
        del h
        collect()
        loss.backward()
        self.assertEqual(x.grad.tolist(), [6.0, 12.0])

    def test_leaf_deleted_before_backward(self):
        x = ember.tensor([1.0, 2.0], requires_grad=True)
        ref = weakref.ref(x)
        loss = (x * 2).sum()
        del x
        collect()
        self.assertIsNone(ref())
        loss.backward()  # the gradient of the gone leaf is simply not kept

    def test_optimizer_outlives_its_model(self):
        model = nn.Sequential(nn.Linear(3, 1))
        opt = ember.optim.SGD(model.parameters(), lr=0.1)
        x = ember.ones(2, 3)
        loss = model(x).sum()
        del model
        collect()
        loss.backward()
        w = opt.param_groups[0]["params"][0]
        before = w.tolist()
        opt.step()  # the params are kept alive by the optimizer's param groups
        opt.zero_grad()
        self.assertEqual(w.shape, (1, 3))
        self.assertAlmostEqual(w.tolist()[0][0], before[0][0] - 0.2, places=6)

    def test_model_freed_before_optimizer(self):
        model = nn.Linear(2, 2)
        opt = ember.optim.Adam(model.parameters(), lr=0.01)
        del model
        collect()
        del opt
        collect()

    def test_params_outlive_the_model(self):
        model = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
        w = next(model.parameters())
        values = w.tolist()
        del model
        collect()
        self.assertEqual(w.tolist(), values)
        self.assertEqual((w * 1).tolist(), values)

    def test_child_layer_outlives_its_sequential(self):
        seq = nn.Sequential(nn.Linear(3, 2), nn.Tanh())
        first = seq[0]
        want = seq(ember.ones(1, 3)).tolist()
        del seq
        collect()
        got = F.tanh(first(ember.ones(1, 3))).tolist()
        for a, b in zip(got[0], want[0]):
            self.assertAlmostEqual(a, b, places=6)

    def test_state_dicts_outlive_models(self):
        model = nn.Sequential(nn.Linear(3, 2))
        state = model.state_dict()
        want = state["0.weight"].tolist()
        del model
        collect()
        self.assertEqual(len(state), 2)
        fresh = nn.Sequential(nn.Linear(3, 2))
        fresh.load_state_dict(state)
        self.assertEqual(fresh[0].weight.tolist(), want)

    def test_param_references_follow_steps(self):
        model = nn.Linear(2, 1)
        w = model.weight
        before = w.tolist()
        opt = ember.optim.SGD(model.parameters(), lr=1.0)
        model(ember.ones(1, 2)).sum().backward()
        opt.step()
        after = w.tolist()
        self.assertIs(model.weight, w)
        self.assertAlmostEqual(after[0][0], before[0][0] - 1.0, places=6)
        self.assertAlmostEqual(after[0][1], before[0][1] - 1.0, places=6)

    def test_many_short_lived_tensors(self):
        x = ember.ones(8)
        for _ in range(20000):
            x = x + 0.0
        self.assertEqual(x.tolist(), [1.0] * 8)

    def test_exit_with_live_handles(self):
        code = ("import ember, ember.nn as nn\n"
                "m = nn.Sequential(nn.Linear(2, 2)); o = ember.optim.Adam(m.parameters(), lr=0.1)\n"
                "t = ember.ones(3, requires_grad=True); g = (t * 2).sum(); r = m.state_dict()\n"
                "cycle = [t]; cycle.append(cycle)\n"
                "print('done')\n")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_support._PKG, env.get("PYTHONPATH")) if p)
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.strip(), "done")
        self.assertEqual(proc.stderr, "")


if __name__ == "__main__":
    unittest.main()
