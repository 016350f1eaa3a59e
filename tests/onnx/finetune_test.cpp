// Fine-tuning an imported model (issue 19): digits_mlp.onnx, exported by PyTorch, trained for 5 plain SGD steps on a
// digits batch through the importer -- forward in training mode, cross-entropy, backward to the initializers, each
// param replaced by its updated value -- improves its loss exactly like the same model written natively
// (tools/ember/models.hpp's DigitsMlp with the same weights and Ember's Sgd) and like PyTorch itself (the losses in
// digits_mlp_finetune.safetensors, gen_torch_models.py). Gradients that did not reach an initializer, or an update
// that did not land in the next forward, would leave the loss flat and fail here.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "c_api/src/runtime/tensor_ops.hpp"
#include "engine/ember.hpp"
#include "engine/optim/optim.hpp"
#include "onnx/model.hpp"
#include "tests/onnx/models_fixture.hpp"
#include "tools/ember/models.hpp"

namespace ember::onnx_models {
namespace {

using capi::DynTensor;
using onnx_import::OnnxModel;

constexpr int kSteps = 5;

struct Reference {
  TensorData x, y;
  double lr;
  std::vector<double> torch_losses;
};

Reference reference() {
  const std::string f = "digits_mlp_finetune";
  return {fixture_tensor(f, "x"), fixture_tensor(f, "y"), fixture_tensor(f, "lr").get<double>(0),
          fixture_tensor(f, "losses").to_vec<double>()};
}

// The imported model's losses over kSteps SGD steps, and its params (name -> values) at the start.
std::vector<double> finetune_imported(const Reference& r, std::map<std::string, TensorData>& initial) {
  const auto& cpu = capi::cpu_device();
  auto model = OnnxModel::load(model_file("digits_mlp"), cpu);
  for (const auto& [name, value] : model.params()) initial[name] = capi::to_data(value);
  const DynTensor x = capi::from_data(cpu, r.x), y = capi::from_data(cpu, r.y);
  std::vector<double> losses;
  for (int step = 0; step < kSteps; ++step) {
    const DynTensor loss =
        capi::cross_entropy(model.forward({x}, /*training=*/true).at(0), y, nn::Reduction::Mean);
    losses.push_back(capi::to_data(loss).get<double>(0));
    const auto grads = capi::backward(loss, nullptr, /*retain_graph=*/false, /*accumulate=*/false);
    for (const auto& [name, value] : model.params()) {
      const auto g = capi::grad(grads, value);
      if (!g) {
        ADD_FAILURE() << "no gradient reached the initializer " << name;
        continue;
      }
      capi::no_grad_enter();  // w - lr * g, a new leaf (as torch.optim.SGD's in-place update)
      const DynTensor next = capi::binary(capi::detach(value), capi::scalar(*g, ScalarOp::Mul, r.lr), BinaryOp::Sub);
      capi::no_grad_exit();
      model.set_param(name, capi::set_requires_grad(next, true));
    }
  }
  return losses;
}

// The same steps on the native DigitsMlp holding the same weights (PyTorch's Linear weight [out, in] is the
// transpose of Ember's [in, out]).
std::vector<double> finetune_native(const Reference& r, const std::map<std::string, TensorData>& initial) {
  using AB = Autodiff<Cpu<float>>;
  auto linear = [&](const std::string& name) {
    nn::Linear<AB> l;
    l.weight = make_param(Tensor<AB, 2>::from_data(initial.at(name + ".weight")).transpose());
    l.bias = make_param(Tensor<AB, 1>::from_data(initial.at(name + ".bias")));
    return l;
  };
  tools::DigitsMlp<AB> model;
  model.fc1 = linear("fc1");
  model.fc2 = linear("fc2");
  model.fc3 = linear("fc3");
  const auto x = Tensor<AB, 2>::from_data(r.x);
  const auto y = Tensor<AB, 1, Int>::from_data(r.y);
  Sgd<AB> optim;
  std::vector<double> losses;
  for (int step = 0; step < kSteps; ++step) {
    const auto loss = nn::cross_entropy(model.forward(x), y);
    losses.push_back(loss.item());
    model = optim.step(r.lr, std::move(model), GradientsParams<AB>::from_grads(loss.backward(), model));
  }
  return losses;
}

TEST(OnnxFinetuneTest, ImportedDigitsMlpTrainsLikeTheNativeModelAndPyTorch) {
  const Reference r = reference();
  ASSERT_EQ(r.torch_losses.size(), static_cast<std::size_t>(kSteps));
  std::map<std::string, TensorData> initial;
  const auto imported = finetune_imported(r, initial);
  ASSERT_EQ(initial.size(), 6u);
  const auto native = finetune_native(r, initial);
  for (int i = 0; i < kSteps; ++i) {
    EXPECT_NEAR(imported[i], r.torch_losses[i], 1e-4) << "step " << i << ": imported vs PyTorch";
    EXPECT_NEAR(imported[i], native[i], 1e-4) << "step " << i << ": imported vs native";
  }
  EXPECT_LT(imported.back(), imported.front() - 0.03) << "the imported model's loss did not improve";
}

}  // namespace
}  // namespace ember::onnx_models
