// oneDNN convolution plans (onednn_conv_plan.hpp): the Winograd rule, the primitives and reorders of a problem,
// and the per-thread plan cache.
#include "backends/cpu/onednn_conv_plan.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>

namespace ember::cpu::onednn {
namespace detail {
namespace {

bool default_enabled() {
  const char* env = std::getenv("EMBER_ONEDNN");
  return !(env && std::strcmp(env, "0") == 0);
}
std::atomic<bool> g_enabled{default_enabled()};

}  // namespace

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// The output tensor's channel count (y_channels: g.cout, or more for a slice of the output channels) and, last,
// whether the plan may be Winograd (set_winograd switches it at run time; each choice its plans).
Key key_of(const Conv2dGeometry& g, const Conv2dOptions& o, bool has_bias, PostOp post, int64_t y_channels) {
  return {g.n, g.c, g.h, g.w, g.cout, g.kh, g.kw, o.stride[0], o.stride[1], o.padding[0], o.padding[1],
          o.dilation[0], o.dilation[1], o.groups, has_bias ? 1 : 0, g.ho, g.wo, static_cast<int64_t>(post),
          y_channels, winograd_pays(g, o) ? 1 : 0};
}

namespace {

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

}  // namespace

bool winograd_pays(const Conv2dGeometry& g, const Conv2dOptions& o) {
  const bool shape = o.groups == 1 && g.kh == 3 && g.kw == 3 && g.sh == 1 && g.sw == 1 && g.dh == 1 && g.dw == 1;
  return g_winograd.load(std::memory_order_relaxed) && shape && g.c >= 16 && g.cout >= 32 &&
         g.n * g.ho * g.wo >= 256;
}

dnnl::reorder reorder_between(const memory::desc& from, const memory::desc& to) {
  return dnnl::reorder(dnnl::reorder::primitive_desc(engine(), from, engine(), to));
}

namespace {

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
}  // namespace

memory read_through(Reorder& r, const memory& user, dnnl::stream& s) {
  if (!r.prim) return user;
  r.prim->execute(s, const_cast<memory&>(user), r.blocked);
  return r.blocked;
}
memory written_to(Reorder& r, const memory& user) { return r.prim ? r.blocked : user; }
void write_back(Reorder& r, memory& user, dnnl::stream& s) {
  if (r.prim) r.prim->execute(s, r.blocked, user);
}

namespace {

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

}  // namespace

Plan* plan(const Conv2dGeometry& g, const Conv2dOptions& o, bool has_bias, bool backward, PostOp post,
           int64_t y_channels) {
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

dnnl::stream& thread_stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

bool usable(const Conv2dGeometry& g) {
  // Empty problems are the caller's (its kernels handle them; oneDNN rejects zero-sized dims).
  return enabled() && g.n > 0 && g.c > 0 && g.h > 0 && g.w > 0 && g.cout > 0 && g.ho > 0 && g.wo > 0;
}

Conv2dGeometry slice(Conv2dGeometry g, int64_t lo, int64_t hi) {
  g.n = hi - lo;
  return g;
}

}  // namespace detail

using namespace detail;

bool enabled() { return g_enabled.load(std::memory_order_relaxed); }
void set_enabled(bool on) { g_enabled.store(on, std::memory_order_relaxed); }
bool winograd() { return g_winograd.load(std::memory_order_relaxed); }
void set_winograd(bool on) { g_winograd.store(on, std::memory_order_relaxed); }
int64_t winograd_plans() { return g_winograd_plans.load(std::memory_order_relaxed); }

}  // namespace ember::cpu::onednn
