#pragma once
// Row-major index arithmetic for the naive reference loops of the layout and indexing tests.
#include <cstdint>
#include <vector>

#include "engine/tensor/shape.hpp"

namespace ember::test {

// Flat index -> multi-index in shape s.
inline std::vector<int64_t> unravel(int64_t i, const Shape& s) {
  std::vector<int64_t> m(s.rank());
  for (std::size_t k = s.rank(); k-- > 0;) {
    m[k] = i % s[k];
    i /= s[k];
  }
  return m;
}

// Multi-index -> flat index in shape s.
inline int64_t ravel(const std::vector<int64_t>& m, const Shape& s) {
  int64_t i = 0;
  for (std::size_t k = 0; k < s.rank(); ++k) i = i * s[k] + m[k];
  return i;
}

}  // namespace ember::test
