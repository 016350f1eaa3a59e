// The compute shader of a fused chain (fused_chain_glsl.hpp), written as straight-line GLSL: one statement per
// instruction over locals, each op through the very function the eager shader runs (shaders/float_ops.glsl), so a
// fused chain computes what the ops one by one compute. Every local is `precise`: the eager ops store each result
// to memory, so nothing is contracted across ops there (a * b + c stays two roundings), and neither is it here.
#include "backends/vulkan/fused_chain_glsl.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "engine/backend/ops.hpp"

namespace ember::vk {
namespace {

#include "fused_chain_glsl_sources.inc"  // kGlslInt64, kGlslOpCodes, kGlslMath, kGlslMathTrig, kGlslFloatOps

using fusion::InputKind;
using fusion::InstrKind;

uint32_t float_bits(double v) {
  const float f = static_cast<float>(v);  // the eager ops push their scalar as this float
  uint32_t w;
  std::memcpy(&w, &f, 4);
  return w;
}

const char* input_type(InputKind k) {
  switch (k) {
    case InputKind::Float: return "float";
    case InputKind::Int: return "int64_t";  // int under EMBER_NO_INT64 (shaders/int64.glsl)
    case InputKind::Bool: return "uint";
  }
  return "float";
}

char kind_char(InputKind k) { return k == InputKind::Float ? 'f' : k == InputKind::Int ? 'i' : 'b'; }
char access_char(FusedAccess a) { return a == FusedAccess::Same ? 's' : a == FusedAccess::Constant ? 'c' : 'x'; }

bool has_scalar(InstrKind k) { return k == InstrKind::Fill || k == InstrKind::Scalar || k == InstrKind::MaskFill; }

// Vulkan's eager GELU backward is autodiff's composed rule (engine/autodiff/elementwise_backward.hpp) run op by op
// through the eager shaders: g * (Phi(x) + x phi(x)) with Phi(x) = 0.5 (erf(x / sqrt 2) + 1) and
// phi(x) = exp(-x^2 / 2) / sqrt(2 pi). The fused step runs the same ops in the same order with the same f32 scalars.
std::string gelu_backward_glsl() {
  return fmt::format(
      "float gelu_backward_f32(float x, float g) {{\n"
      "  precise float t = scalar_f32(SCALAR_MUL, x, uintBitsToFloat({:#x}u));\n"
      "  t = unary_f32(UNARY_ERF, t);\n"
      "  t = scalar_f32(SCALAR_ADD, t, 1.0);\n"
      "  precise float cdf = scalar_f32(SCALAR_MUL, t, 0.5);\n"
      "  precise float u = binary_f32(BINARY_MUL, x, x);\n"
      "  u = scalar_f32(SCALAR_MUL, u, -0.5);\n"
      "  u = unary_f32(UNARY_EXP, u);\n"
      "  precise float pdf = scalar_f32(SCALAR_MUL, u, uintBitsToFloat({:#x}u));\n"
      "  precise float s = binary_f32(BINARY_ADD, cdf, binary_f32(BINARY_MUL, x, pdf));\n"
      "  return binary_f32(BINARY_MUL, g, s);\n"
      "}}\n",
      float_bits(M_SQRT1_2), float_bits(1.0 / std::sqrt(2.0 * M_PI)));
}

}  // namespace

FusedLayout fused_layout(const fusion::Program& p, std::vector<int32_t> alias) {
  FusedLayout l;
  const Shape& out = p.shape;
  const std::size_t ni = p.inputs.size();
  if (alias.empty())
    for (std::size_t k = 0; k < ni; ++k) alias.push_back(static_cast<int32_t>(k));
  l.alias = std::move(alias);
  auto distinct = [&](std::size_t k) { return l.alias[k] == static_cast<int32_t>(k); };
  std::vector<std::vector<int64_t>> full(ni);
  for (std::size_t k = 0; k < ni; ++k) full[k] = broadcast_strides(p.inputs[k].shape, out);
  // Merge: drop unit dims; fold dim d into the previous kept dim q when every input steps through them as one
  // (stride[q] == stride[d] * dims[d]), as the output (row-major) always does.
  for (std::size_t d = 0; d < out.rank(); ++d) {
    if (out.dims[d] == 1) continue;
    if (!l.dims.empty()) {
      const std::size_t qm = l.dims.size() - 1;
      bool merge = true;
      for (std::size_t k = 0; k < ni && merge; ++k) merge = l.strides[k][qm] == full[k][d] * out.dims[d];
      if (merge) {
        l.dims[qm] *= out.dims[d];
        for (std::size_t k = 0; k < ni; ++k) l.strides[k][qm] = full[k][d];
        continue;
      }
    }
    l.dims.push_back(out.dims[d]);
    if (l.strides.empty()) l.strides.resize(ni);
    for (std::size_t k = 0; k < ni; ++k) l.strides[k].push_back(full[k][d]);
  }
  if (l.strides.empty()) l.strides.resize(ni);
  // Access per input: the output's own (row-major) strides, all zero, or anything else.
  std::vector<int64_t> own(l.dims.size(), 1);
  for (std::size_t d = l.dims.size(); d-- > 1;) own[d - 1] = own[d] * l.dims[d];
  for (std::size_t k = 0; k < ni; ++k) {
    const auto& s = l.strides[k];
    bool zero = true;
    for (int64_t v : s) zero = zero && v == 0;
    if (p.inputs[k].shape.num_elements() == 1 || zero) l.access.push_back(FusedAccess::Constant);
    else if (s == own) l.access.push_back(FusedAccess::Same);
    else l.access.push_back(FusedAccess::Strided);
  }
  // Push words and key.
  l.push.push_back(static_cast<uint32_t>(out.num_elements()));
  for (int64_t d : l.dims) l.push.push_back(static_cast<uint32_t>(d));
  for (std::size_t k = 0; k < ni; ++k)
    if (distinct(k) && l.access[k] == FusedAccess::Strided)
      for (int64_t v : l.strides[k]) l.push.push_back(static_cast<uint32_t>(v));
  l.scalar_word.assign(p.instrs.size(), 0);
  for (std::size_t k = 0; k < p.instrs.size(); ++k) {
    if (!has_scalar(p.instrs[k].kind)) continue;
    l.scalar_word[k] = static_cast<uint32_t>(l.push.size());
    l.push.push_back(float_bits(p.instrs[k].s));
  }
  l.key = fmt::format("r{}{};", l.dims.size(), p.reduce_all ? "+" : "");
  for (std::size_t k = 0; k < ni; ++k) {
    l.key += kind_char(p.inputs[k].kind);
    l.key += access_char(l.access[k]);
    if (!distinct(k)) l.key += fmt::format("={}", l.alias[k]);
  }
  for (const auto& i : p.instrs) l.key += fmt::format(";{},{},{},{},{}", static_cast<int>(i.kind), i.op, i.a, i.b, i.c);
  l.key += fmt::format(";o{}", p.out);
  return l;
}

std::size_t fused_bindings(const FusedLayout& l) {
  std::size_t n = 0;
  for (std::size_t k = 0; k < l.alias.size(); ++k) n += l.alias[k] == static_cast<int32_t>(k);
  return n;
}

bool fused_fits(const fusion::Program& p, const FusedLayout& l) {
  (void)p;
  return fused_bindings(l) <= kMaxFusedInputs && l.push.size() <= kMaxFusedPushWords;
}

std::string fused_chain_glsl(const fusion::Program& p, const FusedLayout& l, bool int64) {
  const std::size_t rank = l.dims.size();
  bool any_int = false, any_strided = false, gelu = false;
  for (const auto& in : p.inputs) any_int = any_int || in.kind == InputKind::Int;
  for (auto a : l.access) any_strided = any_strided || a == FusedAccess::Strided;
  for (const auto& i : p.instrs) gelu = gelu || i.kind == InstrKind::GeluBackward;

  std::string s = "#version 450\n";
  s += "// A fused chain of Ember's elementwise ops, generated by backends/vulkan/fused_chain_glsl.cpp.\n";
  s += fmt::format("// key {}\n", l.key);
  if (any_int) {
    if (!int64) s += "#define EMBER_NO_INT64\n";
    s += kGlslInt64;
  }
  s += fmt::format("layout(local_size_x = {}) in;\n", kFusedWorkgroup);
  s += kGlslOpCodes;
  s += kGlslMath;
  s += kGlslMathTrig;
  s += kGlslFloatOps;
  if (gelu) s += gelu_backward_glsl();
  s += "layout(std430, binding = 0) writeonly buffer Y { float y[]; };\n";
  auto distinct = [&](std::size_t k) { return l.alias[k] == static_cast<int32_t>(k); };
  // Buffers of the distinct inputs, bound in input order after the output.
  for (std::size_t k = 0, binding = 1; k < p.inputs.size(); ++k)
    if (distinct(k))
      s += fmt::format("layout(std430, binding = {}) readonly buffer In{} {{ {} in{}[]; }};\n", binding++, k,
                       input_type(p.inputs[k].kind), k);
  s += fmt::format("layout(push_constant) uniform P {{ uint w[{}]; }} p;\n", l.push.size());
  if (p.reduce_all) s += fmt::format("shared float partial[{}];\n", kFusedWorkgroup);

  s += "void main() {\n";
  if (p.reduce_all) s += "  float acc = 0.0;\n";
  s += fmt::format("  for (uint i = gl_GlobalInvocationID.x; i < p.w[0]; i += gl_NumWorkGroups.x * {}u) {{\n",
                   kFusedWorkgroup);
  // Offsets of the strided inputs: the output position's index per merged dim, dotted with each one's strides.
  if (any_strided) {
    s += "    uint rest = i, ix;\n";
    std::string decl;
    for (std::size_t k = 0; k < p.inputs.size(); ++k)
      if (distinct(k) && l.access[k] == FusedAccess::Strided)
        decl += fmt::format("{}o{} = 0u", decl.empty() ? "" : ", ", k);
    s += "    uint " + decl + ";\n";
    for (std::size_t d = rank; d-- > 0;) {
      s += fmt::format("    ix = rest % p.w[{}]; rest /= p.w[{}];", 1 + d, 1 + d);
      std::size_t word = 1 + rank;
      for (std::size_t k = 0; k < p.inputs.size(); ++k) {
        if (!distinct(k) || l.access[k] != FusedAccess::Strided) continue;
        s += fmt::format(" o{} += ix * p.w[{}];", k, word + d);
        word += rank;
      }
      s += "\n";
    }
  }
  auto scalar = [&](std::size_t k) { return fmt::format("uintBitsToFloat(p.w[{}])", l.scalar_word[k]); };
  for (std::size_t k = 0; k < p.instrs.size(); ++k) {
    const fusion::Instr& i = p.instrs[k];
    const std::string r = fmt::format("r{}", k);
    switch (i.kind) {
      case InstrKind::Input: {
        const auto in = static_cast<std::size_t>(l.alias[static_cast<std::size_t>(i.op)]);  // the buffer read
        const char* type = input_type(p.inputs[in].kind);
        const std::string at = l.access[in] == FusedAccess::Same       ? "i"
                               : l.access[in] == FusedAccess::Constant ? "0"
                                                                       : fmt::format("o{}", in);
        s += fmt::format("    {}{} {} = in{}[{}];\n", p.inputs[in].kind == InputKind::Float ? "precise " : "", type, r,
                         in, at);
        break;
      }
      case InstrKind::Fill: s += fmt::format("    precise float {} = {};\n", r, scalar(k)); break;
      case InstrKind::Unary:
        s += fmt::format("    precise float {} = unary_f32({}u, r{});  // {}\n", r, i.op, i.a,
                         op_name(static_cast<UnaryOp>(i.op)));
        break;
      case InstrKind::Scalar:
        s += fmt::format("    precise float {} = scalar_f32({}u, r{}, {});  // {}\n", r, i.op, i.a, scalar(k),
                         op_name(static_cast<ScalarOp>(i.op)));
        break;
      case InstrKind::Binary:
        s += fmt::format("    precise float {} = binary_f32({}u, r{}, r{});  // {}\n", r, i.op, i.a, i.b,
                         op_name(static_cast<BinaryOp>(i.op)));
        break;
      case InstrKind::Where:
        s += fmt::format("    precise float {} = r{} != 0u ? r{} : r{};\n", r, i.a, i.b, i.c);
        break;
      case InstrKind::MaskFill:
        s += fmt::format("    precise float {} = r{} != 0u ? {} : r{};\n", r, i.b, scalar(k), i.a);
        break;
      case InstrKind::Cast: s += fmt::format("    precise float {} = float(r{});\n", r, i.a); break;
      case InstrKind::Expand: s += fmt::format("    precise float {} = r{};\n", r, i.a); break;
      case InstrKind::GeluBackward:
        s += fmt::format("    precise float {} = gelu_backward_f32(r{}, r{});\n", r, i.a, i.b);
        break;
      case InstrKind::ReluBackward:  // the eager rule: g * float(x > 0) (compare, cast, multiply), same bits
        s += fmt::format("    precise float {} = binary_f32({}u, r{}, r{} > 0.0 ? 1.0 : 0.0);\n", r,
                         static_cast<int>(BinaryOp::Mul), i.b, i.a);
        break;
    }
  }
  if (p.reduce_all) s += fmt::format("    acc += r{};\n  }}\n", p.out);
  else s += fmt::format("    y[i] = r{};\n  }}\n", p.out);
  // The trailing sum: a tree over the workgroup's lanes, one partial per workgroup (fused_chain.cpp adds them up).
  if (p.reduce_all) {
    s += "  const uint lid = gl_LocalInvocationID.x;\n";
    s += "  partial[lid] = acc;\n  barrier();\n";
    s += fmt::format("  for (uint h = {}u; h > 0u; h >>= 1) {{\n", kFusedWorkgroup / 2);
    s += "    if (lid < h) partial[lid] += partial[lid + h];\n    barrier();\n  }\n";
    s += "  if (lid == 0u) y[gl_WorkGroupID.x] = partial[0];\n";
  }
  s += "}\n";
  return s;
}

}  // namespace ember::vk
