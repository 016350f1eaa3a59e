// ember.h: optimizers over a module's params.
#include <cmath>

#include "c_api/src/boundary.hpp"
#include "c_api/src/param_optimizer.hpp"
#include "records/recorder.hpp"

using namespace ember;
using namespace ember::capi;

namespace {

constexpr std::size_t kOptionsV1 = EMBER_STRUCT_END(ember_optimizer_options, reserved);

ember_optimizer_options options_defaults(int32_t kind) {
  ember_optimizer_options o{};
  o.struct_size = sizeof o;
  o.kind = kind;
  o.lr = kind == EMBER_OPTIM_SGD ? 0.01 : 1e-3;
  o.weight_decay = kind == EMBER_OPTIM_ADAMW ? 0.01 : 0.0;
  o.beta1 = 0.9;
  o.beta2 = 0.999;
  o.eps = 1e-8;
  return o;
}

void check_kind(int32_t kind) {
  if (kind < EMBER_OPTIM_SGD || kind > EMBER_OPTIM_ADAMW) throw ArgumentError("unknown optimizer kind " + std::to_string(kind));
}

OptimSpec to_spec(const ember_optimizer_options& o) {
  check_kind(o.kind);
  for (double v : {o.lr, o.momentum, o.dampening, o.weight_decay, o.beta1, o.beta2, o.eps})
    if (!std::isfinite(v)) throw ArgumentError("optimizer options must be finite");
  OptimSpec s;
  s.kind = static_cast<OptimKind>(o.kind);
  s.lr = o.lr;
  s.sgd = SgdConfig{o.momentum, o.dampening, o.weight_decay, o.nesterov != 0};
  s.adam = AdamConfig{o.beta1, o.beta2, o.eps, o.weight_decay};
  return s;
}

OptimizerState& optim_of(const ember_optimizer* o, const char* arg) { return *use(o, arg); }

}  // namespace

namespace ember::capi {
// Validated options of `kind` (or the options' own kind), shared with the param-list functions.
OptimSpec read_optimizer_options(const ember_optimizer_options* options) {
  if (!options) throw ArgumentError("options is NULL");
  // Validate struct_size before reading any other field (kind picks the defaults).
  if (options->struct_size < kOptionsV1)
    throw ArgumentError("options: struct_size " + std::to_string(options->struct_size) +
                        " is smaller than any version of the struct (" + std::to_string(kOptionsV1) + ")");
  return to_spec(read_struct(options, options_defaults(options->kind), kOptionsV1, "options"));
}
}  // namespace ember::capi

extern "C" {

ember_status ember_optimizer_options_init(ember_optimizer_options* options, int32_t kind) {
  return guard(__func__, [&] {
    if (!options) throw ArgumentError("options is NULL");
    check_kind(kind);
    *options = options_defaults(kind);
  });
}

ember_status ember_optimizer_create(ember_module* module, const ember_optimizer_options* options,
                                    ember_optimizer** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const auto& m = use(module, "module");
    if (!options) throw ArgumentError("options is NULL");
    // Validate struct_size before reading any other field (kind picks the defaults).
    if (options->struct_size < kOptionsV1)
      throw ArgumentError("options: struct_size " + std::to_string(options->struct_size) +
                          " is smaller than any version of the struct (" + std::to_string(kOptionsV1) + ")");
    const auto opts = read_struct(options, options_defaults(options->kind), kOptionsV1, "options");
    o = make_handle<ember_optimizer>(m->tree ? make_tree_optimizer(*m, to_spec(opts)) : make_optimizer(m, to_spec(opts)));
  });
}

ember_status ember_optimizer_accumulate(ember_optimizer* optimizer, const ember_grads* grads) {
  return guard(__func__, [&] {
    OptimizerState& o = optim_of(optimizer, "optimizer");
    if (o.params) params_accumulate(o, use(grads, "grads"));
    else accumulate(o, use(grads, "grads"));
  });
}

ember_status ember_optimizer_step(ember_optimizer* optimizer, const ember_grads* grads) {
  return guard(__func__, [&] {
    OptimizerState& o = optim_of(optimizer, "optimizer");
    const DynGrads* g = grads ? &use(grads, "grads") : nullptr;
    if (o.params) params_step(o, g);
    else step(o, g);
  });
}

ember_status ember_optimizer_zero_grad(ember_optimizer* optimizer) {
  return guard(__func__, [&] {
    OptimizerState& o = optim_of(optimizer, "optimizer");
    if (o.params) params_zero_grad(o);
    else zero_grad(o);
  });
}

ember_status ember_optimizer_reset(ember_optimizer* optimizer) {
  return guard(__func__, [&] {
    OptimizerState& o = optim_of(optimizer, "optimizer");
    if (o.params) params_reset(o);
    else reset(o);
  });
}

ember_status ember_optimizer_set_lr(ember_optimizer* optimizer, double lr) {
  return guard(__func__, [&] {
    OptimizerState& o = optim_of(optimizer, "optimizer");
    check_lr(lr);
    for (std::size_t g = 0; g < group_count(o); ++g) set_group_lr(o, g, lr);
  });
}

ember_status ember_optimizer_get_lr(const ember_optimizer* optimizer, double* lr) {
  return guard(__func__, [&] {
    OptimizerState& o = optim_of(optimizer, "optimizer");
    out_value(lr, "lr") = get_group_lr(o, 0);
  });
}

ember_status ember_optimizer_to_record(const ember_optimizer* optimizer, ember_record** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    OptimizerState& s = optim_of(optimizer, "optimizer");
    o = make_handle<ember_record>(s.params ? params_record(s) : optimizer_record(s));
  });
}

ember_status ember_optimizer_load_record(ember_optimizer* optimizer, const ember_record* record) {
  return guard(__func__, [&] {
    OptimizerState& o = optim_of(optimizer, "optimizer");
    if (o.params) params_load_record(o, use(record, "record"));
    else load_optimizer_record(o, use(record, "record"));
  });
}

ember_status ember_optimizer_save(const ember_optimizer* optimizer, const char* path,
                                  const ember_record_options* options) {
  return guard(__func__, [&] {
    OptimizerState& o = optim_of(optimizer, "optimizer");
    if (!path || !*path) throw ArgumentError("path is NULL or empty");
    // Same reading as records: a missing struct means binary, full precision. State is always saved at full
    // precision or more (moments in half precision would change the next steps).
    ember_record_options opts{};
    opts.struct_size = sizeof opts;
    if (options) opts = read_struct(options, opts, EMBER_STRUCT_END(ember_record_options, reserved), "options");
    if (opts.recorder != EMBER_RECORDER_BINARY && opts.recorder != EMBER_RECORDER_JSON &&
        opts.recorder != EMBER_RECORDER_COMPACT)
      throw ArgumentError("unknown recorder " + std::to_string(opts.recorder));
    if (opts.precision < EMBER_PRECISION_DEFAULT || opts.precision > EMBER_PRECISION_DOUBLE)
      throw ArgumentError("unknown precision " + std::to_string(opts.precision));
    const Record state = o.params ? params_record(o) : optimizer_record(o);
    const bool wide = opts.precision == EMBER_PRECISION_DOUBLE;
    if (opts.recorder == EMBER_RECORDER_JSON) {
      if (wide) JsonFileRecorder<DoublePrecisionSettings>{}.save(state, path);
      else JsonFileRecorder<FullPrecisionSettings>{}.save(state, path);
    } else {
      if (wide) BinFileRecorder<DoublePrecisionSettings>{}.save(state, path);
      else BinFileRecorder<FullPrecisionSettings>{}.save(state, path);
    }
  });
}

ember_status ember_optimizer_load(ember_optimizer* optimizer, const char* path) {
  return guard(__func__, [&] {
    OptimizerState& o = optim_of(optimizer, "optimizer");
    if (!path || !*path) throw ArgumentError("path is NULL or empty");
    const Record r = load_record_file(path);
    if (o.params) params_load_record(o, r);
    else load_optimizer_record(o, r);
  });
}

ember_status ember_optimizer_free(ember_optimizer* optimizer) { return free_handle(optimizer, __func__); }

}  // extern "C"
