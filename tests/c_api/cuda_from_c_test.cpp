// CUDA from C: the CUDA backend is one more plugin (libember-cuda.so). Built with it (EMBER_TEST_CUDA_BUILT, from
// meson), ember_backend_query reports it compiled with as many devices as the CUDA runtime finds; without a GPU,
// creating a device fails cleanly (UNSUPPORTED, with the reason), and with one, ops on it match the CPU.
#include "tests/c_api/capi_support.hpp"

#ifndef EMBER_TEST_CUDA_BUILT
#define EMBER_TEST_CUDA_BUILT 0
#endif

namespace ember::capi_test {
namespace {

// Without a usable device the message names the backend and the reason: the CUDA runtime's when the plugin is built
// (no driver, no GPU: it varies by machine), else that the backend is not compiled.
constexpr const char* kCudaUnavailable = EMBER_TEST_CUDA_BUILT ? "cuda" : "backend cuda is not compiled into this library";

ember_backend_info cuda_info() {
  ember_backend_info info{};
  info.struct_size = sizeof info;
  EXPECT_EQ(ember_backend_query(EMBER_BACKEND_CUDA, &info), EMBER_OK) << ember_last_error();
  return info;
}

TEST(CudaFromC, QueryReportsTheBuildAndTheMachine) {
  const ember_backend_info info = cuda_info();
  EXPECT_STREQ(info.name, "cuda");
  EXPECT_EQ(info.compiled, EMBER_TEST_CUDA_BUILT);
  EXPECT_GE(info.device_count, 0);
  EXPECT_EQ(info.usable, info.device_count > 0 ? 1 : 0);
  if (!info.compiled) {
    EXPECT_EQ(info.device_count, 0);
  }
}

TEST(CudaFromC, NoDeviceIsUnsupportedNeverACrash) {
  const ember_backend_info info = cuda_info();
  if (info.device_count > 0) GTEST_SKIP() << "a CUDA device is present";
  ember_device* d = reinterpret_cast<ember_device*>(0x1);
  EMBER_EXPECT_ERR(ember_device_create(EMBER_BACKEND_CUDA, 0, &d), EMBER_ERR_UNSUPPORTED,
                   kCudaUnavailable);
  EXPECT_EQ(d, nullptr);
  EMBER_EXPECT_ERR(ember_device_create(EMBER_BACKEND_CUDA, -1, &d), EMBER_ERR_UNSUPPORTED,
                   kCudaUnavailable);
  // The rest of the library is unaffected.
  auto a = f32({1, 2, 3}, {3});
  double sum = 0;
  ember_tensor* s = nullptr;
  EMBER_ASSERT_OK(ember_tensor_reduce_all(a.get(), EMBER_REDUCE_SUM, &s));
  Tensor ts(s);
  EMBER_ASSERT_OK(ember_tensor_item(ts.get(), &sum));
  EXPECT_EQ(sum, 6.0);
}

TEST(CudaFromC, DeviceComputesWhatTheCpuComputes) {
  const ember_backend_info info = cuda_info();
  if (info.device_count == 0) GTEST_SKIP() << "no CUDA device here";
  ember_device* d = nullptr;
  EMBER_ASSERT_OK(ember_device_create(EMBER_BACKEND_CUDA, 0, &d));
  const std::vector<float> v{1, 2, 3, 4, 5, 6};
  const int64_t shape[] = {2, 3};
  ember_tensor *x = nullptr, *m = nullptr, *s = nullptr;
  EMBER_ASSERT_OK(ember_tensor_from_data(d, EMBER_DTYPE_F32, v.data(), v.size() * sizeof(float), shape, 2, &x));
  Tensor tx(x);
  EMBER_ASSERT_OK(ember_tensor_mul(tx.get(), tx.get(), &m));
  Tensor tm(m);
  EMBER_ASSERT_OK(ember_tensor_reduce_all(tm.get(), EMBER_REDUCE_SUM, &s));
  Tensor ts(s);
  double sum = 0;
  EMBER_ASSERT_OK(ember_tensor_item(ts.get(), &sum));
  EXPECT_NEAR(sum, 91.0, 1e-4);
  // Mixing backends in one op is refused.
  auto c = f32(v, {2, 3});
  ember_tensor* r = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_add(tx.get(), c.get(), &r), EMBER_ERR_INVALID_ARGUMENT, "different backends");
  EMBER_ASSERT_OK(ember_device_free(d));
}

}  // namespace
}  // namespace ember::capi_test
