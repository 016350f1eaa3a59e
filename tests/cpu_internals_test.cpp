// CPU backend internals: the caching allocator and the thread pool (cpu_scalar_divisor_test.cpp: Adam's divisor;
// cpu_gelu_avx512_test.cpp: the AVX-512 GELU kernels).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include "backends/cpu/allocator.hpp"
#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/kernels.hpp"
#include "backends/cpu/parallel.hpp"
#include "engine/ember.hpp"

namespace ember {
namespace {

TEST(CpuAllocator, ReusesFreedBlocksOfTheSameSize) {
  cpu::allocator_trim();
  const auto before = cpu::allocator_stats();
  void* first = nullptr;
  {
    auto b = cpu::allocate(1 << 20);
    first = b->ptr;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
  }
  auto again = cpu::allocate(1 << 20);
  EXPECT_EQ(again->ptr, first);
  const auto after = cpu::allocator_stats();
  EXPECT_EQ(after.os_allocations, before.os_allocations + 1);
  EXPECT_GE(after.reuses, before.reuses + 1);
}

TEST(CpuAllocator, SteadyTrainingLoopStopsAllocatingFromTheOs) {
  using T = Tensor<Cpu<float>, 2>;
  auto step = [] {
    auto a = T::ones({128, 64});
    auto b = T::full({64, 32}, 0.5);
    return a.matmul(b).tanh().sum().item();
  };
  step();
  const auto warm = cpu::allocator_stats().os_allocations;
  for (int i = 0; i < 20; ++i) step();
  EXPECT_EQ(cpu::allocator_stats().os_allocations, warm);
}

// Blocks of 2 MiB and more start on a huge-page boundary (allocator.cpp marks them MADV_HUGEPAGE; whether the
// kernel backs them with huge pages is its choice), the whole block is usable, and smaller ones keep 64 bytes.
TEST(CpuAllocator, LargeBlocksStartOnAHugePageBoundary) {
  const char* env = std::getenv("EMBER_CPU_HUGEPAGES");
  if (env && std::string(env) == "0") GTEST_SKIP() << "EMBER_CPU_HUGEPAGES=0";
  cpu::allocator_trim();
  const std::size_t bytes = (std::size_t(6) << 20) + 100;
  auto big = cpu::allocate(bytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big->ptr) % (uintptr_t(2) << 20), 0u);
  std::memset(big->ptr, 1, bytes);
  EXPECT_EQ(static_cast<unsigned char*>(big->ptr)[bytes - 1], 1);
  auto small = cpu::allocate((std::size_t(2) << 20) - 4096);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small->ptr) % 64, 0u);
}

TEST(CpuAllocator, ZeroBytesIsValid) {
  auto b = cpu::allocate(0);
  EXPECT_EQ(b->bytes, 0u);
}

TEST(CpuAllocator, CacheLimitIsRespected) {
  cpu::allocator_trim();
  cpu::set_cache_limit(1 << 20);
  { auto big = cpu::allocate(8 << 20); }
  EXPECT_LE(cpu::allocator_stats().cached_bytes, std::size_t(1) << 20);
  cpu::set_cache_limit(std::size_t(2048) << 20);
}

TEST(CpuParallel, CoversTheRangeExactlyOnce) {
  cpu::set_num_threads(2);
  for (int64_t n : {int64_t(0), int64_t(1), int64_t(7), int64_t(1000), int64_t(1) << 20}) {
    std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
    cpu::parallel_for(n, 16, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[static_cast<std::size_t>(i)]++;
    });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  }
}

TEST(CpuParallel, ExceptionsPropagateAndThePoolStaysUsable) {
  cpu::set_num_threads(2);
  EXPECT_THROW(cpu::parallel_for(1 << 20, 1, [](int64_t b, int64_t) {
                 if (b == 0) throw std::runtime_error("boom");
               }),
               std::runtime_error);
  std::atomic<int64_t> sum{0};
  std::atomic<int> chunks{0};
  cpu::parallel_for(1 << 20, 1, [&](int64_t b, int64_t e) {
    sum += e - b;
    chunks++;
  });
  EXPECT_EQ(sum.load(), 1 << 20);
  EXPECT_EQ(chunks.load(), 2);  // still split across both threads after the exception
}

// A part no worker has claimed yet runs on the calling thread once its own part is done, so a sleeping worker (each
// region below starts after the workers stopped polling) does not keep the caller waiting for it to wake: with an
// empty first part, the caller takes the second part itself in some regions. Every part still runs exactly once,
// and an exception from a part the caller took propagates. 200 regions: on a loaded 2-core machine (CI runs two
// tests at once) the woken worker wins most races, and 40 regions once saw it win them all.
TEST(CpuParallel, TheCallerRunsPartsNoWorkerHasClaimed) {
  cpu::set_num_threads(2);
  const auto caller = std::this_thread::get_id();
  int by_caller = 0;
  for (int region = 0; region < 200; ++region) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // past the pool's 50 us poll: the worker sleeps
    std::atomic<int> ran{0};
    std::thread::id second;
    cpu::parallel_for(2, 1, [&](int64_t b, int64_t) {
      if (b == 1) second = std::this_thread::get_id();
      ran++;
    });
    ASSERT_EQ(ran.load(), 2);
    by_caller += second == caller;
  }
  EXPECT_GT(by_caller, 0) << "the caller waited for a sleeping worker in every region";
  for (int region = 0; region < 20; ++region) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_THROW(cpu::parallel_for(2, 1, [](int64_t b, int64_t) {
                   if (b == 1) throw std::runtime_error("boom");
                 }),
                 std::runtime_error);
  }
}

TEST(CpuParallel, NestedRegionsRunInline) {
  cpu::set_num_threads(2);
  std::atomic<int64_t> total{0};
  cpu::parallel_for(4, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      cpu::parallel_for(1000, 1, [&](int64_t x, int64_t y) { total += y - x; });
  });
  EXPECT_EQ(total.load(), 4000);
}

TEST(CpuParallel, ResultsDoNotDependOnTheThreadCount) {
  using T = Tensor<Cpu<float>, 2>;
  Rng rng(7);
  auto x = T::random({512, 1024}, Normal{}, rng);
  cpu::set_num_threads(1);
  auto one = x.tanh().add(x).sum_dim(1).into_data().to_vec<float>();
  cpu::set_num_threads(2);
  auto two = x.tanh().add(x).sum_dim(1).into_data().to_vec<float>();
  EXPECT_EQ(one, two);
}

// A sum over a leading dim with fewer slices than threads runs in column bands over the pool (reduce.cpp
// sum_columns_in_bands): the bits of one thread, and each column's sum accurate against a double reference, for
// widths around the band size and a mean.
TEST(CpuParallel, ColumnSumsInBandsHaveTheOneThreadBits) {
  Rng rng(9);
  // On 3 threads: bands of 336 (1000), 256 (512, 600: the narrowest band), 272 (769) and 1024 (4100: the widest,
  // then a last band of 4) columns.
  for (const int64_t width : {1000, 512, 600, 769, 4100}) {
    SCOPED_TRACE(width);
    auto x = Tensor<Cpu<float>, 3>::random({1, 700, width}, Normal{}, rng);
    cpu::set_num_threads(1);
    const auto one = x.sum_dim(1).into_data().to_vec<float>();
    const auto mean_one = x.mean_dim(1).into_data().to_vec<float>();
    cpu::set_num_threads(3);
    EXPECT_EQ(x.sum_dim(1).into_data().to_vec<float>(), one);
    EXPECT_EQ(x.mean_dim(1).into_data().to_vec<float>(), mean_one);
    cpu::set_num_threads(2);
    const auto v = x.into_data().to_vec<float>();
    for (int64_t j = 0; j < width; j += 37) {
      double ref = 0;
      for (int64_t r = 0; r < 700; ++r) ref += v[static_cast<std::size_t>(r * width + j)];
      EXPECT_FLOAT_EQ(one[static_cast<std::size_t>(j)], static_cast<float>(ref)) << "column " << j;
    }
  }
  cpu::set_num_threads(1);
}

// The CPU's Bernoulli kernel (random.cpp: fill_bernoulli's groups of 8 Philox blocks, AVX2 for float, split over
// threads) gives philox_word's values exactly: sizes around a block, a group and a thread's share, thresholds at both
// ends, 1 to 3 threads, float and double.
template <class T>
void expect_bernoulli_kernel_is_host_fill(int64_t n, uint64_t key, uint64_t threshold) {
  const cpu::CpuTensor<T> got = cpu::bernoulli<T>(Shape{n}, key, threshold, T(1.25));
  ASSERT_EQ(got.numel(), n);
  for (int64_t i = 0; i < n; ++i) {
    const T want = philox_word(key, static_cast<uint64_t>(i)) < threshold ? T(1.25) : T(0);
    ASSERT_EQ(got.data()[i], want) << "n " << n << " element " << i;
  }
}

TEST(CpuRandom, BernoulliKernelGivesTheHostFill) {
  for (const int threads : {1, 2, 3}) {
    cpu::set_num_threads(threads);
    for (const int64_t n : {0, 1, 3, 4, 5, 63, 64, 65, 67, 1000, 300007}) {
      for (const uint64_t t : {uint64_t{0}, uint64_t{1}, uint64_t{1288490189}, (uint64_t{1} << 32) - 1,
                               uint64_t{1} << 32}) {
        SCOPED_TRACE(::testing::Message() << "threads " << threads << " threshold " << t);
        expect_bernoulli_kernel_is_host_fill<float>(n, 0x0123456789abcdefull, t);
        expect_bernoulli_kernel_is_host_fill<double>(n, 42, t);
      }
    }
  }
  cpu::set_num_threads(1);
}

// Tensor::random on the CPU takes the kernel's route for a float Bernoulli draw (its values equal the host's, so only
// the route's conditions show that it is taken), through Autodiff and Fusion too: the values and the generator's
// state after it are the host reference's.
static_assert(HasBernoulliKernel<Cpu<float>> && HasBernoulliKernel<Cpu<double>>);
static_assert(DrawsOnBackend<Autodiff<Cpu<float>>, Float> && DrawsOnBackend<Fusion<Cpu<float>>, Float>);
static_assert(!DrawsOnBackend<Cpu<float>, Int>);  // other kinds are the host's
TEST(CpuRandom, TensorRandomBernoulliIsTheHostReference) {
  Rng a(5), b(5);
  const auto t = Tensor<Cpu<float>, 2>::random({123, 77}, Bernoulli{0.3, 2.0}, a).into_data().to_vec<float>();
  std::vector<float> want(123 * 77);
  sample_into<float>(b, Bernoulli{0.3, 2.0}, want);
  EXPECT_EQ(t, want);
  EXPECT_EQ(a.next(), b.next());
}

}  // namespace
}  // namespace ember
