// The CPU's f32 GEMM routing (backends/cpu/onednn_linear.cpp): products up to 2^28 multiply-adds run oneDNN's matmul,
// larger ones OpenBLAS's sgemm. Each routed problem is compared with OpenBLAS (cpu::gemm) on the same operands,
// transposed operands included, and the boundary is checked on both sides. Skipped in a build without oneDNN.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "backends/cpu/kernels.hpp"
#include "backends/cpu/onednn.hpp"
#include "backends/cpu/onednn_linear.hpp"

namespace ember {
namespace {

std::vector<float> random(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = u(gen);
  return v;
}

class CpuGemmRoutes : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cpu::onednn::enabled()) GTEST_SKIP() << "Ember was built without oneDNN (or EMBER_ONEDNN=0)";
  }
};

struct Problem {
  int64_t m, n, k;
  bool trans_a, trans_b;
};

// oneDNN's product of op(A) op(B) against OpenBLAS's, both from the same stored operands.
void expect_same_as_openblas(const Problem& p) {
  SCOPED_TRACE(::testing::Message() << p.m << "x" << p.n << "x" << p.k << " trans_a " << p.trans_a << " trans_b "
                                    << p.trans_b);
  const std::vector<float> a = random(p.m * p.k, 1), b = random(p.k * p.n, 2);
  const int64_t lda = p.trans_a ? p.m : p.k, ldb = p.trans_b ? p.k : p.n;
  std::vector<float> dnn(static_cast<std::size_t>(p.m * p.n), NAN), blas(dnn.size(), NAN);
  ASSERT_TRUE(cpu::onednn::gemm(p.trans_a, p.trans_b, p.m, p.n, p.k, a.data(), lda, b.data(), ldb, dnn.data()))
      << "a product up to 2^28 multiply-adds goes to oneDNN";
  cpu::gemm<float>(p.trans_a, p.trans_b, p.m, p.n, p.k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f, blas.data(), p.n);
  double worst = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < dnn.size(); ++i) {
    worst = std::max(worst, std::abs(double(dnn[i]) - double(blas[i])));
    scale = std::max(scale, std::abs(double(blas[i])));
  }
  EXPECT_LT(worst, 1e-5 * scale) << "largest difference " << worst << " of values up to " << scale;
}

TEST_F(CpuGemmRoutes, ProductsUpTo2Pow28RunOneDnnAndMatchOpenBlas) {
  expect_same_as_openblas({512, 512, 512, false, false});  // the bench's gemm/512, exactly 2^27
  expect_same_as_openblas({256, 1024, 512, true, false});  // autodiff's a^T @ g, 2^27
  expect_same_as_openblas({512, 1024, 512, false, true});  // the limit itself, 2^28, with an [n, k] weight
  expect_same_as_openblas({300, 200, 100, true, true});    // no multiple of a vector width
}

TEST_F(CpuGemmRoutes, LargerProductsStayOnOpenBlas) {
  // Declined before anything runs: the operands are never read, so none are needed.
  float c = 0.0f;
  EXPECT_FALSE(cpu::onednn::gemm(false, false, 1024, 1024, 1024, nullptr, 1024, nullptr, 1024, &c));
  EXPECT_FALSE(cpu::onednn::gemm(false, false, 768, 768, 768, nullptr, 768, nullptr, 768, &c));
  EXPECT_FALSE(cpu::onednn::gemm(false, false, 512, 1024, 513, nullptr, 513, nullptr, 1024, &c));  // 2^28 + 2^19
}

TEST_F(CpuGemmRoutes, MatmulEntryPointGivesTheRoutedProduct) {
  // cpu::matmul of two [512, 512] tensors (the oneDNN route) equals OpenBLAS's sgemm of the same buffers.
  cpu::CpuTensor<float> a(Shape{512, 512}), b(Shape{512, 512});
  const std::vector<float> ra = random(512 * 512, 3), rb = random(512 * 512, 4);
  std::copy(ra.begin(), ra.end(), a.data());
  std::copy(rb.begin(), rb.end(), b.data());
  const cpu::CpuTensor<float> c = cpu::matmul(a, b);
  std::vector<float> blas(512 * 512);
  cpu::gemm<float>(false, false, 512, 512, 512, 1.0f, a.data(), 512, b.data(), 512, 0.0f, blas.data(), 512);
  double worst = 0.0;
  for (int64_t i = 0; i < c.numel(); ++i) worst = std::max(worst, std::abs(double(c.data()[i]) - double(blas[i])));
  EXPECT_LT(worst, 1e-4);
}

}  // namespace
}  // namespace ember
