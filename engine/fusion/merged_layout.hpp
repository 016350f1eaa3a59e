#pragma once
// How a generated fused kernel (Vulkan's GLSL, CUDA's NVRTC source) reads each input of a program: the output's
// index space with unit dims dropped and dims merged where every operand steps through them as one, and per input
// whether it is read in place (the output's own layout), as one element, or through strides over the merged dims.
// Fewer dims mean fewer divisions per element for the broadcast inputs, and a kernel keyed by the merged rank serves
// every batch size. Also what both generators share about a kernel's identity: its structure key, and the f32 bits
// a scalar is passed as (sizes, strides and scalars are run-time words, so they stay out of the key).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "engine/fusion/program.hpp"
#include "engine/tensor/shape.hpp"

namespace ember::fusion {

// How an input is read at output position i of the merged index space.
enum class Access : uint8_t {
  Same,      // in[i]: laid out like the output
  Constant,  // in[0]: one element
  Strided,   // in[sum idx_d * stride_d]: broadcast along some dims
};

struct MergedLayout {
  std::vector<int64_t> dims;                   // the output's dims, unit dims dropped, contiguous runs merged
  std::vector<Access> access;                  // per input
  std::vector<std::vector<int64_t>> strides;   // per input, over `dims` (used for Strided ones)
};

inline MergedLayout merge_layout(const Program& p) {
  MergedLayout l;
  const Shape& out = p.shape;
  const std::size_t ni = p.inputs.size();
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
    if (p.inputs[k].shape.num_elements() == 1 || zero) l.access.push_back(Access::Constant);
    else if (s == own) l.access.push_back(Access::Same);
    else l.access.push_back(Access::Strided);
  }
  return l;
}

// The f32 bits of a Fill / Scalar / MaskFill scalar: the eager ops take their scalar as this float.
inline uint32_t scalar_bits(double v) {
  const float f = static_cast<float>(v);
  uint32_t w;
  std::memcpy(&w, &f, 4);
  return w;
}

inline bool has_scalar(InstrKind k) {
  return k == InstrKind::Fill || k == InstrKind::Scalar || k == InstrKind::MaskFill;
}

// The structure a generated kernel is compiled for: the merged rank, whether a sum is taken, each input's kind and
// access (and, where given, the earlier input it shares a binding with), and the instruction list without its
// scalars. Two programs with the same key run the same kernel.
inline std::string structure_key(const Program& p, const MergedLayout& l, const std::vector<int32_t>& alias = {}) {
  // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "literal" + std::string here.
  std::string key = "r";
  auto number = [&](int64_t v, const char* before) {
    key += before;
    key += std::to_string(v);
  };
  number(static_cast<int64_t>(l.dims.size()), "");
  key += p.reduce_all ? "+;" : ";";
  for (std::size_t k = 0; k < p.inputs.size(); ++k) {
    const InputKind kind = p.inputs[k].kind;
    key += kind == InputKind::Float ? 'f' : kind == InputKind::Int ? 'i' : 'b';
    key += l.access[k] == Access::Same ? 's' : l.access[k] == Access::Constant ? 'c' : 'x';
    if (!alias.empty() && alias[k] != static_cast<int32_t>(k)) number(alias[k], "=");
  }
  for (const auto& i : p.instrs) {
    number(static_cast<int>(i.kind), ";");
    number(i.op, ",");
    number(i.a, ",");
    number(i.b, ",");
    number(i.c, ",");
  }
  number(p.out, ";o");
  return key;
}

}  // namespace ember::fusion
