// ember.h: Vulkan plans and warm-up (issue 17, parts 2 and 7). The arguments and the capture's state are checked
// here; the plan itself is the Vulkan plugin's (backends/vulkan/plan.hpp, through runtime/vulkan_interop.hpp).
#include <fmt/format.h>

#include <mutex>

#include "c_api/src/boundary.hpp"
#include "c_api/src/module_tree.hpp"
#include "c_api/src/runtime/plugin_loader.hpp"
#include "c_api/src/runtime/tensor_ops.hpp"
#include "c_api/src/runtime/vulkan_interop.hpp"

namespace ember::capi {

struct PlanTensor {
  DType dtype = DType::F32;
  Shape shape;
};

struct VulkanPlanState {
  DynDevice device;
  std::shared_ptr<void> native;  // vk::Plan, owned by the plugin's code
  std::vector<PlanTensor> inputs, outputs;
  bool capturing = false, built = false;
  std::mutex mu;  // a plan is bound and recorded by one thread at a time; this keeps misuse from racing

  ~VulkanPlanState() {
    // A plan freed mid-capture stops the device's capture, so the device computes eagerly again.
    if (capturing && native) vulkan_interop().plan_abort(native);
  }
};

}  // namespace ember::capi

using namespace ember;
using namespace ember::capi;

namespace {

constexpr std::size_t kPlanTensorInfoV1 = EMBER_STRUCT_END(ember_vulkan_plan_tensor_info, bytes);

const DynDevice& vulkan_device_of(const ember_device* device) {
  if (!device) throw ArgumentError("device is NULL (a Vulkan device is needed; NULL means the CPU)");
  const DynDevice& d = use(device, "device");
  if (d.backend != BackendId::Vulkan) throw ArgumentError("device is " + device_name(d) + ", not a Vulkan device");
  return d;
}

std::size_t dtype_bytes(DType d) { return d == DType::I64 ? 8 : 4; }  // what Vulkan tensors store

PlanTensor tensor_meta(const DynTensor& t) { return {dtype(t), shape(t)}; }

struct ModuleInput {
  const DynDevice& dev;
  std::shared_ptr<ModuleState> state;
  DType dtype;
  Shape shape;
};

ModuleInput module_input(const char* fn, ember_module* module, const ember_device* device, int32_t dtype,
                         const int64_t* shape, size_t rank) {
  const DynDevice& dev = vulkan_device_of(device);
  ModuleInput in{dev, use(module, "module"), to_dtype(dtype), to_shape(shape, rank)};
  check_shape(fn, in.shape);
  return in;
}

// The warm-up: one eval forward over zeros, executed and waited for. It creates every pipeline (and VkFFT plan)
// the forward needs, allocates its memory blocks, and lets the driver do its first-execution work (lavapipe
// compiles each shader's machine code on its first dispatch), so none of it lands on a later frame.
//
// A device adopted without timeline semaphores (issue 17 part 6) never submits nor waits: its warm-up is the
// forward captured into a plan that is then dropped. That creates every pipeline (kernels create theirs as they
// record), allocates and records nothing; only the driver's first-execution work is left to the first frame.
void warm_run(const VulkanInterop& vk, const ModuleInput& in) {
  if (!vk.timeline_semaphores(in.dev)) {
    const std::shared_ptr<void> plan = vk.plan_begin(in.dev);
    try {
      const DynTensor x = vk.plan_add_input(plan, in.dev, in.dtype, in.shape);
      const DynTensor y = in.state->tree ? tree_forward(*in.state, x, false) : forward(*in.state, x, false);
    } catch (...) {
      vk.plan_abort(plan);
      throw;
    }
    vk.plan_abort(plan);
    return;
  }
  const DynTensor x = full(in.dev, in.dtype, in.shape, 0.0);
  const DynTensor y = in.state->tree ? tree_forward(*in.state, x, false) : forward(*in.state, x, false);
  vk.synchronize(in.dev);
}

// A module's plan: warm-up, then its eval forward between capture begin and end.
std::shared_ptr<VulkanPlanState> plan_module(const VulkanInterop& vk, const ModuleInput& in) {
  vk.plan_refuse_in_record_mode(in.dev);  // before the warm-up's forward would record into the host's frame
  warm_run(vk, in);
  const DynDevice& dev = in.dev;
  const DType dt = in.dtype;
  const Shape& s = in.shape;
  const std::shared_ptr<ModuleState>& state = in.state;
  auto plan = std::make_shared<VulkanPlanState>();
  plan->device = dev;
  plan->native = vk.plan_begin(dev);
  plan->capturing = true;
  const DynTensor x = vk.plan_add_input(plan->native, dev, dt, s);
  const DynTensor y = state->tree ? tree_forward(*state, x, false) : forward(*state, x, false);
  plan->capturing = false;
  vk.plan_end(plan->native, {y});
  plan->inputs = {{dt, s}};
  plan->outputs = {tensor_meta(y)};
  plan->built = true;
  return plan;
}

void write_info(const PlanTensor& t, ember_vulkan_plan_tensor_info* info) {
  ember_vulkan_plan_tensor_info v{};
  v.dtype = static_cast<int32_t>(t.dtype);
  v.rank = static_cast<uint32_t>(t.shape.rank());
  for (std::size_t i = 0; i < t.shape.rank(); ++i) v.shape[i] = t.shape[i];
  v.bytes = static_cast<uint64_t>(t.shape.num_elements()) * dtype_bytes(t.dtype);
  write_struct(info, v, kPlanTensorInfoV1, "info");
}

const PlanTensor& plan_tensor(const std::vector<PlanTensor>& list, size_t index, const char* what) {
  if (index >= list.size())
    throw IndexError(fmt::format("{} {} out of range (the plan has {})", what, index, list.size()));
  return list[index];
}

VulkanPlanState& built_plan(const ember_vulkan_plan* plan) {
  VulkanPlanState& p = *use(plan, "plan");
  if (!p.built)
    throw ArgumentError(p.capturing ? "plan: still capturing (call ember_vulkan_plan_capture_end first)"
                                    : "plan: not built (its capture failed)");
  return p;
}

}  // namespace

extern "C" {

ember_status ember_vulkan_plan_create(ember_module* module, const ember_device* device, int32_t dtype,
                                      const int64_t* shape, size_t rank, ember_vulkan_plan** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const VulkanInterop& vk = vulkan_interop();
    o = make_handle<ember_vulkan_plan>(plan_module(vk, module_input(__func__, module, device, dtype, shape, rank)));
  });
}

ember_status ember_vulkan_warmup(ember_module* module, const ember_device* device, int32_t dtype,
                                 const int64_t* shape, size_t rank) {
  return guard(__func__, [&] {
    const VulkanInterop& vk = vulkan_interop();
    const ModuleInput in = module_input(__func__, module, device, dtype, shape, rank);
    vk.plan_refuse_in_record_mode(in.dev);
    warm_run(vk, in);
  });
}

ember_status ember_vulkan_plan_capture_begin(const ember_device* device, ember_vulkan_plan** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const VulkanInterop& vk = vulkan_interop();
    auto plan = std::make_shared<VulkanPlanState>();
    plan->device = vulkan_device_of(device);
    plan->native = vk.plan_begin(plan->device);
    plan->capturing = true;
    o = make_handle<ember_vulkan_plan>(std::move(plan));
  });
}

ember_status ember_vulkan_plan_add_input(ember_vulkan_plan* plan, int32_t dtype, const int64_t* shape, size_t rank,
                                         ember_tensor** input) {
  return guard(__func__, [&] {
    auto& o = out_handle(input);
    VulkanPlanState& p = *use(plan, "plan");
    std::lock_guard lock(p.mu);
    if (!p.capturing) throw ArgumentError("plan: not capturing (inputs are added between capture_begin and _end)");
    const DType dt = to_dtype(dtype);
    const Shape s = to_shape(shape, rank);
    check_shape(__func__, s);
    DynTensor t = vulkan_interop().plan_add_input(p.native, p.device, dt, s);
    p.inputs.push_back({dt, s});
    o = make_handle<ember_tensor>(std::move(t));
  });
}

ember_status ember_vulkan_plan_capture_end(ember_vulkan_plan* plan, const ember_tensor* const* outputs,
                                           size_t count) {
  return guard(__func__, [&] {
    VulkanPlanState& p = *use(plan, "plan");
    std::lock_guard lock(p.mu);
    if (!p.capturing) throw ArgumentError("plan: not capturing");
    if (count == 0 || !outputs) {
      vulkan_interop().plan_abort(p.native);
      p.capturing = false;
      throw ArgumentError("outputs: a plan needs at least one output (the capture was abandoned)");
    }
    std::vector<DynTensor> ts;
    std::vector<PlanTensor> metas;
    try {
      for (size_t i = 0; i < count; ++i) {
        const DynTensor& t = use(outputs[i], fmt::format("outputs[{}]", i).c_str());
        const DynDevice td = device(t);
        if (td.backend != BackendId::Vulkan || !p.device.runtime->same_device(td, p.device))
          throw ArgumentError(fmt::format("outputs[{}] lives on {}, not on the plan's device", i, device_name(td)));
        ts.push_back(t);
        metas.push_back(tensor_meta(t));
      }
      p.capturing = false;
      vulkan_interop().plan_end(p.native, ts);
    } catch (...) {
      vulkan_interop().plan_abort(p.native);
      p.capturing = false;
      throw;
    }
    p.outputs = std::move(metas);
    p.built = true;
  });
}

ember_status ember_vulkan_plan_counts(const ember_vulkan_plan* plan, size_t* inputs, size_t* outputs) {
  return guard(__func__, [&] {
    const VulkanPlanState& p = built_plan(plan);
    if (inputs) *inputs = p.inputs.size();
    if (outputs) *outputs = p.outputs.size();
  });
}

ember_status ember_vulkan_plan_input_info(const ember_vulkan_plan* plan, size_t index,
                                          ember_vulkan_plan_tensor_info* info) {
  return guard(__func__, [&] { write_info(plan_tensor(built_plan(plan).inputs, index, "input"), info); });
}

ember_status ember_vulkan_plan_output_info(const ember_vulkan_plan* plan, size_t index,
                                           ember_vulkan_plan_tensor_info* info) {
  return guard(__func__, [&] { write_info(plan_tensor(built_plan(plan).outputs, index, "output"), info); });
}

ember_status ember_vulkan_plan_bind_input(ember_vulkan_plan* plan, size_t index, uint64_t vk_buffer,
                                          uint64_t offset) {
  return guard(__func__, [&] {
    VulkanPlanState& p = built_plan(plan);
    plan_tensor(p.inputs, index, "input");
    if (!vk_buffer) throw ArgumentError("vk_buffer is VK_NULL_HANDLE");
    std::lock_guard lock(p.mu);
    vulkan_interop().plan_bind(p.native, false, index, vk_buffer, offset);
  });
}

ember_status ember_vulkan_plan_bind_output(ember_vulkan_plan* plan, size_t index, uint64_t vk_buffer,
                                           uint64_t offset) {
  return guard(__func__, [&] {
    VulkanPlanState& p = built_plan(plan);
    plan_tensor(p.outputs, index, "output");
    if (!vk_buffer) throw ArgumentError("vk_buffer is VK_NULL_HANDLE");
    std::lock_guard lock(p.mu);
    vulkan_interop().plan_bind(p.native, true, index, vk_buffer, offset);
  });
}

ember_status ember_vulkan_plan_record(const ember_vulkan_plan* plan, void* vk_command_buffer) {
  return guard(__func__, [&] {
    VulkanPlanState& p = built_plan(plan);
    if (!vk_command_buffer) throw ArgumentError("vk_command_buffer is NULL");
    std::lock_guard lock(p.mu);
    vulkan_interop().plan_record(p.native, vk_command_buffer);
  });
}

ember_status ember_vulkan_plan_submit(ember_vulkan_plan* plan, uint64_t* timeline_value) {
  return guard(__func__, [&] {
    auto& v = out_value(timeline_value, "timeline_value");
    VulkanPlanState& p = built_plan(plan);
    std::lock_guard lock(p.mu);
    v = vulkan_interop().plan_submit(p.native);
  });
}

ember_status ember_vulkan_plan_poll_errors(const ember_vulkan_plan* plan) {
  return guard(__func__, [&] {
    VulkanPlanState& p = built_plan(plan);
    std::lock_guard lock(p.mu);
    vulkan_interop().plan_poll_errors(p.native);
  });
}

ember_status ember_vulkan_plan_free(ember_vulkan_plan* plan) { return free_handle(plan, __func__); }

// --- issue 17 part 6: f16 storage
ember_status ember_vulkan_plan_f16_weights(const ember_vulkan_plan* plan, size_t* count, uint64_t* bytes) {
  return guard(__func__, [&] {
    VulkanPlanState& p = built_plan(plan);
    std::lock_guard lock(p.mu);
    const auto [n, b] = vulkan_interop().plan_f16_weights(p.native);
    if (count) *count = n;
    if (bytes) *bytes = b;
  });
}

}  // extern "C"
