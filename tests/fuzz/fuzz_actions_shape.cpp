// The fuzzer's rows for issue 13's composed shape ops (declared in fuzz_actions.hpp, placed in kActions by
// fuzz_actions.cpp): pad, step slices, baddbmm, einsum (equations from a list of valid and malformed ones, or any
// bytes), logsumexp, std and interpolate, with fuzzed arrays (NULL, hostile sizes and counts) and enums.
#include <array>
#include <limits>
#include <string>

#include "tests/fuzz/fuzz_actions.hpp"

namespace ember_fuzz {
namespace {

// An int64 array of 0..9 values: dims, pads or sizes, NULL now and then (refused when the count is not 0).
std::vector<int64_t> values(Ctx& c, bool dims) {
  std::vector<int64_t> v(c.in.ConsumeIntegralInRange<std::size_t>(0, 9));
  for (auto& x : v) {
    if (dims) {
      x = c.dim();
      continue;
    }
    // Negative pads crop; INT64_MIN has no negation (UB the harness itself must not commit), so it stays as is.
    const int64_t s = c.size();
    x = c.flag() || s == std::numeric_limits<int64_t>::min() ? s : -s;
  }
  return v;
}
const int64_t* ptr(Ctx& c, const std::vector<int64_t>& v) {
  return v.empty() || c.in.ConsumeIntegralInRange<int>(0, 15) == 0 ? nullptr : v.data();
}

constexpr std::array<const char*, 14> kEquations = {
    "ij->ji", "ii->i", "ii", "bij,bjk->bik", "...ij,...jk->...ik", "i,j->ij", "ij,ij->i", "bn,anm,bm->ba",
    "ij->", "i..j", "ij->i->j", "ij-", "a1->a", ""};

}  // namespace

void shape_ops(Ctx& c) {
  switch (c.in.ConsumeIntegralInRange<int>(0, 6)) {
    case 0: {
      ember_tensor* x = c.tensor();
      const auto p = values(c, false);
      MAKE(ember_tensor_pad, x, ptr(c, p), p.size(), c.choice(3), c.real());
      break;
    }
    case 1: {
      ember_tensor* x = c.tensor();
      const std::size_t n = c.in.ConsumeIntegralInRange<std::size_t>(0, 9);
      std::vector<int64_t> starts(n), ends(n), steps(n);
      for (std::size_t i = 0; i < n; ++i) {
        starts[i] = c.dim();
        ends[i] = c.flag() ? EMBER_SLICE_END : c.dim();
        steps[i] = c.flag() ? c.size() : c.dim();
      }
      MAKE(ember_tensor_slice_step, x, ptr(c, starts), ptr(c, ends), ptr(c, steps), n);
      break;
    }
    case 2: MAKE(ember_tensor_baddbmm, c.tensor(), c.tensor(), c.tensor(), c.real(), c.real()); break;
    case 3: {
      std::vector<ember_tensor*> xs = c.tensors();
      const std::string eq = c.flag() ? std::string(kEquations[c.in.ConsumeIntegralInRange<std::size_t>(
                                            0, kEquations.size() - 1)])
                                      : c.in.ConsumeRandomLengthString(24);
      MAKE(ember_einsum, c.flag() ? eq.c_str() : nullptr, xs.empty() ? nullptr : xs.data(), xs.size());
      break;
    }
    case 4: {
      ember_tensor* x = c.tensor();
      const auto d = values(c, true);
      MAKE(ember_tensor_logsumexp, x, ptr(c, d), d.size(), c.choice(2));
      break;
    }
    case 5: {
      ember_tensor* x = c.tensor();
      const auto d = values(c, true);
      MAKE(ember_tensor_std, x, ptr(c, d), d.size(), c.real(), c.choice(2));
      break;
    }
    default: {
      ember_tensor* x = c.tensor();
      const std::size_t ns = c.in.ConsumeIntegralInRange<std::size_t>(0, 3), nf = c.in.ConsumeIntegralInRange<std::size_t>(0, 3);
      std::array<int64_t, 3> size{c.size(), c.size(), c.size()};
      std::array<double, 3> scale{c.real(), c.real(), c.real()};
      MAKE(ember_interpolate, x, c.flag() ? size.data() : nullptr, ns, c.flag() ? scale.data() : nullptr, nf,
           c.choice(2), c.choice(2));
    }
  }
}

}  // namespace ember_fuzz
