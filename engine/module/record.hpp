#pragma once
// Records: what a module (or an optimizer) saves. A module's record mirrors the module tree; flattened, it is keyed
// by dotted path ("encoder.layers.0.fc1.weight"), which is the form stored here and in files. Deviation from
// DESIGN.md's "struct of the members' records": C++ cannot synthesize those struct types from Hana reflection
// without heavy metaprogramming, and the path-keyed form is what strict loading, partial loading, `ember inspect`
// and the C ABI's runtime-composed modules all need anyway.
// It lives in the engine (not records/) because optimizers and schedulers keep their state as a Record, and engine/
// includes nothing from records/ (tests/engine_without_records.sh checks that).
#include <cstdint>
#include <map>
#include <string>

#include "engine/module/param.hpp"
#include "engine/tensor/tensor_data.hpp"

namespace ember {

struct ParamRecord {
  uint64_t id = 0;  // ParamId, stable across save/load so optimizer state follows the parameter
  ParamKind kind = ParamKind::Float;
  ParamRole role = ParamRole::Trainable;
  TensorData data;  // dtype as stored (decided by PrecisionSettings)
};

struct Record {
  std::map<std::string, ParamRecord> params;  // path -> param
  // Scalar metadata (optimizer step counts, learning rates, ...): name -> value.
  std::map<std::string, double> scalars;

  std::size_t num_elements() const {
    std::size_t n = 0;
    for (const auto& [path, p] : params) n += p.data.num_elements();
    return n;
  }
};

}  // namespace ember
