// oneDNN convolution forwards (onednn.hpp): batch slices or output-channel parts over Ember's pool, the weights'
// blocked copies kept per live buffer, a blocked output kept for the convolution that reads it next, and the
// convolution + max pooling of inference. Plans: onednn_conv_plan.hpp; backward: onednn_conv_backward.cpp.
#include <dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <unordered_map>

#include "backends/cpu/allocator.hpp"
#include "backends/cpu/onednn.hpp"
#include "backends/cpu/onednn_conv_plan.hpp"
#include "backends/cpu/onednn_slices.hpp"
#include "backends/cpu/parallel.hpp"
#include "engine/backend/conv_geometry.hpp"
#include "engine/backend/pool_geometry.hpp"

namespace ember::cpu::onednn {
namespace detail {
namespace {

std::atomic<int64_t> g_channel_parts{0};

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

}  // namespace

void forget_blocked_output_of(const Plan* p) {
  if (t_last_output.producer == p) t_last_output = {};
}

}  // namespace detail

using namespace detail;

int64_t forward_weight_reorders() { return g_weight_reorders.load(std::memory_order_relaxed); }
int64_t forward_blocked_inputs_reused() { return g_blocked_inputs_reused.load(std::memory_order_relaxed); }
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

}  // namespace ember::cpu::onednn
