// ONNX's TfIdfVectorizer over integer tokens (h-onnx-shape): counts of the pool's n-grams (with skips) per row,
// weighted as TF, IDF or TFIDF. Token ids are integers and the counts carry no gradient, so the rows are read to the
// host and counted there; string pools are not supported (Ember has no string tensors).
#include <map>

#include "onnx/ops/shape_util.hpp"

namespace ember::onnx_import {
namespace {

using namespace shape_detail;

Outputs tfidf_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> xs = capi::shape(x).dims;
  if (xs.empty() || xs.size() > 2) ctx.fail(fmt::format("input must be [C] or [N, C], got {}", text(xs)));
  if (ctx.node.has_attr("pool_strings")) ctx.fail("string pools are not supported");
  const int64_t min_n = ctx.node.attr_int("min_gram_length", 1), max_n = ctx.node.attr_int("max_gram_length", 1);
  const int64_t max_skip = ctx.node.attr_int("max_skip_count", 0);
  const std::string mode = ctx.node.attr_string("mode", "TF");
  const std::vector<int64_t> counts = ctx.node.attr_ints("ngram_counts");
  const std::vector<int64_t> out_index = ctx.node.attr_ints("ngram_indexes");
  const std::vector<int64_t> pool = ctx.node.attr_ints("pool_int64s");
  const std::vector<double> weights = ctx.node.attr_floats("weights");
  if (min_n < 1 || max_n < min_n || max_skip < 0 || static_cast<int64_t>(counts.size()) < max_n)
    ctx.fail("min_gram_length, max_gram_length, max_skip_count and ngram_counts disagree");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") ctx.fail(fmt::format("mode '{}'", mode));
  // The pool's n-grams by length: counts[n - 1] is where the n-grams start in pool, each taking n values; the i-th
  // n-gram of the whole pool goes to output column out_index[i].
  std::map<std::vector<int64_t>, int64_t> column;
  int64_t width = 0, ngram = 0;
  for (std::size_t g = 0; g < counts.size(); ++g) {
    const auto n = static_cast<int64_t>(g + 1);
    const int64_t end = g + 1 < counts.size() ? counts[g + 1] : static_cast<int64_t>(pool.size());
    if (counts[g] < 0 || end < counts[g] || end > static_cast<int64_t>(pool.size()) || (end - counts[g]) % n != 0)
      ctx.fail(fmt::format("ngram_counts {} do not split a pool of {}", text(counts), pool.size()));
    for (int64_t at = counts[g]; at < end; at += n, ++ngram) {
      if (ngram >= static_cast<int64_t>(out_index.size())) ctx.fail("ngram_indexes has fewer entries than the pool");
      const int64_t col = out_index[static_cast<std::size_t>(ngram)];
      if (col < 0) ctx.fail("ngram_indexes are negative");
      column[std::vector<int64_t>(pool.begin() + at, pool.begin() + at + n)] = col;
      width = std::max(width, col + 1);
    }
  }
  const int64_t rows = xs.size() == 2 ? xs[0] : 1, len = xs.back();
  const std::vector<int64_t> tokens = host_ints(ctx, x, "the tokens");
  std::vector<double> out(static_cast<std::size_t>(rows * width), 0.0);
  std::vector<int64_t> gram;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t* row = tokens.data() + r * len;
    double* hits = out.data() + r * width;
    for (int64_t n = min_n; n <= max_n; ++n)
      for (int64_t skip = 0; skip <= (n == 1 ? 0 : max_skip); ++skip)  // a unigram has no gaps: counted once
        for (int64_t i = 0; i + (n - 1) * (skip + 1) < len; ++i) {
          gram.clear();
          for (int64_t j = 0; j < n; ++j) gram.push_back(row[i + j * (skip + 1)]);
          if (auto it = column.find(gram); it != column.end()) hits[it->second] += 1;
        }
  }
  if (mode != "TF") {
    std::vector<double> w(static_cast<std::size_t>(width), 1.0);
    if (!weights.empty()) {
      if (weights.size() != out_index.size()) ctx.fail("weights must have one entry per n-gram");
      for (std::size_t i = 0; i < out_index.size(); ++i) w[static_cast<std::size_t>(out_index[i])] = weights[i];
    }
    for (std::size_t k = 0; k < out.size(); ++k) {
      const double wk = w[k % static_cast<std::size_t>(width)];
      out[k] = mode == "IDF" ? (out[k] > 0 ? wk : 0.0) : out[k] * wk;
    }
  }
  Shape shape = xs.size() == 2 ? Shape{rows, width} : Shape{width};
  return {capi::from_data(ctx.device, TensorData::from_vec<double>(out, std::move(shape)).convert(DType::F32))};
}

}  // namespace

void register_shape_tfidf_ops(OpRegistry& r) { r.add("TfIdfVectorizer", tfidf_op, 9); }

}  // namespace ember::onnx_import
