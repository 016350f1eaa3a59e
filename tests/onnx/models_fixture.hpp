#pragma once
// The PyTorch-exported models of tests/onnx/models (gen_torch_models.py): where they are, their input / output
// safetensors, and the comparison against PyTorch's values that models_test and finetune_test share.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "engine/tensor/tensor_data.hpp"
#include "records/safetensors.hpp"

namespace ember::onnx_models {

inline std::filesystem::path models_dir() { return std::filesystem::path(EMBER_TEST_SOURCE_DIR) / "tests/onnx/models"; }
inline std::filesystem::path model_file(const std::string& name) { return models_dir() / (name + ".onnx"); }

// Tensor `key` of tests/onnx/models/<file>.safetensors.
inline TensorData fixture_tensor(const std::string& file, const std::string& key) {
  const auto st = SafetensorsFile::open(models_dir() / (file + ".safetensors"));
  const auto* e = st.find(key);
  if (e == nullptr) throw std::runtime_error(file + ".safetensors has no tensor '" + key + "'");
  return st.tensor(*e);
}

// The first `count` entries of `t` along dim 0 (and, when inner >= 0, the first `inner` along dim 1): the input or
// expected output of a smaller call of the same model.
inline TensorData leading(const TensorData& t, int64_t count, int64_t inner = -1) {
  const auto& d = t.shape.dims;
  const int64_t rows = d.at(0), cols = d.size() > 1 ? d[1] : 1;
  const std::size_t esize = dtype_size(t.dtype);
  const std::size_t per_col = esize * static_cast<std::size_t>(t.shape.num_elements() / std::max<int64_t>(rows * cols, 1));
  const int64_t keep_cols = inner < 0 ? cols : inner;
  std::vector<std::byte> bytes;
  for (int64_t r = 0; r < count && r < rows; ++r) {
    const auto* row = t.bytes.data() + static_cast<std::size_t>(r * cols) * per_col;
    bytes.insert(bytes.end(), row, row + static_cast<std::size_t>(keep_cols) * per_col);
  }
  auto dims = d;
  dims[0] = count;
  if (inner >= 0) dims[1] = inner;
  return TensorData(std::move(bytes), Shape(dims), t.dtype);
}

// Same shape and every |got - want| <= tol * max(1, |want|): PyTorch's values within 1e-4 (the bar), absolute
// for values up to 1, relative beyond (the LM's logits reach ~10).
inline ::testing::AssertionResult close_to(const TensorData& got, const TensorData& want, double tol = 1e-4) {
  if (got.shape.dims != want.shape.dims)
    return ::testing::AssertionFailure() << "shape " << got.shape.to_string() << ", expected " << want.shape.to_string();
  const auto g = got.to_vec<double>(), w = want.to_vec<double>();
  double worst = 0.0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double err = std::abs(g[i] - w[i]) / std::max(1.0, std::abs(w[i]));
    if (!(err <= worst)) worst = err, at = i;  // NaN counts as the worst
  }
  if (worst <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "element " << at << " is " << g[at] << ", PyTorch's " << w[at]
                                       << " (scaled error " << worst << " > " << tol << ")";
}

}  // namespace ember::onnx_models
