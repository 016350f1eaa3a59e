#pragma once
// The training loop of `ember train`, a template over the backend that trains: compiled into the executable for
// the CPU (train.cpp) and into one plugin per GPU backend (train_plugin.cpp), so the executable links no GPU
// library. Also the data split and accuracy helpers that `ember eval` shares.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <ostream>
#include <string>
#include <vector>

#include "engine/ember.hpp"
#include "engine/optim/optim.hpp"
#include "records/module_record.hpp"
#include "records/recorder.hpp"
#include "tools/data/digits.hpp"
#include "tools/ember/svg_plot.hpp"
#include "tools/ember/train.hpp"

namespace ember::tools {

// The data on the backend that trains (Inner); evaluation of saved records always runs on Cpu<float>.
template <class Inner>
struct Split {
  Tensor<Inner, 2> train_x, test_x;
  Tensor<Inner, 1, Int> train_y, test_y;
};

template <class Inner>
Split<Inner> load_split(const std::filesystem::path& data) {
  const auto all = data::load_digits(data.empty() ? data::default_digits_path() : data);
  const auto s = data::split_digits(all);
  return {Tensor<Inner, 2>::from_values(s.train.images, {s.train.size(), 64}),
          Tensor<Inner, 2>::from_values(s.test.images, {s.test.size(), 64}),
          Tensor<Inner, 1, Int>::from_values(s.train.labels, {s.train.size()}),
          Tensor<Inner, 1, Int>::from_values(s.test.labels, {s.test.size()})};
}

// Fraction of rows whose argmax matches the label.
template <class B>
double accuracy(const Tensor<B, 2>& logits, const Tensor<B, 1, Int>& labels) {
  const auto pred = logits.argmax(1).template squeeze<1>(1);
  return pred.eq(labels).count().item() / static_cast<double>(labels.dim(0));
}

template <class M, class Inner>
double evaluate(const M& model, const Tensor<Inner, 2>& x, const Tensor<Inner, 1, Int>& y) {
  return accuracy(model.forward(x), y);
}

inline void draw_bar(std::ostream& log, int64_t epoch, int64_t epochs, int64_t done, int64_t total, double loss) {
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done / std::max<int64_t>(total, 1));
  char line[160];
  std::snprintf(line, sizeof line, "\repoch %3lld/%lld [%-*s] %3lld/%lld  loss %.4f", static_cast<long long>(epoch),
                static_cast<long long>(epochs), kWidth, std::string(static_cast<std::size_t>(filled), '=').c_str(),
                static_cast<long long>(done), static_cast<long long>(total), loss);
  log << line << std::flush;
}

template <class Inner, template <class> class M>
TrainResult train_model(const TrainOptions& o, std::ostream& log) {
  using AB = Autodiff<Inner>;
  const Split<Inner> data = load_split<Inner>(o.data);
  with_precision_named(o.precision, [](auto) {});  // an unknown --precision fails before training, not after
  seed(o.seed);  // parameter initialization draws from the global generator
  auto model = M<AB>::init();
  Adam<AB> optim(AdamConfig{});
  const int64_t n = data.train_y.dim(0);
  const int64_t batches = (n + o.batch_size - 1) / o.batch_size;
  const bool tty = o.progress && isatty(STDOUT_FILENO);
  Rng shuffle_rng(o.seed ^ 0x5eedull);
  TrainResult result;

  for (int64_t epoch = 1; epoch <= o.epochs; ++epoch) {
    std::vector<int64_t> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[shuffle_rng.next() % i]);
    const auto perm = Tensor<Inner, 1, Int>::from_values(order, {n});

    const auto t0 = std::chrono::steady_clock::now();
    double loss_sum = 0.0, correct = 0.0;
    for (int64_t b = 0; b < batches; ++b) {
      const int64_t start = b * o.batch_size, len = std::min(o.batch_size, n - start);
      const auto idx = perm.narrow(0, start, len);
      const auto x = Tensor<AB, 2>::from_inner(data.train_x.index_select(0, idx));
      const auto y = Tensor<AB, 1, Int>(data.train_y.index_select(0, idx).primitive());
      const auto logits = model.forward(x);
      const auto loss = nn::cross_entropy(logits, y);
      const double l = loss.item();
      loss_sum += l * static_cast<double>(len);
      correct += accuracy(logits.detach(), y) * static_cast<double>(len);
      const auto grads = GradientsParams<AB>::from_grads(loss.backward(), model);
      model = optim.step(o.lr, std::move(model), grads);
      if (tty) draw_bar(log, epoch, o.epochs, b + 1, batches, loss_sum / static_cast<double>(start + len));
    }
    EpochStats st;
    st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    st.loss = loss_sum / static_cast<double>(n);
    st.train_accuracy = correct / static_cast<double>(n);
    st.test_accuracy = evaluate(valid(model), data.test_x, data.test_y);
    result.epochs.push_back(st);
    char line[200];
    std::snprintf(line, sizeof line, "%sepoch %3lld/%lld  loss %.4f  train acc %5.1f%%  test acc %5.1f%%  %6.1f ms\n",
                  tty ? "\r\033[K" : "", static_cast<long long>(epoch), static_cast<long long>(o.epochs), st.loss,
                  100.0 * st.train_accuracy, 100.0 * st.test_accuracy, 1e3 * st.seconds);
    log << line << std::flush;
  }

  Record record = into_record(valid(model));
  record.scalars["ember.model"] = static_cast<double>(o.model);
  record.scalars["ember.epochs"] = static_cast<double>(o.epochs);
  if (!result.epochs.empty()) record.scalars["ember.test_accuracy"] = result.epochs.back().test_accuracy;
  result.record_path = o.out.empty() ? std::filesystem::path(std::string("digits-") + model_name(o.model) + ".emr") : o.out;
  // --precision names the policy of the binary recorder: BinFileRecorder<FullPrecisionSettings> for "full", ...
  with_precision_named(o.precision, [&](auto precision) {
    BinFileRecorder<typename decltype(precision)::type>{}.save(record, result.record_path);
  });

  Series loss{"loss", "#d62728", {}, false}, train_acc{"train accuracy", "#1f77b4", {}, true},
      test_acc{"test accuracy", "#2ca02c", {}, true};
  for (const auto& e : result.epochs) {
    loss.values.push_back(e.loss);
    train_acc.values.push_back(e.train_accuracy);
    test_acc.values.push_back(e.test_accuracy);
  }
  result.curve_path = result.record_path;
  result.curve_path.replace_extension(".svg");
  std::ofstream(result.curve_path) << svg_line_chart(std::string("ember train --model ") + model_name(o.model),
                                                     {loss, train_acc, test_acc});
  return result;
}

// The model kind picked at run time, trained on Inner.
template <class Inner>
TrainResult train_digits(const TrainOptions& o, std::ostream& log) {
  return o.model == ModelKind::Mlp ? train_model<Inner, DigitsMlp>(o, log) : train_model<Inner, DigitsCnn>(o, log);
}

}  // namespace ember::tools
