#pragma once
// Seeded, reproducible random numbers. Values are generated on the host and uploaded (Bernoulli masks: by any backend
// that computes the same counter-based words, see bernoulli_threshold), so the same seed gives the same tensor on
// every backend and every platform (no dependence on std:: distributions, whose output varies between standard
// libraries).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <span>
#include <type_traits>
#include <variant>
#include <vector>

#include "engine/tensor/philox.hpp"
#include "engine/tensor/philox_avx2.hpp"
#include "engine/tensor/philox_avx512.hpp"

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

// Bernoulli draws are counter-based (philox.hpp): one draw of the generator is the key, and element i is a hit when
// philox_word(key, i) < bernoulli_threshold(p), i.e. when the 32-bit word read as k * 2^-32 is below p: the threshold
// is ceil(p * 2^32) (exact in double), so p <= 0 or NaN never hits, p >= 1 always, and any other p hits with
// probability within 2^-32 of p. The whole mask depends on (key, i) only: a backend may compute it in parallel, on
// its device or inside a fused kernel (the CPU's: backends/cpu/random.cpp) and must give these values.
inline uint64_t bernoulli_threshold(double p) {
  if (!(p > 0.0)) return 0;
  if (p >= 1.0) return uint64_t{1} << 32;
  return static_cast<uint64_t>(std::ceil(p * 0x1.0p32));
}

// out[i] = philox_word(key, begin + i) < threshold ? hit : miss for i < n: whole groups of 8 blocks in the middle at
// once (for float, pairs of groups in AVX-512 registers and groups in AVX2 registers where the CPU has them:
// philox_avx512.hpp, philox_avx2.hpp), a partial block or group at either end one block at a time; p <= 0 and
// p >= 1 need no words.
template <class T>
inline void fill_bernoulli(T* out, uint64_t begin, std::size_t n, uint64_t key, uint64_t threshold, T hit, T miss) {
  if (threshold == 0 || threshold > 0xFFFFFFFFull) {
    std::fill(out, out + n, threshold == 0 ? miss : hit);
    return;
  }
  constexpr uint64_t kGroup = 8, kGroupWords = 4 * kGroup;
  const auto k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  const auto one_block = [&](uint64_t pos, std::size_t& i) {
    const uint64_t b = pos / 4;
    const Philox4x32::Block w =
        Philox4x32::block({static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32), 0, 0}, k0, k1);
    for (uint64_t l = pos % 4; l < 4 && i < n; ++l, ++i) out[i] = w[l] < threshold ? hit : miss;
  };
  std::size_t i = 0;
  while (i < n && (begin + i) % kGroupWords != 0) one_block(begin + i, i);
  std::size_t groups = (n - i) / kGroupWords;
#ifdef EMBER_PHILOX_AVX512
  if constexpr (std::is_same_v<T, float>) {
    if (miss == 0.0f && !std::signbit(miss) && groups >= 2 && philox_avx512::available()) {
      const std::size_t pairs = groups / 2;
      philox_avx512::bernoulli_f32(out + i, (begin + i) / 4, pairs, key, static_cast<uint32_t>(threshold), hit);
      i += pairs * 2 * kGroupWords;
      groups -= pairs * 2;
    }
  }
#endif
#ifdef EMBER_PHILOX_AVX2
  if constexpr (std::is_same_v<T, float>) {
    if (miss == 0.0f && !std::signbit(miss) && philox_avx2::available()) {
      philox_avx2::bernoulli_f32(out + i, (begin + i) / 4, groups, key, static_cast<uint32_t>(threshold), hit);
      i += groups * kGroupWords;
      groups = 0;
    }
  }
#endif
  uint32_t w[4][kGroup];
  for (std::size_t g = 0; g < groups; ++g, i += kGroupWords) {
    Philox4x32::blocks<kGroup>((begin + i) / 4, k0, k1, w);
    T* o = out + i;
    for (uint64_t l = 0; l < kGroup; ++l)
      for (int j = 0; j < 4; ++j) o[4 * l + j] = w[j][l] < threshold ? hit : miss;
  }
  while (i < n) one_block(begin + i, i);
}

// Fills `out` with samples of `dist`, each computed in double and converted to T as it is drawn: the same values
// as static_cast<T>(sample(rng, dist, n)[i]) and the same draws from `rng` (one per uniform, two per pair of normals,
// one for a whole Bernoulli tensor), without a double buffer in between
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
    fill_bernoulli<T>(out.data(), 0, n, rng.next(), bernoulli_threshold(b.p), static_cast<T>(b.value),
                      static_cast<T>(0.0));
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
