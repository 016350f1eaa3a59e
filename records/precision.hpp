#pragma once
// PrecisionSettings decide how records store elements (not how backends compute). They are policy types, as in
// Burn: a recorder is typed by one (BinFileRecorder<HalfPrecisionSettings>, records/recorder.hpp), and the policy's
// element types drive the conversion at compile time: Float params are stored as FloatElem, Int params as IntElem,
// Bool as bool. A narrowing Int conversion that would lose a value is an error, never silent.
//
// A runtime name ("full", "half", "double") exists only at the edges — the command line, the C ABI's enum and the
// precision written in a file's header — and becomes a type through with_precision_named.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "engine/module/record.hpp"
#include "engine/tensor/error.hpp"

namespace ember {

struct FullPrecisionSettings {
  using FloatElem = float;
  using IntElem = int32_t;
  static constexpr std::string_view name = "full";
};
struct HalfPrecisionSettings {
  using FloatElem = f16;
  using IntElem = int16_t;
  static constexpr std::string_view name = "half";
};
struct DoublePrecisionSettings {
  using FloatElem = double;
  using IntElem = int64_t;
  static constexpr std::string_view name = "double";
};

template <class P>
concept PrecisionSettings = requires {
  typename P::FloatElem;
  typename P::IntElem;
  { P::name } -> std::convertible_to<std::string_view>;
} && (std::is_same_v<typename P::FloatElem, f16> || std::is_floating_point_v<typename P::FloatElem>) &&
                            std::is_integral_v<typename P::IntElem> && std::is_signed_v<typename P::IntElem>;

// What a policy stores, as the DTypes a file header and TensorData speak.
template <PrecisionSettings P>
inline constexpr DType float_dtype_of = dtype_of<typename P::FloatElem>();
template <PrecisionSettings P>
inline constexpr DType int_dtype_of = dtype_of<typename P::IntElem>();

// The precision a record file declares in its header: a policy's name and dtypes as values, because the file
// container (one non-template translation unit around cereal) writes and checks them.
struct StoredPrecision {
  std::string_view name;
  DType float_dtype = DType::F32;
  DType int_dtype = DType::I32;

  template <PrecisionSettings P>
  static constexpr StoredPrecision of() {
    return {P::name, float_dtype_of<P>, int_dtype_of<P>};
  }
};

// The bridge from a runtime name to a policy type: calls f(std::type_identity<P>{}) for the policy named `name`.
// Unknown names throw ArgumentError listing the known ones.
template <class F>
decltype(auto) with_precision_named(std::string_view name, F&& f) {
  if (name == FullPrecisionSettings::name) return f(std::type_identity<FullPrecisionSettings>{});
  if (name == HalfPrecisionSettings::name) return f(std::type_identity<HalfPrecisionSettings>{});
  if (name == DoublePrecisionSettings::name) return f(std::type_identity<DoublePrecisionSettings>{});
  throw ArgumentError(fmt::format("precision: unknown '{}' (full, half or double)", name));
}

namespace detail {

// The elements of `d` as T (the source dtype is whatever the record holds; the target is fixed at compile time).
// f16 is reached through float, like TensorData::convert, so both paths round the same way.
template <class T>
TensorData elements_as(const TensorData& d) {
  if (d.dtype == dtype_of<T>()) return d;
  const std::size_t n = d.num_elements();
  std::vector<std::byte> out(n * sizeof(T));
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, f16>) store_as(out.data() + i * sizeof(T), float_to_f16(d.get<float>(i)));
    else store_as(out.data() + i * sizeof(T), d.get<T>(i));
  }
  return TensorData(std::move(out), d.shape, dtype_of<T>());
}

// Every value of the Int tensor `d` must survive narrowing to T.
template <class T>
void check_int_fits(const std::string& path, const TensorData& d) {
  if constexpr (sizeof(T) < sizeof(int64_t)) {
    for (std::size_t i = 0; i < d.num_elements(); ++i) {
      const auto v = d.get<int64_t>(i);
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
        throw ArgumentError(fmt::format("record: Int param '{}' value {} at element {} does not fit {} (choose a "
                                        "wider precision)",
                                        path, v, i, dtype_name(dtype_of<T>())));
    }
  }
}

}  // namespace detail

// Converts every param of `r` to the element types of P (Bool stays Bool). Throws ArgumentError when an Int value
// does not fit P::IntElem.
template <PrecisionSettings P>
Record convert_record(const Record& r) {
  Record out;
  out.scalars = r.scalars;
  for (const auto& [path, pr] : r.params) {
    ParamRecord c = pr;
    if (pr.kind == ParamKind::Float) {
      c.data = detail::elements_as<typename P::FloatElem>(pr.data);
    } else if (pr.kind == ParamKind::Int) {
      detail::check_int_fits<typename P::IntElem>(path, pr.data);
      c.data = detail::elements_as<typename P::IntElem>(pr.data);
    } else {
      c.data = pr.data.convert(DType::Bool);
    }
    out.params.emplace(path, std::move(c));
  }
  return out;
}

}  // namespace ember
