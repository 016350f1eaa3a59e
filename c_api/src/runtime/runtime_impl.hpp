#pragma once
// RuntimeImpl<B>: the one implementation of BackendRuntime, forwarding each op_list.hpp row to the op template
// for B and the devices to DeviceGlue. Included by the file that makes a backend's runtime (runtime_cpu.cpp in
// libember, plugin_<name>.cpp in a plugin), which instantiates it for that backend only.
#include <fmt/format.h>

#include "c_api/src/runtime/backend_ops.hpp"

namespace ember::capi {

template <class B>
class RuntimeImpl final : public BackendRuntime {
  using Traits = BackendTraits<B>;

 public:
  BackendId id() const override { return Traits::id; }

  int32_t device_count() const override { return Traits::Glue::count(); }
  DynDevice make_device(int32_t index) const override { return Traits::dyn_device(Traits::Glue::open(index)); }
  bool same_device(const DynDevice& a, const DynDevice& b) const override {
    return a.runtime == this && b.runtime == this && Traits::device(a) == Traits::device(b);
  }
  std::string device_name(const DynDevice& d) const override {
    if (d.runtime != this) throw ArgumentError(fmt::format("device: not a {} device", Traits::name));
    return Traits::Glue::name(Traits::device(d), d.index);
  }

  bool& no_grad_flag() const override { return autodiff::no_grad_flag(); }
  void seed(uint64_t s) const override { ember::seed(s); }

#define EMBER_X(R, name, params, args, from) \
  R name params const override { return ops::name<B> args; }
  EMBER_RUNTIME_OPS(EMBER_X)
#undef EMBER_X
};

template <class B>
const BackendRuntime& runtime_instance() {
  // Leaked on purpose, like the handle registry: handles freed during static destruction still find it.
  static const auto* runtime = new RuntimeImpl<B>;
  return *runtime;
}

}  // namespace ember::capi
