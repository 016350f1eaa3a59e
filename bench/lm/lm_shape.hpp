#pragma once
// The language model's training step measured by ember_lm_peer_bench: the default model of `ember train --model
// transformer` (tools/ember/lm_model.hpp) on one batch, identical on the Ember and the LibTorch side.
#include <cstdint>
#include <vector>

namespace ember::lm_bench {

inline constexpr int64_t kVocab = 88;  // the fortunes-min corpus's distinct bytes
inline constexpr int64_t kContext = 64, kDModel = 128, kHeads = 4, kLayers = 2, kBatch = 32;
inline constexpr double kLr = 2e-3;

// The same token ids on both sides (a fixed LCG, not the corpus: the work does not depend on the values).
inline std::vector<int64_t> token_ids(int64_t n, uint64_t seed) {
  std::vector<int64_t> out(static_cast<std::size_t>(n));
  for (auto& v : out) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<int64_t>((seed >> 33) % kVocab);
  }
  return out;
}

}  // namespace ember::lm_bench
