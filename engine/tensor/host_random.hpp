#pragma once
// Tensor::random's values on any backend, in one place (backend_draw):
// - a backend that makes its draws itself (engine/compile's Capture<B>, so that a replay draws anew; Autodiff<B>
//   and Fusion<B> forward it) has `random_draw`;
// - a backend with a Bernoulli kernel (`float_bernoulli`: the CPU in place, Vulkan and CUDA on the device) makes
//   float Bernoulli tensors (dropout's masks) from their counter-based words;
// - everything else is drawn on the host and uploaded (host_draw).
// The values are sample_into's (random.hpp) on every path, so every path gives the same tensor.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/tensor/random.hpp"
#include "engine/tensor/tensor_data.hpp"

namespace ember {

// B::float_bernoulli(shape, key, threshold, hit, device) -> FloatPrimitive: element i is `hit` where
// philox_word(key, i) < threshold (<= 2^32), else 0 (random.hpp's fill_bernoulli, bit for bit).
template <class B>
concept HasBernoulliKernel =
    requires(const Shape& s, uint64_t key, double hit, const typename B::Device& dev) {
      { B::float_bernoulli(s, key, key, hit, dev) } -> std::same_as<typename B::FloatPrimitive>;
    };

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

template <class B, class K>
Primitive<B, K> backend_draw(const Shape& s, const Distribution& dist, Rng& rng, const typename B::Device& dev) {
  if constexpr (requires { B::template random_draw<K>(s, dist, rng, dev); }) {
    return B::template random_draw<K>(s, dist, rng, dev);
  } else {
    if constexpr (std::is_same_v<K, Float> && HasBernoulliKernel<B>) {
      if (const auto* b = std::get_if<Bernoulli>(&dist))
        return B::float_bernoulli(s, rng.next(), bernoulli_threshold(b->p), b->value, dev);
    }
    return host_draw<B, K>(s, dist, rng, dev);
  }
}

// Whether B draws other than on the host: what Autodiff<B> and Fusion<B> forward as their own random_draw.
template <class B, class K>
concept DrawsOnBackend = requires(const Shape& s, const Distribution& d, Rng& r, const typename B::Device& dev) {
  B::template random_draw<K>(s, d, r, dev);
} || (std::is_same_v<K, Float> && HasBernoulliKernel<B>);

}  // namespace ember
