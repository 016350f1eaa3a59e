// ember::compile on CUDA (issue 14): a captured training step as one CUDA graph, replayed by one cudaGraphLaunch
// (forward, backward and the Adam updates) instead of the tape's closures issuing every op again. It is
// Cuda::build_step_plan (engine/compile/step_plan.hpp), so `ember::compile<Autodiff<Capture<Cuda>>>(...)` replays
// graphs with no change to the step; the design follows the Vulkan plan (backends/vulkan/compiled_step_plan.cpp).
// The graph is built right after the capture, by running the tape's closures once more while the device's stream
// captures (cudaStreamBeginCapture); graph_capture.hpp says what the ops do differently meanwhile.
//  * State: the params and optimizer moments the step reads get device storage of the graph's own (filled with the
//    capture's results), and the graph ends with copies of the new values into it. After a replay the caller's
//    module and optimizer hold that storage: updated in place, as the CPU replay updates its cells.
//  * Inputs / outputs: the step's tensor arguments are copied into the graph's input blocks before each launch,
//    and its results copied out to fresh tensors after it.
//  * Per-step scalars: each Adam update reads its lr and bias corrections, each dropout mask its key, from the
//    graph's per-step words, which a replay fills on the host (pinned memory) and copies to the device before the
//    launch: the optimizer's report for that step, and the next key of ember's generator in the step's order, so
//    replayed masks are the ones eager steps would draw.
//  * Checks: the kernels' own index checks flag the graph's error words (zeroed before each launch, copied back
//    after it); the next replay, once the previous one finished, throws the first that is set (IndexError with the
//    eager message) before the optimizers count a step. The flagged step itself ran with the index clamped.
//  * Memory: every block the capture allocated (intermediates, temporaries) stays the graph's until it is destroyed.
// Declined (the tape replays op by op; plan_reason() says why): anything that cannot be captured: a host upload
// inside the step (a random draw other than a Bernoulli mask), a read back, a copy between devices, a cuFFT plan
// made mid-step, tensors of other backends or devices.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>

#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/runtime.cuh"
#include "engine/compile/step_plan.hpp"
#include "engine/tensor/random.hpp"

namespace ember {
namespace compile_detail {
namespace {

using cuda::Block;

// A cell's CUDA tensor, of any kind (0 Float, 1 Int, 2 Bool; -1: not a CUDA cell).
struct View {
  std::shared_ptr<Block> block;
  Shape shape;
  std::size_t bytes = 0;
  int device = -1;
  int kind = -1;
};

template <class T>
bool view_as(const CellBase& c, int kind, View& out) {
  const auto* cell = dynamic_cast<const Cell<cuda::CudaTensor<T>>*>(&c);
  if (!cell) return false;
  out.kind = kind;
  if (cell->v) {
    out.block = cell->v->buffer;
    out.shape = cell->v->shape;
    out.bytes = static_cast<std::size_t>(cell->v->numel()) * sizeof(T);
    out.device = cell->v->device();
  }
  return true;
}
View view(const CellBase& c) {
  View v;
  (void)(view_as<float>(c, 0, v) || view_as<int64_t>(c, 1, v) || view_as<uint8_t>(c, 2, v));
  return v;
}
template <class T>
bool set_as(CellBase& c, const Shape& shape, const std::shared_ptr<Block>& block) {
  auto* cell = dynamic_cast<Cell<cuda::CudaTensor<T>>*>(&c);
  if (!cell) return false;
  cell->v = cuda::CudaTensor<T>(block, shape);
  return true;
}
// The cell now holds a tensor of `shape` over `block`.
void set_cell(CellBase& c, const Shape& shape, const std::shared_ptr<Block>& block) {
  (void)(set_as<float>(c, shape, block) || set_as<int64_t>(c, shape, block) || set_as<uint8_t>(c, shape, block));
}
const char* kind_name(int kind) { return kind == 0 ? "float" : kind == 1 ? "int" : "bool"; }

void copy_d2d(const std::shared_ptr<Block>& dst, const std::shared_ptr<Block>& src, std::size_t bytes,
              cudaStream_t stream) {
  if (!bytes) return;
  cuda::check(cudaMemcpyAsync(dst->ptr, src->ptr, bytes, cudaMemcpyDeviceToDevice, stream),
              "cudaMemcpyAsync(compiled step)");
}

// Pinned host memory (the per-step words the host writes, the error words it reads back).
struct Pinned {
  void* p = nullptr;
  explicit Pinned(std::size_t bytes) {
    cuda::check(cudaMallocHost(&p, std::max<std::size_t>(bytes, 16)), "cudaMallocHost");
  }
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
  ~Pinned() { cudaFreeHost(p); }
};

class CudaStepPlan final : public StepPlan {
 public:
  int device = 0;
  std::unique_ptr<cuda::GraphCapture> sink;  // what the capture asked for: words, checks, the blocks it holds
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaEvent_t done = nullptr;
  std::unique_ptr<Pinned> words, errors;
  std::vector<View> state, inputs, outputs;  // the graph's state storage and input blocks; the results it writes
  // What each per-step block holds, in order: Adam update i's scalars (i >= 0), or a random key (-1).
  std::vector<int> blocks;
  std::size_t adam_updates = 0;
  std::size_t nodes = 0, kernels = 0, copies = 0, held_bytes = 0;

  ~CudaStepPlan() override {
    // The blocks the graph holds go back to the allocator only once its last launch finished. Best effort: a
    // destructor cannot report a failure (and leaves none behind for the next check_launch to misreport).
    if (done) cudaEventSynchronize(done);
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    if (done) cudaEventDestroy(done);
    cudaGetLastError();
  }

  void settle() override {
    // The previous replay reads the per-step words the next one rewrites: it must have finished. Its checks are
    // then final; a failed one is reported once.
    if (!pending_) return;
    pending_ = false;
    cuda::context(device);
    cuda::check(cudaEventSynchronize(done), "cudaEventSynchronize(compiled step)");
    auto* flags = static_cast<int64_t*>(errors->p);
    const auto& reports = sink->reports();
    for (std::size_t k = 0; k < reports.size(); ++k) {
      if (flags[2 * k] == 0) continue;
      const int64_t offending = flags[2 * k + 1];
      std::memset(flags, 0, 2 * sizeof(int64_t) * reports.size());  // reported once
      reports[k](offending);
    }
  }

  void check_call(const CellList& now, const std::vector<const CellBase*>& args) const override {
    if (now.size() != state.size() || args.size() != inputs.size())
      throw ArgumentError("compile (cuda graph): the replay does not match the captured step's layout");
    for (std::size_t i = 0; i < state.size(); ++i) {
      const View v = view(*now[i]);
      if (v.kind != state[i].kind || v.bytes != state[i].bytes || (v.bytes && v.device != device))
        throw ArgumentError(fmt::format("compile (cuda graph): state tensor {} is not the captured {} tensor {} on "
                                        "the graph's device",
                                        i, kind_name(state[i].kind), state[i].shape.to_string()));
    }
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const View a = view(*args[k]);
      if (a.kind != inputs[k].kind || a.shape != inputs[k].shape || (a.bytes && a.device != device))
        throw ArgumentError(fmt::format("compile (cuda graph): argument {} is not a {} tensor {} on the graph's "
                                        "device",
                                        k, kind_name(inputs[k].kind), inputs[k].shape.to_string()));
    }
  }

  void replay(const CellList& now, const std::vector<const CellBase*>& args, const std::vector<AdamStepArgs>& adam,
              const CellList& outs) override {
    // The state and arguments passed check_call (compile calls it before the optimizers count the step).
    if (adam.size() != adam_updates || outs.size() != outputs.size())
      throw ArgumentError("compile (cuda graph): the replay does not match the captured step's layout");
    cuda::DeviceContext& ctx = cuda::context(device);
    // Everything that can fail on the host before any work is queued: the results' blocks.
    std::vector<std::shared_ptr<Block>> results;
    for (const View& o : outputs) results.push_back(cuda::allocate(o.bytes, device));
    for (std::size_t i = 0; i < state.size(); ++i) {
      const View v = view(*now[i]);
      if (v.block != state[i].block) {  // the caller replaced its module or optimizer state: read it as it is
        copy_d2d(state[i].block, v.block, v.bytes, ctx.stream);
        set_cell(*now[i], state[i].shape, state[i].block);
      }
    }
    for (std::size_t k = 0; k < inputs.size(); ++k)  // stream-ordered: the caller may drop its arguments at once
      copy_d2d(inputs[k].block, view(*args[k]).block, inputs[k].bytes, ctx.stream);
    write_words(adam);
    // From here on the device may read the pinned words: whatever fails below, the next call waits for what was
    // queued before it rewrites them.
    struct Queued {
      CudaStepPlan& plan;
      cudaStream_t stream;
      ~Queued() {
        plan.pending_ = cudaEventRecord(plan.done, stream) == cudaSuccess;
        if (!plan.pending_) cudaGetLastError();  // the failure that got here is what the caller sees
      }
    } queued{*this, ctx.stream};
    if (sink->word_bytes())
      cuda::check(cudaMemcpyAsync(sink->words_device(), words->p, sink->word_bytes(), cudaMemcpyHostToDevice,
                                  ctx.stream),
                  "cudaMemcpyAsync(per-step words)");
    const std::size_t error_bytes = 2 * sizeof(int64_t) * sink->reports().size();
    if (error_bytes)
      cuda::check(cudaMemsetAsync(sink->errors_device(), 0, error_bytes, ctx.stream), "cudaMemsetAsync(checks)");
    cuda::check(cudaGraphLaunch(exec, ctx.stream), "cudaGraphLaunch(compiled step)");
    if (error_bytes)
      cuda::check(cudaMemcpyAsync(errors->p, sink->errors_device(), error_bytes, cudaMemcpyDeviceToHost, ctx.stream),
                  "cudaMemcpyAsync(checks)");
    for (std::size_t j = 0; j < outputs.size(); ++j) {
      copy_d2d(results[j], outputs[j].block, outputs[j].bytes, ctx.stream);
      set_cell(*outs[j], outputs[j].shape, results[j]);
    }
  }

  // A graph is launched by replay() only, which writes its words itself.
  bool host_submits() const override { return false; }
  void prepare(const std::vector<AdamStepArgs>&) override {
    throw ArgumentError("compile (cuda graph): a CUDA graph is launched by Ember's replays only");
  }

  // One step's per-step words, in pinned memory, which the replay copies to the device before the launch: each
  // Adam update's scalars, and the keys of the masks in the step's order, as the eager step's draws take them (one
  // generator word per Bernoulli mask).
  void write_words(const std::vector<AdamStepArgs>& adam) {
    auto* host = static_cast<unsigned char*>(words->p);
    std::lock_guard lock(global_rng().mu);
    for (std::size_t k = 0; k < blocks.size(); ++k) {
      const auto& at = sink->blocks()[k];
      if (blocks[k] >= 0) {
        const cuda::AdamConsts c = cuda::adam_consts(adam[static_cast<std::size_t>(blocks[k])]);
        std::memcpy(host + at.offset, &c, std::min(at.bytes, sizeof c));
      } else {
        const uint64_t key = global_rng().rng.next();
        const uint32_t w[2] = {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)};
        std::memcpy(host + at.offset, w, std::min(at.bytes, sizeof w));
      }
    }
  }

  std::string describe() const override {
    return fmt::format("cuda graph: {} nodes ({} kernels, {} copies), {} state tensors, {} inputs, {} per-step "
                       "scalar blocks, {} checks, {} KiB of intermediates and constants held",
                       nodes, kernels, copies, state.size(), inputs.size(), blocks.size(), sink->reports().size(),
                       held_bytes / 1024);
  }

 private:
  bool pending_ = false;  // a replay was launched and not settled yet
};

// Ends the stream's capture on every path; a capture that failed leaves no graph behind.
struct CaptureScope {
  cuda::DeviceContext& ctx;
  bool open = false;
  ~CaptureScope() {
    if (!open) return;
    ctx.capture = nullptr;
    cudaGraph_t g = nullptr;
    cudaStreamEndCapture(ctx.stream, &g);
    if (g) cudaGraphDestroy(g);
    cudaGetLastError();  // the capture's failure is reported by the exception that got here
  }
};

}  // namespace
}  // namespace compile_detail

using compile_detail::CellBase;
using compile_detail::CellList;
using compile_detail::copy_d2d;
using compile_detail::CudaStepPlan;
using compile_detail::set_cell;
using compile_detail::view;
using compile_detail::View;

std::unique_ptr<compile_detail::StepPlan> Cuda::build_step_plan(compile_detail::StepPlanParts& parts,
                                                                std::string& why) {
  auto p = std::make_unique<CudaStepPlan>();
  // Every cell the graph binds must be a CUDA tensor of one device.
  int device = -1;
  for (const CellList* list : {&parts.state_in, &parts.state_out, &parts.inputs, &parts.outputs})
    for (const auto& c : *list) {
      const View v = c ? view(*c) : View{};
      if (v.kind < 0) {
        why = "a state, argument or result tensor is not a CUDA tensor: the step replays op by op";
        return nullptr;
      }
      if (!v.bytes) continue;  // an empty tensor has no device to agree on
      if (device < 0) device = v.device;
      if (v.device != device) {
        why = "the step's tensors live on more than one CUDA device: it replays op by op";
        return nullptr;
      }
    }
  if (device < 0 || parts.state_in.size() != parts.state_out.size()) {
    why = "the step has no CUDA state to replay into";
    return nullptr;
  }
  p->device = device;
  compile_detail::PlanBuildScope scope(parts);  // the cells it rebinds if it declines; ember's generator always
  try {
    cuda::DeviceContext& ctx = cuda::context(device);
    if (ctx.capture.load()) throw ArgumentError("another CUDA graph is being captured on this device");
    // The graph's state storage, holding the state the capture's eager run left (the values a first replay reads).
    for (const auto& c : parts.state_out) {
      const View o = view(*c);
      auto storage = cuda::allocate(o.bytes, device);
      copy_d2d(storage, o.block, o.bytes, ctx.stream);
      p->state.push_back({storage, o.shape, o.bytes, device, o.kind});
    }
    for (std::size_t i = 0; i < parts.state_in.size(); ++i)
      set_cell(*parts.state_in[i], p->state[i].shape, p->state[i].block);
    for (const auto& c : parts.inputs) {
      View a = view(*c);
      a.block = cuda::allocate(a.bytes, device);
      a.device = device;
      set_cell(*c, a.shape, a.block);
      p->inputs.push_back(std::move(a));
    }
    p->sink = std::make_unique<cuda::GraphCapture>(cuda::allocate(cuda::GraphCapture::kWordBytes, device),
                                                   cuda::allocate(16 * cuda::GraphCapture::kChecks, device));
    // The cells' blocks before the capture (not owned: each eager intermediate goes back to the allocator as the
    // capture rewrites its cell, for the capture's own allocations to reuse). Those no op rewrites are constants
    // the step made, which the graph reads: it holds them.
    std::vector<const cuda::Block*> before;
    for (const auto& c : parts.tape.cells) before.push_back(view(*c).block.get());

    compile_detail::CaptureScope capturing{ctx};
    cuda::check(cudaStreamBeginCapture(ctx.stream, cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture");
    capturing.open = true;
    ctx.capture = p->sink.get();
    p->blocks = compile_detail::run_ops_into_plan(parts.tape, [&] { return p->sink->blocks().size(); });
    p->adam_updates = parts.tape.adam.size();
    for (std::size_t k = 0; k < parts.tape.cells.size(); ++k) {
      auto b = view(*parts.tape.cells[k]).block;
      if (b && b.get() == before[k]) p->sink->keep.push_back(std::move(b));
    }
    // Every replay ends by copying the new state into the storage the next one reads, and the results are copied
    // out after it. A new state value or a result that is itself some state storage (a step that swaps two state
    // tensors, or returns a param as it was) is copied aside first, so that no copy reads storage an earlier one
    // already rewrote.
    std::set<const cuda::Block*> storage;
    for (const View& v : p->state) storage.insert(v.block.get());
    const auto source = [&](View v, std::size_t own) {
      if (v.block && storage.count(v.block.get()) && (own == SIZE_MAX || v.block != p->state[own].block)) {
        auto aside = cuda::allocate(v.bytes, device);  // held by the graph (allocated while capturing)
        copy_d2d(aside, v.block, v.bytes, ctx.stream);
        v.block = std::move(aside);
      }
      if (v.block) p->sink->keep.push_back(v.block);  // a value the step did not make (an argument it stored) too
      return v;
    };
    std::vector<View> new_state;
    for (std::size_t i = 0; i < parts.state_out.size(); ++i) new_state.push_back(source(view(*parts.state_out[i]), i));
    for (const auto& c : parts.outputs) p->outputs.push_back(source(view(*c), SIZE_MAX));
    for (std::size_t i = 0; i < new_state.size(); ++i)
      if (new_state[i].block != p->state[i].block)
        copy_d2d(p->state[i].block, new_state[i].block, new_state[i].bytes, ctx.stream);
    ctx.capture = nullptr;
    capturing.open = false;
    cuda::check(cudaStreamEndCapture(ctx.stream, &p->graph), "cudaStreamEndCapture");
    if (p->sink->interfered)
      throw ArgumentError("another thread ran CUDA work on the device while the graph was captured");
    cuda::check(cudaGraphInstantiate(&p->exec, p->graph, 0), "cudaGraphInstantiate(compiled step)");
    cuda::check(cudaEventCreateWithFlags(&p->done, cudaEventDisableTiming), "cudaEventCreate");
    cuda::check(cudaGraphGetNodes(p->graph, nullptr, &p->nodes), "cudaGraphGetNodes");
    std::vector<cudaGraphNode_t> nodes(p->nodes);
    if (p->nodes) cuda::check(cudaGraphGetNodes(p->graph, nodes.data(), &p->nodes), "cudaGraphGetNodes");
    for (cudaGraphNode_t n : nodes) {
      cudaGraphNodeType t{};
      if (cudaGraphNodeGetType(n, &t) != cudaSuccess) {
        cudaGetLastError();
        continue;
      }
      p->kernels += t == cudaGraphNodeTypeKernel;
      p->copies += t == cudaGraphNodeTypeMemcpy;
    }
    std::set<const cuda::Block*> held;
    for (const auto& b : p->sink->keep)
      if (held.insert(b.get()).second) p->held_bytes += b->capacity;
    p->words = std::make_unique<compile_detail::Pinned>(cuda::GraphCapture::kWordBytes);  // written by each replay
    p->errors = std::make_unique<compile_detail::Pinned>(16 * cuda::GraphCapture::kChecks);
    // After the build the caller's module and optimizer hold the graph's state storage.
    for (std::size_t i = 0; i < parts.state_out.size(); ++i)
      set_cell(*parts.state_out[i], p->state[i].shape, p->state[i].block);
  } catch (const std::exception& ex) {
    scope.restore_cells();
    why = fmt::format("no CUDA graph (the step replays op by op): {}", ex.what());
    return nullptr;
  }
  return p;
}

}  // namespace ember
