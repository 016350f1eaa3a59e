// Models exported by PyTorch 1.13 (tests/onnx/models/gen_torch_models.py), imported and run end to end: the digits
// MLP and CNN of `ember train`, a ResNet-18-shaped CNN and the character transformer LM give PyTorch's outputs within
// 1e-4, on the CPU and on Vulkan where a device exists (lavapipe in CI). Each model also runs a smaller call from the
// same file -- one batch row (and for the LM a shorter prefix, which a causal model must answer with the prefix of
// the full logits) -- so the dynamic dimensions are resolved per call, not fixed at the first one.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backends/backend_list.hpp"
#include "c_api/src/runtime/tensor_ops.hpp"
#include "onnx/model.hpp"
#include "tests/onnx/models_fixture.hpp"

namespace ember::onnx_models {
namespace {

using capi::DynDevice;
using onnx_import::OnnxModel;

struct Case {
  std::string model;
  int64_t prefix_len;  // > 0: the sequence length of the LM's shorter call
};

DynDevice device_named(const std::string& backend) {
  return backend == "cpu" ? capi::cpu_device() : capi::make_device(BackendId::Vulkan, 0);
}

TensorData run(OnnxModel& model, const DynDevice& dev, const TensorData& input) {
  const auto outputs = model.forward({capi::from_data(dev, input)}, /*training=*/false);
  EXPECT_EQ(outputs.size(), 1u);
  return capi::to_data(outputs.at(0));
}

class OnnxModelsTest : public ::testing::TestWithParam<std::tuple<Case, std::string>> {};

TEST_P(OnnxModelsTest, MatchesPyTorch) {
  const auto& [c, backend] = GetParam();
  // Asked here, not when the cases are instantiated: that runs during static initialization, before the runtime's.
  if (backend == "vulkan" && capi::device_count(BackendId::Vulkan) == 0) GTEST_SKIP() << "no Vulkan device";
  const DynDevice dev = device_named(backend);
  auto model = OnnxModel::load(model_file(c.model), dev);
  const auto input = fixture_tensor(c.model + "_io", "input");
  const auto want = fixture_tensor(c.model + "_io", "output");
  EXPECT_TRUE(close_to(run(model, dev, input), want)) << c.model << " on " << backend;

  // The same file at batch 1 (and a shorter sequence for the LM): row 0 of PyTorch's outputs.
  const int64_t inner = c.prefix_len > 0 ? c.prefix_len : -1;
  EXPECT_TRUE(close_to(run(model, dev, leading(input, 1, inner)), leading(want, 1, inner)))
      << c.model << " on " << backend << ", batch 1" << (inner > 0 ? " and a prefix" : "");
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<Case, std::string>>& info) {
  return std::get<0>(info.param).model + "_" + std::get<1>(info.param);
}

INSTANTIATE_TEST_SUITE_P(Exported, OnnxModelsTest,
                         ::testing::Combine(::testing::Values(Case{"digits_mlp", 0}, Case{"digits_cnn", 0},
                                                              Case{"resnet18_narrow", 0}, Case{"lm_transformer", 7}),
                                            ::testing::Values(std::string("cpu"), std::string("vulkan"))),
                         case_name);

// The importer's view of the files: what PyTorch declared (names, dynamic axes) and the initializers as params.
TEST(OnnxModelsTest, DeclaresInputsOutputsAndParams) {
  auto mlp = OnnxModel::load(model_file("digits_mlp"), capi::cpu_device());
  ASSERT_EQ(mlp.inputs().size(), 1u);
  EXPECT_EQ(mlp.inputs()[0].name, "input");
  ASSERT_TRUE(mlp.inputs()[0].dims.has_value());
  EXPECT_EQ(*mlp.inputs()[0].dims, (std::vector<int64_t>{-1, 64}));  // batch is dynamic
  EXPECT_EQ(mlp.outputs().at(0).name, "output");
  std::vector<std::string> names;
  int64_t numel = 0;
  for (const auto& [name, value] : mlp.params()) {
    names.push_back(name);
    numel += capi::shape(value).num_elements();
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"fc1.bias", "fc1.weight", "fc2.bias", "fc2.weight", "fc3.bias",
                                             "fc3.weight"}));
  EXPECT_EQ(numel, 64 * 256 + 256 + 256 * 256 + 256 + 256 * 10 + 10);
}

}  // namespace
}  // namespace ember::onnx_models
