#pragma once
// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel Random Numbers: As Easy as 1, 2, 3", SC'11; the generator of
// Random123, cuRAND's and PyTorch's CUDA dropout, JAX's and TensorFlow's stateless ops): a counter-based generator.
// The words at position i depend on (key, i) alone, so a tensor of random bits is the same whichever order, thread
// count or device computes it, and a kernel can make the words it needs where it needs them instead of reading a
// mask drawn elsewhere. Ember's Bernoulli draws (dropout's masks) use it (random.hpp): one draw of the caller's
// generator picks the key, and word i of the tensor is philox_word(key, i).
#include <array>
#include <cstdint>

namespace ember {

struct Philox4x32 {
  static constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;    // the round multipliers
  static constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;  // the key schedule's increments
  using Block = std::array<uint32_t, 4>;

  // Ten rounds over the 128-bit counter with the 64-bit key: Random123's philox4x32_R(10, ctr, key).
  [[gnu::always_inline]] static inline Block block(Block c, uint32_t k0, uint32_t k1) {
    for (int r = 0; r < 10; ++r) {
      const uint64_t p0 = uint64_t{kMul0} * c[0], p1 = uint64_t{kMul1} * c[2];
      c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<uint32_t>(p1),
           static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<uint32_t>(p0)};
      k0 += kWeyl0;
      k1 += kWeyl1;
    }
    return c;
  }

  // Blocks b0 .. b0 + L - 1 at once, word j of block b0 + l into w[j][l]: the same rounds lane by lane, which
  // compilers keep in registers and interleave (a single block's rounds are one long dependency chain), ~4x the
  // throughput of block() one at a time.
  template <uint64_t L>
  [[gnu::always_inline]] static inline void blocks(uint64_t b0, uint32_t k0, uint32_t k1, uint32_t (&w)[4][L]) {
    for (uint64_t l = 0; l < L; ++l) {
      const uint64_t b = b0 + static_cast<uint64_t>(l);
      w[0][l] = static_cast<uint32_t>(b);
      w[1][l] = static_cast<uint32_t>(b >> 32);
      w[2][l] = 0;
      w[3][l] = 0;
    }
    for (int r = 0; r < 10; ++r) {
      for (uint64_t l = 0; l < L; ++l) {
        const uint64_t p0 = uint64_t{kMul0} * w[0][l], p1 = uint64_t{kMul1} * w[2][l];
        const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ w[1][l] ^ k0;
        const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ w[3][l] ^ k1;
        w[1][l] = static_cast<uint32_t>(p1);
        w[3][l] = static_cast<uint32_t>(p0);
        w[0][l] = n0;
        w[2][l] = n2;
      }
      k0 += kWeyl0;
      k1 += kWeyl1;
    }
  }
};

// Word i of the stream keyed by `key`: word i % 4 of the block at counter {i / 4 (64 bits), 0}.
inline uint32_t philox_word(uint64_t key, uint64_t i) {
  const uint64_t b = i / 4;
  const Philox4x32::Block w = Philox4x32::block({static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32), 0, 0},
                                                static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32));
  return w[i % 4];
}

}  // namespace ember
