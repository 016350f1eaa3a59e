// Comparisons (-> Bool) for Float, Int and Bool tensors, Float predicates (isnan, isinf), and Bool logic. Bool tensors hold 0/1 bytes.
#include "backends/cuda/kernels.hpp"
#include "backends/cuda/map.cuh"

namespace ember::cuda {
namespace {

template <CompareOp Op, class C>
__device__ __forceinline__ uint8_t compare_values(C a, C b) {
  if constexpr (Op == CompareOp::Eq) return a == b;
  else if constexpr (Op == CompareOp::Ne) return a != b;
  else if constexpr (Op == CompareOp::Lt) return a < b;
  else if constexpr (Op == CompareOp::Le) return a <= b;
  else if constexpr (Op == CompareOp::Gt) return a > b;
  else return a >= b;
}

template <CompareOp Op, class T>
struct CompareFn {
  __device__ uint8_t operator()(T a, T b) const { return compare_values<Op, T>(a, b); }
};

// Integers compare with the scalar in double (so 2.5 > 2 holds); floats in their own type, like the CPU backend.
template <CompareOp Op, class T>
struct CompareScalarFn {
  using C = std::conditional_t<std::is_same_v<T, float>, float, double>;
  C s;
  __device__ uint8_t operator()(T a) const { return compare_values<Op, C>(static_cast<C>(a), s); }
};

template <LogicOp Op>
struct LogicFn {
  __device__ uint8_t operator()(uint8_t a, uint8_t b) const {
    if constexpr (Op == LogicOp::And) return a & b;
    else if constexpr (Op == LogicOp::Or) return a | b;
    else return a ^ b;
  }
};

template <PredicateOp Op>
struct PredicateFn {
  __device__ uint8_t operator()(float a) const {
    if constexpr (Op == PredicateOp::IsNan) return isnan(a);
    else return isinf(a);  // IsInf
  }
};

struct NotFn {
  __device__ uint8_t operator()(uint8_t a) const { return a ^ 1u; }
};

}  // namespace

template <class T>
Mask compare(const CudaTensor<T>& a, const CudaTensor<T>& b, CompareOp op) {
  switch (op) {
    case CompareOp::Eq: return map2<uint8_t>(a, b, CompareFn<CompareOp::Eq, T>{}, "eq");
    case CompareOp::Ne: return map2<uint8_t>(a, b, CompareFn<CompareOp::Ne, T>{}, "ne");
    case CompareOp::Lt: return map2<uint8_t>(a, b, CompareFn<CompareOp::Lt, T>{}, "lt");
    case CompareOp::Le: return map2<uint8_t>(a, b, CompareFn<CompareOp::Le, T>{}, "le");
    case CompareOp::Gt: return map2<uint8_t>(a, b, CompareFn<CompareOp::Gt, T>{}, "gt");
    case CompareOp::Ge: return map2<uint8_t>(a, b, CompareFn<CompareOp::Ge, T>{}, "ge");
  }
  throw ArgumentError("compare: unknown op");
}

template <class T>
Mask compare_scalar(const CudaTensor<T>& a, CompareOp op, double s) {
  using C = typename CompareScalarFn<CompareOp::Eq, T>::C;
  const C c = static_cast<C>(s);
  switch (op) {
    case CompareOp::Eq: return map1<uint8_t>(a, CompareScalarFn<CompareOp::Eq, T>{c});
    case CompareOp::Ne: return map1<uint8_t>(a, CompareScalarFn<CompareOp::Ne, T>{c});
    case CompareOp::Lt: return map1<uint8_t>(a, CompareScalarFn<CompareOp::Lt, T>{c});
    case CompareOp::Le: return map1<uint8_t>(a, CompareScalarFn<CompareOp::Le, T>{c});
    case CompareOp::Gt: return map1<uint8_t>(a, CompareScalarFn<CompareOp::Gt, T>{c});
    case CompareOp::Ge: return map1<uint8_t>(a, CompareScalarFn<CompareOp::Ge, T>{c});
  }
  throw ArgumentError("compare_scalar: unknown op");
}

Mask predicate(const CudaTensor<float>& x, PredicateOp op) {
  switch (op) {
    case PredicateOp::IsNan: return map1<uint8_t>(x, PredicateFn<PredicateOp::IsNan>{});
    case PredicateOp::IsInf: return map1<uint8_t>(x, PredicateFn<PredicateOp::IsInf>{});
  }
  throw ArgumentError("predicate: unknown op");
}

Mask logic(const Mask& a, const Mask& b, LogicOp op) {
  switch (op) {
    case LogicOp::And: return map2<uint8_t>(a, b, LogicFn<LogicOp::And>{}, "logical_and");
    case LogicOp::Or: return map2<uint8_t>(a, b, LogicFn<LogicOp::Or>{}, "logical_or");
    case LogicOp::Xor: return map2<uint8_t>(a, b, LogicFn<LogicOp::Xor>{}, "logical_xor");
  }
  throw ArgumentError("bool_logic: unknown op");
}

Mask logical_not(const Mask& a) { return map1<uint8_t>(a, NotFn{}); }

#define EMBER_INSTANTIATE(T)                                                   \
  template Mask compare<T>(const CudaTensor<T>&, const CudaTensor<T>&, CompareOp); \
  template Mask compare_scalar<T>(const CudaTensor<T>&, CompareOp, double);
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(int64_t)
EMBER_INSTANTIATE(uint8_t)
#undef EMBER_INSTANTIATE

}  // namespace ember::cuda
