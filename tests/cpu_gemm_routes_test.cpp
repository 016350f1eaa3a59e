// The CPU's f32 GEMM routing (backends/cpu/onednn_linear.cpp): products up to 2^28 multiply-adds run oneDNN's matmul,
// larger ones cpu::gemm. Each routed problem is compared with OpenBLAS (cpu::gemm held on OpenBLAS) on the same
// operands, transposed operands included, and the boundary is checked on both sides. cpu::gemm itself runs oneDNN's
// sgemm where OpenBLAS's kernels lag the CPU (blas_route.hpp): its rule, and its products (alpha, beta, leading
// dims, splits over threads) against OpenBLAS's. Skipped in a build without oneDNN, except the rule's own tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/blas_route.hpp"
#include "backends/cpu/kernels.hpp"
#include "backends/cpu/linear.hpp"
#include "backends/cpu/onednn.hpp"
#include "backends/cpu/onednn_linear.hpp"
#include "backends/cpu/parallel.hpp"

namespace ember {
namespace {

std::vector<float> random(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = u(gen);
  return v;
}

// cpu::gemm<float> on one route while it lives.
class SgemmRoute {
 public:
  explicit SgemmRoute(cpu::blas::Sgemm r) : before_(cpu::blas::sgemm_route()) { cpu::blas::set_sgemm_route(r); }
  ~SgemmRoute() { cpu::blas::set_sgemm_route(before_); }
  SgemmRoute(const SgemmRoute&) = delete;
  SgemmRoute& operator=(const SgemmRoute&) = delete;

 private:
  cpu::blas::Sgemm before_;
};

void openblas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                   const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const SgemmRoute on(cpu::blas::Sgemm::OpenBlas);
  cpu::gemm<float>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
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
  openblas_gemm(p.trans_a, p.trans_b, p.m, p.n, p.k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f, blas.data(), p.n);
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

// Below 64 output columns (the 10 logits) the matmul primitive runs only where OpenBLAS's kernels lag the CPU,
// and only with A read in rows: elsewhere OpenBLAS's small-matrix kernel or dnnl_sgemm measured faster.
TEST_F(CpuGemmRoutes, NarrowProductsRunTheMatmulPrimitiveOnlyWhereOpenBlasLags) {
  float c = 0.0f;
  {
    const SgemmRoute on(cpu::blas::Sgemm::OneDnn);
    expect_same_as_openblas({256, 10, 256, false, false});  // the digits MLP's logits at batch 256
    expect_same_as_openblas({64, 8, 256, false, true});     // the narrowest, with an [n, k] weight
    EXPECT_FALSE(cpu::onednn::gemm(true, false, 256, 10, 64, nullptr, 256, nullptr, 10, &c))
        << "a weight gradient (A transposed) stays on dnnl_sgemm";
    EXPECT_FALSE(cpu::onednn::gemm(false, false, 256, 7, 256, nullptr, 256, nullptr, 7, &c)) << "below 8 columns";
  }
  const SgemmRoute on(cpu::blas::Sgemm::OpenBlas);
  EXPECT_FALSE(cpu::onednn::gemm(false, false, 256, 10, 256, nullptr, 256, nullptr, 10, &c))
      << "OpenBLAS's own kernels: its small-matrix kernel keeps narrow products";
  expect_same_as_openblas({256, 64, 256, false, false});  // from 64 columns oneDNN on either route
}

// A linear layer's product splits its rows over the pool from 2^19 multiply-adds and 64 rows per part: the logits
// (2^19.3) and the first layer at batch 256 (2^22; 3 threads: parts of 85-86 rows), and unsplit at batch 64, on 1-3
// threads give OpenBLAS's product plus the bias.
TEST_F(CpuGemmRoutes, LinearRowsSplitOverThreadsMatchOpenBlas) {
  const SgemmRoute route(cpu::blas::Sgemm::OneDnn);
  const int before = cpu::num_threads();
  for (const Problem& p : {Problem{256, 10, 256, false, false}, Problem{256, 256, 64, false, false},
                           Problem{64, 256, 64, false, false}}) {
    cpu::CpuTensor<float> x(Shape{p.m, p.k}), w(Shape{p.k, p.n}), bias(Shape{p.n});
    const std::vector<float> rx = random(p.m * p.k, 5), rw = random(p.k * p.n, 6), rb = random(p.n, 7);
    std::copy(rx.begin(), rx.end(), x.data());
    std::copy(rw.begin(), rw.end(), w.data());
    std::copy(rb.begin(), rb.end(), bias.data());
    std::vector<float> want(static_cast<std::size_t>(p.m * p.n));
    openblas_gemm(false, false, p.m, p.n, p.k, 1.0f, x.data(), p.k, w.data(), p.n, 0.0f, want.data(), p.n);
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) want[static_cast<std::size_t>(i * p.n + j)] += rb[static_cast<std::size_t>(j)];
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(::testing::Message() << p.m << "x" << p.n << "x" << p.k << " on " << threads << " threads");
      cpu::set_num_threads(threads);
      const cpu::CpuTensor<float> y = cpu::linear(x, w, &bias);
      double worst = 0.0;
      for (int64_t i = 0; i < y.numel(); ++i)
        worst = std::max(worst, std::abs(double(y.data()[i]) - double(want[static_cast<std::size_t>(i)])));
      EXPECT_LT(worst, 1e-4);
    }
  }
  cpu::set_num_threads(before);
}

TEST_F(CpuGemmRoutes, MatmulEntryPointGivesTheRoutedProduct) {
  // cpu::matmul of two [512, 512] tensors (the oneDNN route) equals OpenBLAS's sgemm of the same buffers.
  cpu::CpuTensor<float> a(Shape{512, 512}), b(Shape{512, 512});
  const std::vector<float> ra = random(512 * 512, 3), rb = random(512 * 512, 4);
  std::copy(ra.begin(), ra.end(), a.data());
  std::copy(rb.begin(), rb.end(), b.data());
  const cpu::CpuTensor<float> c = cpu::matmul(a, b);
  std::vector<float> blas(512 * 512);
  openblas_gemm(false, false, 512, 512, 512, 1.0f, a.data(), 512, b.data(), 512, 0.0f, blas.data(), 512);
  double worst = 0.0;
  for (int64_t i = 0; i < c.numel(); ++i) worst = std::max(worst, std::abs(double(c.data()[i]) - double(blas[i])));
  EXPECT_LT(worst, 1e-4);
}

TEST(BlasRoute, KernelIsaOfOpenBlasCoreNames) {
  using cpu::blas::Isa;
  EXPECT_EQ(cpu::blas::kernel_isa("Prescott"), Isa::Sse);  // 0.3.21 on a CPU model it does not know
  EXPECT_EQ(cpu::blas::kernel_isa("Nehalem"), Isa::Sse);
  EXPECT_EQ(cpu::blas::kernel_isa("Sandybridge"), Isa::Avx);
  EXPECT_EQ(cpu::blas::kernel_isa("Haswell"), Isa::Avx2);
  EXPECT_EQ(cpu::blas::kernel_isa("Zen"), Isa::Avx2);
  EXPECT_EQ(cpu::blas::kernel_isa("SkylakeX"), Isa::Avx512);
  EXPECT_EQ(cpu::blas::kernel_isa("Cooperlake"), Isa::Avx512);
  EXPECT_EQ(cpu::blas::kernel_isa("SapphireRapids"), Isa::Avx512);
  EXPECT_EQ(cpu::blas::kernel_isa("skylakex"), Isa::Unknown);  // OpenBLAS's names are matched exactly
  EXPECT_EQ(cpu::blas::kernel_isa(""), Isa::Unknown);
}

TEST(BlasRoute, OneDnnOnlyWhereOpenBlasKernelsAreKnownToLagTheCpu) {
  using cpu::blas::Isa;
  using cpu::blas::Sgemm;
  using cpu::blas::automatic_route;
  EXPECT_EQ(automatic_route(Isa::Sse, Isa::Avx512, true), Sgemm::OneDnn);
  EXPECT_EQ(automatic_route(Isa::Avx2, Isa::Avx512, true), Sgemm::OneDnn);
  EXPECT_EQ(automatic_route(Isa::Sse, Isa::Avx2, true), Sgemm::OneDnn);
  EXPECT_EQ(automatic_route(Isa::Avx512, Isa::Avx512, true), Sgemm::OpenBlas);  // SkylakeX kernels on Zen 4
  EXPECT_EQ(automatic_route(Isa::Avx2, Isa::Avx2, true), Sgemm::OpenBlas);
  EXPECT_EQ(automatic_route(Isa::Avx512, Isa::Avx2, true), Sgemm::OpenBlas);  // OpenBLAS knows better
  EXPECT_EQ(automatic_route(Isa::Unknown, Isa::Avx512, true), Sgemm::OpenBlas);  // a newer OpenBLAS's name
  EXPECT_EQ(automatic_route(Isa::Sse, Isa::Unknown, true), Sgemm::OpenBlas);
  EXPECT_EQ(automatic_route(Isa::Sse, Isa::Avx512, false), Sgemm::OpenBlas);  // no oneDNN in the build
}

TEST(BlasRoute, DescribeNamesTheKernelsAndTheRoute) {
  const std::string d = cpu::blas::describe();
  EXPECT_NE(d.find("OpenBLAS "), std::string::npos) << d;
  EXPECT_NE(d.find(cpu::blas::sgemm_route() == cpu::blas::Sgemm::OneDnn ? "on oneDNN" : "on OpenBLAS"),
            std::string::npos)
      << d;
}

// C = alpha op(A) op(B) + beta C through cpu::gemm on oneDNN's sgemm and on OpenBLAS, from the same operands and the
// same starting C, with leading dims wider than the matrices and C's pad columns checked untouched.
struct SgemmCase {
  int64_t m, n, k;
  bool trans_a, trans_b;
  float alpha, beta;
};

void expect_onednn_sgemm_matches(const SgemmCase& p) {
  SCOPED_TRACE(::testing::Message() << p.m << "x" << p.n << "x" << p.k << " ta " << p.trans_a << " tb " << p.trans_b
                                    << " alpha " << p.alpha << " beta " << p.beta << " threads "
                                    << cpu::num_threads());
  const int64_t lda = (p.trans_a ? p.m : p.k) + 3, ldb = (p.trans_b ? p.k : p.n) + 5, ldc = p.n + 7;
  const std::vector<float> a = random((p.trans_a ? p.k : p.m) * lda, 11), b = random((p.trans_b ? p.n : p.k) * ldb, 12);
  const std::vector<float> c0 = random(p.m * ldc, 13);
  std::vector<float> dnn = c0, blas = c0;
  {
    const SgemmRoute on(cpu::blas::Sgemm::OneDnn);
    ASSERT_EQ(cpu::blas::sgemm_route(), cpu::blas::Sgemm::OneDnn);
    cpu::gemm<float>(p.trans_a, p.trans_b, p.m, p.n, p.k, p.alpha, a.data(), lda, b.data(), ldb, p.beta, dnn.data(),
                     ldc);
  }
  openblas_gemm(p.trans_a, p.trans_b, p.m, p.n, p.k, p.alpha, a.data(), lda, b.data(), ldb, p.beta, blas.data(), ldc);
  double worst = 0.0, scale = 1e-30;
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const auto at = static_cast<std::size_t>(i * ldc + j);
      if (j >= p.n) {
        ASSERT_EQ(dnn[at], c0[at]) << "a pad column of C was written at row " << i;
        continue;
      }
      worst = std::max(worst, std::abs(double(dnn[at]) - double(blas[at])));
      scale = std::max(scale, std::abs(double(blas[at])));
    }
  }
  EXPECT_LT(worst, 1e-5 * scale * std::max<double>(1.0, std::sqrt(double(p.k) / 64.0)))
      << "largest difference " << worst << " of values up to " << scale;
}

TEST_F(CpuGemmRoutes, OneDnnSgemmMatchesOpenBlasWithAlphaBetaAndLeadingDims) {
  const int before = cpu::num_threads();
  for (int threads : {1, 2, 3}) {
    cpu::set_num_threads(threads);
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        expect_onednn_sgemm_matches({1, 256, 256, ta, tb, 1.0f, 0.0f});     // batch-1 inference: a GEMV
        expect_onednn_sgemm_matches({256, 1, 200, ta, tb, 1.0f, 0.0f});     // one column
        expect_onednn_sgemm_matches({3, 5, 7, ta, tb, 0.5f, 1.0f});         // tiny, accumulating
        expect_onednn_sgemm_matches({300, 130, 70, ta, tb, -2.0f, 0.25f});  // split by rows from 2^21 MACs
        expect_onednn_sgemm_matches({10, 2100, 100, ta, tb, 1.0f, 1.0f});   // few rows: split by columns
      }
    }
  }
  cpu::set_num_threads(before);
}

TEST_F(CpuGemmRoutes, OneDnnRouteIsRefusedWhenOneDnnIsOff) {
  cpu::onednn::set_enabled(false);
  {
    const SgemmRoute on(cpu::blas::Sgemm::OneDnn);
    EXPECT_EQ(cpu::blas::sgemm_route(), cpu::blas::Sgemm::OpenBlas);
  }
  // A route set while oneDNN was on, then oneDNN turned off: gemm still computes (on OpenBLAS).
  cpu::onednn::set_enabled(true);
  {
    const SgemmRoute on(cpu::blas::Sgemm::OneDnn);
    ASSERT_EQ(cpu::blas::sgemm_route(), cpu::blas::Sgemm::OneDnn);
    cpu::onednn::set_enabled(false);
    const std::vector<float> a{1, 2, 3, 4}, b{5, 6, 7, 8};
    std::vector<float> c(4);
    cpu::gemm<float>(false, false, 2, 2, 2, 1.0f, a.data(), 2, b.data(), 2, 0.0f, c.data(), 2);
    EXPECT_EQ(c, (std::vector<float>{19, 22, 43, 50}));
  }
  cpu::onednn::set_enabled(true);
}

}  // namespace
}  // namespace ember
