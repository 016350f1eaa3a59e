// Param-list optimizers (param_optimizer.hpp).
#include "c_api/src/param_optimizer.hpp"

#include <charconv>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "c_api/src/module_tree.hpp"
#include "c_api/src/tensor_refs.hpp"

namespace ember::capi {
namespace {

ParamOptimizer& list_of(OptimizerState& o) {
  if (!o.params) throw ArgumentError("not an optimizer over a param list");
  return *o.params;
}

// Validates and holds the group's params; returns their indices in p.params.
std::vector<std::size_t> hold_params(ParamOptimizer& p, ember_tensor* const* params, std::size_t n) {
  if (n == 0) throw ArgumentError("optimizer got an empty parameter list");
  if (!params) throw ArgumentError("params is NULL");
  std::set<const ember_tensor*> in_group;
  const BackendRuntime* runtime = p.params.empty() ? nullptr : use(p.params[0].handle, "param").runtime;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string arg = fmt::format("params[{}]", i);
    const DynTensor& v = use(params[i], arg.c_str());
    if (!dtype_is_float(dtype(v)))
      throw KindError(fmt::format("{}: an optimizer can only optimize float tensors, got {}", arg, dtype_name(dtype(v))));
    if (!is_leaf(v)) throw ArgumentError(fmt::format("{}: can't optimize a non-leaf tensor", arg));
    if (!in_group.insert(params[i]).second)
      throw ArgumentError(fmt::format("{}: the same tensor appears twice in the parameter list", arg));
    for (const auto& q : p.params)
      if (q.handle == params[i])
        throw ArgumentError(fmt::format("{}: some parameters appear in more than one parameter group", arg));
    if (!runtime) runtime = v.runtime;
    if (v.runtime != runtime)
      throw ArgumentError(fmt::format("{}: lives on another backend or dtype than the optimizer's first param", arg));
  }
  std::vector<std::size_t> members;
  for (std::size_t i = 0; i < n; ++i) {
    retain_tensor(params[i]);
    members.push_back(p.params.size());
    OptParam q;
    q.handle = params[i];
    q.id = ParamId::next().value;
    p.params.push_back(std::move(q));
  }
  return members;
}

// The gradient a step uses for param `q`: the pending one and the pass's one, combined by its grad_req.
std::optional<DynTensor> combined(const OptParam& q, const std::optional<DynTensor>& fresh) {
  if (!fresh) return q.pending;
  if (!q.pending || q.req == GradReq::Write) return fresh;
  return binary(*q.pending, *fresh, BinaryOp::Add);
}

std::optional<DynTensor> grad_of(const DynGrads& grads, const OptParam& q) {
  return grad(grads, use(q.handle, "param"));
}

std::vector<GroupParam> group_params(const ParamOptimizer& p, const OptGroup& g) {
  std::vector<GroupParam> out;
  for (std::size_t i : g.members) {
    const OptParam& q = p.params[i];
    out.push_back(GroupParam{use(q.handle, "param"), std::nullopt, q.id, q.lr_mult, q.wd_mult});
  }
  return out;
}

uint64_t parse_index(const std::string& key, std::size_t dot) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(key.data(), key.data() + dot, v);
  if (dot == 0 || ec != std::errc{} || ptr != key.data() + dot)
    throw ArgumentError(fmt::format("load_record: key '{}' is not '<param index>.<name>'", key));
  return v;
}

}  // namespace

ParamOptimizer::~ParamOptimizer() {
  for (const auto& q : params) release_tensor(q.handle);
}

std::shared_ptr<OptimizerState> make_param_optimizer(ember_tensor* const* params, std::size_t n, const OptimSpec& spec) {
  auto o = std::make_shared<OptimizerState>();
  o->params = std::make_shared<ParamOptimizer>();
  o->lr = spec.lr;
  add_param_group(*o, params, n, spec);
  return o;
}

std::shared_ptr<OptimizerState> make_tree_optimizer(const ModuleState& tree, const OptimSpec& spec) {
  std::vector<ember_tensor*> handles;
  for (const auto& e : tree_params(tree))
    if (e.param->role == ParamRole::Trainable) handles.push_back(e.param->handle);
  return make_param_optimizer(handles.data(), handles.size(), spec);
}

std::size_t add_param_group(OptimizerState& o, ember_tensor* const* params, std::size_t n, const OptimSpec& spec) {
  ParamOptimizer& p = list_of(o);
  std::lock_guard lock(o.mu);
  check_lr(spec.lr);
  if (!p.groups.empty() && spec.kind != p.groups[0].spec.kind)
    throw ArgumentError("add_param_group: the group's options are of another optimizer kind than the optimizer's");
  if (!params && n > 0) throw ArgumentError("params is NULL");
  // Built (and validated by the engine's constructors) before any param is held.
  DynGroupOptimizer opt = n > 0 ? make_group_optimizer(use(params[0], "params[0]"), spec) : DynGroupOptimizer{};
  const std::size_t before = p.params.size();
  std::vector<std::size_t> members;
  try {
    members = hold_params(p, params, n);
  } catch (...) {
    for (std::size_t i = before; i < p.params.size(); ++i) release_tensor(p.params[i].handle);
    p.params.resize(before);
    throw;
  }
  p.groups.push_back(OptGroup{spec, std::move(opt), std::move(members)});
  return p.groups.size() - 1;
}

void set_param_options(OptimizerState& o, const ember_tensor* param, double lr_mult, double wd_mult, int32_t req) {
  ParamOptimizer& p = list_of(o);
  use(param, "param");
  if (!(lr_mult >= 0) || !std::isfinite(lr_mult) || !(wd_mult >= 0) || !std::isfinite(wd_mult))
    throw ArgumentError(fmt::format("lr_mult and wd_mult must be finite and >= 0, got {} and {}", lr_mult, wd_mult));
  if (req < 0 || req > 2) throw ArgumentError(fmt::format("unknown grad_req {}", req));
  std::lock_guard lock(o.mu);
  for (auto& q : p.params) {
    if (q.handle != param) continue;
    q.lr_mult = lr_mult;
    q.wd_mult = wd_mult;
    q.req = static_cast<GradReq>(req);
    if (q.req == GradReq::Null) q.pending.reset();
    return;
  }
  throw ArgumentError("param is not one of the optimizer's params");
}

void params_accumulate(OptimizerState& o, const DynGrads& grads) {
  ParamOptimizer& p = list_of(o);
  std::lock_guard lock(o.mu);
  std::vector<std::optional<DynTensor>> next;  // computed first: a failure changes nothing
  for (const auto& q : p.params) next.push_back(q.req == GradReq::Null ? std::nullopt : combined(q, grad_of(grads, q)));
  for (std::size_t i = 0; i < p.params.size(); ++i) p.params[i].pending = std::move(next[i]);
}

void params_step(OptimizerState& o, const DynGrads* grads) {
  ParamOptimizer& p = list_of(o);
  std::lock_guard lock(o.mu);
  // Every group's inputs first (gradient lookups, shapes), so that a bad gradient fails before any param changes.
  std::vector<std::vector<GroupParam>> steps;
  for (const auto& g : p.groups) {
    std::vector<GroupParam> list;
    for (std::size_t i : g.members) {
      const OptParam& q = p.params[i];
      if (q.req == GradReq::Null) continue;
      // Without ember_grads, the gradient backward accumulated into the param's .grad (torch's optimizer.step()).
      auto gr = combined(q, grads ? grad_of(*grads, q) : leaf_grad(use(q.handle, "param")));
      const DynTensor& v = use(q.handle, "param");
      if (gr && !(shape(*gr) == shape(v)))
        throw ShapeError(fmt::format("step: the gradient of param {} has shape {}, the param has {}", i,
                                     shape(*gr).to_string(), shape(v).to_string()));
      list.push_back(GroupParam{v, std::move(gr), q.id, q.lr_mult, q.wd_mult});
    }
    steps.push_back(std::move(list));
  }
  for (std::size_t gi = 0; gi < p.groups.size(); ++gi) {
    auto& list = steps[gi];
    if (list.empty()) continue;
    group_step(p.groups[gi].opt, list, p.groups[gi].spec.lr);
    std::size_t k = 0;
    for (std::size_t i : p.groups[gi].members) {
      OptParam& q = p.params[i];
      if (q.req == GradReq::Null) continue;
      if (list[k].grad) assign_param(q.handle, list[k].value);  // the same handle: everyone sees the step
      ++k;
    }
  }
  for (auto& q : p.params) q.pending.reset();
}

void params_zero_grad(OptimizerState& o) {
  ParamOptimizer& p = list_of(o);
  std::lock_guard lock(o.mu);
  for (auto& q : p.params) {
    q.pending.reset();
    set_leaf_grad(use(q.handle, "param"), nullptr);  // torch's zero_grad(set_to_none=True)
  }
}

void params_reset(OptimizerState& o) {
  ParamOptimizer& p = list_of(o);
  std::lock_guard lock(o.mu);
  for (auto& g : p.groups) group_reset(g.opt);
}

Record params_record(OptimizerState& o) {
  ParamOptimizer& p = list_of(o);
  std::lock_guard lock(o.mu);
  std::map<uint64_t, std::size_t> index_of;
  for (std::size_t i = 0; i < p.params.size(); ++i) index_of[p.params[i].id] = i;
  Record out;
  for (std::size_t gi = 0; gi < p.groups.size(); ++gi) {
    out.scalars[fmt::format("groups.{}.lr", gi)] = p.groups[gi].spec.lr;
    const Record r = group_state(p.groups[gi].opt);
    auto rekey = [&](const std::string& key) {
      const auto dot = key.find('.');
      const std::size_t idx = index_of.at(parse_index(key, dot));
      return std::pair{idx, fmt::format("{}{}", idx, key.substr(dot))};
    };
    for (const auto& [key, v] : r.scalars) out.scalars[rekey(key).second] = v;
    for (const auto& [key, pr] : r.params) {
      auto [idx, k] = rekey(key);
      ParamRecord q = pr;
      q.id = idx;
      out.params.emplace(k, std::move(q));
    }
  }
  return out;
}

void params_load_record(OptimizerState& o, const Record& r) {
  ParamOptimizer& p = list_of(o);
  std::lock_guard lock(o.mu);
  std::vector<std::size_t> group_of_param(p.params.size());
  for (std::size_t gi = 0; gi < p.groups.size(); ++gi)
    for (std::size_t i : p.groups[gi].members) group_of_param[i] = gi;
  std::vector<Record> per_group(p.groups.size());
  std::vector<std::optional<double>> lrs(p.groups.size());
  auto target = [&](const std::string& key) {
    const auto dot = key.find('.');
    if (dot == std::string::npos) throw ArgumentError(fmt::format("load_record: key '{}' is not '<param index>.<name>'", key));
    const uint64_t idx = parse_index(key, dot);
    if (idx >= p.params.size())
      throw ArgumentError(fmt::format("load_record: state for param {}, the optimizer has {} params", idx, p.params.size()));
    return std::pair{group_of_param[idx], fmt::format("{}{}", p.params[idx].id, key.substr(dot))};
  };
  for (const auto& [key, v] : r.scalars) {
    if (key.rfind("groups.", 0) == 0) {
      const auto dot = key.find('.', 7);
      uint64_t g = 0;
      auto [ptr, ec] = std::from_chars(key.data() + 7, key.data() + (dot == std::string::npos ? key.size() : dot), g);
      if (dot == std::string::npos || ec != std::errc{} || ptr != key.data() + dot || key.substr(dot) != ".lr" ||
          g >= p.groups.size())
        throw ArgumentError(fmt::format("load_record: unexpected scalar '{}' ({} groups)", key, p.groups.size()));
      check_lr(v);
      lrs[g] = v;
      continue;
    }
    auto [g, k] = target(key);
    per_group[g].scalars[k] = v;
  }
  for (const auto& [key, pr] : r.params) {
    auto [g, k] = target(key);
    ParamRecord q = pr;
    q.id = p.params[parse_index(key, key.find('.'))].id;
    per_group[g].params.emplace(k, std::move(q));
  }
  // Into fresh group optimizers first: any failure leaves the optimizer as it was.
  std::vector<DynGroupOptimizer> fresh;
  for (std::size_t gi = 0; gi < p.groups.size(); ++gi) {
    const auto list = group_params(p, p.groups[gi]);
    DynGroupOptimizer opt = make_group_optimizer(list.at(0).value, p.groups[gi].spec);
    group_load_state(opt, per_group[gi], list);
    fresh.push_back(std::move(opt));
  }
  for (std::size_t gi = 0; gi < p.groups.size(); ++gi) {
    p.groups[gi].opt = std::move(fresh[gi]);
    if (lrs[gi]) p.groups[gi].spec.lr = *lrs[gi];
  }
}

double clip_grad_norm(std::vector<std::optional<DynTensor>>& grads, double max_norm, double norm_type) {
  if (!(max_norm >= 0) || !std::isfinite(max_norm))
    throw ArgumentError(fmt::format("clip_grad_norm: max_norm must be finite and >= 0, got {}", max_norm));
  if (!(norm_type > 0)) throw ArgumentError(fmt::format("clip_grad_norm: norm_type must be > 0, got {}", norm_type));
  const bool inf = std::isinf(norm_type);
  double acc = 0.0;  // over every gradient as one vector, in double on the host
  for (const auto& g : grads) {
    if (!g) continue;
    for (double x : to_data(*g).to_vec<double>()) {
      const double a = std::fabs(x);
      acc = inf ? std::max(acc, a) : acc + std::pow(a, norm_type);
    }
  }
  const double total = inf ? acc : std::pow(acc, 1.0 / norm_type);
  const double coef = max_norm / (total + 1e-6);  // torch clamps the coefficient at 1: small gradients stay as they are
  if (coef < 1.0 || std::isnan(coef))
    for (auto& g : grads)
      if (g) g = scalar(*g, ScalarOp::Mul, coef);
  return total;
}

double params_clip_grad_norm(OptimizerState& o, double max_norm, double norm_type) {
  ParamOptimizer& p = list_of(o);
  std::lock_guard lock(o.mu);
  std::vector<std::optional<DynTensor>> grads;
  for (const auto& q : p.params) grads.push_back(q.pending);
  const double total = clip_grad_norm(grads, max_norm, norm_type);
  for (std::size_t i = 0; i < p.params.size(); ++i) p.params[i].pending = grads[i];
  return total;
}

std::size_t group_count(OptimizerState& o) {
  if (!o.params) return 1;
  std::lock_guard lock(o.mu);
  return o.params->groups.size();
}

double get_group_lr(OptimizerState& o, std::size_t group) {
  if (!o.params) {
    if (group != 0) throw IndexError(fmt::format("group {} out of range for 1 group", group));
    return get_lr(o);
  }
  std::lock_guard lock(o.mu);
  if (group >= o.params->groups.size())
    throw IndexError(fmt::format("group {} out of range for {} groups", group, o.params->groups.size()));
  return o.params->groups[group].spec.lr;
}

void set_group_lr(OptimizerState& o, std::size_t group, double lr) {
  if (!o.params) {
    if (group != 0) throw IndexError(fmt::format("group {} out of range for 1 group", group));
    return set_lr(o, lr);
  }
  check_lr(lr);
  std::lock_guard lock(o.mu);
  if (group >= o.params->groups.size())
    throw IndexError(fmt::format("group {} out of range for {} groups", group, o.params->groups.size()));
  o.params->groups[group].spec.lr = lr;
}

}  // namespace ember::capi
