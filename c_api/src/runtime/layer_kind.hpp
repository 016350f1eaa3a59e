#pragma once
// Layer kinds from the layer table (c_api/src/layers.def): LayerKind (ember.h's ember_layer_kind, whose values the
// generated ember_h_op_checks.cpp static_asserts) and kLayerKinds. sequential.hpp checks its Layer<B> variant
// against the same rows.
#include <cstdint>

namespace ember::capi {

enum class LayerKind : int32_t {
#define EMBER_LAYER(id, value, name, type) id = value,
#include "c_api/src/layers.def"
};

inline constexpr int32_t kLayerKinds = 0
#define EMBER_LAYER(id, value, name, type) +1
#include "c_api/src/layers.def"
    ;

}  // namespace ember::capi
