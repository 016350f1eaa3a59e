"""Error mapping: every failure raises the EmberError subclass of its ember_status with libember's message, and the
process (and the binding) keep working afterwards."""
import ctypes
import threading
import unittest

import _support
import ember
import ember.nn as nn
import ember.nn.functional as F
from ember import _lib


class ErrorMappingTest(unittest.TestCase):
    def assertStillWorks(self):
        self.assertEqual((ember.ones(2) + 1).tolist(), [2.0, 2.0])

    def test_shape_error_carries_the_abi_message(self):
        with self.assertRaises(ember.ShapeError) as cm:
            ember.ones(2, 3) + ember.ones(4, 5)
        e = cm.exception
        self.assertIsInstance(e, ember.EmberError)
        self.assertIsInstance(e, ValueError)  # also a built-in category
        self.assertIsInstance(e, RuntimeError)
        self.assertEqual(e.status, 3)
        self.assertEqual(e.status_name, "EMBER_ERR_SHAPE")
        self.assertEqual(str(e), "ember_tensor_add: add: shapes [2, 3] and [4, 5] are not broadcastable")
        self.assertEqual(str(e), _lib.last_error().decode())
        self.assertStillWorks()

    def test_cuda_device_is_accepted_and_fails_cleanly_without_a_gpu(self):
        # "cuda" is a device name like "vulkan"; without a GPU (or without the CUDA plugin) libember says so.
        if ember.backends()["cuda"]["usable"]:
            self.skipTest("a CUDA device is present")
        with self.assertRaises(ember.UnsupportedError) as cm:
            ember.zeros(2, device="cuda")
        self.assertIn("cuda", str(cm.exception))
        self.assertStillWorks()

    def test_matmul_and_reshape_shapes(self):
        # The whole message, not a needle: the function, the op and the problem with its shapes.
        with self.assertRaisesRegex(ember.ShapeError, r"^ember_tensor_matmul: matmul: inner dims differ: "
                                                      r"\[2, 3\] @ \[2, 3\]$"):
            ember.ones(2, 3) @ ember.ones(2, 3)
        with self.assertRaisesRegex(ember.ShapeError, r"^ember_tensor_reshape: reshape: cannot reshape \[2, 3\] "
                                                      r"\(6 elements\) into \[4, 2\]$"):
            ember.ones(2, 3).reshape(4, 2)
        with self.assertRaisesRegex(ember.ShapeError, r"^ember_tensor_from_data: 12 bytes of data for shape "
                                                      r"\[2, 2\] of f32 \(16 bytes\)$"):
            ember.tensor([1.0, 2.0, 3.0], shape=[2, 2])
        self.assertStillWorks()

    def test_dtype_errors(self):
        with self.assertRaises(ember.DTypeError) as cm:
            ember.tensor([1, 2]).exp()
        self.assertIsInstance(cm.exception, TypeError)
        self.assertEqual(str(cm.exception), "ember_tensor_unary: exp: not defined for i64 tensors")
        with self.assertRaises(ember.DTypeError):
            F.cross_entropy(ember.ones(2, 3), ember.ones(2))  # float targets
        with self.assertRaises(ember.DTypeError):
            ember.ones(2, dtype="int64").requires_grad_()
        self.assertStillWorks()

    def test_index_errors(self):
        with self.assertRaises(ember.IndexOutOfRangeError) as cm:
            ember.ones(2, 3).sum(dim=5)
        self.assertIsInstance(cm.exception, IndexError)
        with self.assertRaises(IndexError):
            ember.ones(2, 3).transpose(0, 7)
        self.assertStillWorks()

    def test_invalid_arguments(self):
        with self.assertRaises(ember.InvalidArgumentError):
            ember.arange(0, 5, 0)
        with self.assertRaisesRegex(ValueError, "Invalid learning rate: -1.0"):
            ember.optim.SGD(nn.Linear(2, 2).parameters(), lr=-1.0)
        with self.assertRaises(TypeError):
            ember.zeros(2, dtype="complex64")  # refused by the binding before any call
        with self.assertRaises(ValueError):
            ember.tensor([[1.0, 2.0], [3.0]])  # ragged
        with self.assertRaises(ValueError):
            F.gelu(ember.ones(1), approximate="cubic")
        self.assertStillWorks()

    def test_module_errors_name_the_op(self):
        model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
        with self.assertRaises(ember.ShapeError) as cm:
            model(ember.ones(5, 7))
        self.assertEqual(str(cm.exception), "ember_tensor_matmul: matmul: inner dims differ: [5, 7] @ [4, 3]")
        self.assertEqual(model(ember.ones(5, 4)).shape, (5, 2))

    def test_invalid_layer_options(self):
        with self.assertRaises(ember.ShapeError) as cm:
            nn.Sequential(nn.Linear(-3, 2))
        self.assertIn("negative dim", str(cm.exception))
        with self.assertRaisesRegex(ValueError, "in_channels must be divisible by groups"):
            nn.Conv2d(3, 4, 3, groups=2)
        with self.assertRaisesRegex(ValueError, "dropout probability has to be between 0 and 1"):
            nn.Dropout(1.5)
        self.assertStillWorks()

    def test_second_backward_fails_cleanly(self):
        x = ember.ones(3, requires_grad=True)
        y = (x * 2).sum()
        y.backward()
        with self.assertRaises(ember.EmberError):
            y.backward()
        self.assertEqual(x.grad.tolist(), [2.0, 2.0, 2.0])

    def test_raw_handles_null_and_invalid(self):
        out = ctypes.c_void_p()
        st = _lib.tensor_add(None, None, ctypes.byref(out))
        with self.assertRaises(ember.NullHandleError) as cm:
            _lib.check(st)
        self.assertEqual(str(cm.exception), "ember_tensor_add: b is NULL (expected an ember_tensor)")
        self.assertIsNone(out.value)
        bogus = ctypes.c_void_p(0x10)
        with self.assertRaises(ember.InvalidHandleError):
            _lib.check(_lib.tensor_numel(bogus, ctypes.byref(ctypes.c_int64())))
        self.assertEqual(_lib.tensor_free(None), 0)  # ember_*_free(NULL) is a no-op

    def test_buffer_too_small(self):
        t = ember.ones(4)
        buf = (ctypes.c_float * 2)()
        with self.assertRaises(ember.BufferTooSmallError):
            _lib.check(_lib.tensor_copy_to(t._h, 0, buf, ctypes.sizeof(buf), None))

    def test_records_and_io(self):
        model = nn.Sequential(nn.Linear(2, 2))
        path = _support.temp_path(self, "bad.pt")
        with open(path, "wb") as f:
            f.write(b"not a record at all" * 4)
        with self.assertRaises(ember.RecordError) as cm:
            ember.load(model, path)
        self.assertEqual(str(cm.exception), "ember.load: not a valid ember file (no EMBERPY1 header)")
        with self.assertRaises(FileNotFoundError):
            ember.load(model, _support.temp_path(self, "missing.pt"))
        with self.assertRaises(ember.RecordError):
            ember.Record.from_bytes(b"EMBERREC garbage")
        with self.assertRaises(ember.EmberIOError) as cm:
            ember.Record.read(_support.temp_path(self, "missing.emr"))
        self.assertIsInstance(cm.exception, OSError)
        with self.assertRaisesRegex(ValueError, "recorder must be one of"):
            ember.save(model, _support.temp_path(self, "x.emr"), recorder="xml")
        self.assertStillWorks()

    def test_errors_are_per_thread(self):
        seen = {}

        def worker():
            try:
                ember.ones(2) @ ember.ones(3)
            except ember.EmberError as e:
                seen["worker"] = str(e)
            seen["ok"] = (ember.ones(1) + 1).item()

        with self.assertRaises(ember.DTypeError):
            ember.tensor([1]).log()
        mine = _lib.last_error().decode()
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        self.assertIn("ember_tensor_matmul", seen["worker"])
        self.assertEqual(seen["ok"], 2.0)
        self.assertEqual(_lib.last_error().decode(), mine)

    def test_status_codes_cover_the_header(self):
        for code, cls in ember.errors.BY_STATUS.items():
            self.assertEqual(_lib.status_name(code).decode(), cls.status_name)
        e = _lib.error(99)
        self.assertIs(type(e), ember.EmberError)


    @unittest.skipUnless(ember.backends().get("vulkan", {}).get("usable"), "no usable Vulkan device")
    def test_a_lost_device_raises_device_lost_and_a_new_one_works(self):
        # Issue 17 part 8: a simulated VK_ERROR_DEVICE_LOST surfaces as DeviceLostError; later uses of the lost
        # device fail the same way; a tensor made afterwards on "vulkan" gets a new, working device.
        x = ember.tensor([1.0, 2.0, 3.0], device="vulkan")
        dev = ctypes.c_void_p()
        _lib.check(_lib.tensor_device(x._h, ctypes.byref(dev)))
        try:
            _lib.check(_lib.vulkan_simulate_device_lost(dev, 0))
        finally:
            _lib.device_free(dev)
        with self.assertRaises(ember.DeviceLostError) as cm:
            (x * 2).tolist()
        self.assertEqual(cm.exception.status_name, "EMBER_ERR_DEVICE_LOST")
        self.assertIn("VK_ERROR_DEVICE_LOST", str(cm.exception))
        with self.assertRaises(ember.DeviceLostError):
            x + x
        del x
        y = ember.tensor([1.0, 2.0, 3.0], device="vulkan")
        self.assertEqual((y * 2).tolist(), [2.0, 4.0, 6.0])


if __name__ == "__main__":
    unittest.main()
