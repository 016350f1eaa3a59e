"""ember.utils.data (TensorDataset, DataLoader) and ember.nn.init (torch's fans, gains and bounds)."""
import math
import random
import unittest

import _support  # noqa: F401
import ember
import ember.nn as nn
from ember.utils.data import DataLoader, Subset, TensorDataset, random_split


class DataTest(unittest.TestCase):
    def setUp(self):
        self.x = ember.arange(10).reshape(10, 1).float()
        self.y = ember.arange(10)
        self.ds = TensorDataset(self.x, self.y)

    def test_tensor_dataset(self):
        self.assertEqual(len(self.ds), 10)
        xi, yi = self.ds[3]
        self.assertEqual((xi.tolist(), yi.item()), ([3.0], 3))
        with self.assertRaisesRegex(ValueError, "Size mismatch between tensors"):
            TensorDataset(self.x, ember.arange(3))

    def test_batches_in_order_and_drop_last(self):
        loader = DataLoader(self.ds, batch_size=4)
        self.assertEqual(len(loader), 3)
        self.assertEqual([yb.tolist() for _, yb in loader], [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]])
        xb, _ = next(iter(loader))
        self.assertEqual(xb.shape, (4, 1))
        dropped = DataLoader(self.ds, batch_size=4, drop_last=True)
        self.assertEqual(len(dropped), 2)
        self.assertEqual([len(yb.tolist()) for _, yb in dropped], [4, 4])

    def test_shuffle_is_a_seeded_permutation(self):
        def epoch(loader):
            return [v for _, yb in loader for v in yb.tolist()]

        loader = DataLoader(self.ds, batch_size=3, shuffle=True, generator=7)
        first, second = epoch(loader), epoch(loader)
        self.assertEqual(sorted(first), list(range(10)))
        self.assertNotEqual(first, second)  # a new order every epoch
        want = list(range(10))
        random.Random(7).shuffle(want)
        self.assertEqual(first, want)
        self.assertEqual(epoch(DataLoader(self.ds, batch_size=3, shuffle=True, generator=7)), first)
        for x, y in DataLoader(self.ds, batch_size=5, shuffle=True):
            self.assertEqual([int(v[0]) for v in x.tolist()], y.tolist())  # rows stay paired

    def test_subset_and_random_split(self):
        sub = Subset(self.ds, [9, 2])
        self.assertEqual([sub[i][1].item() for i in range(len(sub))], [9, 2])
        parts = random_split(self.ds, [7, 3], generator=1)
        self.assertEqual([len(p) for p in parts], [7, 3])
        seen = sorted(p[i][1].item() for p in parts for i in range(len(p)))
        self.assertEqual(seen, list(range(10)))
        self.assertEqual([len(p) for p in random_split(self.ds, [0.5, 0.3, 0.2])], [5, 3, 2])
        self.assertEqual([len(p) for p in random_split(range(7), [0.5, 0.5])], [4, 3])  # remainder round-robin
        with self.assertRaisesRegex(ValueError, "Sum of input lengths"):
            random_split(self.ds, [3, 3])
        batches = [yb.reshape(-1).tolist() for _, yb in DataLoader(sub, batch_size=2)]  # (2,) or (2, 1) by rank 0
        self.assertEqual(batches, [[9, 2]])

    def test_generic_dataset_collates(self):
        items = [(ember.tensor([float(i), 1.0]), i) for i in range(5)]
        xb, yb = next(iter(DataLoader(items, batch_size=2)))
        self.assertEqual(xb.shape, (2, 2))
        self.assertEqual(yb.tolist(), [0, 1])
        with self.assertRaisesRegex(ValueError, "batch_size should be a positive integer"):
            DataLoader(items, batch_size=0)
        with self.assertRaisesRegex(ValueError, "num_workers=0"):
            DataLoader(items, num_workers=2)


class InitTest(unittest.TestCase):
    def test_fans_and_gains(self):
        fans = nn.init._calculate_fan_in_and_fan_out(ember.zeros(16, 4, 3, 3))
        self.assertEqual(fans, (36, 144))
        with self.assertRaisesRegex(ValueError, "fewer than 2 dimensions"):
            nn.init.xavier_uniform_(ember.zeros(5))
        self.assertAlmostEqual(nn.init.calculate_gain("relu"), math.sqrt(2))
        self.assertAlmostEqual(nn.init.calculate_gain("tanh"), 5 / 3)
        self.assertAlmostEqual(nn.init.calculate_gain("leaky_relu", 0.2), math.sqrt(2 / 1.04))
        self.assertEqual(nn.init.calculate_gain("conv2d"), 1)
        with self.assertRaisesRegex(ValueError, "Unsupported nonlinearity"):
            nn.init.calculate_gain("swishy")
        with self.assertRaisesRegex(ValueError, "Mode fan_mid not supported"):
            nn.init.kaiming_uniform_(ember.zeros(2, 2), mode="fan_mid")

    def values(self, t):
        return t.reshape(-1).tolist()

    def test_uniform_bounds(self):
        ember.manual_seed(11)
        w = nn.Parameter(ember.zeros(64, 32, 3, 3))
        same = w
        nn.init.kaiming_uniform_(w, a=0, mode="fan_out", nonlinearity="relu")
        self.assertIs(w, same)
        bound = math.sqrt(3) * math.sqrt(2) / math.sqrt(64 * 9)
        v = self.values(w)
        self.assertLessEqual(max(abs(x) for x in v), bound)
        self.assertGreater(max(abs(x) for x in v), 0.99 * bound)
        self.assertTrue(w.requires_grad)
        nn.init.xavier_uniform_(w, gain=2.0)
        bound = 2.0 * math.sqrt(6 / (32 * 9 + 64 * 9))
        v = self.values(w)
        self.assertLessEqual(max(abs(x) for x in v), bound)
        self.assertGreater(max(abs(x) for x in v), 0.99 * bound)
        nn.init.uniform_(w, 2.0, 3.0)
        self.assertTrue(all(2.0 <= x < 3.0 for x in self.values(w)))

    def test_normal_std(self):
        ember.manual_seed(12)
        w = ember.zeros(200, 100)
        nn.init.kaiming_normal_(w, nonlinearity="relu")
        v = self.values(w)
        std = math.sqrt(sum(x * x for x in v) / len(v))
        self.assertAlmostEqual(std, math.sqrt(2 / 100), delta=0.02 * math.sqrt(2 / 100))
        nn.init.xavier_normal_(w)
        v = self.values(w)
        std = math.sqrt(sum(x * x for x in v) / len(v))
        self.assertAlmostEqual(std, math.sqrt(2 / 300), delta=0.02 * math.sqrt(2 / 300))
        nn.init.normal_(w, mean=5.0, std=0.5)
        self.assertAlmostEqual(sum(self.values(w)) / 20000, 5.0, delta=0.02)

    def test_constants(self):
        w = nn.Parameter(ember.zeros(2, 3))
        nn.init.constant_(w, 0.3)
        self.assertEqual(set(round(x, 6) for x in self.values(w)), {0.3})
        nn.init.ones_(w)
        self.assertEqual(set(self.values(w)), {1.0})
        nn.init.zeros_(w)
        self.assertEqual(set(self.values(w)), {0.0})


if __name__ == "__main__":
    unittest.main()
