// issue 13 (h-rnn): the PyTorch name map of nn::LSTM / nn::GRU (records/torch_names.hpp): PyTorch's state_dict keys
// and layouts (weight_ih_l<k>[_reverse] [gates * hidden, in]) for a typed module, a PyTorch state_dict from
// tests/reference/rnn_reference.hpp loading strictly and giving PyTorch's output, and the export inverting it.
#include "tests/reference/rnn_reference.hpp"

#include <gtest/gtest.h>

#include <set>

#include "backends/cpu/cpu_backend.hpp"
#include "records/torch_names.hpp"

namespace ember {
namespace {

namespace R = ember::test::rnnref;
using B = Cpu<double>;

const R::RefCase& ref_case(const std::string& name) {
  for (const auto& c : R::kCases)
    if (name == c.name) return c;
  throw std::runtime_error("no case " + name);
}

// The case's params as PyTorch's state_dict (its keys and layouts).
Record torch_state(const R::RefCase& c) {
  Record r;
  for (std::size_t i = 0; i < c.count; ++i) {
    const std::string name = c.tensors[i].name;
    if (name.rfind("param_", 0) != 0) continue;
    const R::RefTensor& t = c.tensors[i];
    std::vector<int64_t> dims(t.shape.begin(), t.shape.begin() + static_cast<std::ptrdiff_t>(t.rank));
    r.params.emplace(name.substr(6), ParamRecord{0, ParamKind::Float, ParamRole::Trainable,
                                                 TensorData::from_vec<double>({t.values, t.values + t.size},
                                                                              Shape(dims))});
  }
  return r;
}
const R::RefTensor& find(const R::RefCase& c, const std::string& name) {
  for (std::size_t i = 0; i < c.count; ++i)
    if (name == c.tensors[i].name) return c.tensors[i];
  throw std::runtime_error("no tensor " + name);
}

nn::RnnOptions options() {
  nn::RnnOptions o;
  o.input_size = R::kInput;
  o.hidden_size = R::kHidden;
  o.num_layers = R::kLayers;
  o.bidirectional = true;
  return o;
}

TEST(RnnTorchNames, LstmLoadsPyTorchsStateDictAndExportsItBack) {
  const R::RefCase& c = ref_case("lstm_full");
  const Record torch = torch_state(c);
  const auto m = load_torch_state_dict(nn::LSTMConfig{options()}.init<B>(), torch);  // strict
  const R::RefTensor& x = find(c, "x");
  const auto r = m.forward(Tensor<B, 3>::from_values(std::vector<double>(x.values, x.values + x.size),
                                                     {x.shape[0], x.shape[1], x.shape[2]}));
  const auto got = r.output.to_vec<double>();
  const R::RefTensor& want = find(c, "output");
  ASSERT_EQ(got.size(), want.size);
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want.values[i], 1e-12) << i;

  const Record back = torch_state_dict(m);
  std::set<std::string> keys, want_keys;
  for (const auto& [k, pr] : back.params) keys.insert(k);
  for (const auto& [k, pr] : torch.params) want_keys.insert(k);
  EXPECT_EQ(keys, want_keys);
  for (const auto& [k, pr] : torch.params) {
    const ParamRecord& b = back.params.at(k);
    EXPECT_EQ(b.data.shape.to_string(), pr.data.shape.to_string()) << k;
    EXPECT_EQ(b.data.to_vec<double>(), pr.data.to_vec<double>()) << k;
  }
}

TEST(RnnTorchNames, GruNamesWithoutBiasAndOneDirection) {
  nn::GRUConfig cfg;
  cfg.input_size = 2;
  cfg.hidden_size = 3;
  cfg.num_layers = 2;
  cfg.bias = false;
  const auto map = torch_name_map(cfg.init<B>());
  std::vector<std::pair<std::string, std::string>> got;
  for (const auto& n : map.names) got.emplace_back(n.ember, n.torch);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"layers.0.forward_dir.weight_ih", "weight_ih_l0"},
      {"layers.0.forward_dir.weight_hh", "weight_hh_l0"},
      {"layers.1.forward_dir.weight_ih", "weight_ih_l1"},
      {"layers.1.forward_dir.weight_hh", "weight_hh_l1"}};
  EXPECT_EQ(got, want);
  for (const auto& n : map.names) EXPECT_TRUE(n.transpose) << n.ember;
  EXPECT_EQ(nn::rnn_torch_name("layers.12.reverse_dir.bias_hh"), "bias_hh_l12_reverse");
  EXPECT_FALSE(nn::rnn_torch_name("layers.x.forward_dir.bias_hh").has_value());
  EXPECT_FALSE(nn::rnn_torch_name("layers.0.forward_dir.gamma").has_value());
}

}  // namespace
}  // namespace ember
