#pragma once
// Seeded, reproducible random numbers. Values are generated on the host and uploaded, so the same seed gives the
// same tensor on every backend and every platform (no dependence on std:: distributions, whose output varies
// between standard libraries).
#include <cmath>
#include <cstdint>
#include <mutex>
#include <span>
#include <variant>
#include <vector>

namespace ember {

// xoshiro256** seeded through splitmix64.
class Rng {
 public:
  explicit Rng(uint64_t seed = 0x5eed) { reseed(seed); }
  void reseed(uint64_t seed) {
    for (auto& s : s_) {
      seed += 0x9e3779b97f4a7c15ull;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      s = z ^ (z >> 31);
    }
  }
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

struct Uniform {
  double low = 0.0, high = 1.0;
};
struct Normal {
  double mean = 0.0, std = 1.0;
};
// `value` with probability p, else 0. value is 1 unless a caller wants a pre-scaled mask (Dropout draws
// 1 / (1 - prob), so that its forward and backward are one multiply each).
struct Bernoulli {
  double p = 0.5;
  double value = 1.0;
};
using Distribution = std::variant<Uniform, Normal, Bernoulli>;

// Bernoulli's test `rng.uniform() < p` on the integer behind the uniform: uniform() is k * 2^-53 exactly (k the top
// 53 bits of a draw), so it is below p exactly when k < ceil(p * 2^53) (p * 2^53 is exact too). Same draws and
// results without an int-to-double conversion per element; p <= 0 or NaN never, p >= 1 always.
inline uint64_t bernoulli_threshold(double p) {
  if (!(p > 0.0)) return 0;
  if (p >= 1.0) return uint64_t{1} << 53;
  return static_cast<uint64_t>(std::ceil(p * 0x1.0p53));
}

// Fills `out` with samples of `dist`, each computed in double and converted to T as it is drawn: the same values
// as static_cast<T>(sample(rng, dist, n)[i]) and the same draws from `rng`, without a double buffer in between
// (Tensor::random writes the backend's float type straight into the bytes it uploads: a dropout mask per step).
template <class T>
void sample_into(Rng& rng, const Distribution& dist, std::span<T> out) {
  const std::size_t n = out.size();
  if (auto* u = std::get_if<Uniform>(&dist)) {
    for (auto& v : out) v = static_cast<T>(u->low + (u->high - u->low) * rng.uniform());
  } else if (auto* g = std::get_if<Normal>(&dist)) {
    for (std::size_t i = 0; i < n; i += 2) {  // Box-Muller, two values per pair of uniforms
      const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
      const double r = std::sqrt(-2.0 * std::log(u1));
      out[i] = static_cast<T>(g->mean + g->std * r * std::cos(2.0 * M_PI * u2));
      if (i + 1 < n) out[i + 1] = static_cast<T>(g->mean + g->std * r * std::sin(2.0 * M_PI * u2));
    }
  } else {
    const Bernoulli& b = std::get<Bernoulli>(dist);
    const uint64_t threshold = bernoulli_threshold(b.p);
    const T hit = static_cast<T>(b.value), miss = static_cast<T>(0.0);
    for (auto& v : out) v = (rng.next() >> 11) < threshold ? hit : miss;
  }
}

// n samples of `dist` as doubles.
inline std::vector<double> sample(Rng& rng, const Distribution& dist, std::size_t n) {
  std::vector<double> out(n);
  sample_into<double>(rng, dist, out);
  return out;
}

// The process-wide generator used when no Rng is passed; `seed()` makes runs reproducible.
struct GlobalRng {
  std::mutex mu;
  Rng rng;
};
inline GlobalRng& global_rng() {
  static GlobalRng g;
  return g;
}
inline void seed(uint64_t s) {
  std::lock_guard lock(global_rng().mu);
  global_rng().rng.reseed(s);
}

}  // namespace ember
