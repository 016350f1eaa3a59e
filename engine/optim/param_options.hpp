#pragma once
// Per-parameter learning-rate and weight-decay multipliers (PyTorch's param groups, keyed by module path).
//
// set("encoder", {0.1, 1}) applies to "encoder" and everything under "encoder."; the longest matching prefix
// wins, so set("encoder.norm", {1, 0}) can refine it. The empty prefix matches every param. Matching is by whole
// path components: "enc" does not match "encoder.w". Resolution happens at step time, so params added to a module
// later are covered too.
#include <map>
#include <string>

#include "engine/tensor/error.hpp"

namespace ember {

struct ParamOptions {
  double lr_mult = 1.0;  // effective lr = lr * lr_mult
  double wd_mult = 1.0;  // effective weight decay = weight_decay * wd_mult (0 exempts norms and biases)
};

class ParamOptionsTable {
 public:
  void set(std::string prefix, ParamOptions o) {
    if (!(o.lr_mult >= 0) || !(o.wd_mult >= 0))
      throw ArgumentError("set_param_options('" + prefix + "'): multipliers must be >= 0, got lr_mult " +
                          std::to_string(o.lr_mult) + ", wd_mult " + std::to_string(o.wd_mult));
    table_.insert_or_assign(std::move(prefix), o);
  }
  void clear() { table_.clear(); }

  ParamOptions resolve(const std::string& path) const {
    const ParamOptions* best = nullptr;
    std::size_t best_len = 0;
    for (const auto& [prefix, o] : table_) {
      if (!matches(prefix, path)) continue;
      if (!best || prefix.size() >= best_len) {
        best = &o;
        best_len = prefix.size();
      }
    }
    return best ? *best : ParamOptions{};
  }

 private:
  static bool matches(const std::string& prefix, const std::string& path) {
    if (prefix.empty() || prefix == path) return true;
    return path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 && path[prefix.size()] == '.';
  }
  std::map<std::string, ParamOptions> table_;
};

}  // namespace ember
