#pragma once
// Element types that cross the host boundary (TensorData, records). Backends compute in their own element types;
// DType describes bytes in host memory.
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <type_traits>

#include "engine/tensor/error.hpp"

namespace ember {

// Values are append-only: they are stored in record files.
enum class DType : int32_t { F32 = 0, F64 = 1, F16 = 2, I32 = 3, I64 = 4, U8 = 5, Bool = 6, I16 = 7 };

constexpr std::size_t dtype_size(DType d) {
  switch (d) {
    case DType::F32: return 4;
    case DType::F64: return 8;
    case DType::F16: return 2;
    case DType::I32: return 4;
    case DType::I64: return 8;
    case DType::U8: return 1;
    case DType::Bool: return 1;
    case DType::I16: return 2;
  }
  throw ArgumentError("dtype_size: unknown dtype");
}

constexpr std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::F32: return "f32";
    case DType::F64: return "f64";
    case DType::F16: return "f16";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::U8: return "u8";
    case DType::Bool: return "bool";
    case DType::I16: return "i16";
  }
  return "unknown";
}

constexpr bool dtype_is_float(DType d) { return d == DType::F32 || d == DType::F64 || d == DType::F16; }
constexpr bool dtype_is_int(DType d) {
  return d == DType::I16 || d == DType::I32 || d == DType::I64 || d == DType::U8;
}

// IEEE half stored as raw bits; converted through float. Round-to-nearest-even, overflow to inf, subnormals kept.
struct f16 {
  uint16_t bits = 0;
};

inline float f16_to_float(f16 h) {
  const uint32_t sign = (uint32_t(h.bits) & 0x8000u) << 16;
  uint32_t exp = (h.bits >> 10) & 0x1f;
  uint32_t mant = h.bits & 0x3ffu;
  uint32_t out;
  if (exp == 0) {
    if (mant == 0) {
      out = sign;
    } else {  // subnormal: normalize
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      out = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    out = sign | 0x7f800000u | (mant << 13);
  } else {
    out = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &out, 4);
  return f;
}

inline f16 float_to_f16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  const uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf or nan
    return f16{uint16_t(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u))};
  }
  if (absx >= 0x477ff000u) return f16{uint16_t(sign | 0x7c00u)};  // rounds to >= 65520: overflow to inf
  if (absx < 0x38800000u) {                                        // below smallest normal half: subnormal or 0
    if (absx < 0x33000000u) return f16{sign};
    const uint32_t e = absx >> 23;
    const uint32_t m = (absx & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // aligns the implicit bit to the half's subnormal mantissa
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    uint32_t res = m >> shift;
    if (rem > halfway || (rem == halfway && (res & 1u))) ++res;
    return f16{uint16_t(sign | res)};
  }
  uint32_t res = ((absx >> 13) - (112u << 10));
  const uint32_t rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (res & 1u))) ++res;
  return f16{uint16_t(sign | res)};
}

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::F32;
  else if constexpr (std::is_same_v<T, double>) return DType::F64;
  else if constexpr (std::is_same_v<T, f16>) return DType::F16;
  else if constexpr (std::is_same_v<T, int16_t>) return DType::I16;
  else if constexpr (std::is_same_v<T, int32_t>) return DType::I32;
  else if constexpr (std::is_same_v<T, int64_t>) return DType::I64;
  else if constexpr (std::is_same_v<T, uint8_t>) return DType::U8;
  else if constexpr (std::is_same_v<T, bool>) return DType::Bool;
  else static_assert(sizeof(T) == 0, "no DType for this element type");
}

// An element converted to To (static_cast), with float -> integer defined everywhere, where a plain static_cast of
// NaN or an out-of-range value is undefined behaviour: to a signed integer, truncation toward 0 and To's minimum
// for NaN and values outside its range (for int32 and int64 what x86's conversion instructions give, and so PyTorch
// and NumPy there); to an unsigned one, through int64 and then modulo 2^bits (-1.0 -> 255 for uint8, as on x86).
template <class To, class From>
constexpr To convert_element(From v) {
  if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To> && !std::is_same_v<To, bool>) {
    if constexpr (std::is_signed_v<To>) {
      constexpr From lo = static_cast<From>(std::numeric_limits<To>::min());  // -2^(bits-1): exact in any float type
      if (!(v >= lo && v < -lo)) return std::numeric_limits<To>::min();
      return static_cast<To>(v);
    } else {
      return static_cast<To>(convert_element<int64_t>(v));
    }
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace ember
