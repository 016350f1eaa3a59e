// Issue 17 part 6 from C: f16 storage (plans keep f16 copies of the weights their GEMMs read) and the adopt option
// shader_float16's values (arithmetic, storage, both, auto), on host devices created with the matching features
// (VulkanHost: validation with synchronization validation, so any use of a 16-bit capability the host did not
// enable fails the test). The plan's outputs are checked against the same arithmetic done on the CPU with the
// weights rounded to f16, and against the f32 results, which they must differ from (the variant ran).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "engine/tensor/dtype.hpp"
#include "tests/c_api/capi_support.hpp"
#include "tests/c_api/vulkan_device.hpp"
#include "tests/c_api/vulkan_host.hpp"

namespace ember::capi_test {
namespace {

struct PlanFree {
  void operator()(ember_vulkan_plan* p) const { ember_vulkan_plan_free(p); }
};
using Plan = std::unique_ptr<ember_vulkan_plan, PlanFree>;

Device adopt(VulkanHost& host, int32_t shader_float16) {
  ember_vulkan_adopt_options o{};
  EXPECT_EQ(ember_vulkan_adopt_options_init(&o), EMBER_OK);
  o.shader_float16 = shader_float16;
  ember_vulkan_device_desc desc = host.desc();
  ember_device* d = nullptr;
  EXPECT_EQ(ember_vulkan_device_adopt_ex(&desc, &o, &d), EMBER_OK) << ember_last_error();
  return Device(d);
}

uint32_t variants(const ember_device* d) {
  uint32_t v = ~0u;
  EXPECT_EQ(ember_vulkan_float16_query(d, &v), EMBER_OK) << ember_last_error();
  return v;
}

// Values in [-scale, scale] that f16 cannot hold exactly (most of them), deterministic.
std::vector<float> values(std::size_t n, float seed, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * std::sin(seed + 0.7310f * static_cast<float>(i));
  return v;
}

float round_f16(float v) { return f16_to_float(float_to_f16(v)); }

// y = x @ w (x [m, k] and w [k, n] row-major) in double, with each operand first passed through round_a / round_b;
// also sum |x| |w| per element, the scale of the rounding errors.
struct Reference {
  std::vector<double> value, magnitude;
};
template <class RoundA, class RoundB>
Reference matmul_ref(const std::vector<float>& x, const std::vector<float>& w, int64_t m, int64_t k, int64_t n,
                     RoundA round_a, RoundB round_b) {
  Reference r{std::vector<double>(m * n), std::vector<double>(m * n)};
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) {
        const double a = round_a(x[i * k + p]), b = round_b(w[p * n + j]);
        r.value[i * n + j] += a * b;
        r.magnitude[i * n + j] += std::abs(double(x[i * k + p]) * w[p * n + j]);
      }
  return r;
}

// The plan of y = x @ w1, z = y @ w2t (w2t: the transpose of a [n2, n1] weight, so the GEMM reads it
// transposed) and u = w0 @ x (the weight on the left, as conv2d's), all weights device tensors made before the
// capture (parameters, as a module's), submitted on Ember's queue once per input; returns y, z and u.
struct Outputs {
  std::vector<float> y, z, u;
};
struct TwoLayerPlan {
  static constexpr int64_t m = 5, k = 70, n1 = 33, n2 = 9, p0 = 6;  // not multiples of the GEMM tiles
  std::vector<float> w1 = values(k * n1, 0.3f, 1.0f), w2 = values(n2 * n1, 1.9f, 0.5f), w0 = values(p0 * m, 2.6f, 1.5f);
  Plan plan;
  HostBuffer in, out_y, out_z, out_u;

  TwoLayerPlan(VulkanHost& host, ember_device* d) {
    Tensor tw1 = f32_on(d, w1, {k, n1}), tw2 = f32_on(d, w2, {n2, n1}), tw0 = f32_on(d, w0, {p0, m});
    ember_tensor* t = nullptr;
    EXPECT_EQ(ember_tensor_transpose(tw2.get(), 0, 1, &t), EMBER_OK) << ember_last_error();
    Tensor tw2t(t);
    ember_vulkan_plan* p = nullptr;
    EXPECT_EQ(ember_vulkan_plan_capture_begin(d, &p), EMBER_OK) << ember_last_error();
    plan.reset(p);
    const int64_t xs[] = {m, k};
    ember_tensor *x = nullptr, *y = nullptr, *z = nullptr;
    EXPECT_EQ(ember_vulkan_plan_add_input(p, EMBER_DTYPE_F32, xs, 2, &x), EMBER_OK) << ember_last_error();
    Tensor tx(x);
    EXPECT_EQ(ember_tensor_matmul(x, tw1.get(), &y), EMBER_OK) << ember_last_error();
    Tensor ty(y);
    EXPECT_EQ(ember_tensor_matmul(y, tw2t.get(), &z), EMBER_OK) << ember_last_error();
    Tensor tz(z);
    ember_tensor* u = nullptr;
    EXPECT_EQ(ember_tensor_matmul(tw0.get(), x, &u), EMBER_OK) << ember_last_error();
    Tensor tu(u);
    const ember_tensor* outs[] = {y, z, u};
    EXPECT_EQ(ember_vulkan_plan_capture_end(p, outs, 3), EMBER_OK) << ember_last_error();
    in = host.make_buffer(m * k * sizeof(float));
    out_y = host.make_buffer(m * n1 * sizeof(float));
    out_z = host.make_buffer(m * n2 * sizeof(float));
    out_u = host.make_buffer(p0 * k * sizeof(float));
    EXPECT_EQ(ember_vulkan_plan_bind_input(p, 0, reinterpret_cast<uint64_t>(in.buffer), 0), EMBER_OK);
    EXPECT_EQ(ember_vulkan_plan_bind_output(p, 0, reinterpret_cast<uint64_t>(out_y.buffer), 0), EMBER_OK);
    EXPECT_EQ(ember_vulkan_plan_bind_output(p, 1, reinterpret_cast<uint64_t>(out_z.buffer), 0), EMBER_OK);
    EXPECT_EQ(ember_vulkan_plan_bind_output(p, 2, reinterpret_cast<uint64_t>(out_u.buffer), 0), EMBER_OK);
  }
  void free(VulkanHost& host) {
    plan.reset();
    for (HostBuffer* b : {&in, &out_y, &out_z, &out_u}) host.free_buffer(*b);
  }
  Outputs run(ember_device* d, const std::vector<float>& x) {
    std::memcpy(in.mapped, x.data(), x.size() * sizeof(float));
    uint64_t value = 0;
    EXPECT_EQ(ember_vulkan_plan_submit(plan.get(), &value), EMBER_OK) << ember_last_error();
    EXPECT_EQ(ember_vulkan_host_wait(d, value), EMBER_OK) << ember_last_error();
    const auto* y = static_cast<const float*>(out_y.mapped);
    const auto* z = static_cast<const float*>(out_z.mapped);
    const auto* u = static_cast<const float*>(out_u.mapped);
    return {{y, y + m * n1}, {z, z + m * n2}, {u, u + p0 * k}};
  }
  // w2t as a row-major [n1, n2] matrix, for the references.
  std::vector<float> w2t() const {
    std::vector<float> t(n1 * n2);
    for (int64_t a = 0; a < n2; ++a)
      for (int64_t b = 0; b < n1; ++b) t[b * n2 + a] = w2[a * n1 + b];
    return t;
  }
};

float same(float v) { return v; }
constexpr double kF32Slack = 1e-6;  // f32 summation of <= 70 terms, relative to sum |x| |w|

// Checks got against ref within tolerance * magnitude; returns the largest distance from `other` (another
// reference) in units of magnitude, to show which of the two got follows.
double check(const std::vector<float>& got, const Reference& ref, double tolerance, const Reference& other,
             const char* what) {
  double from_other = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_LE(std::abs(got[i] - ref.value[i]), tolerance * ref.magnitude[i] + 1e-30) << what << "[" << i << "]";
    from_other = std::max(from_other, std::abs(got[i] - other.value[i]) / ref.magnitude[i]);
  }
  return from_other;
}

// Storage only: the plan reads f16 copies of the three weights (right operand plain and transposed, left operand);
// its outputs are the f32 arithmetic on f16-rounded weights, and not the f32 results (the variant ran); eager ops
// stay f32.
TEST(VulkanF16, PlanReadsF16WeightCopiesWithF32Arithmetic) {
  HostFeatures features;
  features.storage_16bit = true;
  VulkanHost host(features);
  SKIP_WITHOUT_HOST(host);
  Device dev = adopt(host, EMBER_VULKAN_FLOAT16_STORAGE);
  ASSERT_TRUE(dev);
  EXPECT_EQ(variants(dev.get()), EMBER_VULKAN_FEATURE_STORAGE_16BIT);
  TwoLayerPlan t(host, dev.get());
  size_t count = 0;
  uint64_t bytes = 0;
  EMBER_ASSERT_OK(ember_vulkan_plan_f16_weights(t.plan.get(), &count, &bytes));
  EXPECT_EQ(count, 3u);
  const uint64_t f32_bytes = (t.k * t.n1 + t.n2 * t.n1 + t.p0 * t.m) * sizeof(float);
  EXPECT_GE(bytes, f32_bytes / 2);
  // Half of each f32 weight's allocation (allocations are rounded up to the device's alignment).
  EXPECT_LT(bytes, f32_bytes * 6 / 10) << "f16 copies: half the f32 weights' bytes";

  const std::vector<float> w2t = t.w2t();
  for (int frame = 0; frame < 3; ++frame) {
    const std::vector<float> x = values(t.m * t.k, 0.5f + static_cast<float>(frame), 2.0f);
    const Outputs got = t.run(dev.get(), x);
    const Reference y16 = matmul_ref(x, t.w1, t.m, t.k, t.n1, same, round_f16);
    const Reference y32 = matmul_ref(x, t.w1, t.m, t.k, t.n1, same, same);
    const double y_off = check(got.y, y16, kF32Slack, y32, "y");
    EXPECT_GT(y_off, 20 * kF32Slack) << "y matches the f32 weights: the f16 copy of w1 was not read";
    const Reference z16 = matmul_ref(got.y, w2t, t.m, t.n1, t.n2, same, round_f16);
    const Reference z32 = matmul_ref(got.y, w2t, t.m, t.n1, t.n2, same, same);
    const double z_off = check(got.z, z16, kF32Slack, z32, "z");
    EXPECT_GT(z_off, 20 * kF32Slack) << "z matches the f32 weights: the f16 copy of w2 was not read";
    const Reference u16 = matmul_ref(t.w0, x, t.p0, t.m, t.k, round_f16, same);
    const Reference u32 = matmul_ref(t.w0, x, t.p0, t.m, t.k, same, same);
    const double u_off = check(got.u, u16, kF32Slack, u32, "u");
    EXPECT_GT(u_off, 20 * kF32Slack) << "u matches the f32 weights: the f16 copy of w0 (left operand) was not read";
    // An eager matmul on the same device is f32 throughout.
    Tensor tx = f32_on(dev.get(), x, {t.m, t.k}), tw1 = f32_on(dev.get(), t.w1, {t.k, t.n1});
    ember_tensor* e = nullptr;
    EMBER_ASSERT_OK(ember_tensor_matmul(tx.get(), tw1.get(), &e));
    Tensor te(e);
    check(floats(e), y32, kF32Slack, y16, "eager y");
  }
  t.free(host);
}

// Both variants, chosen by EMBER_VULKAN_FLOAT16_AUTO on a host device that enabled both features: f16 operands
// and products in the GEMM (error within 3 * 2^-11 of sum |x| |w|), reading f16 weight copies.
TEST(VulkanF16, AutoTakesArithmeticAndStorage) {
  HostFeatures features;
  features.shader_float16 = true;
  features.storage_16bit = true;
  VulkanHost host(features);
  SKIP_WITHOUT_HOST(host);
  Device dev = adopt(host, EMBER_VULKAN_FLOAT16_AUTO);
  ASSERT_TRUE(dev);
  EXPECT_EQ(variants(dev.get()), EMBER_VULKAN_FEATURE_FLOAT16 | EMBER_VULKAN_FEATURE_STORAGE_16BIT);
  TwoLayerPlan t(host, dev.get());
  size_t count = 0;
  EMBER_ASSERT_OK(ember_vulkan_plan_f16_weights(t.plan.get(), &count, nullptr));
  EXPECT_EQ(count, 3u);
  const std::vector<float> x = values(t.m * t.k, 4.0f, 2.0f);
  const Outputs got = t.run(dev.get(), x);
  const Reference exact = matmul_ref(x, t.w1, t.m, t.k, t.n1, same, same);
  const Reference w_only = matmul_ref(x, t.w1, t.m, t.k, t.n1, same, round_f16);
  const double from_w_only = check(got.y, exact, 3 * std::ldexp(1.0, -11) + 70 * std::ldexp(1.0, -24), w_only, "y");
  EXPECT_GT(from_w_only, 20 * kF32Slack) << "y has f32 products: the f16 arithmetic variant did not run";
  t.free(host);
}

// The default (0) and EMBER_VULKAN_FLOAT16_ARITHMETIC keep plans on f32 weights even where the host enabled
// 16-bit storage: f16 storage is the host's choice, never a side effect.
TEST(VulkanF16, PlansKeepF32WeightsUnlessStorageIsAskedFor) {
  HostFeatures features;
  features.storage_16bit = true;
  VulkanHost host(features);
  SKIP_WITHOUT_HOST(host);
  Device dev = adopt(host, 0);
  ASSERT_TRUE(dev);
  EXPECT_EQ(variants(dev.get()), 0u);
  TwoLayerPlan t(host, dev.get());
  size_t count = 7;
  uint64_t bytes = 7;
  EMBER_ASSERT_OK(ember_vulkan_plan_f16_weights(t.plan.get(), &count, &bytes));
  EXPECT_EQ(count, 0u);
  EXPECT_EQ(bytes, 0u);
  const std::vector<float> x = values(t.m * t.k, 2.5f, 2.0f);
  const Outputs got = t.run(dev.get(), x);
  const Reference y32 = matmul_ref(x, t.w1, t.m, t.k, t.n1, same, same);
  const Reference y16 = matmul_ref(x, t.w1, t.m, t.k, t.n1, same, round_f16);
  check(got.y, y32, kF32Slack, y16, "y");
  t.free(host);
}

// A module's plan (conv2d + linear): both layers' weights are read as f16 copies (conv2d's as the GEMM's left
// operand, the linear layer's as its right one), and the outputs stay within f16 weight rounding of the eager f32
// forward on the same device.
TEST(VulkanF16, ModulePlanReadsConvAndLinearWeightsAsF16) {
  HostFeatures features;
  features.storage_16bit = true;
  VulkanHost host(features);
  SKIP_WITHOUT_HOST(host);
  Device dev = adopt(host, EMBER_VULKAN_FLOAT16_STORAGE);
  ASSERT_TRUE(dev);
  ember_layer_desc conv = layer(EMBER_LAYER_CONV2D);
  conv.in_features = 2;
  conv.out_features = 4;
  conv.kernel_size[0] = conv.kernel_size[1] = 3;
  conv.padding[0] = conv.padding[1] = 1;
  const std::vector<ember_layer_desc> layers = {conv, layer(EMBER_LAYER_FLATTEN), linear(4 * 6 * 6, 5)};
  ember_module* raw = nullptr;
  EMBER_ASSERT_OK(ember_module_sequential(dev.get(), layers.data(), layers.size(), &raw));
  Module m(raw);
  const int64_t shape[] = {3, 2, 6, 6};
  ember_vulkan_plan* p = nullptr;
  EMBER_ASSERT_OK(ember_vulkan_plan_create(m.get(), dev.get(), EMBER_DTYPE_F32, shape, 4, &p));
  Plan plan(p);
  size_t count = 0;
  EMBER_ASSERT_OK(ember_vulkan_plan_f16_weights(p, &count, nullptr));
  EXPECT_EQ(count, 2u) << "the conv2d and the linear weight";
  const std::vector<float> x = values(3 * 2 * 6 * 6, 0.9f, 1.0f);
  HostBuffer in = host.make_buffer(x.size() * sizeof(float)), out = host.make_buffer(3 * 5 * sizeof(float));
  std::memcpy(in.mapped, x.data(), x.size() * sizeof(float));
  EMBER_ASSERT_OK(ember_vulkan_plan_bind_input(p, 0, reinterpret_cast<uint64_t>(in.buffer), 0));
  EMBER_ASSERT_OK(ember_vulkan_plan_bind_output(p, 0, reinterpret_cast<uint64_t>(out.buffer), 0));
  uint64_t value = 0;
  EMBER_ASSERT_OK(ember_vulkan_plan_submit(p, &value));
  EMBER_ASSERT_OK(ember_vulkan_host_wait(dev.get(), value));
  Tensor tx = f32_on(dev.get(), x, {3, 2, 6, 6});
  Tensor want = forward(m.get(), tx.get());
  const std::vector<float> w = floats(want.get());
  const auto* got = static_cast<const float*>(out.mapped);
  double largest = 0, worst = 0;
  for (float v : w) largest = std::max(largest, double(std::abs(v)));
  for (std::size_t i = 0; i < w.size(); ++i) worst = std::max(worst, std::abs(double(got[i]) - w[i]));
  // Two layers of weights rounded to f16 (2^-11 each) over sums of up to 144 and 72 terms of this size.
  EXPECT_LT(worst, 0.05 * largest) << "beyond f16 weight rounding";
  EXPECT_GT(worst, 1e-6 * largest) << "the f32 result: the f16 weight copies were not read";
  for (HostBuffer* b : {&in, &out}) host.free_buffer(*b);
}

TEST(VulkanF16, OptionValuesAndFeatureQueries) {
  ember_vulkan_requirements2 r{};
  r.struct_size = sizeof r;
  EMBER_ASSERT_OK(ember_vulkan_requirements_query2(&r));
  EXPECT_NE(r.optional_features & EMBER_VULKAN_FEATURE_STORAGE_16BIT, 0u);
  EXPECT_EQ(r.required_features & EMBER_VULKAN_FEATURE_STORAGE_16BIT, 0u);
  const char *name = nullptr, *gives = nullptr;
  EMBER_ASSERT_OK(ember_vulkan_feature_describe(EMBER_VULKAN_FEATURE_STORAGE_16BIT, &name, &gives));
  EXPECT_STREQ(name, "storageBuffer16BitAccess");
  EXPECT_NE(std::strstr(gives, "plans"), nullptr) << gives;
  uint32_t features = 0;
  EMBER_EXPECT_ERR(ember_vulkan_float16_query(nullptr, &features), EMBER_ERR_INVALID_ARGUMENT, "device is NULL");

  VulkanHost host;
  SKIP_WITHOUT_HOST(host);
  Device dev = adopt(host, 0);
  EMBER_EXPECT_ERR(ember_vulkan_float16_query(dev.get(), nullptr), EMBER_ERR_INVALID_ARGUMENT, "features");
  EMBER_EXPECT_ERR(ember_vulkan_plan_f16_weights(nullptr, nullptr, nullptr), EMBER_ERR_NULL_HANDLE,
                   "plan is NULL");
  for (int32_t bad : {4, -2, 100}) {
    ember_vulkan_adopt_options o{};
    EMBER_ASSERT_OK(ember_vulkan_adopt_options_init(&o));
    o.shader_float16 = bad;
    ember_vulkan_device_desc desc = host.desc();
    ember_device* d = nullptr;
    EMBER_EXPECT_ERR(ember_vulkan_device_adopt_ex(&desc, &o, &d), EMBER_ERR_INVALID_ARGUMENT, "shader_float16");
    EXPECT_EQ(d, nullptr);
  }
}

}  // namespace
}  // namespace ember::capi_test
