#pragma once
// A random tensor of any backend drawn on the host and uploaded: the path of Tensor::random for a backend that does
// not draw itself, and the fallback of those that do for what they do not draw (the non-Bernoulli distributions of
// the CPU, Vulkan and CUDA, whose Bernoulli tensors are made by their own kernels). The values are sample_into's
// (random.hpp), so every path gives the same tensor.
#include <cstddef>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/tensor/random.hpp"
#include "engine/tensor/tensor_data.hpp"

namespace ember {

template <class B, class K>
Primitive<B, K> host_draw(const Shape& s, const Distribution& dist, Rng& rng, const typename B::Device& dev) {
  const auto n = static_cast<std::size_t>(s.num_elements());
  using T = typename B::FloatElem;
  if constexpr (std::is_same_v<K, Float> && (std::is_same_v<T, float> || std::is_same_v<T, double>)) {
    // Drawn straight into the backend's own float type: from_data then copies instead of converting, and no double
    // buffer is filled first (the values are those of the double path: sample_into).
    std::vector<std::byte> bytes(n * sizeof(T));
    sample_into<T>(rng, dist, std::span<T>(reinterpret_cast<T*>(bytes.data()), n));
    return B::template from_data<K>(TensorData(std::move(bytes), s, dtype_of<T>()), dev);
  } else {
    return B::template from_data<K>(TensorData::from_vec<double>(sample(rng, dist, n), s), dev);
  }
}

}  // namespace ember
