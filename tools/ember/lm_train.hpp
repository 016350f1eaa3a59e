#pragma once
// The language model's training loop and sampler, templates over the backend that runs them: compiled into the
// executable for the CPU (lm.cpp) and into each GPU backend's training plugin (train_plugin.cpp).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <ostream>
#include <string>
#include <vector>

#include "engine/ember.hpp"
#include "engine/optim/optim.hpp"
#include "records/module_record.hpp"
#include "records/recorder.hpp"
#include "tools/data/text_corpus.hpp"
#include "tools/ember/lm.hpp"
#include "tools/ember/svg_plot.hpp"

namespace ember::tools {

// Windows of context + 1 characters: inputs are the first `context`, targets the same shifted by one.
struct LmBatch {
  std::vector<int64_t> inputs, targets;  // [batch, context] each, row-major
};

inline LmBatch lm_batch(const std::vector<int64_t>& ids, int64_t begin, int64_t end, int64_t batch, int64_t context,
                        Rng& rng) {
  LmBatch b;
  b.inputs.reserve(static_cast<std::size_t>(batch * context));
  b.targets.reserve(static_cast<std::size_t>(batch * context));
  const auto starts = static_cast<uint64_t>(end - begin - context);  // windows that fit, >= 1 (checked by the caller)
  for (int64_t r = 0; r < batch; ++r) {
    const int64_t s = begin + static_cast<int64_t>(rng.next() % starts);
    b.inputs.insert(b.inputs.end(), ids.begin() + s, ids.begin() + s + context);
    b.targets.insert(b.targets.end(), ids.begin() + s + 1, ids.begin() + s + context + 1);
  }
  return b;
}

// Mean cross-entropy of next-character prediction over a batch (logits [N, T, V] against targets [N * T]).
template <class B>
Tensor<B, 1> lm_loss(const CharTransformer<B>& model, const LmBatch& b, int64_t batch, int64_t context,
                     const typename B::Device& dev = {}) {
  const auto x = Tensor<B, 2, Int>::from_values(b.inputs, {batch, context}, dev);
  const auto y = Tensor<B, 1, Int>::from_values(b.targets, {batch * context}, dev);
  const auto logits = model.forward(x);
  return nn::cross_entropy(logits.reshape(std::array<int64_t, 2>{batch * context, model.vocab_size()}), y);
}

inline void draw_lm_bar(std::ostream& log, int64_t done, int64_t total, double loss) {
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done / std::max<int64_t>(total, 1));
  char line[160];
  std::snprintf(line, sizeof line, "\rstep %5lld/%lld [%-*s]  loss %.4f", static_cast<long long>(done),
                static_cast<long long>(total), kWidth, std::string(static_cast<std::size_t>(filled), '=').c_str(), loss);
  log << line << std::flush;
}

inline LmConfig lm_config_from_scalars(const std::map<std::string, double>& s, const std::string& file) {
  auto get = [&](const char* key) {
    const auto it = s.find(key);
    if (it == s.end() || !(it->second >= 1 && it->second <= 1e6))
      throw Error(fmt::format("{} is not a language model of `ember train --model transformer` (no valid {})", file, key));
    return static_cast<int64_t>(it->second);
  };
  LmConfig c;
  c.vocab_size = get("ember.lm.vocab.size");
  c.context = get("ember.lm.context");
  c.d_model = get("ember.lm.d_model");
  c.num_heads = get("ember.lm.num_heads");
  c.num_layers = get("ember.lm.num_layers");
  c.validate();
  return c;
}

inline void lm_config_to_scalars(const LmConfig& c, std::map<std::string, double>& s) {
  s["ember.model"] = kTransformerModelId;
  s["ember.lm.context"] = static_cast<double>(c.context);
  s["ember.lm.d_model"] = static_cast<double>(c.d_model);
  s["ember.lm.num_heads"] = static_cast<double>(c.num_heads);
  s["ember.lm.num_layers"] = static_cast<double>(c.num_layers);
}

template <class Inner>
LmTrainResult train_lm(const LmTrainOptions& o, std::ostream& log) {
  using AB = Autodiff<Inner>;
  if (o.steps < 1 || o.batch_size < 1 || o.log_every < 1 || !(o.lr > 0.0))
    throw ArgumentError("train: steps, batch size, log interval and lr must be positive");
  with_precision_named(o.precision, [](auto) {});  // an unknown --precision fails before training, not after
  const std::string text = o.data.empty() ? data::load_default_corpus() : data::load_text_corpus(o.data);
  const auto vocab = data::CharVocab::from_text(text);
  const std::vector<int64_t> ids = vocab.encode(text);
  LmConfig cfg = o.model;
  cfg.vocab_size = vocab.size();
  cfg.validate();
  const int64_t n = static_cast<int64_t>(ids.size()), ctx = cfg.context;
  // The last 10% is held out when it holds a window; a corpus too small for that validates on its training text.
  int64_t split = n - n / 10;
  if (n - split < ctx + 2) split = n;
  if (split < ctx + 2)
    throw ArgumentError(fmt::format("train: the corpus has {} characters, fewer than the context {} + 2", n, ctx));
  const int64_t valid_begin = split == n ? 0 : split;

  seed(o.seed);  // parameter initialization draws from the global generator
  auto model = CharTransformer<AB>::init(cfg);
  AdamW<AB> optim(AdamWConfig{});
  Rng batch_rng(o.seed ^ 0x5eedull);
  Rng valid_rng(o.seed ^ 0xa11dull);
  const LmBatch valid_batch = lm_batch(ids, valid_begin, n, o.batch_size, ctx, valid_rng);
  const bool tty = o.progress && isatty(STDOUT_FILENO);

  LmTrainResult result;
  result.vocab_size = cfg.vocab_size;
  result.corpus_chars = n;
  double loss_sum = 0.0;
  int64_t since = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t step = 1; step <= o.steps; ++step) {
    const LmBatch b = lm_batch(ids, 0, split, o.batch_size, ctx, batch_rng);
    const auto loss = lm_loss(model, b, o.batch_size, ctx);
    const double l = loss.item();
    if (!std::isfinite(l)) throw Error(fmt::format("train: the loss diverged at step {} ({}); lower --lr", step, l));
    loss_sum += l;
    ++since;
    const auto grads = GradientsParams<AB>::from_grads(loss.backward(), model);
    model = optim.step(o.lr, std::move(model), grads);
    if (tty) draw_lm_bar(log, step, o.steps, loss_sum / static_cast<double>(since));
    if (step % o.log_every == 0 || step == o.steps) {
      LmPoint p;
      p.step = step;
      p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      p.train_loss = loss_sum / static_cast<double>(since);
      p.valid_loss = lm_loss(valid(model), valid_batch, o.batch_size, ctx).item();
      result.points.push_back(p);
      char line[200];
      std::snprintf(line, sizeof line, "%sstep %5lld/%lld  loss %.4f  valid loss %.4f  perplexity %7.2f  %6.1f ms/step\n",
                    tty ? "\r\033[K" : "", static_cast<long long>(step), static_cast<long long>(o.steps), p.train_loss,
                    p.valid_loss, std::exp(p.valid_loss), 1e3 * p.seconds / static_cast<double>(since));
      log << line << std::flush;
      loss_sum = 0.0;
      since = 0;
      t0 = std::chrono::steady_clock::now();
    }
  }

  Record record = into_record(valid(model));
  lm_config_to_scalars(cfg, record.scalars);
  vocab.to_scalars(record.scalars, kLmVocabPrefix);
  record.scalars["ember.lm.steps"] = static_cast<double>(o.steps);
  record.scalars["ember.lm.valid_loss"] = result.points.back().valid_loss;
  result.record_path = o.out.empty() ? std::filesystem::path("fortunes-transformer.emr") : o.out;
  with_precision_named(o.precision, [&](auto precision) {
    BinFileRecorder<typename decltype(precision)::type>{}.save(record, result.record_path);
  });

  Series train_s{"train loss", "#d62728", {}, false}, valid_s{"valid loss", "#ff7f0e", {}, false},
      ppl{"valid perplexity", "#1f77b4", {}, true};
  double ppl_max = 1.0;
  for (const auto& p : result.points) {
    train_s.values.push_back(p.train_loss);
    valid_s.values.push_back(p.valid_loss);
    ppl.values.push_back(std::exp(p.valid_loss));
    ppl_max = std::max(ppl_max, ppl.values.back());
  }
  result.curve_path = result.record_path;
  result.curve_path.replace_extension(".svg");
  std::ofstream(result.curve_path) << svg_line_chart("ember train --model transformer", {train_s, valid_s, ppl},
                                                     ChartAxes{"step", o.log_every, std::ceil(ppl_max)});
  return result;
}

// Index of the sampled symbol: logits / temperature, the top_k likeliest kept (0: all), softmax, one draw.
inline int64_t sample_logits(const std::vector<float>& logits, double temperature, int64_t top_k, Rng& rng) {
  const int64_t v = static_cast<int64_t>(logits.size());
  std::vector<int64_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  const int64_t k = top_k > 0 ? std::min(top_k, v) : v;
  // Ties keep the lower index first, so the kept set does not depend on the sort's internals.
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int64_t a, int64_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
  std::vector<double> w(static_cast<std::size_t>(k));
  const double top = logits[order[0]] / temperature;
  double total = 0.0;
  for (int64_t i = 0; i < k; ++i) total += w[i] = std::exp(logits[order[i]] / temperature - top);
  double u = rng.uniform() * total;
  for (int64_t i = 0; i < k; ++i) {
    u -= w[i];
    if (u < 0.0) return order[i];
  }
  return order[k - 1];
}

template <class Inner>
std::string generate_text(const GenerateOptions& o) {
  if (!(o.temperature > 0.0)) throw ArgumentError("generate: temperature must be > 0");
  if (o.top_k < 0 || o.length < 0) throw ArgumentError("generate: top-k and length must be >= 0");
  Record record = load_record_file(o.record);
  const LmConfig cfg = lm_config_from_scalars(record.scalars, o.record.string());
  const auto vocab = data::CharVocab::from_scalars(record.scalars, kLmVocabPrefix);
  if (vocab.size() != cfg.vocab_size) throw Error(fmt::format("{}: the vocabulary's size differs from the model's", o.record.string()));
  record.scalars.clear();
  const auto model = eval(load_record(CharTransformer<Inner>::init(cfg), record));  // strict: keys and shapes
  std::vector<int64_t> ids = vocab.encode(o.prompt.empty() ? std::string("\n") : o.prompt);
  const std::size_t prompt_len = o.prompt.empty() ? 0 : ids.size();
  Rng rng(o.seed);
  for (int64_t i = 0; i < o.length; ++i) {
    // The model sees at most its context: the last `context` characters.
    const int64_t t = std::min<int64_t>(static_cast<int64_t>(ids.size()), cfg.context);
    const std::vector<int64_t> window(ids.end() - t, ids.end());
    const auto logits = model.forward(Tensor<Inner, 2, Int>::from_values(window, {1, t}));
    const auto last = logits.narrow(1, t - 1, 1).reshape(std::array<int64_t, 1>{cfg.vocab_size}).template to_vec<float>();
    ids.push_back(sample_logits(last, o.temperature, o.top_k, rng));
  }
  return o.prompt + vocab.decode(std::vector<int64_t>(ids.begin() + static_cast<std::ptrdiff_t>(prompt_len), ids.end()));
}

}  // namespace ember::tools
