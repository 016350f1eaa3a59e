// Layout and indexing kernels: creation, host transfer, reshape/permute/expand, slicing, cat, flip, gather and
// scatter, index_select, where/mask_fill and casts. Every output is contiguous row-major. Strided reads go through
// for_each_strided, which merges dims that stay contiguous so most copies become a few long memcpy runs.
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "backends/cpu/kernels.hpp"
#include "backends/cpu/parallel.hpp"
#include "backends/cpu/strided.hpp"
#include "engine/backend/strided_view.hpp"
#include "engine/tensor/error.hpp"

namespace ember::cpu {
namespace {

using Strides = std::array<int64_t, 1>;

// Product of dims[b, e).
int64_t prod(const std::vector<int64_t>& dims, std::size_t b, std::size_t e) {
  int64_t n = 1;
  for (std::size_t k = b; k < e; ++k) n *= dims[k];
  return n;
}

// Rows of `row` elements per parallel chunk, so each chunk holds about kParallelThreshold elements.
int64_t grain_for(int64_t row) { return std::max<int64_t>(1, kParallelThreshold / std::max<int64_t>(row, 1)); }

// dst[0, n) = src[0, n), split across threads when large (first touch of fresh pages dominates big copies).
template <class T>
void copy_flat(T* dst, const T* src, int64_t n) {
  parallel_for(n, kParallelThreshold, [&](int64_t b, int64_t e) {
    std::memcpy(dst + b, src + b, static_cast<std::size_t>(e - b) * sizeof(T));
  });
}

// Whether `ranges` select one contiguous run of a row-major tensor of shape x: single indices, then at most one
// partial dim, then whole dims (x[i], x[a:b], x[i, a:b], ...). Such a slice shares x's storage (no copy, O(1)),
// the case basic indexing mostly meets.
constexpr std::size_t kSmallViewRank = 16;  // copy_view_small's odometer; higher ranks take copy_strided

bool one_run(const Shape& x, const std::vector<Range>& ranges) {
  std::size_t k = std::min(ranges.size(), x.rank());  // dims from k on are whole
  while (k > 0 && ranges[k - 1].start == 0 && ranges[k - 1].end == x[k - 1]) --k;
  for (std::size_t d = 0; d + 1 < k; ++d)
    if (ranges[d].end - ranges[d].start != 1) return false;
  return true;
}

// dst = the view of `base` (v's offset, shape and strides), for small views: an odometer over the rows of the last
// dim, each a memcpy when it is contiguous. No merging of dims, no parallel split: for the few elements of a small
// slice their setup costs many times the copy.
template <class T>
void copy_view_small(const T* base, const StridedView& v, T* dst) {
  const std::size_t r = v.shape.rank();
  const int64_t len = v.shape[r - 1], step = v.strides[r - 1];
  const int64_t rows = v.shape.num_elements() / len;
  std::array<int64_t, kSmallViewRank> at{};
  int64_t off = v.offset;
  for (int64_t row = 0; row < rows; ++row, dst += len) {
    const T* src = base + off;
    if (step == 1) std::memcpy(dst, src, static_cast<std::size_t>(len) * sizeof(T));
    else for (int64_t i = 0; i < len; ++i) dst[i] = src[i * step];
    for (std::size_t d = r - 1; d-- > 0;) {  // the next row: carry through the dims before the last
      off += v.strides[d];
      if (++at[d] < v.shape[d]) break;
      off -= v.strides[d] * v.shape[d];
      at[d] = 0;
    }
  }
}

template <class T>
CpuTensor<T> clone(const CpuTensor<T>& x) {
  CpuTensor<T> out(x.shape);
  copy_flat(out.data(), x.data(), x.numel());
  return out;
}

// Writes the view of `base` with the given element strides (one per dim of `shape`) into contiguous dst.
// Strides may be 0 (broadcast) or negative (flip).
template <class T>
void copy_strided(const T* base, std::vector<int64_t> strides, const Shape& shape, T* dst) {
  for_each_strided<1>(shape, {std::move(strides)},
                      [&](const Strides& off, int64_t o, int64_t len, const Strides& st) {
                        const T* s = base + off[0];
                        T* d = dst + o;
                        if (st[0] == 1) {
                          std::memcpy(d, s, static_cast<std::size_t>(len) * sizeof(T));
                        } else if (st[0] == 0) {
                          std::fill_n(d, len, *s);
                        } else {
                          for (int64_t i = 0; i < len; ++i) d[i] = s[i * st[0]];
                        }
                      });
}

// Copies src (read with in_st, one stride per dim of `out`) into contiguous dst in square tiles over the output's
// last dim and dim p, the one contiguous in src. Used when the output's inner dim is strided in src (a transpose):
// a plain row-by-row copy then reads one cache line per element and, for power-of-two strides, thrashes the cache;
// tiles reuse every line they load (about 4x faster for a 2048^2 transpose).
template <class T>
void copy_tiled(const T* src, const Shape& out, const std::vector<int64_t>& in_st, std::size_t p, T* dst) {
  constexpr int64_t kTile = 32;
  const std::size_t r = out.rank();
  const auto out_st = out.strides();
  const int64_t rows = out[p], cols = out[r - 1];
  const int64_t col_st = in_st[r - 1], row_st = out_st[p];
  const int64_t bands = (rows + kTile - 1) / kTile;
  const int64_t batch = out.num_elements() / (rows * cols);
  parallel_for(batch * bands, grain_for(kTile * cols), [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      int64_t rem = t / bands, ioff = 0, ooff = 0;  // batch index over the dims other than p and the last
      for (std::size_t k = r - 1; k-- > 0;) {
        if (k == p) continue;
        const int64_t c = rem % out[k];
        rem /= out[k];
        ioff += c * in_st[k];
        ooff += c * out_st[k];
      }
      const int64_t i0 = (t % bands) * kTile, i1 = std::min(rows, i0 + kTile);
      for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
        const int64_t j1 = std::min(cols, j0 + kTile);
        for (int64_t i = i0; i < i1; ++i) {
          const T* s = src + ioff + i;  // in_st[p] == 1
          T* d = dst + ooff + i * row_st;
          for (int64_t j = j0; j < j1; ++j) d[j] = s[j * col_st];
        }
      }
    }
  });
}

// Bool tensors add as logical or (0/1 stays 0/1, like PyTorch's bool add); other types add.
template <class T>
inline void accumulate(T& a, T b) {
  if constexpr (std::is_same_v<T, uint8_t>) a = static_cast<uint8_t>(a | b);
  else a += b;
}

// Index values come from user data, so unlike shapes they are checked here. Checked in one pass before any
// parallel work, so no exception is raised inside a worker.
void check_indices(const char* op, const Index& indices, std::size_t dim, int64_t size) {
  const int64_t* p = indices.data();
  const int64_t n = indices.numel();
  for (int64_t i = 0; i < n; ++i) {
    if (p[i] < 0 || p[i] >= size) {
      throw IndexError(std::string(op) + ": index " + std::to_string(p[i]) + " out of range for dim " +
                       std::to_string(dim) + " of size " + std::to_string(size));
    }
  }
}

// Element offsets, under strides `st`, of every multi-index over dims[b, e) in row-major order. gather and
// scatter_add walk `indices`, whose dims may be smaller than x's, and map each position into x through these.
std::vector<int64_t> offset_table(const std::vector<int64_t>& dims, const std::vector<int64_t>& st, std::size_t b,
                                  std::size_t e) {
  std::vector<int64_t> table{0};
  for (std::size_t k = b; k < e; ++k) {
    std::vector<int64_t> next;
    next.reserve(table.size() * static_cast<std::size_t>(dims[k]));
    for (int64_t t : table)
      for (int64_t i = 0; i < dims[k]; ++i) next.push_back(t + i * st[k]);
    table = std::move(next);
  }
  return table;
}

// How gather/scatter_add see x through indices of the same rank: indices split as [outer, n, inner] around dim;
// x offset of (o, idx, k) = outer_off[o] + idx * dim_stride + inner_off[k].
struct AlongDim {
  int64_t outer, n, inner, dim_stride;
  std::vector<int64_t> outer_off;
  std::vector<int64_t> inner_off;  // empty when indices' inner dims equal x's (then inner_off[k] == k)

  AlongDim(const Shape& x, const Shape& idx, std::size_t dim) {
    const auto st = x.strides();
    outer = prod(idx.dims, 0, dim);
    n = idx.dims[dim];
    inner = prod(idx.dims, dim + 1, idx.rank());
    dim_stride = st[dim];
    outer_off = offset_table(idx.dims, st, 0, dim);
    if (!std::equal(idx.dims.begin() + dim + 1, idx.dims.end(), x.dims.begin() + dim + 1))
      inner_off = offset_table(idx.dims, st, dim + 1, idx.rank());
  }
  int64_t inner_at(int64_t k) const { return inner_off.empty() ? k : inner_off[k]; }
};

}  // namespace

template <class T>
CpuTensor<T> from_data(const TensorData& data, DType own) {
  CpuTensor<T> out(data.shape);
  T* d = out.data();
  const int64_t n = out.numel();
  if (data.dtype == own && dtype_size(own) == sizeof(T)) {
    if (n > 0) std::memcpy(d, data.bytes.data(), static_cast<std::size_t>(n) * sizeof(T));
    if (own == DType::Bool)  // host bytes may hold any nonzero for true; kernels rely on 0/1
      for (int64_t i = 0; i < n; ++i) d[i] = static_cast<T>(d[i] != 0);
  } else if (own == DType::Bool) {
    for (int64_t i = 0; i < n; ++i) d[i] = static_cast<T>(data.get<double>(static_cast<std::size_t>(i)) != 0.0);
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] = data.get<T>(static_cast<std::size_t>(i));
  }
  return out;
}

template <class T>
TensorData into_data(const CpuTensor<T>& x, DType own) {
  // Constructed from the range: a sized vector would zero its bytes first, a second pass over a large result.
  const auto* first = reinterpret_cast<const std::byte*>(x.data());
  std::vector<std::byte> bytes(first, first + static_cast<std::size_t>(x.numel()) * sizeof(T));
  return TensorData(std::move(bytes), x.shape, own);
}

template <class T>
CpuTensor<T> full(const Shape& shape, T value) {
  CpuTensor<T> out(shape);
  T* d = out.data();
  parallel_for(out.numel(), kParallelThreshold, [&](int64_t b, int64_t e) { std::fill(d + b, d + e, value); });
  return out;
}

template <class T>
CpuTensor<T> reshape(const CpuTensor<T>& x, const Shape& shape) {
  return CpuTensor<T>(x.buffer, shape);  // contiguous, so a new shape over the same buffer
}

template <class T>
CpuTensor<T> permute(const CpuTensor<T>& x, const std::vector<std::size_t>& axes) {
  StridedView v = permuted_view(x.shape, axes);  // x's strides read in output order
  const Shape& shape = v.shape;
  std::vector<int64_t>& strides = v.strides;
  if (permute_keeps_memory_order(x.shape, axes) || x.numel() == 0) return CpuTensor<T>(x.buffer, shape);
  CpuTensor<T> out(shape);
  // Unit dims do not affect layout; without them, find the dim that is contiguous in x.
  Shape dense;
  std::vector<int64_t> dense_st;
  for (std::size_t i = 0; i < shape.rank(); ++i) {
    if (shape[i] == 1) continue;
    dense.dims.push_back(shape[i]);
    dense_st.push_back(strides[i]);
  }
  const std::size_t r = dense.rank();
  std::size_t p = 0;
  while (p < r && dense_st[p] != 1) ++p;
  if (p + 1 < r && dense[p] >= 8 && dense[r - 1] >= 8) {
    copy_tiled(x.data(), dense, dense_st, p, out.data());
  } else {
    copy_strided(x.data(), std::move(strides), shape, out.data());
  }
  return out;
}

template <class T>
CpuTensor<T> expand(const CpuTensor<T>& x, const Shape& shape) {
  // Broadcasting only repeats, so equal counts mean nothing repeats (only leading or unit dims are added).
  if (shape.num_elements() == x.numel()) return CpuTensor<T>(x.buffer, shape);
  CpuTensor<T> out(shape);
  copy_strided(x.data(), expanded_view(x.shape, shape).strides, shape, out.data());
  return out;
}

template <class T>
CpuTensor<T> slice(const CpuTensor<T>& x, const std::vector<Range>& ranges) {
  if (one_run(x.shape, ranges)) {  // one contiguous run: the input's storage, shared (allocator.hpp: borrow)
    // The run's start and shape straight from the ranges (no StridedView: its stride vector is a third of the
    // cost of x[i] on a small tensor).
    Shape shape = x.shape;
    int64_t offset = 0, stride = 1;
    for (std::size_t d = x.shape.rank(); d-- > 0;) {
      if (d < ranges.size()) {
        offset += ranges[d].start * stride;
        shape[d] = ranges[d].end - ranges[d].start;
      }
      stride *= x.shape[d];
    }
    if (shape == x.shape) return x;
    const auto n = static_cast<std::size_t>(shape.num_elements());
    return CpuTensor<T>(borrow(x.buffer, static_cast<std::size_t>(offset) * sizeof(T), n * sizeof(T)),
                        std::move(shape));
  }
  StridedView v = sliced_view(x.shape, ranges);
  if (v.shape == x.shape) return x;
  CpuTensor<T> out(v.shape);
  if (out.numel() == 0) return out;
  if (out.numel() <= kParallelThreshold && v.shape.rank() <= kSmallViewRank) copy_view_small(x.data(), v, out.data());
  else copy_strided(x.data() + v.offset, std::move(v.strides), v.shape, out.data());
  return out;
}

template <class T>
CpuTensor<T> select(const CpuTensor<T>& x, std::size_t dim, int64_t index, Shape to) {
  int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < dim; ++d) outer *= x.shape[d];
  for (std::size_t d = dim + 1; d < x.shape.rank(); ++d) inner *= x.shape[d];
  if (outer == 1) {  // x[i] (dim 0, or only unit dims before it): one contiguous run, shared like slice's
    const auto n = static_cast<std::size_t>(inner);
    return CpuTensor<T>(borrow(x.buffer, static_cast<std::size_t>(index) * n * sizeof(T), n * sizeof(T)), std::move(to));
  }
  std::vector<Range> r(x.shape.rank());
  for (std::size_t d = 0; d < r.size(); ++d) r[d] = {0, x.shape[d]};
  r[dim] = {index, index + 1};
  return CpuTensor<T>(slice(x, r).buffer, std::move(to));
}

template <class T>
CpuTensor<T> slice_assign(const CpuTensor<T>& x, const std::vector<Range>& ranges, const CpuTensor<T>& values) {
  CpuTensor<T> out = clone(x);
  if (values.numel() == 0) return out;
  const StridedView view = sliced_view(x.shape, ranges);
  T* region = out.data() + view.offset;
  const T* v = values.data();
  // Walk values (contiguous) with the region's strides: the helper's "output" here is the source.
  for_each_strided<1>(values.shape, {view.strides}, [&](const Strides& off, int64_t o, int64_t len, const Strides& s) {
    if (s[0] == 1) {
      std::memcpy(region + off[0], v + o, static_cast<std::size_t>(len) * sizeof(T));
    } else {
      for (int64_t i = 0; i < len; ++i) region[off[0] + i * s[0]] = v[o + i];
    }
  });
  return out;
}

template <class T>
CpuTensor<T> cat(const std::vector<CpuTensor<T>>& xs, std::size_t dim) {
  Shape shape = xs.at(0).shape;
  shape[dim] = 0;
  for (const auto& x : xs) shape[dim] += x.shape[dim];
  CpuTensor<T> out(shape);
  if (out.numel() == 0) return out;
  // Each input contributes one contiguous chunk of dims[dim] * inner elements to every outer row.
  const int64_t outer = prod(shape.dims, 0, dim);
  const int64_t inner = prod(shape.dims, dim + 1, shape.rank());
  const int64_t row = shape[dim] * inner;
  T* d = out.data();
  if (outer == 1) {  // a few long chunks: parallelize within each copy
    int64_t at = 0;
    for (const auto& x : xs) {
      copy_flat(d + at, x.data(), x.numel());
      at += x.numel();
    }
    return out;
  }
  parallel_for(outer, grain_for(row), [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      T* dst = d + o * row;
      for (const auto& x : xs) {
        const int64_t chunk = x.shape[dim] * inner;
        if (chunk == 0) continue;
        std::memcpy(dst, x.data() + o * chunk, static_cast<std::size_t>(chunk) * sizeof(T));
        dst += chunk;
      }
    }
  });
  return out;
}

template <class T>
CpuTensor<T> flip(const CpuTensor<T>& x, const std::vector<std::size_t>& dims) {
  StridedView v = flipped_view(x.shape, dims);
  if (v.offset == 0 || x.numel() == 0) return x;  // only dims of size <= 1 flipped: nothing moves
  CpuTensor<T> out(x.shape);
  copy_strided(x.data() + v.offset, std::move(v.strides), x.shape, out.data());
  return out;
}

template <class T>
CpuTensor<T> gather(std::size_t dim, const CpuTensor<T>& x, const Index& indices) {
  CpuTensor<T> out(indices.shape);
  if (out.numel() == 0) return out;
  check_indices("gather", indices, dim, x.shape[dim]);
  const AlongDim g(x.shape, indices.shape, dim);
  const T* xd = x.data();
  const int64_t* id = indices.data();
  T* d = out.data();
  // Rows r = (o, j) of `inner` positions; indices and out share the same contiguous layout.
  parallel_for(g.outer * g.n, grain_for(g.inner), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const T* src = xd + g.outer_off[r / g.n];
      const int64_t* ip = id + r * g.inner;
      T* dst = d + r * g.inner;
      if (g.inner_off.empty()) {
        for (int64_t k = 0; k < g.inner; ++k) dst[k] = src[ip[k] * g.dim_stride + k];
      } else {
        for (int64_t k = 0; k < g.inner; ++k) dst[k] = src[ip[k] * g.dim_stride + g.inner_off[k]];
      }
    }
  });
  return out;
}

template <class T>
CpuTensor<T> scatter_add(std::size_t dim, const CpuTensor<T>& x, const Index& indices, const CpuTensor<T>& values) {
  CpuTensor<T> out = clone(x);
  if (indices.numel() == 0) return out;
  check_indices("scatter_add", indices, dim, x.shape[dim]);
  const AlongDim g(x.shape, indices.shape, dim);
  const int64_t* id = indices.data();
  const T* v = values.data();
  T* d = out.data();
  // Positions with different outer coordinates hit different elements, so threads split the outer dims only;
  // duplicates along dim are accumulated by one thread in order.
  parallel_for(g.outer, grain_for(g.n * g.inner), [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      T* dst = d + g.outer_off[o];
      for (int64_t j = 0; j < g.n; ++j) {
        const int64_t r = (o * g.n + j) * g.inner;
        for (int64_t k = 0; k < g.inner; ++k) accumulate(dst[id[r + k] * g.dim_stride + g.inner_at(k)], v[r + k]);
      }
    }
  });
  return out;
}

template <class T>
CpuTensor<T> index_select(const CpuTensor<T>& x, std::size_t dim, const Index& indices) {
  Shape shape = x.shape;
  const int64_t m = indices.numel();
  shape[dim] = m;
  CpuTensor<T> out(shape);
  if (out.numel() == 0) return out;
  const int64_t size = x.shape[dim];
  check_indices("index_select", indices, dim, size);
  const int64_t outer = prod(x.shape.dims, 0, dim);
  const int64_t inner = prod(x.shape.dims, dim + 1, x.shape.rank());
  const T* xd = x.data();
  const int64_t* id = indices.data();
  T* d = out.data();
  // Output row r = (o, i) is input row (o, indices[i]): one contiguous copy of `inner` elements.
  parallel_for(outer * m, grain_for(inner), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const T* src = xd + ((r / m) * size + id[r % m]) * inner;
      if (inner == 1) d[r] = *src;
      else std::memcpy(d + r * inner, src, static_cast<std::size_t>(inner) * sizeof(T));
    }
  });
  return out;
}

template <class T>
CpuTensor<T> index_select_add(const CpuTensor<T>& x, std::size_t dim, const Index& indices,
                              const CpuTensor<T>& values) {
  CpuTensor<T> out = clone(x);
  const int64_t m = indices.numel();
  if (values.numel() == 0) return out;
  const int64_t size = x.shape[dim];
  check_indices("select_assign", indices, dim, size);  // the user-facing name (Tensor::select_assign)
  const int64_t outer = prod(x.shape.dims, 0, dim);
  const int64_t inner = prod(x.shape.dims, dim + 1, x.shape.rank());
  const int64_t* id = indices.data();
  const T* v = values.data();
  T* d = out.data();
  // Adds columns [cb, ce) of every values row (o, i) into out row (o, indices[i]). Repeated indices collide, so
  // a thread owns whole outer slices or a column range, never a subset of the rows.
  auto add_rows = [&](int64_t o, int64_t cb, int64_t ce) {
    for (int64_t i = 0; i < m; ++i) {
      T* dst = d + (o * size + id[i]) * inner;
      const T* src = v + (o * m + i) * inner;
      for (int64_t c = cb; c < ce; ++c) accumulate(dst[c], src[c]);
    }
  };
  if (outer >= num_threads() || inner < kParallelThreshold / 16) {
    parallel_for(outer, grain_for(m * inner), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) add_rows(o, 0, inner);
    });
  } else {  // few outer slices (e.g. embedding backward, dim 0): split the columns
    for (int64_t o = 0; o < outer; ++o)
      parallel_for(inner, grain_for(m), [&](int64_t b, int64_t e) { add_rows(o, b, e); });
  }
  return out;
}

template <class T>
CpuTensor<T> where(const Mask& cond, const CpuTensor<T>& a, const CpuTensor<T>& b) {
  const Shape shape = broadcast_shapes("where", broadcast_shapes("where", cond.shape, a.shape), b.shape);
  CpuTensor<T> out(shape);
  const uint8_t* c = cond.data();
  const T* ad = a.data();
  const T* bd = b.data();
  T* d = out.data();
  for_each_strided<3>(shape,
                      {broadcast_strides(cond.shape, shape), broadcast_strides(a.shape, shape),
                       broadcast_strides(b.shape, shape)},
                      [&](const std::array<int64_t, 3>& off, int64_t o, int64_t len,
                          const std::array<int64_t, 3>& st) {
                        const uint8_t* cp = c + off[0];
                        const T* ap = ad + off[1];
                        const T* bp = bd + off[2];
                        T* dp = d + o;
                        if (st[0] == 1 && st[1] == 1 && st[2] == 1) {  // same shapes: a vectorizable select
                          for (int64_t i = 0; i < len; ++i) dp[i] = cp[i] ? ap[i] : bp[i];
                        } else {
                          for (int64_t i = 0; i < len; ++i)
                            dp[i] = cp[i * st[0]] ? ap[i * st[1]] : bp[i * st[2]];
                        }
                      });
  return out;
}

template <class T>
CpuTensor<T> mask_fill(const CpuTensor<T>& x, const Mask& mask, T value) {
  CpuTensor<T> out(x.shape);
  const uint8_t* m = mask.data();
  const T* xd = x.data();
  T* d = out.data();
  for_each_strided<2>(x.shape, {broadcast_strides(mask.shape, x.shape), x.shape.strides()},
                      [&](const std::array<int64_t, 2>& off, int64_t o, int64_t len,
                          const std::array<int64_t, 2>& st) {
                        const uint8_t* mp = m + off[0];
                        const T* xp = xd + off[1];
                        T* dp = d + o;
                        if (st[0] == 1) {
                          for (int64_t i = 0; i < len; ++i) dp[i] = mp[i] ? value : xp[i];
                        } else if (st[0] == 0) {  // one mask value for the whole run
                          if (*mp) std::fill_n(dp, len, value);
                          else std::memcpy(dp, xp, static_cast<std::size_t>(len) * sizeof(T));
                        } else {
                          for (int64_t i = 0; i < len; ++i) dp[i] = mp[i * st[0]] ? value : xp[i];
                        }
                      });
  return out;
}

template <class From, class To>
CpuTensor<To> cast(const CpuTensor<From>& x) {
  if constexpr (std::is_same_v<From, To>) {
    return x;  // buffers are immutable, so sharing is a copy
  } else {
    CpuTensor<To> out(x.shape);
    const From* s = x.data();
    To* d = out.data();
    parallel_for(x.numel(), kParallelThreshold, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        if constexpr (std::is_same_v<To, uint8_t>) d[i] = static_cast<uint8_t>(s[i] != From(0));  // to Bool
        else d[i] = convert_element<To>(s[i]);  // NaN / inf / out of range to int: defined, not UB
      }
    });
    return out;
  }
}

Index arange(int64_t start, int64_t end) {
  Index out(Shape{std::max<int64_t>(0, end - start)});
  int64_t* d = out.data();
  parallel_for(out.numel(), kParallelThreshold, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) d[i] = start + i;
  });
  return out;
}

#define EMBER_LAYOUT(T)                                                                                          \
  template CpuTensor<T> from_data<T>(const TensorData&, DType);                                                  \
  template TensorData into_data<T>(const CpuTensor<T>&, DType);                                                  \
  template CpuTensor<T> full<T>(const Shape&, T);                                                                \
  template CpuTensor<T> reshape<T>(const CpuTensor<T>&, const Shape&);                                           \
  template CpuTensor<T> permute<T>(const CpuTensor<T>&, const std::vector<std::size_t>&);                        \
  template CpuTensor<T> expand<T>(const CpuTensor<T>&, const Shape&);                                            \
  template CpuTensor<T> slice<T>(const CpuTensor<T>&, const std::vector<Range>&);                                \
  template CpuTensor<T> select<T>(const CpuTensor<T>&, std::size_t, int64_t, Shape);                             \
  template CpuTensor<T> slice_assign<T>(const CpuTensor<T>&, const std::vector<Range>&, const CpuTensor<T>&);    \
  template CpuTensor<T> cat<T>(const std::vector<CpuTensor<T>>&, std::size_t);                                   \
  template CpuTensor<T> flip<T>(const CpuTensor<T>&, const std::vector<std::size_t>&);                           \
  template CpuTensor<T> gather<T>(std::size_t, const CpuTensor<T>&, const Index&);                               \
  template CpuTensor<T> scatter_add<T>(std::size_t, const CpuTensor<T>&, const Index&, const CpuTensor<T>&);     \
  template CpuTensor<T> index_select<T>(const CpuTensor<T>&, std::size_t, const Index&);                         \
  template CpuTensor<T> index_select_add<T>(const CpuTensor<T>&, std::size_t, const Index&, const CpuTensor<T>&); \
  template CpuTensor<T> where<T>(const Mask&, const CpuTensor<T>&, const CpuTensor<T>&);                         \
  template CpuTensor<T> mask_fill<T>(const CpuTensor<T>&, const Mask&, T);                                       \
  template CpuTensor<float> cast<T, float>(const CpuTensor<T>&);                                                 \
  template CpuTensor<double> cast<T, double>(const CpuTensor<T>&);                                               \
  template CpuTensor<int64_t> cast<T, int64_t>(const CpuTensor<T>&);                                             \
  template CpuTensor<uint8_t> cast<T, uint8_t>(const CpuTensor<T>&);

EMBER_LAYOUT(float)
EMBER_LAYOUT(double)
EMBER_LAYOUT(int64_t)
EMBER_LAYOUT(uint8_t)
#undef EMBER_LAYOUT

}  // namespace ember::cpu
