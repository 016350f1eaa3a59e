// Fusion<Vulkan>'s kernel (fused_chain.hpp): one dispatch of the shader generated for the program's structure.
//
// Pipelines are cached per context (a Context extension) by FusedLayout::key, which leaves out what varies between
// runs of one shader (the element count, the merged dims, broadcast strides and the scalars: push constants), so a
// training step's chains compile on the first step and are found on every later one. The cache is bounded
// (kMaxFusedPipelines, least recently used first out); a pipeline leaves only when no pending command holds it
// (each dispatch retains its pipeline with the batch, or with the plan capturing it).
//
// A trailing sum / mean: every workgroup writes the sum of its lanes' elements, and the eager reduction adds up
// those partials (a mean then divides by the element count, as the eager mean's last pass does).
#include "backends/vulkan/fused_chain.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "backends/vulkan/fused_chain_glsl.hpp"
#include "backends/vulkan/fused_chain_split.hpp"
#include "backends/vulkan/launch.hpp"
#include "backends/vulkan/vulkan_backend.hpp"
#include "engine/backend/optional_ops.hpp"  // fusion::replay and the GELU step it runs

namespace ember::vk {
namespace {

using fusion::Program;

// A generated pipeline; its module and pipeline go when the cache and every command that used it let it go.
class FusedPipeline {
 public:
  FusedPipeline(Context& ctx, const std::vector<uint32_t>& spirv) : ctx_(ctx) {
    const auto& fn = ctx.fn();
    VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    mi.codeSize = spirv.size() * sizeof(uint32_t);
    mi.pCode = spirv.data();
    ctx.check(fn.CreateShaderModule(ctx.device(), &mi, nullptr, &module_), "vkCreateShaderModule(fused chain)");
    VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = module_;
    ci.stage.pName = "main";
    ci.layout = ctx.pipelines().layout();  // Ember's shared layout: any dispatch binds any tensors
    const VkResult r = fn.CreateComputePipelines(ctx.device(), VK_NULL_HANDLE, 1, &ci, nullptr, &pipeline_);
    if (r != VK_SUCCESS) {
      fn.DestroyShaderModule(ctx.device(), module_, nullptr);
      ctx.throw_result(r, "vkCreateComputePipelines(fused chain)");
    }
  }
  ~FusedPipeline() {
    ctx_.fn().DestroyPipeline(ctx_.device(), pipeline_, nullptr);
    ctx_.fn().DestroyShaderModule(ctx_.device(), module_, nullptr);
  }
  FusedPipeline(const FusedPipeline&) = delete;
  FusedPipeline& operator=(const FusedPipeline&) = delete;
  VkPipeline pipeline() const { return pipeline_; }

 private:
  Context& ctx_;
  VkShaderModule module_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
};

// The context's pipelines by key, most recently used first in `order`. Destroyed with the context, after its
// stream (which may still hold pipelines of pending batches) and before the device.
class FusedChainCache final : public Context::Extension {
 public:
  std::mutex mutex;
  std::list<std::string> order;
  std::unordered_map<std::string, std::pair<std::shared_ptr<FusedPipeline>, std::list<std::string>::iterator>> map;
  FusedChainStats stats;
  std::size_t limit = kMaxFusedPipelines;
};

// Drops the least recently used pipelines beyond the cache's limit (call with its mutex held).
void evict(FusedChainCache& c) {
  while (c.map.size() > c.limit) {
    c.map.erase(c.order.back());
    c.order.pop_back();
    ++c.stats.evicted;
  }
}

FusedChainCache& cache_of(Context& ctx) {
  return static_cast<FusedChainCache&>(
      ctx.extension("fused_chain", [] { return std::make_unique<FusedChainCache>(); }));
}

std::shared_ptr<FusedPipeline> pipeline_for(Context& ctx, const Program& p, const FusedLayout& l) {
  FusedChainCache& c = cache_of(ctx);
  std::lock_guard lock(c.mutex);
  if (auto it = c.map.find(l.key); it != c.map.end()) {
    c.order.splice(c.order.begin(), c.order, it->second.second);
    ++c.stats.hits;
    return it->second.first;
  }
  const auto spirv = compile_compute_glsl(fused_chain_glsl(p, l, ctx.int64()), "fused chain");
  auto pipe = std::make_shared<FusedPipeline>(ctx, spirv);
  c.order.push_front(l.key);
  c.map.emplace(l.key, std::make_pair(pipe, c.order.begin()));
  ++c.stats.compiled;
  evict(c);
  return pipe;
}

const std::shared_ptr<Allocation>& alloc_of(const FusedOperand& o) {
  return o.f ? o.f->alloc : o.i ? o.i->alloc : o.b->alloc;
}

// Inputs holding the same tensor share one binding (a mask read by a where and a cast, the same activation).
std::vector<int32_t> aliases(const Program& p, const std::vector<FusedOperand>& inputs) {
  std::vector<int32_t> alias(inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    alias[k] = static_cast<int32_t>(k);
    for (std::size_t j = 0; j < k; ++j)
      if (alloc_of(inputs[j]) == alloc_of(inputs[k]) && p.inputs[j].kind == p.inputs[k].kind &&
          p.inputs[j].shape == p.inputs[k].shape) {
        alias[k] = static_cast<int32_t>(j);
        break;
      }
  }
  return alias;
}

void count(Context& ctx, uint64_t FusedChainStats::*counter) {
  FusedChainCache& c = cache_of(ctx);
  std::lock_guard lock(c.mutex);
  ++(c.stats.*counter);
}

// One dispatch of p's shader (p fits: fused_fits).
VulkanTensor<float> dispatch(const std::shared_ptr<Context>& ctx, const Program& p, const FusedLayout& l,
                             const std::vector<FusedOperand>& inputs) {
  const int64_t n = p.shape.num_elements();
  const auto pipe = pipeline_for(*ctx, p, l);
  const uint32_t groups = groups_for(*ctx, static_cast<uint64_t>(n), kFusedWorkgroup);
  auto y = empty<float>(ctx, p.reduce_all ? Shape{static_cast<int64_t>(groups)} : p.shape);
  std::vector<BufferArg> args{out(y)};
  for (std::size_t k = 0; k < inputs.size(); ++k)
    if (l.alias[k] == static_cast<int32_t>(k)) args.push_back({alloc_of(inputs[k]), false});
  {
    std::lock_guard lock(ctx->mutex());
    ctx->stream().dispatch(pipe->pipeline(), args, l.push.data(), static_cast<uint32_t>(l.push.size() * 4), groups);
    ctx->stream().retain(pipe);
  }
  if (!p.reduce_all) return y;
  auto sum = reduce_all(y, ReduceOp::Sum);
  return *p.reduce_all == ReduceOp::Mean ? scalar(sum, ScalarOp::Div, static_cast<double>(n)) : sum;
}

// p (n > 0; no reduction but Sum / Mean) as one kernel; over the bindings, a sub-expression first as a kernel of its
// own (fused_chain_split.hpp) until the rest fits; over the push-constant words, op by op.
VulkanTensor<float> run(const std::shared_ptr<Context>& ctx, Program p, std::vector<FusedOperand> inputs) {
  bool split = false;
  for (;;) {
    const FusedLayout l = fused_layout(p, aliases(p, inputs));
    if (fused_fits(p, l)) {
      if (split) count(*ctx, &FusedChainStats::split);
      return dispatch(ctx, p, l, inputs);
    }
    const auto r = fused_bindings(l) > kMaxFusedInputs ? split_point(p, l.alias, kMaxFusedInputs) : std::nullopt;
    if (!r) {
      count(*ctx, &FusedChainStats::unfused);
      return fusion::replay<Vulkan>(p, inputs, VulkanDevice{ctx});
    }
    // Register r computed by its own kernel, then read by the rest as an input (the instructions only r needed
    // drop out with the inputs only they read).
    std::vector<std::size_t> map;
    const Program sub = extract_program(p, *r, map);
    std::vector<FusedOperand> sub_inputs;
    for (std::size_t j : map) sub_inputs.push_back(inputs[j]);
    FusedOperand value;
    value.f = run(ctx, sub, std::move(sub_inputs));
    fusion::Instr& i = p.instrs[static_cast<std::size_t>(*r)];
    i.kind = fusion::InstrKind::Input;
    i.op = static_cast<int32_t>(p.inputs.size());
    i.a = i.b = i.c = -1;
    p.inputs.push_back({fusion::InputKind::Float, i.shape});
    inputs.push_back(std::move(value));
    Program rest = extract_program(p, p.out, map);
    rest.shape = p.shape;
    rest.reduce_all = p.reduce_all;
    std::vector<FusedOperand> rest_inputs;
    for (std::size_t j : map) rest_inputs.push_back(inputs[j]);
    p = std::move(rest);
    inputs = std::move(rest_inputs);
    split = true;
  }
}

}  // namespace

VulkanTensor<float> fused_chain(const Program& p, const std::vector<FusedOperand>& inputs,
                                const std::shared_ptr<Context>& device) {
  if (p.instrs.empty() || p.out != static_cast<int32_t>(p.instrs.size() - 1))
    throw ArgumentError(fmt::format("fused_chain: the output must be the last of {} instructions", p.instrs.size()));
  if (inputs.size() != p.inputs.size())
    throw ArgumentError(fmt::format("fused_chain: {} inputs for a program of {}", inputs.size(), p.inputs.size()));
  // The inputs' context; `device` only for a program without inputs (constants).
  std::shared_ptr<Context> ctx;
  for (const auto& o : inputs) {
    const auto& c = o.f ? o.f->ctx : o.i ? o.i->ctx : o.b->ctx;
    if (ctx && c != ctx) throw ArgumentError("fused_chain: inputs on different Vulkan contexts");
    ctx = c;
  }
  if (!ctx) ctx = device;
  // Only the Sum and Mean of everything are fused (Fusion<B> asks for no other): others reduce the chain's output.
  if (p.reduce_all && *p.reduce_all != ReduceOp::Sum && *p.reduce_all != ReduceOp::Mean) {
    Program q = p;
    q.reduce_all.reset();
    return reduce_all(fused_chain(q, inputs, ctx), *p.reduce_all);
  }
  const int64_t n = p.shape.num_elements();
  check_elements(n, "fused chain");
  if (n == 0) {
    if (!p.reduce_all) return empty<float>(ctx, p.shape);
    return full<float>(ctx, Shape{1}, *p.reduce_all == ReduceOp::Sum ? 0.0 : std::numeric_limits<double>::quiet_NaN());
  }
  return run(ctx, p, inputs);
}

void set_max_fused_pipelines(Context& ctx, std::size_t limit) {
  FusedChainCache& c = cache_of(ctx);
  std::lock_guard lock(c.mutex);
  c.limit = std::max<std::size_t>(limit, 1);  // the pipeline being dispatched stays
  evict(c);
}

FusedChainStats fused_chain_stats(Context& ctx) {
  FusedChainCache& c = cache_of(ctx);
  std::lock_guard lock(c.mutex);
  FusedChainStats s = c.stats;
  s.cached = c.map.size();
  return s;
}

}  // namespace ember::vk
