// ONNX's TfIdfVectorizer on integer tokens (h-onnx-math, registered with the reductions): counts of the pool's
// n-grams in each row (with up to max_skip_count skipped tokens between an n-gram's items; unigrams counted once),
// as TF, IDF (the weight where present) or TFIDF (count * weight). Its input is token ids, integers with no
// gradient, read to the host like other small integer inputs; string tokens are an unsupported dtype at load.
#include <map>

#include "onnx/ops/math_util.hpp"

namespace ember::onnx_import {
namespace {

math::Outs tfidf(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  if (math::is_float(x)) ctx.fail("tokens must be integers (string tokens are not supported)");
  const Shape s = capi::shape(x);
  if (s.rank() != 1 && s.rank() != 2) ctx.fail(fmt::format("input must be [C] or [N, C], got {}", s.to_string()));
  const std::vector<int64_t> tokens = ctx.ints(0);
  const int64_t min_n = ctx.node.attr_int("min_gram_length", 1), max_n = ctx.node.attr_int("max_gram_length", 1);
  const int64_t max_skip = ctx.node.attr_int("max_skip_count", 0);
  const std::string mode = ctx.node.attr_string("mode", "TF");
  const std::vector<int64_t> counts = ctx.node.attr_ints("ngram_counts");
  const std::vector<int64_t> indexes = ctx.node.attr_ints("ngram_indexes");
  const std::vector<int64_t> pool = ctx.node.attr_ints("pool_int64s");
  const std::vector<double> weights = ctx.node.attr_floats("weights");
  if (min_n < 1 || max_n < min_n || max_n > static_cast<int64_t>(counts.size()) || max_skip < 0 || max_skip > 1024)
    ctx.fail("min_gram_length / max_gram_length / max_skip_count do not fit ngram_counts");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    ctx.fail(fmt::format("mode '{}' is not TF, IDF or TFIDF", mode));

  // The pool's n-grams (n = 1.. by ngram_counts' sections) -> their output column.
  std::map<std::vector<int64_t>, int64_t> column;
  std::size_t gram = 0;
  int64_t width = 0;
  for (std::size_t level = 0; level < counts.size(); ++level) {
    const auto n = static_cast<int64_t>(level + 1);
    const int64_t begin = counts[level];
    const int64_t end = level + 1 < counts.size() ? counts[level + 1] : static_cast<int64_t>(pool.size());
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) || (end - begin) % n)
      ctx.fail("ngram_counts does not split pool_int64s into whole n-grams");
    for (int64_t at = begin; at < end; at += n, ++gram) {
      if (gram >= indexes.size()) ctx.fail("ngram_indexes has fewer entries than the pool has n-grams");
      column[std::vector<int64_t>(pool.begin() + at, pool.begin() + at + n)] = indexes[gram];
      width = std::max(width, indexes[gram] + 1);
    }
  }
  if (!weights.empty() && weights.size() != gram) ctx.fail("weights must have one value per n-gram");

  const int64_t rows = s.rank() == 2 ? s[0] : 1, len = s.rank() == 2 ? s[1] : s[0];
  std::vector<double> tf(static_cast<std::size_t>(rows * width), 0.0);
  std::vector<int64_t> key;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t n = min_n; n <= max_n; ++n)
      for (int64_t skip = 0; skip <= (n == 1 ? 0 : max_skip); ++skip)
        for (int64_t i = 0; i + (n - 1) * (skip + 1) < len; ++i) {
          key.clear();
          for (int64_t k = 0; k < n; ++k) key.push_back(tokens[static_cast<std::size_t>(r * len + i + k * (skip + 1))]);
          if (const auto it = column.find(key); it != column.end())
            tf[static_cast<std::size_t>(r * width + it->second)] += 1;
        }
  if (mode != "TF") {
    std::vector<double> weight_of(static_cast<std::size_t>(width), 1.0);
    // weights follow the pool's n-gram order, as ngram_indexes does.
    for (std::size_t g = 0; g < weights.size(); ++g) weight_of[static_cast<std::size_t>(indexes[g])] = weights[g];
    for (std::size_t i = 0; i < tf.size(); ++i) {
      const double w = weight_of[i % static_cast<std::size_t>(width)];
      tf[i] = mode == "IDF" ? (tf[i] > 0 ? w : 0.0) : tf[i] * w;
    }
  }
  const Shape out = s.rank() == 2 ? Shape{rows, width} : Shape{width};
  return math::one(capi::from_data(ctx.device, TensorData::from_vec<double>(tf, out).convert(DType::F32)));
}

}  // namespace

namespace math {
void register_tfidf_ops(OpRegistry& r) { r.add("TfIdfVectorizer", tfidf, 9); }
}  // namespace math

}  // namespace ember::onnx_import
