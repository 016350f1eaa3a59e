"""Tensor creation, queries, host copies, operators, reductions, layout and indexing."""
import array
import unittest

import _support
import ember


class CreationTest(unittest.TestCase):
    def test_nested_lists_infer_dtype_and_shape(self):
        t = ember.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        self.assertEqual(t.shape, (2, 3))
        self.assertEqual(t.dtype, "float32")
        self.assertEqual(t.tolist(), [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        self.assertEqual(ember.tensor([1, 2]).dtype, "int64")
        self.assertEqual(ember.tensor([True, False]).dtype, "bool")
        self.assertEqual(ember.tensor([True, False]).tolist(), [True, False])
        self.assertEqual(ember.tensor([1, 2.5]).dtype, "float32")

    def test_explicit_dtype_and_shape(self):
        t = ember.tensor([1, 2, 3, 4, 5, 6], shape=(3, 2), dtype="float32")
        self.assertEqual(t.shape, (3, 2))
        self.assertEqual(t.tolist(), [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        i = ember.tensor([1.7, -2.2], dtype="int64")
        self.assertEqual(i.tolist(), [1, -2])
        b = ember.tensor([0, 3, 0], dtype="bool")
        self.assertEqual(b.tolist(), [False, True, False])

    def test_float64_dtype(self):
        t = ember.tensor([0.1, 0.2], dtype="float64")
        self.assertEqual((t.dtype, t.tolist()), ("float64", [0.1, 0.2]))

    def test_scalars_are_rank_0(self):
        t = ember.tensor(3.5)
        self.assertEqual(t.shape, ())
        self.assertEqual(t.item(), 3.5)
        self.assertEqual(ember.tensor(7).item(), 7)
        self.assertIsInstance(ember.tensor(7).item(), int)
        self.assertIs(ember.tensor(True).item(), True)

    def test_buffers(self):
        t = ember.tensor(array.array("f", [1, 2, 3, 4]), shape=[2, 2])
        self.assertEqual(t.tolist(), [[1.0, 2.0], [3.0, 4.0]])
        q = ember.tensor(array.array("q", [5, 6]), shape=[2], dtype="int64")
        self.assertEqual(q.tolist(), [5, 6])
        with self.assertRaises(ValueError):
            ember.tensor(b"\x00\x01", dtype="bool")  # a raw buffer needs shape=
        self.assertEqual(ember.tensor(b"\x00\x01", shape=[2], dtype="bool").tolist(), [False, True])

    def test_empty(self):
        t = ember.tensor([])
        self.assertEqual(t.shape, (0,))
        self.assertEqual(t.tolist(), [])
        self.assertEqual(ember.zeros(0, 3).shape, (0, 3))

    def test_factories(self):
        self.assertEqual(ember.zeros(2, 3).tolist(), [[0.0] * 3] * 2)
        self.assertEqual(ember.ones((2,)).tolist(), [1.0, 1.0])
        self.assertEqual(ember.full((2,), 7).tolist(), [7, 7])
        self.assertEqual(ember.arange(5).tolist(), [0, 1, 2, 3, 4])
        self.assertEqual(ember.arange(1, 7, 2).tolist(), [1, 3, 5])
        self.assertEqual(ember.arange(0, 1, 0.25).tolist(), [0.0, 0.25, 0.5, 0.75])
        self.assertEqual(ember.zeros_like(ember.ones(2, 2)).shape, (2, 2))
        self.assertEqual(ember.ones(3, dtype="int64").dtype, "int64")

    def test_random_is_reproducible(self):
        ember.manual_seed(5)
        a = ember.randn(4, 3).tolist()
        ember.manual_seed(5)
        self.assertEqual(ember.randn(4, 3).tolist(), a)
        self.assertNotEqual(ember.randn(4, 3).tolist(), a)
        u = ember.rand(1000)
        self.assertGreaterEqual(u.min().item(), 0.0)
        self.assertLess(u.max().item(), 1.0)
        self.assertEqual(ember.randn(3, seed=9).tolist(), ember.randn(3, seed=9).tolist())

    def test_tensor_from_tensor_detaches(self):
        x = ember.ones(2, requires_grad=True)
        y = ember.tensor(x * 2)
        self.assertFalse(y.requires_grad)
        self.assertEqual(y.tolist(), [2.0, 2.0])

    def test_device(self):
        t = ember.ones(1)
        self.assertEqual(str(t.device), "cpu")
        self.assertEqual(t.device, "cpu")
        self.assertTrue(ember.backends()["cpu"]["usable"])

    def test_repr(self):
        self.assertEqual(repr(ember.tensor([1.0, 2.5])), "tensor([1.0, 2.5])")
        self.assertEqual(repr(ember.tensor([1, 2])), "tensor([1, 2])")
        self.assertIn("requires_grad=True", repr(ember.ones(1, requires_grad=True)))
        self.assertIn("dtype=bool", repr(ember.tensor([True])))


class NumpyTest(unittest.TestCase):
    @unittest.skipUnless(_support.HAVE_NUMPY, _support.NUMPY_REASON)
    def test_round_trip(self):
        import numpy as np
        a = np.arange(12, dtype=np.float32).reshape(3, 4) / 3
        t = ember.tensor(a)
        self.assertEqual(t.shape, (3, 4))
        out = t.numpy()
        self.assertEqual(out.dtype, np.float32)
        np.testing.assert_array_equal(out, a)
        np.testing.assert_array_equal(np.asarray(ember.tensor(np.array([[1, 2]]))), np.array([[1, 2]]))
        self.assertEqual(ember.tensor(np.array([True, False])).numpy().dtype, np.bool_)
        self.assertEqual(ember.tensor(a.T).tolist(), a.T.tolist())  # non-contiguous input

    @unittest.skipUnless(_support.HAVE_NUMPY, _support.NUMPY_REASON)
    def test_numpy_is_a_copy(self):
        t = ember.ones(3)
        a = t.numpy()
        a[0] = 5
        self.assertEqual(t.tolist(), [1.0, 1.0, 1.0])


class OperatorTest(unittest.TestCase):
    def setUp(self):
        self.a = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
        self.b = ember.tensor([10.0, 20.0])

    def test_arithmetic_with_broadcasting_and_scalars(self):
        self.assertEqual((self.a + self.b).tolist(), [[11.0, 22.0], [13.0, 24.0]])
        self.assertEqual((self.a - 1).tolist(), [[0.0, 1.0], [2.0, 3.0]])
        self.assertEqual((1 - self.a).tolist(), [[0.0, -1.0], [-2.0, -3.0]])
        self.assertEqual((2 * self.a).tolist(), [[2.0, 4.0], [6.0, 8.0]])
        self.assertEqual((self.a / 2).tolist(), [[0.5, 1.0], [1.5, 2.0]])
        r = (4 / self.a).tolist()
        self.assertEqual(r[0], [4.0, 2.0])
        self.assertAlmostEqual(r[1][0], 4 / 3.0, places=6)
        self.assertEqual((-self.a).tolist(), [[-1.0, -2.0], [-3.0, -4.0]])
        self.assertEqual((self.a ** 2).tolist(), [[1.0, 4.0], [9.0, 16.0]])
        self.assertEqual((self.a @ self.a).tolist(), [[7.0, 10.0], [15.0, 22.0]])
        self.assertEqual((self.a + [1.0, 1.0]).tolist(), [[2.0, 3.0], [4.0, 5.0]])

    def test_int_promotion_follows_pytorch(self):
        i = ember.tensor([1, 2, 3])
        self.assertEqual((i / 2).tolist(), [0.5, 1.0, 1.5])
        self.assertEqual((i * 0.5).dtype, "float32")
        self.assertEqual((i * 2).dtype, "int64")
        self.assertEqual((i + ember.tensor([0.5, 0.5, 0.5])).tolist(), [1.5, 2.5, 3.5])

    def test_comparisons(self):
        self.assertEqual((self.a > 2).tolist(), [[False, False], [True, True]])
        self.assertEqual((self.a == self.a).tolist(), [[True, True], [True, True]])
        self.assertEqual((self.a <= ember.tensor([1.0, 3.0])).tolist(), [[True, True], [False, False]])
        self.assertEqual((self.a != 4).tolist(), [[True, True], [True, False]])
        m = (self.a > 1) & (self.a < 4)
        self.assertEqual(m.tolist(), [[False, True], [True, False]])
        self.assertEqual((~m).tolist(), [[True, False], [False, True]])
        self.assertEqual(ember.where(m, self.a, 0.0).tolist(), [[0.0, 2.0], [3.0, 0.0]])

    def test_unary_methods(self):
        x = ember.tensor([1.0, 4.0])
        self.assertEqual(x.sqrt().tolist(), [1.0, 2.0])
        self.assertAlmostEqual(x.exp().log().tolist()[1], 4.0, places=5)
        self.assertEqual(ember.tensor([-2.0, 3.0]).abs().tolist(), [2.0, 3.0])
        self.assertEqual(x.pow(2).tolist(), [1.0, 16.0])
        self.assertEqual(ember.tensor([-1.5, 0.5]).clamp(min=0).tolist(), [0.0, 0.5])

    def test_reductions(self):
        a = self.a
        self.assertEqual(a.sum().reshape(-1).tolist(), [10.0])
        self.assertEqual(a.sum().shape, ())
        self.assertEqual(a.sum(dim=0).tolist(), [4.0, 6.0])
        self.assertEqual(a.sum(dim=1, keepdim=True).tolist(), [[3.0], [7.0]])
        self.assertEqual(a.sum(dim=(0, 1)).reshape(-1).tolist(), [10.0])
        self.assertEqual(a.mean().item(), 2.5)
        self.assertEqual(a.mean(dim=-1).tolist(), [1.5, 3.5])
        self.assertEqual(a.max().item(), 4.0)
        values, indices = ember.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]]).max(dim=1)
        self.assertEqual(values.tolist(), [5.0, 7.0])
        self.assertEqual(indices.tolist(), [1, 0])
        self.assertEqual(ember.tensor([[1.0, 5.0], [7.0, 0.0]]).argmax(dim=1).tolist(), [1, 0])
        self.assertEqual(ember.tensor([3.0, 9.0, 1.0]).argmax().reshape(-1).tolist(), [1])
        self.assertEqual(a.min(dim=0).values.tolist(), [1.0, 2.0])

    def test_layout(self):
        x = ember.arange(6).reshape(2, 3)
        self.assertEqual(x.tolist(), [[0, 1, 2], [3, 4, 5]])
        self.assertEqual(x.t().tolist(), [[0, 3], [1, 4], [2, 5]])
        self.assertEqual(x.T.shape, (3, 2))
        self.assertEqual(x.reshape((3, -1)).shape, (3, 2))
        self.assertEqual(x.reshape(1, 2, 3).permute(2, 0, 1).shape, (3, 1, 2))
        self.assertEqual(x.unsqueeze(0).shape, (1, 2, 3))
        self.assertEqual(x.unsqueeze(0).squeeze(0).shape, (2, 3))
        self.assertEqual(x.flatten().tolist(), [0, 1, 2, 3, 4, 5])
        self.assertEqual(ember.cat([x, x], dim=0).shape, (4, 3))
        self.assertEqual(ember.stack([x, x]).shape, (2, 2, 3))

    def test_indexing(self):
        x = ember.arange(24).reshape(2, 3, 4)
        self.assertEqual(x[1].shape, (3, 4))
        self.assertEqual(x[1, 2].tolist(), [20, 21, 22, 23])
        self.assertEqual(x[:, 1:3].shape, (2, 2, 4))
        self.assertEqual(x[..., -1].tolist(), [[3, 7, 11], [15, 19, 23]])
        self.assertEqual(x[-1, -1, -1].reshape(-1).tolist(), [23])
        self.assertEqual(x[-1, -1, -1].shape, ())
        self.assertEqual(x[[1, 0]][0, 0].tolist(), [12, 13, 14, 15])
        with self.assertRaises(IndexError):
            x[2]
        self.assertEqual(len(x), 2)
        self.assertEqual([t.shape for t in x], [(3, 4), (3, 4)])

    def test_queries(self):
        x = ember.zeros(2, 3, 4)
        self.assertEqual(x.ndim, 3)
        self.assertEqual(x.dim(), 3)
        self.assertEqual(x.numel(), 24)
        self.assertEqual(x.size(1), 3)
        self.assertEqual(float(ember.tensor([2.5])), 2.5)
        self.assertTrue(bool(ember.tensor([1])))

    def test_casts(self):
        x = ember.tensor([1.7, -0.2, 0.0])
        self.assertEqual(x.long().tolist(), [1, 0, 0])
        self.assertEqual(x.bool().tolist(), [True, True, False])
        self.assertEqual(ember.tensor([True]).float().tolist(), [1.0])
        self.assertEqual(x.to("int64").dtype, "int64")


if __name__ == "__main__":
    unittest.main()
