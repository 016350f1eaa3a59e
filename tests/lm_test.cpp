// The language model of `ember train --model transformer` (tools/ember/lm_model.hpp): a PyTorch 1.13 twin trained
// briefly and saved as safetensors (tests/reference/gen_lm_fixture.py) gives the same logits in Ember through
// records/torch_names; the tokenizer's record round trip and the sampler's temperature / top-k.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "backends/cpu/cpu_backend.hpp"
#include "records/safetensors.hpp"
#include "records/torch_names.hpp"
#include "tools/ember/lm_train.hpp"

namespace ember::tools {
namespace {

namespace fs = std::filesystem;
using B = Cpu<float>;
const fs::path kReference = fs::path(EMBER_TEST_SOURCE_DIR) / "tests/reference";

Record fixture(const char* name) { return SafetensorsFile::open(kReference / name).to_record(); }

LmConfig fixture_config(const Record& io) {
  const auto c = io.params.at("config").data.to_vec<int64_t>();
  return LmConfig{c.at(0), c.at(1), c.at(2), c.at(3), c.at(4)};
}

template <class Bk>
double max_abs_diff(const CharTransformer<Bk>& model, const Record& io) {
  const auto logits = model.forward(Tensor<Bk, 2, Int>::from_data(io.params.at("input").data));
  const auto got = logits.into_data();
  const auto& want = io.params.at("logits").data;
  EXPECT_EQ(got.shape, want.shape);
  const auto g = got.template to_vec<float>(), w = want.template to_vec<float>();
  double worst = 0.0;
  for (std::size_t i = 0; i < g.size() && i < w.size(); ++i) worst = std::max(worst, std::abs(double(g[i]) - w[i]));
  return worst;
}

TEST(LmTorch, TrainedPyTorchTwinGivesTheSameLogits) {
  const Record io = fixture("lm_tiny_io.safetensors");
  LoadReport report;
  const auto model = eval(load_torch_state_dict(CharTransformer<B>::init(fixture_config(io)),
                                                fixture("lm_tiny.safetensors"), LoadMode::Strict, &report));
  EXPECT_TRUE(report.ok()) << report.to_string();
  EXPECT_LE(max_abs_diff(model, io), 1e-5);
}

TEST(LmTorch, AutodiffForwardGivesTheSameLogits) {
  // The training path (Autodiff over the CPU) computes what inference does.
  const Record io = fixture("lm_tiny_io.safetensors");
  const auto model =
      load_torch_state_dict(CharTransformer<Autodiff<B>>::init(fixture_config(io)), fixture("lm_tiny.safetensors"));
  EXPECT_LE(max_abs_diff(model, io), 1e-5);
}

TEST(LmTorch, ExportUsesPyTorchsNamesAndLayouts) {
  const Record torch = fixture("lm_tiny.safetensors");
  const auto model = load_torch_state_dict(CharTransformer<B>::init(fixture_config(fixture("lm_tiny_io.safetensors"))), torch);
  const Record out = torch_state_dict(model);
  ASSERT_EQ(out.params.size(), torch.params.size());
  for (const auto& [key, pr] : torch.params) {
    SCOPED_TRACE(key);
    ASSERT_TRUE(out.params.count(key));
    EXPECT_EQ(out.params.at(key).data.shape, pr.data.shape);
    EXPECT_EQ(out.params.at(key).data.to_vec<float>(), pr.data.to_vec<float>());
  }
}

TEST(LmModel, RefusesSequencesLongerThanTheContext) {
  const auto model = CharTransformer<B>::init(LmConfig{5, 4, 8, 2, 1});
  EXPECT_THROW(model.forward(Tensor<B, 2, Int>::zeros({1, 5})), ShapeError);
  EXPECT_EQ(model.forward(Tensor<B, 2, Int>::zeros({2, 4})).dims(), (std::array<int64_t, 3>{2, 4, 5}));
  EXPECT_THROW(CharTransformer<B>::init(LmConfig{5, 4, 9, 2, 1}), ArgumentError);  // 9 % 2 heads
}

TEST(CharVocab, RoundTripsThroughRecordScalars) {
  const auto v = data::CharVocab::from_text("hello, world\n");
  EXPECT_EQ(v.symbols(), std::string("\n ,dehlorw"));
  std::map<std::string, double> s;
  v.to_scalars(s, "p.");
  const auto back = data::CharVocab::from_scalars(s, "p.");
  EXPECT_EQ(back.symbols(), v.symbols());
  EXPECT_EQ(back.decode(back.encode("low, lower")), "low, lower");
  try {
    v.encode("hello!");
    FAIL() << "'!' was encoded";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("'!'"), std::string::npos) << e.what();
  }
  s["p.3"] = s["p.4"];  // a repeated symbol
  EXPECT_THROW(data::CharVocab::from_scalars(s, "p."), Error);
  s.erase("p.size");
  EXPECT_THROW(data::CharVocab::from_scalars(s, "p."), Error);
}

TEST(Sampler, TopKAndTemperature) {
  const std::vector<float> logits = {0.0f, 3.0f, 2.9f, -1.0f};
  Rng rng(5);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(sample_logits(logits, 1.0, 1, rng), 1);  // top-1 is the argmax
  int counts[4] = {};
  for (int i = 0; i < 400; ++i) ++counts[sample_logits(logits, 1.0, 2, rng)];
  EXPECT_EQ(counts[0] + counts[3], 0);               // outside the top 2: never
  EXPECT_GT(counts[2], 100);                         // 2.9 vs 3.0: nearly even
  int cold = 0;
  for (int i = 0; i < 200; ++i) cold += sample_logits(logits, 0.01, 0, rng) == 1;
  EXPECT_EQ(cold, 200);                              // a low temperature sharpens to the argmax
  int hot[4] = {};
  for (int i = 0; i < 2000; ++i) ++hot[sample_logits(logits, 100.0, 0, rng)];
  for (int c : hot) EXPECT_GT(c, 350);               // a high one flattens towards uniform
}

}  // namespace
}  // namespace ember::tools
