#pragma once
// Tensor kinds. A kind picks the backend primitive a Tensor holds and which ops it has.
#include <type_traits>

namespace ember {

struct Float {};
struct Int {};
struct Bool {};

template <class K>
concept TensorKind = std::is_same_v<K, Float> || std::is_same_v<K, Int> || std::is_same_v<K, Bool>;

template <class K>
constexpr const char* kind_name() {
  if constexpr (std::is_same_v<K, Float>) return "Float";
  else if constexpr (std::is_same_v<K, Int>) return "Int";
  else return "Bool";
}

}  // namespace ember
