// oneDNN convolutions (onednn.hpp). Each distinct problem (shapes, options, bias) gets a Plan: oneDNN's primitive
// descriptors and primitives for the forward pass and, on first use, both backward passes, kept per thread (oneDNN
// primitives may run concurrently but the cache map must not be shared unlocked; a thread-local map needs no lock).
// The primitives choose their own (blocked) layouts through format_tag::any; Ember's NCHW / OIHW buffers are
// reordered into them on the way in and back on the way out, which costs a few percent of the convolution and
// keeps every other op on plain row-major tensors.
#include <dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "backends/cpu/allocator.hpp"
#include "backends/cpu/onednn.hpp"
#include "backends/cpu/onednn_slices.hpp"
#include "backends/cpu/parallel.hpp"
#include "engine/backend/conv_geometry.hpp"
#include "engine/backend/pool_geometry.hpp"

namespace ember::cpu::onednn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Dt = memory::data_type;

bool default_enabled() {
  const char* env = std::getenv("EMBER_ONEDNN");
  return !(env && std::strcmp(env, "0") == 0);
}
std::atomic<bool> g_enabled{default_enabled()};

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

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

bool winograd_pays(const Conv2dGeometry& g, const Conv2dOptions& o);

// The output tensor's channel count (y_channels: g.cout, or more for a slice of the output channels) and, last,
// whether the plan may be Winograd (set_winograd switches it at run time; each choice its plans).
Key key_of(const Conv2dGeometry& g, const Conv2dOptions& o, bool has_bias, PostOp post, int64_t y_channels) {
  return {g.n, g.c, g.h, g.w, g.cout, g.kh, g.kw, o.stride[0], o.stride[1], o.padding[0], o.padding[1],
          o.dilation[0], o.dilation[1], o.groups, has_bias ? 1 : 0, g.ho, g.wo, static_cast<int64_t>(post),
          y_channels, winograd_pays(g, o) ? 1 : 0};
}

struct Conv {
  memory::dims strides, dilates, pad;
};
Conv conv_params(const Conv2dGeometry& g) {
  // oneDNN counts dilation from 0 (no dilation), PyTorch from 1.
  return {{g.sh, g.sw}, {g.dh - 1, g.dw - 1}, {g.ph, g.pw}};
}

memory::desc any(const memory::desc& plain) { return memory::desc(plain.dims(), Dt::f32, Tag::any); }

bool default_winograd() {
  const char* env = std::getenv("EMBER_CONV_WINOGRAD");
  return !(env && std::strcmp(env, "0") == 0);
}

// Whether oneDNN's Winograd F(4x4, 3x3) kernels (jit_wino_4x3, all three passes) beat its direct ones on this
// problem. Winograd does 2.25-4x fewer multiplications per output tile but pays for transforming input, weights
// and output tiles. Measured on one AVX-512 core (oneDNN 2.6, 2026-11-25; bench/README.md, "Winograd convolutions,
// the first layer per image, huge pages"), it runs fwd + bwd data + bwd weights in ~0.5x the direct time at 32->64
// @16 and 64->128 @8 (batch 32) and 256->256 @8, ~0.7x at 16->32 @16, but 1.1-2x slower with fewer than 16 input
// or 32 output channels (3->32, 8->16, 16->16) or under ~256 output pixels per call (64->64 @8 at batch 1). Its
// results differ from the direct kernels' by ~1e-6 relative to the largest value (the transforms round
// differently); EMBER_CONV_WINOGRAD=0 keeps every convolution direct, e.g. to reproduce PyTorch's (direct) bits.
std::atomic<bool> g_winograd{default_winograd()};
std::atomic<int64_t> g_winograd_plans{0};
std::atomic<int64_t> g_channel_parts{0};

bool winograd_pays(const Conv2dGeometry& g, const Conv2dOptions& o) {
  const bool shape = o.groups == 1 && g.kh == 3 && g.kw == 3 && g.sh == 1 && g.sw == 1 && g.dh == 1 && g.dw == 1;
  return g_winograd.load(std::memory_order_relaxed) && shape && g.c >= 16 && g.cout >= 32 &&
         g.n * g.ho * g.wo >= 256;
}

dnnl::reorder reorder_between(const memory::desc& from, const memory::desc& to) {
  return dnnl::reorder(dnnl::reorder::primitive_desc(engine(), from, engine(), to));
}

// The output pass's ReLU as a post-op (alpha 0: the plain max(x, 0)).
dnnl::primitive_attr attr_of(PostOp post) {
  dnnl::primitive_attr attr;
  if (post == PostOp::Relu) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(ops);
  }
  return attr;
}

// y_channels: the channel count of the tensor the output lies in (> g.cout: this plan writes a range of its
// channels, the plain y strided as that tensor is).
std::unique_ptr<Plan> make_plan(const Conv2dGeometry& g, const Conv2dOptions& o, bool has_bias, PostOp post,
                                dnnl::algorithm algorithm, int64_t y_channels) {
  auto p = std::make_unique<Plan>();
  p->algorithm = algorithm;
  p->x = memory::desc({g.n, g.c, g.h, g.w}, Dt::f32, Tag::nchw);
  p->w = o.groups == 1 ? memory::desc({g.cout, g.cg, g.kh, g.kw}, Dt::f32, Tag::oihw)
                       : memory::desc({o.groups, g.cout / o.groups, g.cg, g.kh, g.kw}, Dt::f32, Tag::goihw);
  p->b = memory::desc({g.cout}, Dt::f32, Tag::x);
  p->y = y_channels == g.cout ? memory::desc({g.n, g.cout, g.ho, g.wo}, Dt::f32, Tag::nchw)
                               : memory::desc({g.n, g.cout, g.ho, g.wo}, Dt::f32,
                                              memory::dims{y_channels * g.ho * g.wo, g.ho * g.wo, g.wo, 1});
  const Conv c = conv_params(g);
  const auto d = has_bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, algorithm, any(p->x),
                                                            any(p->w), p->b, any(p->y), c.strides, c.dilates, c.pad,
                                                            c.pad)
                          : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, algorithm, any(p->x),
                                                            any(p->w), any(p->y), c.strides, c.dilates, c.pad, c.pad);
  p->fwd_pd = dnnl::convolution_forward::primitive_desc(d, attr_of(post), engine());
  p->fwd = dnnl::convolution_forward(p->fwd_pd);
  if (p->fwd_pd.src_desc() != p->x) {
    p->src_in = reorder_between(p->x, p->fwd_pd.src_desc());
    p->src_blocked = memory(p->fwd_pd.src_desc(), engine());
  }
  if (p->fwd_pd.weights_desc() != p->w) p->weights_in = reorder_between(p->w, p->fwd_pd.weights_desc());
  if (p->fwd_pd.dst_desc() != p->y) {
    p->dst_out = reorder_between(p->fwd_pd.dst_desc(), p->y);
    p->dst_blocked = memory(p->fwd_pd.dst_desc(), engine());
  }
  p->user_x = memory(p->x, engine(), DNNL_MEMORY_NONE);
  p->user_y = memory(p->y, engine(), DNNL_MEMORY_NONE);
  p->user_b = memory(p->b, engine(), DNNL_MEMORY_NONE);
  p->fwd_args = {{DNNL_ARG_SRC, p->src_in ? p->src_blocked : p->user_x}};
  if (has_bias) p->fwd_args.emplace(DNNL_ARG_BIAS, p->user_b);
  return p;
}

// plain -> want, and produced -> plain: a reorder and its blocked buffer, or nothing where the layouts agree.
Reorder reorder_into(const memory::desc& plain, const memory::desc& want) {
  if (want == plain) return {};
  return {reorder_between(plain, want), memory(want, engine())};
}
Reorder reorder_out_of(const memory::desc& produced, const memory::desc& plain) {
  if (produced == plain) return {};
  return {reorder_between(produced, plain), memory(produced, engine())};
}
// `user` in the layout the primitive reads: itself, or the reorder's buffer filled from it.
memory read_through(Reorder& r, const memory& user, dnnl::stream& s) {
  if (!r.prim) return user;
  r.prim->execute(s, const_cast<memory&>(user), r.blocked);
  return r.blocked;
}
// Where the primitive writes a result that ends in `user` (written back by write_back).
memory written_to(Reorder& r, const memory& user) { return r.prim ? r.blocked : user; }
void write_back(Reorder& r, memory& user, dnnl::stream& s) {
  if (r.prim) r.prim->execute(s, r.blocked, user);
}

void add_backward(Plan& p, const Conv2dGeometry& g, bool has_bias) {
  const Conv c = conv_params(g);
  const dnnl::convolution_backward_data::desc dd(p.algorithm, any(p.x), any(p.w), any(p.y), c.strides, c.dilates,
                                                 c.pad, c.pad);
  p.bwd_data_pd = dnnl::convolution_backward_data::primitive_desc(dd, engine(), p.fwd_pd);
  p.bwd_data = dnnl::convolution_backward_data(p.bwd_data_pd);
  const auto wd = has_bias ? dnnl::convolution_backward_weights::desc(p.algorithm, any(p.x), any(p.w), p.b, any(p.y),
                                                                     c.strides, c.dilates, c.pad, c.pad)
                           : dnnl::convolution_backward_weights::desc(p.algorithm, any(p.x), any(p.w), any(p.y),
                                                                     c.strides, c.dilates, c.pad, c.pad);
  p.bwd_weights_pd = dnnl::convolution_backward_weights::primitive_desc(wd, engine(), p.fwd_pd);
  p.bwd_weights = dnnl::convolution_backward_weights(p.bwd_weights_pd);
  BackwardReorders& r = p.bwd_reorders;
  r.grad_in = reorder_into(p.y, p.bwd_data_pd.diff_dst_desc());
  if (p.bwd_weights_pd.diff_dst_desc() != p.bwd_data_pd.diff_dst_desc())
    r.grad_in_w = reorder_into(p.y, p.bwd_weights_pd.diff_dst_desc());
  r.w_in = reorder_into(p.w, p.bwd_data_pd.weights_desc());
  r.gx_out = reorder_out_of(p.bwd_data_pd.diff_src_desc(), p.x);
  r.x_in = reorder_into(p.x, p.bwd_weights_pd.src_desc());
  r.gw_out = reorder_out_of(p.bwd_weights_pd.diff_weights_desc(), p.w);
  p.has_backward = true;
}

void forget_blocked_output_of(const Plan* p);  // below, with the blocked output it forgets

// The cached plan of this problem, made on first use; nullptr when oneDNN cannot run it (the caller falls back).
// A plan with a post-op serves only forwards (backward asks for PostOp::None).
Plan* plan(const Conv2dGeometry& g, const Conv2dOptions& o, bool has_bias, bool backward, PostOp post,
           int64_t y_channels = 0) {
  thread_local std::map<Key, std::unique_ptr<Plan>> cache;
  if (y_channels == 0) y_channels = g.cout;
  const Key k = key_of(g, o, has_bias, post, y_channels);
  auto it = cache.find(k);
  try {
    if (it == cache.end()) {
      std::unique_ptr<Plan> made;
      // Winograd where it pays and oneDNN implements it (post-ops, this CPU's ISA); direct otherwise.
      if (winograd_pays(g, o)) {
        try {
          made = make_plan(g, o, has_bias, post, dnnl::algorithm::convolution_winograd, y_channels);
          g_winograd_plans.fetch_add(1, std::memory_order_relaxed);
        } catch (const dnnl::error&) {
        }
      }
      if (!made) made = make_plan(g, o, has_bias, post, dnnl::algorithm::convolution_direct, y_channels);
      it = cache.emplace(k, std::move(made)).first;
    }
    if (backward && !it->second->has_backward) {
      try {
        add_backward(*it->second, g, has_bias);
      } catch (const dnnl::error&) {
        if (it->second->algorithm == dnnl::algorithm::convolution_direct) throw;
        // No Winograd backward for this problem: the whole plan goes direct, so that the three passes agree.
        forget_blocked_output_of(it->second.get());
        it->second = make_plan(g, o, has_bias, post, dnnl::algorithm::convolution_direct, y_channels);
        add_backward(*it->second, g, has_bias);
      }
    }
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return it->second.get();
}

memory wrap(const memory::desc& d, const float* p) { return memory(d, engine(), const_cast<float*>(p)); }

constexpr int64_t kMinBackwardChannels = 8;

bool usable(const Conv2dGeometry& g) {
  // Empty problems are the caller's (its kernels handle them; oneDNN rejects zero-sized dims).
  return enabled() && g.n > 0 && g.c > 0 && g.h > 0 && g.w > 0 && g.cout > 0 && g.ho > 0 && g.wo > 0;
}

// Threads: Ember's pool splits the batch and each slice runs oneDNN on ONE OpenMP thread (its own cached plan;
// onednn_slices.hpp says why).

Conv2dGeometry slice(Conv2dGeometry g, int64_t lo, int64_t hi) {
  g.n = hi - lo;
  return g;
}

std::atomic<int64_t> g_weight_reorders{0};

// The forward's weights as the primitive wants them: the plain tensor itself, or its blocked copy, reordered on
// the first call with this buffer and reused while the buffer lives.
// w: the weights this plan reads (a range of w_buffer's, for a slice of the output channels).
memory forward_weights(Plan& p, const float* w, const std::shared_ptr<Buffer>& w_buffer, dnnl::stream& s) {
  if (!p.weights_in) return wrap(p.w, w);
  // Looked up before any memory object is made: a hit (every call of an inference but the first) costs none.
  for (const CachedWeights& c : p.weights)
    if (c.data == w && !c.source.owner_before(w_buffer) && !w_buffer.owner_before(c.source) && !c.source.expired())
      return c.blocked;
  memory user = wrap(p.w, w);
  std::erase_if(p.weights, [](const CachedWeights& c) { return c.source.expired(); });
  if (p.weights.size() >= kCachedWeightsPerPlan) p.weights.erase(p.weights.begin());  // the oldest
  memory blocked(p.fwd_pd.weights_desc(), engine());
  p.weights_in->execute(s, user, blocked);
  g_weight_reorders.fetch_add(1, std::memory_order_relaxed);
  p.weights.push_back({w_buffer, w, blocked});
  return blocked;
}

// One thread's stream, made once (a stream per call showed in the batch-1 profile).
dnnl::stream& thread_stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

// The blocked output of this thread's last convolution forward whose output went back to plain NCHW: a
// convolution that reads that output next (conv -> conv, the body of every CNN) takes the blocked copy as its
// source instead of reordering the NCHW tensor back into the layout it came from (ORT keeps its blocked layout
// between such convolutions; Ember's tensors are NCHW, so the copy is kept beside the tensor instead).
// Valid while the tensor's buffer lives (a CPU buffer is never written after the op that made it returns, and the
// weak_ptr tells it from a new buffer at the same address) and the producer has not written its scratch again.
struct BlockedOutput {
  std::weak_ptr<Buffer> source;  // the NCHW output's buffer
  const float* data = nullptr;   // where this slice of it starts
  memory::desc plain;            // the slice as NCHW
  memory blocked;                // the producer plan's dst_blocked
  const Plan* producer = nullptr;
  uint64_t write = 0;            // producer->dst_writes when it was kept
};
thread_local BlockedOutput t_last_output;

void forget_blocked_output_of(const Plan* p) {
  if (t_last_output.producer == p) t_last_output = {};
}
std::atomic<int64_t> g_blocked_inputs_reused{0};

// The kept blocked copy of the slice x of `source` when it is the layout p's convolution reads; nullptr otherwise.
// Never p's own scratch: p writes its output there while reading the source.
const memory* kept_blocked_input(const Plan& p, const float* x, const std::shared_ptr<Buffer>* source) {
  const BlockedOutput& k = t_last_output;
  if (!source || !p.src_in || !k.producer || k.producer == &p || k.data != x || k.producer->dst_writes != k.write)
    return nullptr;
  if (k.source.owner_before(*source) || source->owner_before(k.source) || k.source.expired()) return nullptr;
  if (k.plain != p.x || k.blocked.get_desc() != p.fwd_pd.src_desc()) return nullptr;
  return &k.blocked;
}

// Runs p's convolution of x into dst (the primitive's own layout), on s, not waited for. The plan's own memory
// objects point at x and bias; the argument map names the source, dst and the weights of this call. `x_source` is x's buffer when x is a slice of a whole CPU tensor (then a kept blocked copy may serve).
void run_forward(Plan& p, const float* x, const std::shared_ptr<Buffer>* x_source, const float* w,
                 const std::shared_ptr<Buffer>& w_buffer, const float* bias, const memory& dst, dnnl::stream& s) {
  p.user_x.set_data_handle(const_cast<float*>(x));
  if (p.src_in) {
    if (const memory* kept = kept_blocked_input(p, x, x_source)) {
      p.fwd_args.insert_or_assign(DNNL_ARG_SRC, *kept);
      g_blocked_inputs_reused.fetch_add(1, std::memory_order_relaxed);
    } else {
      p.src_in->execute(s, p.user_x, p.src_blocked);
      p.fwd_args.insert_or_assign(DNNL_ARG_SRC, p.src_blocked);
    }
  }
  if (bias) p.user_b.set_data_handle(const_cast<float*>(bias));
  p.fwd_args.insert_or_assign(DNNL_ARG_WEIGHTS, forward_weights(p, w, w_buffer, s));
  p.fwd_args.insert_or_assign(DNNL_ARG_DST, dst);
  p.fwd.execute(s, p.fwd_args);
}

// One part of a forward: a batch slice (x, y point at its first image) or, where y_channels > g.cout, the output
// channels [k, k + g.cout) of the whole batch's output of y_channels channels (w, bias and y point at channel k's).
// x_source / w_buffer / y_source: the buffers x, w and y lie in.
bool forward_slice(const Conv2dGeometry& g, const Conv2dOptions& o, const float* x,
                   const std::shared_ptr<Buffer>& x_source, const float* w, const std::shared_ptr<Buffer>& w_buffer,
                   const float* bias, float* y, const std::shared_ptr<Buffer>& y_source, PostOp post,
                   int64_t y_channels) {
  Plan* p = plan(g, o, bias != nullptr, false, post, y_channels);
  if (!p) return false;
  dnnl::stream& s = thread_stream();
  p->user_y.set_data_handle(y);
  const memory& dst = p->dst_out ? p->dst_blocked : p->user_y;
  run_forward(*p, x, &x_source, w, w_buffer, bias, dst, s);
  if (p->dst_out) {
    p->dst_out->execute(s, p->dst_blocked, p->user_y);
    ++p->dst_writes;
    // Kept for a convolution that reads this output next; a range of channels is no tensor of its own.
    if (y_channels == g.cout) t_last_output = {y_source, y, p->y, p->dst_blocked, p, p->dst_writes};
  }
  s.wait();
  return true;
}

// A max pooling (inference: no workspace, no indices) over a convolution plan's output in the layout the
// convolution writes, its result in a scratch of oneDNN's choice and the reorder of that into plain NCHW. Unlike
// Ember's max_pool2d, oneDNN does not promise that a NaN wins its window; the fused op is for inference of finite
// activations (the ONNX importer's Conv + Relu + MaxPool).
struct PoolPlan {
  memory::desc out;  // plain [n, c, ho, wo]
  dnnl::pooling_forward fwd;
  memory pooled;
  std::optional<dnnl::reorder> out_reorder;
  memory user_out;  // over the caller's output, pointed at it per call (as Plan's user memories)
  std::unordered_map<int, memory> args;  // the convolution plan's output -> pooled, named on first use
};

PoolPlan* pool_plan(Plan& conv, const Key& conv_key, const Pool2dGeometry& pg) {
  using PoolKey = std::array<int64_t, std::tuple_size_v<Key> + 8>;
  thread_local std::map<PoolKey, std::unique_ptr<PoolPlan>> cache;
  PoolKey k{};
  std::copy(conv_key.begin(), conv_key.end(), k.begin());
  const std::array<int64_t, 8> pk{pg.kh, pg.kw, pg.sh, pg.sw, pg.ph, pg.pw, pg.ho, pg.wo};
  std::copy(pk.begin(), pk.end(), k.begin() + conv_key.size());
  auto it = cache.find(k);
  if (it != cache.end()) return it->second.get();
  try {
    auto p = std::make_unique<PoolPlan>();
    const memory::desc& src = conv.fwd_pd.dst_desc();
    p->out = memory::desc({pg.n, pg.c, pg.ho, pg.wo}, Dt::f32, Tag::nchw);
    const dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_max, src,
                                        memory::desc(p->out.dims(), Dt::f32, Tag::any), {pg.sh, pg.sw},
                                        {pg.kh, pg.kw}, {pg.ph, pg.pw}, {pg.ph, pg.pw});
    const dnnl::pooling_forward::primitive_desc pd(d, engine());
    p->fwd = dnnl::pooling_forward(pd);
    p->pooled = memory(pd.dst_desc(), engine());
    if (pd.dst_desc() != p->out) p->out_reorder = reorder_between(pd.dst_desc(), p->out);
    p->user_out = memory(p->out, engine(), DNNL_MEMORY_NONE);
    return cache.emplace(k, std::move(p)).first->second.get();
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

bool conv_pool_slice(const Conv2dGeometry& g, const Conv2dOptions& o, const float* x,
                     const std::shared_ptr<Buffer>& x_source, const CpuTensor<float>& w, const float* bias,
                     PostOp post, const Pool2dGeometry& pg, float* y) {
  Plan* p = plan(g, o, bias != nullptr, false, post);
  if (!p) return false;
  PoolPlan* pp = pool_plan(*p, key_of(g, o, bias != nullptr, post, g.cout), pg);
  if (!pp) return false;
  dnnl::stream& s = thread_stream();
  // The convolution's output stays in its own layout: the plan's scratch, or a plain one (made on first use) when
  // that is its layout.
  if (!p->dst_out && !p->dst_plain) p->dst_plain = memory(p->fwd_pd.dst_desc(), engine());
  const memory& conv_out = p->dst_out ? p->dst_blocked : p->dst_plain;
  if (p->dst_out) ++p->dst_writes;  // a blocked copy kept from this plan's scratch is overwritten now
  run_forward(*p, x, &x_source, w.data(), w.buffer, bias, conv_out, s);
  pp->user_out.set_data_handle(y);
  const memory& pooled = pp->out_reorder ? pp->pooled : pp->user_out;
  if (pp->args.empty()) pp->args = {{DNNL_ARG_SRC, conv_out}, {DNNL_ARG_DST, pooled}};
  pp->fwd.execute(s, pp->args);
  if (pp->out_reorder) pp->out_reorder->execute(s, pp->pooled, pp->user_out);
  s.wait();
  return true;
}

// grad weight (and bias) = correlation of x with grad, written to gw (gb) on s, not waited for; dd_w: grad in the
// layout the backward-weights primitive reads.
void run_weights_backward(Plan& p, const float* x, const memory& dd_w, float* gw, float* gb, dnnl::stream& s) {
  BackwardReorders& r = p.bwd_reorders;
  const memory src = read_through(r.x_in, wrap(p.x, x), s);
  memory ugw = wrap(p.w, gw);
  const memory dwei = written_to(r.gw_out, ugw);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, dd_w}, {DNNL_ARG_DIFF_WEIGHTS, dwei}};
  if (gb) args.emplace(DNNL_ARG_DIFF_BIAS, wrap(p.b, gb));
  p.bwd_weights.execute(s, args);
  write_back(r.gw_out, ugw, s);
}

// One batch slice's grad input alone (conv2d_backward's passes side by side).
bool data_backward_slice(const Conv2dGeometry& g, const Conv2dOptions& o, const float* w, const float* grad,
                         float* gx, bool has_bias) {
  Plan* p = plan(g, o, has_bias, true, PostOp::None);
  if (!p) return false;
  BackwardReorders& r = p->bwd_reorders;
  dnnl::stream& s = thread_stream();
  const memory dd = read_through(r.grad_in, wrap(p->y, grad), s);
  const memory wei = read_through(r.w_in, wrap(p->w, w), s);
  memory ugx = wrap(p->x, gx);
  const memory dsrc = written_to(r.gx_out, ugx);
  p->bwd_data.execute(s, {{DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DIFF_SRC, dsrc}});
  write_back(r.gx_out, ugx, s);
  s.wait();
  return true;
}

// One batch slice's backward: grad input of the slice's images, and the slice's share of grad weight / bias
// (written, not accumulated: the caller sums the slices). Every reorder and blocked buffer is the plan's
// (BackwardReorders), and the stream the thread's.
bool backward_slice(const Conv2dGeometry& g, const Conv2dOptions& o, const float* x, const float* w,
                    const float* grad, float* gx, float* gw, float* gb) {
  Plan* p = plan(g, o, gb != nullptr, true, PostOp::None);
  if (!p) return false;
  BackwardReorders& r = p->bwd_reorders;
  dnnl::stream& s = thread_stream();
  const memory ugrad = wrap(p->y, grad);
  // grad input = conv_transpose(grad, w).
  const memory dd = read_through(r.grad_in, ugrad, s);
  const memory wei = read_through(r.w_in, wrap(p->w, w), s);
  memory ugx = wrap(p->x, gx);
  const memory dsrc = written_to(r.gx_out, ugx);
  p->bwd_data.execute(s, {{DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DIFF_SRC, dsrc}});
  write_back(r.gx_out, ugx, s);
  run_weights_backward(*p, x, r.grad_in_w.prim ? read_through(r.grad_in_w, ugrad, s) : dd, gw, gb, s);
  s.wait();
  return true;
}

}  // namespace

bool weights_backward_slice(const Conv2dGeometry& g, const Conv2dOptions& o, const float* x, const float* grad,
                            float* gw, float* gb) {
  Plan* p = plan(g, o, gb != nullptr, true, PostOp::None);
  if (!p) return false;
  BackwardReorders& r = p->bwd_reorders;
  dnnl::stream& s = thread_stream();
  run_weights_backward(*p, x, read_through(r.grad_in_w.prim ? r.grad_in_w : r.grad_in, wrap(p->y, grad), s), gw, gb,
                       s);
  s.wait();
  return true;
}

bool enabled() { return g_enabled.load(std::memory_order_relaxed); }
int64_t forward_weight_reorders() { return g_weight_reorders.load(std::memory_order_relaxed); }
int64_t forward_blocked_inputs_reused() { return g_blocked_inputs_reused.load(std::memory_order_relaxed); }
void set_enabled(bool on) { g_enabled.store(on, std::memory_order_relaxed); }
bool winograd() { return g_winograd.load(std::memory_order_relaxed); }
void set_winograd(bool on) { g_winograd.store(on, std::memory_order_relaxed); }
int64_t winograd_plans() { return g_winograd_plans.load(std::memory_order_relaxed); }
int64_t forward_channel_parts() { return g_channel_parts.load(std::memory_order_relaxed); }

// How many parts of the output channels a forward on the pool's threads runs as, each over the whole batch; 1: it
// runs batch slices instead. Each slice of a Winograd forward transforms all the weights, each channel part all the
// input: channel parts where the weights are the larger transform, as many as there are threads when 16-channel
// blocks divide them evenly. The forward's tiles per image are ceil(Ho / 4) x ceil(Wo / 4) (F(4x4, 3x3)), so the
// weights are the larger where Cout >= N x tiles: on one AVX-512 core, 64->128 @8 (128 >= 32 x 4) ran a 64-channel
// part over 32 images in 0.61 ms against 0.75 for a 16-image slice of all 128; 32->64 @16 (64 < 32 x 16) 0.88
// against 0.78. Direct kernels transform nothing: batch slices.
int64_t channel_parts(const Conv2dGeometry& g, const Conv2dOptions& o) {
  const int64_t parts = num_threads();
  if (parts < 2 || g.groups != 1 || !winograd_pays(g, o) || g.cout % (16 * parts) != 0) return 1;
  Conv2dGeometry part = g;
  part.cout = part.cog = g.cout / parts;
  if (!winograd_pays(part, o)) return 1;  // each part must still be a Winograd problem
  const int64_t tiles = ((g.ho + 3) / 4) * ((g.wo + 3) / 4);
  return g.cout >= g.n * tiles ? parts : 1;
}

std::optional<CpuTensor<float>> conv2d(const CpuTensor<float>& x, const CpuTensor<float>& w,
                                       const CpuTensor<float>* bias, const Conv2dOptions& o, PostOp post) {
  const Conv2dGeometry g = conv2d_geometry(x.shape, w.shape, o);
  if (!usable(g)) return std::nullopt;
  CpuTensor<float> out(Shape{g.n, g.cout, g.ho, g.wo});
  const int64_t in_image = g.c * g.h * g.w, out_image = g.cout * g.ho * g.wo;
  std::atomic<bool> ok{true};
  if (const int64_t parts = channel_parts(g, o); parts > 1) {
    Conv2dGeometry part = g;
    part.cout = part.cog = g.cout / parts;
    const int64_t w_part = part.cout * g.cg * g.kh * g.kw, y_part = part.cout * g.ho * g.wo;
    parallel_for(parts, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        on_one_omp_thread([&] {
          if (!forward_slice(part, o, x.data(), x.buffer, w.data() + i * w_part, w.buffer,
                             bias ? bias->data() + i * part.cout : nullptr, out.data() + i * y_part, out.buffer, post,
                             g.cout))
            ok = false;
        });
      }
    });
    if (!ok) return std::nullopt;
    g_channel_parts.fetch_add(1, std::memory_order_relaxed);
    return out;
  }
  over_batch(g.n, [&](int64_t lo, int64_t hi) {
    if (!forward_slice(slice(g, lo, hi), o, x.data() + lo * in_image, x.buffer, w.data(), w.buffer,
                       bias ? bias->data() : nullptr, out.data() + lo * out_image, out.buffer, post, g.cout))
      ok = false;
  });
  if (!ok) return std::nullopt;
  return out;
}

std::optional<CpuTensor<float>> conv2d_max_pool(const CpuTensor<float>& x, const CpuTensor<float>& w,
                                                const CpuTensor<float>* bias, const Conv2dOptions& o, PostOp post,
                                                const Pool2dOptions& pool) {
  const Conv2dGeometry g = conv2d_geometry(x.shape, w.shape, o);
  if (!usable(g)) return std::nullopt;
  const Pool2dGeometry pg = pool2d_geometry(Shape{g.n, g.cout, g.ho, g.wo}, pool);
  // oneDNN's pooling has no dilation, and empty outputs are the caller's.
  if (pool.dilation[0] != 1 || pool.dilation[1] != 1 || pg.ho <= 0 || pg.wo <= 0) return std::nullopt;
  CpuTensor<float> out(pg.out_shape());
  const int64_t in_image = g.c * g.h * g.w, out_image = g.cout * pg.ho * pg.wo;
  std::atomic<bool> ok{true};
  over_batch(g.n, [&](int64_t lo, int64_t hi) {
    Pool2dGeometry slice_pg = pg;
    slice_pg.n = hi - lo;
    if (!conv_pool_slice(slice(g, lo, hi), o, x.data() + lo * in_image, x.buffer, w, bias ? bias->data() : nullptr,
                         post, slice_pg, out.data() + lo * out_image))
      ok = false;
  });
  if (!ok) return std::nullopt;
  return out;
}

std::optional<Conv2dGrads<CpuTensor<float>>> conv2d_backward(const CpuTensor<float>& x, const CpuTensor<float>& w,
                                                             const CpuTensor<float>& grad, bool has_bias,
                                                             const Conv2dOptions& o) {
  const Conv2dGeometry g = conv2d_geometry(x.shape, w.shape, o);
  // With few input channels per group (an image's first layer: 1 or 3) oneDNN's backward kernels work on plain
  // layouts and took 1.5x the time of im2col + GEMM (3->32 @32x32, batch 32: 4.5 ms against 3.0 ms); its
  // forward stays faster there. Its backward-weights kernel alone would save ~17% of that backward, but its sums
  // over N*H*W are ~5x less accurate than the GEMM's (1x8x8 -> 8 channels, batch 64: 1.8e-6 against 3.2e-7 of
  // the largest grad weight) and, amplified by Adam, moved the residual CNN's PyTorch-parity loss curve by
  // 1.3e-4 after three epochs (bindings/python/tests/test_residual_cnn_parity.py, bar 1e-4).
  if (!usable(g)) return std::nullopt;
  if (g.cg < kMinBackwardChannels) return conv2d_backward_im2col(x, w, grad, has_bias, o);
  CpuTensor<float> gx(x.shape), gw(w.shape);
  std::optional<CpuTensor<float>> gb;
  if (has_bias) gb = CpuTensor<float>(Shape{g.cout});
  const int64_t in_image = g.c * g.h * g.w, out_image = g.cout * g.ho * g.wo, wn = gw.numel();
  std::atomic<bool> ok{true};
  const int64_t threads = num_threads();
  if (threads >= 2) {
    // The two passes side by side: grad input on (threads + 1) / 2 batch slices, grad weight / bias on threads / 2,
    // each task on one thread. Each slice of a pass pays the pass's fixed cost once (Winograd's weight transform,
    // the weight reorders: a 16-image slice of 64->128 @8 took 0.70 ms of bwd data against 1.07 for 32 images),
    // so two threads each running both passes on half the batch scaled 1.5x; one pass per thread over the whole
    // batch pays it once per pass. Through Ember's pool, so a descheduled worker's task is run by the caller.
    const int64_t data_slices = std::min(g.n, (threads + 1) / 2), weight_slices = std::min(g.n, threads / 2);
    BatchPartials sums(gw.data(), wn, gb ? gb->data() : nullptr, g.cout, g.n, weight_slices);
    parallel_for(data_slices + weight_slices, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        on_one_omp_thread([&] {
          if (i < data_slices) {
            const auto [lo, hi] = slice_bounds(g.n, data_slices, i);
            if (!data_backward_slice(slice(g, lo, hi), o, w.data(), grad.data() + lo * out_image,
                                     gx.data() + lo * in_image, has_bias))
              ok = false;
          } else {
            const auto [lo, hi] = slice_bounds(g.n, weight_slices, i - data_slices);
            const auto [pw, pb] = sums.claim(lo);
            if (!weights_backward_slice(slice(g, lo, hi), o, x.data() + lo * in_image,
                                        grad.data() + lo * out_image, pw, pb))
              ok = false;
          }
        });
      }
    });
    if (!ok) return std::nullopt;
    sums.add();
    return Conv2dGrads<CpuTensor<float>>{std::move(gx), std::move(gw), std::move(gb)};
  }
  BatchPartials sums(gw.data(), wn, gb ? gb->data() : nullptr, g.cout, g.n);
  over_batch(g.n, [&](int64_t lo, int64_t hi) {
    const auto [pw, pb] = sums.claim(lo);
    if (!backward_slice(slice(g, lo, hi), o, x.data() + lo * in_image, w.data(), grad.data() + lo * out_image,
                        gx.data() + lo * in_image, pw, pb))
      ok = false;
  });
  if (!ok) return std::nullopt;
  sums.add();
  return Conv2dGrads<CpuTensor<float>>{std::move(gx), std::move(gw), std::move(gb)};
}

}  // namespace ember::cpu::onednn
