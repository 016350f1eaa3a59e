// The shared part of ONNX's recurrent operators (onnx/ops/rnn_support.hpp).
#include "onnx/ops/rnn_support.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace ember::onnx_import::rnn {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// How many of alpha / beta each function takes from activation_alpha / activation_beta, and the defaults of the
// ONNX operator of the same name when the lists run out (Affine and ScaledTanh have no operator: identity scales).
struct ActivationArgs {
  const char* name;
  bool takes_alpha, takes_beta;
  double alpha, beta;
};
constexpr ActivationArgs kActivations[] = {
    {"sigmoid", false, false, 0.0, 0.0},     {"tanh", false, false, 0.0, 0.0},
    {"relu", false, false, 0.0, 0.0},        {"affine", true, true, 1.0, 0.0},
    {"leakyrelu", true, false, 0.01, 0.0},   {"thresholdedrelu", true, false, 1.0, 0.0},
    {"scaledtanh", true, true, 1.0, 1.0},    {"hardsigmoid", true, true, 0.2, 0.5},
    {"elu", true, false, 1.0, 0.0},          {"softsign", false, false, 0.0, 0.0},
    {"softplus", false, false, 0.0, 0.0},
};

std::vector<Activation> read_activations(const OpContext& ctx, int64_t num_dirs,
                                         const std::vector<std::string>& defaults) {
  const Node& n = ctx.node;
  std::vector<std::string> names = n.has_attr("activations") ? n.attr_strings("activations") : defaults;
  const std::size_t per_dir = defaults.size(), dirs = static_cast<std::size_t>(num_dirs);
  // One set for both directions of a bidirectional node is read as the same functions each way (ONNX Runtime does
  // the same); otherwise the list must name every direction's functions.
  if (names.size() == per_dir && dirs == 2) {
    const std::vector<std::string> one = names;
    names.insert(names.end(), one.begin(), one.end());
  }
  if (names.size() != per_dir * dirs)
    ctx.fail(fmt::format("activations names {} functions; {} per direction are needed for {} direction(s)",
                         names.size(), per_dir, dirs));
  const std::vector<double> alphas = n.attr_floats("activation_alpha"), betas = n.attr_floats("activation_beta");
  std::size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> out;
  for (const std::string& raw : names) {
    const std::string name = lower(raw);
    const auto* args = std::find_if(std::begin(kActivations), std::end(kActivations),
                                    [&](const ActivationArgs& a) { return name == a.name; });
    if (args == std::end(kActivations)) ctx.fail(fmt::format("unsupported activation function '{}'", raw));
    Activation a{name, args->alpha, args->beta};
    if (args->takes_alpha && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (args->takes_beta && next_beta < betas.size()) a.beta = betas[next_beta++];
    out.push_back(std::move(a));
  }
  return out;
}

DynTensor mul_s(const DynTensor& x, double s) { return capi::scalar(x, ScalarOp::Mul, s); }
DynTensor add_s(const DynTensor& x, double s) { return capi::scalar(x, ScalarOp::Add, s); }

}  // namespace

DynTensor activate(const Activation& a, const DynTensor& x) {
  const std::string& f = a.name;
  if (f == "sigmoid") return capi::unary(x, UnaryOp::Sigmoid);
  if (f == "tanh") return capi::unary(x, UnaryOp::Tanh);
  if (f == "relu") return capi::unary(x, UnaryOp::Relu);
  if (f == "affine") return add_s(mul_s(x, a.alpha), a.beta);
  if (f == "scaledtanh") return mul_s(capi::unary(mul_s(x, a.beta), UnaryOp::Tanh), a.alpha);
  if (f == "hardsigmoid")
    return capi::scalar(capi::scalar(add_s(mul_s(x, a.alpha), a.beta), ScalarOp::ClampMin, 0.0), ScalarOp::ClampMax,
                        1.0);
  const DynTensor neg_part = capi::scalar(x, ScalarOp::ClampMax, 0.0);  // min(x, 0)
  if (f == "leakyrelu") return capi::binary(capi::unary(x, UnaryOp::Relu), mul_s(neg_part, a.alpha), BinaryOp::Add);
  if (f == "elu")  // relu(x) + alpha * (exp(min(x, 0)) - 1): exp never sees a large positive x
    return capi::binary(capi::unary(x, UnaryOp::Relu), mul_s(add_s(capi::unary(neg_part, UnaryOp::Exp), -1.0), a.alpha),
                        BinaryOp::Add);
  if (f == "thresholdedrelu")
    return capi::binary(x, capi::cast(capi::compare_scalar(x, CompareOp::Gt, a.alpha), capi::dtype(x)),
                        BinaryOp::Mul);
  if (f == "softsign") return capi::binary(x, add_s(capi::unary(x, UnaryOp::Abs), 1.0), BinaryOp::Div);
  if (f == "softplus") {  // relu(x) + log1p(exp(-|x|)): log(1 + exp(x)) without overflow
    const DynTensor tail = capi::unary(capi::unary(capi::unary(capi::unary(x, UnaryOp::Abs), UnaryOp::Neg),
                                                   UnaryOp::Exp),
                                       UnaryOp::Log1p);
    return capi::binary(capi::unary(x, UnaryOp::Relu), tail, BinaryOp::Add);
  }
  throw OnnxError("unknown recurrent activation " + f);  // read_activations admits only the names above
}

Spec read_spec(const OpContext& ctx, int64_t gates, const std::vector<std::string>& default_acts) {
  const Node& n = ctx.node;
  Spec s;
  s.gates = gates;
  s.layout = n.attr_int("layout", 0);
  if (s.layout != 0 && s.layout != 1) ctx.fail(fmt::format("layout must be 0 or 1, got {}", s.layout));
  const std::string direction = n.attr_string("direction", "forward");
  if (direction == "bidirectional") s.num_dirs = 2;
  else if (direction == "reverse") s.reverse_only = true;
  else if (direction != "forward")
    ctx.fail(fmt::format("direction must be forward, reverse or bidirectional, got '{}'", direction));
  if (n.has_attr("clip")) {
    s.clip = n.attr_float("clip", 0.0);
    if (!(*s.clip >= 0.0)) ctx.fail(fmt::format("clip must be >= 0, got {}", *s.clip));
  }
  s.acts = read_activations(ctx, s.num_dirs, default_acts);

  const DynTensor& x = ctx.input(0);
  s.dtype = capi::dtype(x);
  if (!dtype_is_float(s.dtype)) ctx.fail(fmt::format("X must be a float tensor, got {}", dtype_name(s.dtype)));
  const Shape xs = capi::shape(x);
  if (xs.rank() != 3) ctx.fail(fmt::format("X must be rank 3, got shape {}", xs.to_string()));
  s.x = s.layout == 0 ? x : capi::permute(x, {1, 0, 2});
  s.seq = xs[s.layout == 0 ? 0 : 1];
  s.batch = xs[s.layout == 0 ? 1 : 0];
  s.input_size = xs[2];

  const Shape ws = capi::shape(ctx.input(1)), rs = capi::shape(ctx.input(2));
  if (rs.rank() != 3) ctx.fail(fmt::format("R must be rank 3, got shape {}", rs.to_string()));
  s.hidden = n.attr_int("hidden_size", rs[2]);
  if (s.hidden <= 0) ctx.fail(fmt::format("hidden_size must be positive, got {}", s.hidden));
  const Shape want_w{s.num_dirs, gates * s.hidden, s.input_size}, want_r{s.num_dirs, gates * s.hidden, s.hidden};
  if (!(ws == want_w)) ctx.fail(fmt::format("W must have shape {}, got {}", want_w.to_string(), ws.to_string()));
  if (!(rs == want_r)) ctx.fail(fmt::format("R must have shape {}, got {}", want_r.to_string(), rs.to_string()));
  if (ctx.has_input(4)) {
    std::vector<int64_t> lens = ctx.ints(4);
    if (static_cast<int64_t>(lens.size()) != s.batch)
      ctx.fail(fmt::format("sequence_lens has {} entries for a batch of {}", lens.size(), s.batch));
    for (int64_t l : lens)
      if (l < 0 || l > s.seq) ctx.fail(fmt::format("sequence_lens entry {} is outside [0, {}]", l, s.seq));
    // All full-length: the plain loop, without masks.
    if (std::any_of(lens.begin(), lens.end(), [&](int64_t l) { return l != s.seq; })) s.lens = std::move(lens);
  }
  return s;
}

DynTensor initial_state(const OpContext& ctx, const Spec& s, std::size_t i, int64_t d) {
  if (!ctx.has_input(i)) return capi::full(ctx.device, s.dtype, Shape{s.batch, s.hidden}, 0.0);
  const DynTensor& t = ctx.input(i);
  const Shape want = s.layout == 0 ? Shape{s.num_dirs, s.batch, s.hidden} : Shape{s.batch, s.num_dirs, s.hidden};
  const Shape got = capi::shape(t);
  if (!(got == want))
    ctx.fail(fmt::format("input {} (an initial state) must have shape {}, got {}", i, want.to_string(),
                         got.to_string()));
  return capi::select(t, s.layout == 0 ? 0 : 1, d);
}

DynTensor direction_slice(const OpContext& ctx, const Spec& s, std::size_t i, int64_t d,
                          const std::vector<int64_t>& dims, const char* what) {
  const DynTensor& t = ctx.input(i);
  std::vector<int64_t> want{s.num_dirs};
  want.insert(want.end(), dims.begin(), dims.end());
  const Shape got = capi::shape(t);
  if (got.dims != want)
    ctx.fail(fmt::format("{} must have shape {}, got {}", what, Shape(want).to_string(), got.to_string()));
  return capi::select(t, 0, d);
}

DynTensor cols(const DynTensor& x, int64_t from, int64_t to) {
  if (capi::shape(x).rank() == 1) return capi::slice(x, {checks::SliceArg{from, to}});
  return capi::slice(x, {checks::SliceArg{0, std::nullopt}, checks::SliceArg{from, to}});
}

DynTensor clipped(const Spec& s, const DynTensor& x) {
  if (!s.clip) return x;
  return capi::scalar(capi::scalar(x, ScalarOp::ClampMin, -*s.clip), ScalarOp::ClampMax, *s.clip);
}

DynTensor project_input(const Spec& s, const DynTensor& w_d, const std::optional<DynTensor>& bias) {
  const int64_t rows = capi::shape(w_d)[0];
  DynTensor p = capi::matmul(capi::reshape(s.x, {s.seq * s.batch, s.input_size}), capi::transpose(w_d, 0, 1));
  if (bias) p = capi::binary(p, *bias, BinaryOp::Add);
  return capi::reshape(p, {s.seq, s.batch, rows});
}

namespace {

// Index tensors for the reverse direction with sequence_lens: step k of entry b reads time len[b] - 1 - k (its own
// sequence backwards); steps past its length keep their place (they are masked). The map is its own inverse, so the
// same gather puts the outputs back in time order. Shape [seq, rest..., batch, width] as gather wants it.
DynTensor reverse_index(const DynDevice& dev, const Spec& s, std::vector<int64_t> dims, int64_t width) {
  std::vector<int64_t> idx;
  idx.reserve(static_cast<std::size_t>(s.seq * s.batch * width));
  for (int64_t t = 0; t < s.seq; ++t)
    for (int64_t b = 0; b < s.batch; ++b) {
      const int64_t len = (*s.lens)[static_cast<std::size_t>(b)];
      const int64_t from = t < len ? len - 1 - t : t;
      for (int64_t j = 0; j < width; ++j) idx.push_back(from);
    }
  return capi::from_data(dev, TensorData::from_vec(idx, Shape(std::move(dims))));
}

}  // namespace

DirectionOut run_direction(const Spec& s, int64_t d, const DynTensor& x_proj, States init, const Step& step,
                           bool need_y) {
  const DynDevice dev = capi::device(x_proj);
  const bool reverse = s.is_reverse(d);
  const int64_t width = capi::shape(x_proj)[2];
  DynTensor xp = x_proj;
  if (reverse && s.lens) xp = capi::gather(xp, 0, reverse_index(dev, s, {s.seq, s.batch, width}, width));

  // valid[k][b]: entry b still runs at step k; the states of finished entries stay, their outputs are zero.
  std::optional<DynTensor> valid, zeros;
  if (s.lens) {
    std::vector<bool> v;
    for (int64_t k = 0; k < s.seq; ++k)
      for (int64_t len : *s.lens) v.push_back(k < len);
    valid = capi::from_data(dev, TensorData::from_vec(v, Shape{s.seq, s.batch, 1}));
    zeros = capi::full(dev, s.dtype, Shape{s.batch, s.hidden}, 0.0);
  }
  const int64_t min_len = s.lens ? *std::min_element(s.lens->begin(), s.lens->end()) : s.seq;

  States st = std::move(init);
  std::vector<DynTensor> ys;
  for (int64_t k = 0; k < s.seq; ++k) {
    const int64_t t = reverse && !s.lens ? s.seq - 1 - k : k;
    States next = step(capi::select(xp, 0, t), st);
    DynTensor y = next[0];
    if (k >= min_len) {  // some entry has ended
      const DynTensor m = capi::select(*valid, 0, k);
      for (std::size_t i = 0; i < st.size(); ++i) st[i] = capi::where(m, next[i], st[i]);
      y = capi::where(m, y, *zeros);
    } else {
      st = std::move(next);
    }
    if (need_y) ys.push_back(capi::reshape(y, {1, 1, s.batch, s.hidden}));
  }

  DirectionOut out{DynTensor{}, std::move(st)};
  if (!need_y) return out;
  if (ys.empty()) {
    out.y = capi::full(dev, s.dtype, Shape{0, 1, s.batch, s.hidden}, 0.0);
    return out;
  }
  if (reverse && !s.lens) std::reverse(ys.begin(), ys.end());
  std::vector<const DynTensor*> parts;
  for (const DynTensor& y : ys) parts.push_back(&y);
  out.y = capi::cat(parts, 0);
  if (reverse && s.lens)
    out.y = capi::gather(out.y, 0, reverse_index(dev, s, {s.seq, 1, s.batch, s.hidden}, s.hidden));
  return out;
}

std::vector<std::optional<DynTensor>> assemble_outputs(const OpContext& ctx, const Spec& s,
                                                       const std::vector<DirectionOut>& dirs,
                                                       std::size_t num_states) {
  const std::vector<std::string>& names = ctx.node.outputs;
  if (names.size() > 1 + num_states)
    ctx.fail(fmt::format("has {} outputs; the operator has at most {}", names.size(), 1 + num_states));
  std::vector<std::optional<DynTensor>> out(names.size());
  if (!names.empty() && !names[0].empty()) {
    std::vector<const DynTensor*> parts;
    for (const DirectionOut& r : dirs) parts.push_back(&r.y);
    DynTensor y = capi::cat(parts, 1);
    out[0] = s.layout == 0 ? y : capi::permute(y, {2, 0, 1, 3});
  }
  for (std::size_t k = 0; k < num_states && k + 1 < names.size(); ++k) {
    if (names[k + 1].empty()) continue;
    std::vector<DynTensor> per_dir;
    for (const DirectionOut& r : dirs) per_dir.push_back(capi::reshape(r.last[k], {1, s.batch, s.hidden}));
    std::vector<const DynTensor*> parts;
    for (const DynTensor& t : per_dir) parts.push_back(&t);
    DynTensor h = capi::cat(parts, 0);
    out[k + 1] = s.layout == 0 ? h : capi::permute(h, {1, 0, 2});
  }
  return out;
}

}  // namespace ember::onnx_import::rnn
