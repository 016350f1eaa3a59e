// CUDA backend internals: the caching allocator, caller-supplied streams, asynchronous errors and TF32 control.
// Runs only with a GPU (tests/support/cuda_main.cpp skips the binary otherwise).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "backends/cuda/cuda_backend.hpp"
#include "engine/ember.hpp"
#include "tests/fusion/fusion_test_util.hpp"

namespace ember {
namespace {

using T2 = Tensor<Cuda, 2>;

// Dropout's masks are made on the device (layout.cu's bernoulli_kernel), not drawn on the host and uploaded.
static_assert(HasBernoulliKernel<Cuda>);

TEST(CudaAllocator, FreedBlocksAreReused) {
  { EXPECT_EQ(T2::ones({256, 256}).sum().item(), 65536.0); }  // warm-up: the same sizes as the loop below
  const auto before = cuda::allocator_stats(0);
  for (int i = 0; i < 10; ++i) {
    const auto t = T2::ones({256, 256});
    EXPECT_EQ(t.sum().item(), 65536.0);
  }
  const auto after = cuda::allocator_stats(0);
  EXPECT_GT(after.reuses, before.reuses);
  EXPECT_EQ(after.device_allocations, before.device_allocations);  // every block came from the cache
}

TEST(CudaAllocator, EmptyCacheReturnsBlocks) {
  { const auto t = T2::ones({1024, 1024}); }
  EXPECT_GT(cuda::allocator_stats(0).cached_bytes, 0u);
  cuda::empty_cache(0);
  EXPECT_EQ(cuda::allocator_stats(0).cached_bytes, 0u);
  EXPECT_EQ(T2::ones({4, 4}).sum().item(), 16.0);
}

TEST(CudaAllocator, OutOfMemoryIsAnExceptionAndTheDeviceStaysUsable) {
  // 2^40 floats (4 TiB) exceeds any device: an OutOfMemory error after the cache was flushed, no abort.
  const auto flushes = cuda::allocator_stats(0).cache_flushes;
  EXPECT_THROW((Tensor<Cuda, 3>::zeros({1024, 1024, 1024 * 1024})), cuda::OutOfMemory);
  EXPECT_EQ(cuda::allocator_stats(0).cache_flushes, flushes + 1);
  EXPECT_EQ(T2::ones({3, 3}).sum().item(), 9.0);
}

TEST(CudaErrors, MissingDeviceIsACudaError) {
  EXPECT_THROW(T2::zeros({2, 2}, cuda::CudaDevice{cuda::device_count()}), cuda::CudaError);
}

TEST(CudaErrors, BadIndicesThrowLikeTheCpuBackend) {
  const auto x = T2::ones({3, 4});
  const auto idx = Tensor<Cuda, 1, Int>::from_values(std::vector<int64_t>{0, 7}, {2});
  EXPECT_THROW(x.index_select(0, idx), IndexError);
  EXPECT_EQ(x.sum().item(), 12.0);  // the stream is still fine
}

TEST(CudaStreams, CallerStreamIsUsedAndRestored) {
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  cuda::set_stream(0, s);
  EXPECT_EQ(cuda::stream(0), static_cast<void*>(s));
  const auto a = T2::from_values(std::vector<float>{1, 2, 3, 4}, {2, 2});
  const auto c = a.matmul(a).add_scalar(1.0);  // cuBLAS and kernels on the caller's stream
  EXPECT_EQ(c.to_vec<float>(), (std::vector<float>{8, 11, 16, 23}));
  cuda::synchronize(0);
  EXPECT_EQ(cudaStreamQuery(s), cudaSuccess);
  cuda::set_stream(0, nullptr);
  EXPECT_NE(cuda::stream(0), static_cast<void*>(s));
  EXPECT_EQ(c.sum().item(), 58.0);
  ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
}

TEST(CudaStreams, OpsAreAsynchronousUntilTheHostReads) {
  // A long chain of large ops returns before the device finishes; into_data waits for it.
  auto x = T2::ones({4096, 4096});
  for (int i = 0; i < 20; ++i) x = x.add_scalar(1.0);
  EXPECT_EQ(x.sum().item(), 21.0 * 4096 * 4096);  // exact: 21 * 2^24 is a float
  cuda::synchronize();
}

TEST(CudaMatmul, Tf32IsOptInAndClose) {
  Rng rng(7);
  const auto a = T2::random({256, 256}, Uniform{-1.0, 1.0}, rng);
  const auto b = T2::random({256, 256}, Uniform{-1.0, 1.0}, rng);
  const auto exact = a.matmul(b).to_vec<float>();
  EXPECT_FALSE(cuda::allow_tf32());
  cuda::set_allow_tf32(true);
  const auto fast = a.matmul(b).to_vec<float>();
  cuda::set_allow_tf32(false);
  double num = 0, den = 0;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    num += (fast[i] - exact[i]) * (fast[i] - exact[i]);
    den += exact[i] * exact[i];
  }
  EXPECT_LT(std::sqrt(num / den), 5e-3);
}

TEST(CudaTransfer, HalfStorageUploadsAndWidensOnTheDevice) {
  const std::vector<float> v{0.5f, -2.0f, 1024.0f, 0.0f};
  const auto half = TensorData::from_vec(v, Shape{4}).convert(DType::F16);
  const auto t = Tensor<Cuda, 1>::from_data(half);
  EXPECT_EQ(t.to_vec<float>(), v);
}

}  // namespace
}  // namespace ember

namespace ember {
namespace {

// Fusion<Cuda> (issue 14): a chain over every instruction kind (tests/fusion/fusion_test_util.hpp) runs as one
// NVRTC-compiled kernel, equal to the eager ops within f32 rounding (a multiply and the next op's add may contract
// to one FMA there), and so do its sum and mean.
TEST(CudaFusion, ChainsRunAsOneCompiledKernelAndMatchEager) {
  using F = Fusion<Cuda>;
  using test::every_instruction_chain;
  const auto before = cuda::fused_chain_stats(0);
  for (auto [rows, cols] : {std::array<int64_t, 2>{3, 5}, {17, 300}}) {
    SCOPED_TRACE(rows * cols);
    const auto fused = every_instruction_chain<F>(rows, cols);
    EXPECT_TRUE(F::is_pending(fused.primitive()));
    const auto eager = every_instruction_chain<Cuda>(rows, cols);
    test::expect_close(fused.into_data().to_vec<float>(), eager.into_data().to_vec<float>(), 1e-5);
    test::expect_close(every_instruction_chain<F>(rows, cols).sum().into_data().to_vec<float>(),
                       eager.sum().into_data().to_vec<float>(), 1e-5);
    test::expect_close(every_instruction_chain<F>(rows, cols).mean().into_data().to_vec<float>(),
                       eager.mean().into_data().to_vec<float>(), 1e-5);
  }
  const auto after = cuda::fused_chain_stats(0);
  EXPECT_EQ(after.unfused, before.unfused) << after.last_failure;
  // Two structures: the chain, and the chain with a trailing sum (its mean divides the same kernel's sum).
  EXPECT_GE(after.compiled, 2u);
  EXPECT_GE(after.hits, before.hits + 4) << "the mean and the second shape reuse the kernels";
}

}  // namespace
}  // namespace ember
