#pragma once
// PrecisionSettings decide how records store elements (not how backends compute): Float params are stored as
// float_dtype, Int params as int_dtype, Bool as bool. Conversion happens on save; on load, tensors convert back to
// the backend's element types. A narrowing Int conversion that would lose a value is an error, never silent.
#include <cmath>
#include <limits>
#include <string>
#include <string_view>

#include "engine/module/record.hpp"
#include "engine/tensor/error.hpp"

namespace ember {

struct FullPrecisionSettings {
  static constexpr DType float_dtype = DType::F32;
  static constexpr DType int_dtype = DType::I32;
  static constexpr std::string_view name = "full";
};
struct HalfPrecisionSettings {
  static constexpr DType float_dtype = DType::F16;
  static constexpr DType int_dtype = DType::I16;
  static constexpr std::string_view name = "half";
};
struct DoublePrecisionSettings {
  static constexpr DType float_dtype = DType::F64;
  static constexpr DType int_dtype = DType::I64;
  static constexpr std::string_view name = "double";
};

template <class P>
concept PrecisionSettings = requires {
  { P::float_dtype } -> std::convertible_to<DType>;
  { P::int_dtype } -> std::convertible_to<DType>;
  { P::name } -> std::convertible_to<std::string_view>;
};

// Runtime form, for files and the command line.
struct Precision {
  DType float_dtype = DType::F32;
  DType int_dtype = DType::I32;
  std::string name = "full";

  template <PrecisionSettings P>
  static Precision of() {
    return {P::float_dtype, P::int_dtype, std::string(P::name)};
  }
  static Precision from_name(std::string_view n) {
    if (n == "full") return of<FullPrecisionSettings>();
    if (n == "half") return of<HalfPrecisionSettings>();
    if (n == "double") return of<DoublePrecisionSettings>();
    throw ArgumentError("precision: unknown '" + std::string(n) + "' (full, half or double)");
  }
};

namespace detail {
inline void check_int_range(const std::string& path, const TensorData& d, DType to) {
  if (!dtype_is_int(to) || dtype_size(to) >= 8) return;
  const double lo = to == DType::I16 ? std::numeric_limits<int16_t>::min()
                    : to == DType::I32 ? std::numeric_limits<int32_t>::min()
                                       : 0.0;
  const double hi = to == DType::I16 ? std::numeric_limits<int16_t>::max()
                    : to == DType::I32 ? std::numeric_limits<int32_t>::max()
                                       : 255.0;
  for (std::size_t i = 0; i < d.num_elements(); ++i) {
    const auto v = d.get<int64_t>(i);
    if (static_cast<double>(v) < lo || static_cast<double>(v) > hi)
      throw ArgumentError("record: Int param '" + path + "' value " + std::to_string(v) + " at element " +
                          std::to_string(i) + " does not fit " + std::string(dtype_name(to)) +
                          " (choose a wider precision)");
  }
}
}  // namespace detail

// Converts every param of `r` to the dtypes of `p` (Bool stays Bool).
inline Record convert_record(const Record& r, const Precision& p) {
  Record out;
  out.scalars = r.scalars;
  for (const auto& [path, pr] : r.params) {
    ParamRecord c = pr;
    const DType to = pr.kind == ParamKind::Float ? p.float_dtype : pr.kind == ParamKind::Int ? p.int_dtype : DType::Bool;
    if (pr.kind == ParamKind::Int) detail::check_int_range(path, pr.data, to);
    c.data = pr.data.convert(to);
    out.params.emplace(path, std::move(c));
  }
  return out;
}

}  // namespace ember
