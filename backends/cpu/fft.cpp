// Discrete Fourier transforms (FftOp) with KissFFT's header-only C++ template, so Cpu<float> and Cpu<double> each
// transform at their own precision. kissfft handles every length (mixed radix 2/3/4/5 plus a generic O(p^2)
// butterfly for other prime factors), so there is a single code path for all n.
//
// Every transform is a complex one: Rfft feeds the real signal with zero imaginary parts, Irfft rebuilds the full
// Hermitian spectrum. That costs about twice a specialized real transform, but kissfft's packed real transform
// only covers even n and would need a second path for odd n.
#include <algorithm>
#include <complex>
#include <kissfft/kissfft.hh>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "backends/cpu/kernels.hpp"
#include "backends/cpu/parallel.hpp"

namespace ember::cpu {
namespace {

template <class T>
using Plan = kissfft<T>;
template <class T>
using Cpx = std::complex<T>;

// Plans (twiddles and the factorization) are cached by (n, inverse): building one costs O(n) sin/cos, as much
// as a small transform. The cache is cleared when it outgrows kMaxPlans so that a stream of distinct sizes
// cannot grow it without bound; plans in use stay alive through their shared_ptr.
inline constexpr std::size_t kMaxPlans = 64;

template <class T>
std::shared_ptr<const Plan<T>> cached_plan(int64_t n, bool inverse) {
  static std::mutex mu;
  static std::map<std::pair<int64_t, bool>, std::shared_ptr<const Plan<T>>> plans;
  std::lock_guard lock(mu);
  const auto key = std::make_pair(n, inverse);
  if (auto it = plans.find(key); it != plans.end()) return it->second;
  if (plans.size() >= kMaxPlans) plans.clear();
  auto plan = std::make_shared<const Plan<T>>(static_cast<std::size_t>(n), inverse);
  plans.emplace(key, plan);
  return plan;
}

// The shape of the result and the number of independent signals (product of the batch dims).
struct Layout {
  Shape out;
  int64_t batch = 1;
};

Layout layout_of(const Shape& in, FftOp op, int64_t n) {
  // Complex inputs end in [signal, 2]; the real input of Rfft ends in [signal].
  const std::size_t batch_rank = in.rank() - (op == FftOp::Rfft ? 1 : 2);
  Layout l;
  std::vector<int64_t> dims(in.dims.begin(), in.dims.begin() + static_cast<std::ptrdiff_t>(batch_rank));
  for (auto d : dims) l.batch *= d;
  switch (op) {
    case FftOp::Fft:
    case FftOp::Ifft: dims.insert(dims.end(), {n, 2}); break;
    case FftOp::Rfft: dims.insert(dims.end(), {n / 2 + 1, 2}); break;
    case FftOp::Irfft: dims.push_back(n); break;
  }
  l.out = Shape(std::move(dims));
  return l;
}

// Transforms signal `row` of x into out; `plan` is this worker's own copy and `in` / `spec` its scratch.
template <class T>
void transform_row(const T* x, T* out, int64_t row, FftOp op, int64_t n, const Plan<T>& plan, std::vector<Cpx<T>>& in,
                   std::vector<Cpx<T>>& spec) {
  const int64_t m = n / 2 + 1;  // bins of a real signal's spectrum
  const T inv_n = T(1) / static_cast<T>(n);
  switch (op) {
    case FftOp::Fft:
    case FftOp::Ifft: {
      const T* src = x + row * n * 2;
      for (int64_t j = 0; j < n; ++j) in[j] = {src[2 * j], src[2 * j + 1]};
      plan.transform(in.data(), spec.data());
      const T scale = op == FftOp::Ifft ? inv_n : T(1);
      T* dst = out + row * n * 2;
      for (int64_t k = 0; k < n; ++k) {
        dst[2 * k] = spec[k].real() * scale;
        dst[2 * k + 1] = spec[k].imag() * scale;
      }
      return;
    }
    case FftOp::Rfft: {
      const T* src = x + row * n;
      for (int64_t j = 0; j < n; ++j) in[j] = {src[j], T(0)};
      plan.transform(in.data(), spec.data());
      T* dst = out + row * m * 2;
      for (int64_t k = 0; k < m; ++k) {
        dst[2 * k] = spec[k].real();
        dst[2 * k + 1] = spec[k].imag();
      }
      return;
    }
    case FftOp::Irfft: {
      // The full spectrum of a real signal is Hermitian: X[n-k] = conj(X[k]). Bin 0 and (even n) bin n/2 are
      // their own mirror images and must be real, so their imaginary parts are dropped (as NumPy's pocketfft).
      const T* src = x + row * m * 2;
      in[0] = {src[0], T(0)};
      for (int64_t k = 1; k < m; ++k) in[k] = {src[2 * k], src[2 * k + 1]};
      if (n % 2 == 0) in[n / 2] = {src[2 * (n / 2)], T(0)};
      for (int64_t k = m; k < n; ++k) in[k] = std::conj(in[n - k]);
      plan.transform(in.data(), spec.data());
      T* dst = out + row * n;
      for (int64_t j = 0; j < n; ++j) dst[j] = spec[j].real() * inv_n;
      return;
    }
  }
}

// Rough cost of one transform in elementwise-op units, to decide when the batch is worth splitting over threads.
int64_t work_per_signal(int64_t n) {
  int64_t log2n = 1;
  while ((int64_t(1) << log2n) < n) ++log2n;
  return 4 * n * log2n;
}

}  // namespace

template <class T>
CpuTensor<T> fft(const CpuTensor<T>& x, FftOp op, int64_t n) {
  const Layout l = layout_of(x.shape, op, n);
  CpuTensor<T> out(l.out);
  if (l.batch == 0) return out;
  const bool inverse = op == FftOp::Ifft || op == FftOp::Irfft;
  const auto shared_plan = cached_plan<T>(n, inverse);
  const T* src = x.data();
  T* dst = out.data();
  const int64_t grain = std::max<int64_t>(1, kParallelThreshold / work_per_signal(n));
  parallel_for(l.batch, grain, [&](int64_t lo, int64_t hi) {
    // kissfft's generic butterfly (prime factors > 5) writes a mutable scratch buffer inside the plan, so
    // concurrent transforms must not share one: each chunk copies the cached plan (O(n), no trigonometry).
    const Plan<T> plan = *shared_plan;
    std::vector<Cpx<T>> in(static_cast<std::size_t>(n)), spec(static_cast<std::size_t>(n));
    for (int64_t row = lo; row < hi; ++row) transform_row(src, dst, row, op, n, plan, in, spec);
  });
  return out;
}

template CpuTensor<float> fft<float>(const CpuTensor<float>&, FftOp, int64_t);
template CpuTensor<double> fft<double>(const CpuTensor<double>&, FftOp, int64_t);

}  // namespace ember::cpu
