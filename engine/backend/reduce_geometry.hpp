#pragma once
// How every backend sees a reduction over one dim: the tensor as [outer, len, inner] (outer: the dims before `dim`,
// len: `dim` itself, inner: the dims after it), and the kept-dim output shape with `dim` set to 1.
#include <cstddef>
#include <cstdint>

#include "engine/tensor/shape.hpp"

namespace ember {

struct ReduceView {
  int64_t outer = 1, len = 1, inner = 1;
  int64_t outputs() const { return outer * inner; }  // one result per (outer, inner) column
};

// dim < s.rank(). A dim of size 0 gives len 0 (an empty reduction); a zero dim elsewhere gives no outputs.
inline ReduceView reduce_view(const Shape& s, std::size_t dim) {
  ReduceView v;
  for (std::size_t i = 0; i < s.rank(); ++i) {
    if (i < dim) v.outer *= s[i];
    else if (i == dim) v.len = s[i];
    else v.inner *= s[i];
  }
  return v;
}

// A reduction over all elements: one column of every element.
inline ReduceView reduce_all_view(const Shape& s) { return ReduceView{1, s.num_elements(), 1}; }

// The output of a reduction over `dim` (keepdim): s with s[dim] = 1.
inline Shape reduced_shape(Shape s, std::size_t dim) {
  s[dim] = 1;
  return s;
}

}  // namespace ember
