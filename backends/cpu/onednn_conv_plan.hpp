#pragma once
// oneDNN convolution plans, shared by the forward (onednn_conv.cpp) and the backward (onednn_conv_backward.cpp):
// each distinct problem (shapes, options, bias, the output's channel count) gets a Plan, oneDNN's primitive
// descriptors and primitives for the forward pass and, on first use, both backward passes, kept per thread (oneDNN
// primitives may run concurrently but the cache map must not be shared unlocked; a thread-local map needs no lock).
// The primitives choose their own (blocked) layouts through format_tag::any; Ember's NCHW / OIHW buffers are
// reordered into them on the way in and back on the way out (the Reorders below), which costs a few percent of the
// convolution and keeps every other op on plain row-major tensors. Threads: Ember's pool splits the work and each
// part runs oneDNN on ONE OpenMP thread with its own thread's plan (onednn_slices.hpp says why).
#include <dnnl.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "backends/cpu/allocator.hpp"
#include "backends/cpu/onednn.hpp"
#include "engine/backend/conv_geometry.hpp"

namespace ember::cpu::onednn::detail {

using dnnl::memory;
using Tag = memory::format_tag;
using Dt = memory::data_type;

dnnl::engine& engine();

// The forward's weights in the primitive's blocked layout, kept while the tensor they came from lives. A CPU
// buffer is never written after the op that made it returns (cpu_tensor.hpp), so a live buffer still holds what
// was reordered; the weak_ptr tells a live buffer from a new one that the allocator placed at the same address
// (a dead buffer's control block stays while the weak_ptr does, so no new buffer can share it).
struct CachedWeights {
  std::weak_ptr<Buffer> source;
  const float* data;  // where in the buffer: a channel slice's weights are a range of the whole tensor's
  memory blocked;
};
constexpr std::size_t kCachedWeightsPerPlan = 8;  // a ResNet runs up to 4 convolutions of one shape per stage

// One reorder between a plain (Ember) layout and a primitive's, with the blocked buffer on the primitive's side;
// empty (no reorder, no buffer) where the primitive takes the plain layout itself.
struct Reorder {
  std::optional<dnnl::reorder> prim;
  memory blocked;
};

// The backward's reorders and blocked buffers, made once with its primitives (h-gemm, issue 15). Made per call, as
// before, each cost a reorder primitive descriptor, a fresh allocation and the page faults of first touching it:
// five per training step of every convolution layer.
struct BackwardReorders {
  Reorder grad_in;    // grad [N, Cout, Ho, Wo] -> backward data's diff_dst
  Reorder grad_in_w;  // the same grad -> backward weights' diff_dst, where it wants another layout than the above
  Reorder w_in;       // w -> backward data's weights
  Reorder gx_out;     // backward data's diff_src -> grad input
  Reorder x_in;       // x -> backward weights' src
  Reorder gw_out;     // backward weights' diff_weights -> grad weight
};

// Plain (Ember) layouts of one problem, and everything oneDNN built for it.
struct Plan {
  memory::desc x, w, b, y;
  dnnl::algorithm algorithm = dnnl::algorithm::convolution_direct;  // of all three passes (winograd_pays)
  dnnl::convolution_forward::primitive_desc fwd_pd;
  dnnl::convolution_forward fwd;
  // The forward's reorders between the plain layouts and the primitive's and the blocked buffers they fill, made
  // once with the plan: made per call they cost a reorder primitive descriptor and an allocation each, ~20 % of a
  // small model's inference (bench/README.md). Empty where the primitive takes the plain layout itself.
  std::optional<dnnl::reorder> src_in, weights_in, dst_out;
  memory src_blocked, dst_blocked;
  std::vector<CachedWeights> weights;
  // The forward's memory objects over Ember's buffers, made once and pointed at each call's buffers through
  // set_data_handle, and the argument map that names them: made per call they were ~10 % of the batch-1 digits
  // CNN's inference (every dnnl::memory is an aligned allocation inside oneDNN, and the map's nodes more).
  memory user_x, user_y, user_b, dst_plain;
  std::unordered_map<int, memory> fwd_args;
  uint64_t dst_writes = 0;  // how many forwards wrote dst_blocked (a kept BlockedOutput names the one it holds)
  bool has_backward = false;
  dnnl::convolution_backward_data::primitive_desc bwd_data_pd;
  dnnl::convolution_backward_data bwd_data;
  dnnl::convolution_backward_weights::primitive_desc bwd_weights_pd;
  dnnl::convolution_backward_weights bwd_weights;
  BackwardReorders bwd_reorders;
};

using Key = std::array<int64_t, 20>;

// Whether Winograd F(4x4, 3x3) pays for this problem (onednn_conv_plan.cpp says where it does).
bool winograd_pays(const Conv2dGeometry& g, const Conv2dOptions& o);
Key key_of(const Conv2dGeometry& g, const Conv2dOptions& o, bool has_bias, PostOp post, int64_t y_channels);
// The cached plan of this problem on this thread, made on first use (with its backward primitives when `backward`);
// nullptr when oneDNN cannot run it (the caller falls back). y_channels: the channel count of the tensor the output
// lies in, 0 for g.cout (a plan for a range of the output's channels writes them strided). A plan with a post-op
// serves only forwards (backward asks for PostOp::None).
Plan* plan(const Conv2dGeometry& g, const Conv2dOptions& o, bool has_bias, bool backward, PostOp post,
           int64_t y_channels = 0);
// Forgets this thread's kept blocked output when its producer's plan is replaced (onednn_conv.cpp, with the kept
// output).
void forget_blocked_output_of(const Plan* p);

// The reorder primitive from one layout to another.
dnnl::reorder reorder_between(const memory::desc& from, const memory::desc& to);
// A memory object over an Ember buffer.
memory wrap(const memory::desc& d, const float* p);
// One thread's stream, made once (a stream per call showed in the batch-1 profile).
dnnl::stream& thread_stream();
// `user` in the layout the primitive reads: itself, or the reorder's buffer filled from it.
memory read_through(Reorder& r, const memory& user, dnnl::stream& s);
// Where the primitive writes a result that ends in `user` (written back by write_back).
memory written_to(Reorder& r, const memory& user);
void write_back(Reorder& r, memory& user, dnnl::stream& s);

// Whether oneDNN takes the problem at all (on, and no empty dim).
bool usable(const Conv2dGeometry& g);
// Images [lo, hi) of a problem.
Conv2dGeometry slice(Conv2dGeometry g, int64_t lo, int64_t hi);
// Fewer input channels per group: conv2d_backward's im2col route (onednn_conv_im2col.cpp).
inline constexpr int64_t kMinBackwardChannels = 8;

}  // namespace ember::cpu::onednn::detail
