#pragma once
// The in-place updates of ember.h (ember_inplace_op, same values): x.copy_(y), x.add_(y), ..., x.fill_(s).
#include <cstdint>

namespace ember::capi {

enum class InplaceOp : int32_t { Copy = 0, Add = 1, Sub = 2, Mul = 3, Div = 4, Fill = 5 };

inline const char* inplace_name(InplaceOp op) {
  switch (op) {
    case InplaceOp::Copy: return "copy_";
    case InplaceOp::Add: return "add_";
    case InplaceOp::Sub: return "sub_";
    case InplaceOp::Mul: return "mul_";
    case InplaceOp::Div: return "div_";
    case InplaceOp::Fill: return "fill_";
  }
  return "inplace";
}

}  // namespace ember::capi
